// RUN: tessel-opt %s --split-input-file --verify-diagnostics --tessel-register-tiles

// Settings the contraction passes cannot launch with are located errors
// (on the module), not crashes: an unknown chip, no waves.
// expected-error @+1 {{tessel-register-tiles: unsupported settings (chip 'gfx9000', 4 waves, chunk 16)}}
module attributes {tessel.chip = "gfx9000"} {
}

// -----

// expected-error @+1 {{tessel-register-tiles: unsupported settings (chip 'gfx1100', 0 waves, chunk 16)}}
module attributes {tessel.chip = "gfx1100", tessel.num_warps = 0 : i64} {
}

// -----

// A register tile that is not a pair, or has non-positive extents, is no
// wanted tile: the pass picks its own (no diagnostic).
module attributes {tessel.chip = "gfx942", tessel.register_tile = array<i64: 0, -4>} {
  func.func @odd_tile(%x: memref<128x16xf64>, %y: memref<16x128xf64>, %z: memref<128x128xf64>) {
    scf.forall (%i) in (1) {
      linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (k, j)>, affine_map<(i, j, k) -> (i, j)>], iterator_types = ["parallel", "parallel", "reduction"], tessel.contraction}
          ins(%x, %y : memref<128x16xf64>, memref<16x128xf64>) outs(%z : memref<128x128xf64>) {
      ^bb0(%u: f64, %v: f64, %s: f64):
        %t = math.fma %u, %v, %s : f64
        linalg.yield %t : f64
      }
    }
    return
  }
}
