// tessel-tile: contractions marked by block-to-linalg become column panels
// (B panel copied contiguous), row strips and single k steps; the k-step
// op is marked for tessel-vectorize. Sizes come from the module's
// tessel.register_tile (else the host's vector width) and shrink to
// divisors of the block.
// RUN: tessel-opt %s --split-input-file --verify-diagnostics --tessel-tile --canonicalize | FileCheck %s

#lhs = affine_map<(i, j, k) -> (i, k)>
#rhs = affine_map<(i, j, k) -> (k, j)>
#out = affine_map<(i, j, k) -> (i, j)>
module attributes {tessel.register_tile = array<i64: 4, 32>} {
  // CHECK-LABEL: func.func @dot(
  // CHECK-SAME: %[[A:.*]]: tensor<8x16xf32>, %[[B:.*]]: tensor<16x128xf32>, %[[C:.*]]: tensor<8x128xf32>
  // CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
  // CHECK-DAG: %[[C4:.*]] = arith.constant 4 : index
  // CHECK-DAG: %[[C32:.*]] = arith.constant 32 : index
  // Column panels, the B panel copied into its own buffer.
  // CHECK: scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %[[C32]] iter_args(%[[CJ:.*]] = %[[C]])
  // CHECK:   %[[BJ:.*]] = tensor.extract_slice %[[B]][0, %[[J]]] [16, 32] [1, 1]
  // CHECK:   %[[PANEL:.*]] = bufferization.alloc_tensor() : tensor<16x32xf32>
  // CHECK:   %[[PACKED:.*]] = linalg.copy {tessel.packing} ins(%[[BJ]] : tensor<16x32xf32>) outs(%[[PANEL]] : tensor<16x32xf32>)
  // Row strips of the register tile.
  // CHECK:   scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %[[C4]]
  // CHECK:     %[[AI:.*]] = tensor.extract_slice %[[A]][%[[I]], 0] [4, 16] [1, 1]
  // Single k steps.
  // CHECK:     scf.for %[[K:.*]] = %{{.*}} to %{{.*}} step %[[C1]] iter_args(%[[ACC:.*]] = %{{.*}}) -> (tensor<4x32xf32>)
  // CHECK:       %[[AK:.*]] = tensor.extract_slice %[[AI]][0, %[[K]]] [4, 1] [1, 1]
  // CHECK:       %[[BK:.*]] = tensor.extract_slice %[[PACKED]][%[[K]], 0] [1, 32] [1, 1]
  // CHECK:       linalg.generic {{.*}} ins(%[[AK]], %[[BK]] : tensor<4x1xf32>, tensor<1x32xf32>) outs(%[[ACC]] : tensor<4x32xf32>)
  // CHECK-SAME:    tessel.contraction, tessel.register_tile = array<i64: 4, 32>, tessel.tile_group = 0 : i64, tessel.vectorize
  // CHECK:     } {tessel.reduction_loop}
  func.func @dot(%a: tensor<8x16xf32>, %b: tensor<16x128xf32>, %c: tensor<8x128xf32>) -> tensor<8x128xf32> {
    %r = linalg.generic {indexing_maps = [#lhs, #rhs, #out], iterator_types = ["parallel", "parallel", "reduction"], tessel.contraction}
        ins(%a, %b : tensor<8x16xf32>, tensor<16x128xf32>) outs(%c : tensor<8x128xf32>) {
    ^bb0(%x: f32, %y: f32, %s: f32):
      %p = arith.mulf %x, %y : f32
      %t = arith.addf %s, %p : f32
      linalg.yield %t : f32
    } -> tensor<8x128xf32>
    return %r : tensor<8x128xf32>
  }

  // Requested columns that do not divide the block shrink to the largest
  // divisor (20 columns: 32 -> 20), rows leave a remainder strip (9 rows
  // in 4-row tiles: two strips and one of 1 row); each kind of contraction
  // gets its own group. The contraction's one element-wise consumer
  // becomes its tiles' epilogue: tiled with the row strips, after each
  // strip's k loop, the remainder strip's too.
  // CHECK-LABEL: func.func @odd(
  // CHECK: scf.for %{{.*}} = %c0 to %c8 step %c4
  // CHECK: scf.for
  // CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<4x1xi8>, tensor<1x20xi8>) outs(%{{.*}} : tensor<4x20xi32>)
  // CHECK-SAME: tessel.register_tile = array<i64: 4, 20>, tessel.tile_group = 1 : i64, tessel.vectorize
  // CHECK: } {tessel.reduction_loop}
  // CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<4x20xi32>) outs(%{{.*}} : tensor<4x20xi32>)
  // CHECK-SAME: tessel.epilogue_group = 1 : i64, tessel.vectorize
  // CHECK: arith.addi
  // CHECK: tensor.insert_slice %{{.*}} [4, 20]
  // CHECK: scf.for
  // CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<1x1xi8>, tensor<1x20xi8>) outs(%{{.*}} : tensor<1x20xi32>)
  // CHECK: } {tessel.reduction_loop}
  // CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<1x20xi32>) outs(%{{.*}} : tensor<1x20xi32>)
  // CHECK-SAME: tessel.epilogue_group = 1 : i64, tessel.vectorize
  // CHECK: tensor.insert_slice %{{.*}}[8, 0] [1, 20]
  // CHECK-NOT: linalg.generic
  // CHECK: return
  func.func @odd(%a: tensor<9x5xi8>, %b: tensor<5x20xi8>, %c: tensor<9x20xi32>) -> tensor<9x20xi32> {
    %r = linalg.generic {indexing_maps = [#lhs, #rhs, #out], iterator_types = ["parallel", "parallel", "reduction"], tessel.contraction}
        ins(%a, %b : tensor<9x5xi8>, tensor<5x20xi8>) outs(%c : tensor<9x20xi32>) {
    ^bb0(%x: i8, %y: i8, %s: i32):
      %xw = arith.extsi %x : i8 to i32
      %yw = arith.extsi %y : i8 to i32
      %p = arith.muli %xw, %yw : i32
      %t = arith.addi %s, %p : i32
      linalg.yield %t : i32
    } -> tensor<9x20xi32>
    %d = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
        ins(%r : tensor<9x20xi32>) outs(%c : tensor<9x20xi32>) {
    ^bb0(%x: i32, %s: i32):
      %t = arith.addi %x, %s : i32
      linalg.yield %t : i32
    } -> tensor<9x20xi32>
    return %d : tensor<9x20xi32>
  }
}

// -----

// Batched contractions tile the batch by one.
#lhs = affine_map<(b, i, j, k) -> (b, i, k)>
#rhs = affine_map<(b, i, j, k) -> (b, k, j)>
#out = affine_map<(b, i, j, k) -> (b, i, j)>
module attributes {tessel.register_tile = array<i64: 2, 8>} {
  // CHECK-LABEL: func.func @batched(
  // CHECK: linalg.copy {tessel.packing} ins(%{{.*}} : tensor<3x4x8xf32>)
  // CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<1x2x1xf32>, tensor<1x1x8xf32>) outs(%{{.*}} : tensor<1x2x8xf32>)
  // CHECK-SAME: tessel.vectorize
  func.func @batched(%a: tensor<3x6x4xf32>, %b: tensor<3x4x16xf32>, %c: tensor<3x6x16xf32>) -> tensor<3x6x16xf32> {
    %r = linalg.generic {indexing_maps = [#lhs, #rhs, #out], iterator_types = ["parallel", "parallel", "parallel", "reduction"], tessel.contraction}
        ins(%a, %b : tensor<3x6x4xf32>, tensor<3x4x16xf32>) outs(%c : tensor<3x6x16xf32>) {
    ^bb0(%x: f32, %y: f32, %s: f32):
      %p = arith.mulf %x, %y : f32
      %t = arith.addf %s, %p : f32
      linalg.yield %t : f32
    } -> tensor<3x6x16xf32>
    return %r : tensor<3x6x16xf32>
  }
}

// -----

// expected-error @+1 {{tessel-tile: tessel.register_tile must be two positive sizes [rows, columns]}}
module attributes {tessel.register_tile = array<i64: 0, 8>} {
}

// -----

// PADTO (tessel.pad_tiles = 1): a 5x16 tile keeps its size on a 12x20
// block; the partial last panel (4 columns) and strip (2 rows) are padded
// into full tiles, computed whole, and only their real results copied
// back.
// CHECK-LABEL: func.func @padded(
// CHECK: scf.for %{{.*}} = %{{.*}} to %c20 step %c16
// CHECK: tensor.insert_slice %{{.*}} into %{{.*}}[0, 0] [8, %{{.*}}] [1, 1] {tessel.packing} : tensor<8x?xf32> into tensor<8x16xf32>
// CHECK: scf.for %{{.*}} = %{{.*}} to %c12 step %c5
// CHECK: tensor.insert_slice %{{.*}} into %{{.*}}[0, 0] [%{{.*}}, 8] [1, 1] : tensor<?x8xf32> into tensor<5x8xf32>
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<5x1xf32>, tensor<1x16xf32>) outs(%{{.*}} : tensor<5x16xf32>) attrs = {{{.*}}tessel.vectorize}
// CHECK: %[[ROWS:.*]] = tensor.extract_slice %{{.*}}[0, 0] [%{{.*}}, 16] [1, 1] : tensor<5x16xf32> to tensor<?x16xf32>
// CHECK: linalg.copy ins(%[[ROWS]] : tensor<?x16xf32>)
// CHECK: %[[COLUMNS:.*]] = tensor.extract_slice %{{.*}}[0, 0] [12, %{{.*}}] [1, 1] : tensor<12x16xf32> to tensor<12x?xf32>
// CHECK: linalg.copy ins(%[[COLUMNS]] : tensor<12x?xf32>)
#lhs = affine_map<(i, j, k) -> (i, k)>
#rhs = affine_map<(i, j, k) -> (k, j)>
#out = affine_map<(i, j, k) -> (i, j)>
module attributes {tessel.register_tile = array<i64: 5, 16>, tessel.pad_tiles = 1 : i64} {
  func.func @padded(%a: tensor<12x8xf32>, %b: tensor<8x20xf32>, %c: tensor<12x20xf32>) -> tensor<12x20xf32> {
    %r = linalg.generic {indexing_maps = [#lhs, #rhs, #out], iterator_types = ["parallel", "parallel", "reduction"], tessel.contraction}
        ins(%a, %b : tensor<12x8xf32>, tensor<8x20xf32>) outs(%c : tensor<12x20xf32>) {
    ^bb0(%x: f32, %y: f32, %s: f32):
      %t = math.fma %x, %y, %s : f32
      linalg.yield %t : f32
    } -> tensor<12x20xf32>
    return %r : tensor<12x20xf32>
  }
}

// -----

// VNNI's form (tessel-vnni): loops i, j, k/4, r; the tile steps k/4 one
// at a time and keeps r (the four bytes of a vpdpbusd lane) whole; the
// packed B panel is copied like any other; tessel.k_chunk counts k, so
// 8 is two steps of k/4. With PADTO, the partial strip pads its rows only.
// CHECK-LABEL: func.func @vnni(
// CHECK: linalg.copy {tessel.packing} ins(%{{.*}} : tensor<2x16x4xi8>)
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%{{.*}}, %{{.*}} : tensor<3x1x4xi8>, tensor<1x16x4xi8>) outs(%{{.*}} : tensor<3x16xi32>)
// CHECK-SAME: tessel.vectorize
// CHECK-SAME: tessel.vnni
// CHECK: } {tessel.reduction_loop}
#lhs = affine_map<(i, j, q, r) -> (i, q, r)>
#rhs = affine_map<(i, j, q, r) -> (q, j, r)>
#out = affine_map<(i, j, q, r) -> (i, j)>
module attributes {tessel.register_tile = array<i64: 3, 16>, tessel.pad_tiles = 1 : i64, tessel.k_chunk = 8 : i64} {
  func.func @vnni(%a: tensor<5x4x4xi8>, %b: tensor<4x32x4xi8>, %c: tensor<5x32xi32>) -> tensor<5x32xi32> {
    %r = linalg.generic {indexing_maps = [#lhs, #rhs, #out], iterator_types = ["parallel", "parallel", "reduction", "reduction"], tessel.contraction, tessel.vnni}
        ins(%a, %b : tensor<5x4x4xi8>, tensor<4x32x4xi8>) outs(%c : tensor<5x32xi32>) {
    ^bb0(%x: i8, %y: i8, %s: i32):
      %xw = arith.extui %x : i8 to i32
      %yw = arith.extsi %y : i8 to i32
      %p = arith.muli %xw, %yw : i32
      %t = arith.addi %s, %p : i32
      linalg.yield %t : i32
    } -> tensor<5x32xi32>
    return %r : tensor<5x32xi32>
  }
}

// -----

// Without tessel.register_tile the tile comes from the CPU's model (here
// given whole: AVX2's 256-bit vectors and 16 registers, Haswell's 10 FMAs
// in flight, as tessel compile --cpu haswell records them): on a 96-row
// block, 6 rows x 2 vectors, 12 accumulators covering the FMA latency
// (BLIS's Haswell tile); on a 64-row block too, over 60 rows of whole
// strips, the 4 rows left one remainder strip of a 4 x 16 tile (no tile
// dividing 64 rows has 10 accumulators and fits).
#lhs = affine_map<(i, j, k) -> (i, k)>
#rhs = affine_map<(i, j, k) -> (k, j)>
#out = affine_map<(i, j, k) -> (i, j)>
module attributes {tessel.vector_bits = 256 : i64, tessel.vector_registers = 16 : i64, tessel.fma_in_flight = 10 : i64} {
  // CHECK-LABEL: func.func @modelled(
  // CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<6x1xf32>, tensor<1x16xf32>) outs(%{{.*}} : tensor<6x16xf32>)
  // CHECK-SAME: tessel.register_tile = array<i64: 6, 16>
  // CHECK: scf.for %{{.*}} = %{{.*}} to %c60 step %c6
  // CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<6x1xf32>, tensor<1x16xf32>) outs(%{{.*}} : tensor<6x16xf32>)
  // CHECK-SAME: tessel.register_tile = array<i64: 6, 16>
  // CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<4x1xf32>, tensor<1x16xf32>) outs(%{{.*}} : tensor<4x16xf32>)
  func.func @modelled(%a: tensor<96x8xf32>, %b: tensor<8x64xf32>, %c: tensor<96x64xf32>,
                      %d: tensor<64x8xf32>, %e: tensor<64x64xf32>) -> (tensor<96x64xf32>, tensor<64x64xf32>) {
    %r = linalg.generic {indexing_maps = [#lhs, #rhs, #out], iterator_types = ["parallel", "parallel", "reduction"], tessel.contraction}
        ins(%a, %b : tensor<96x8xf32>, tensor<8x64xf32>) outs(%c : tensor<96x64xf32>) {
    ^bb0(%x: f32, %y: f32, %s: f32):
      %p = arith.mulf %x, %y : f32
      %t = arith.addf %s, %p : f32
      linalg.yield %t : f32
    } -> tensor<96x64xf32>
    %q = linalg.generic {indexing_maps = [#lhs, #rhs, #out], iterator_types = ["parallel", "parallel", "reduction"], tessel.contraction}
        ins(%d, %b : tensor<64x8xf32>, tensor<8x64xf32>) outs(%e : tensor<64x64xf32>) {
    ^bb0(%x: f32, %y: f32, %s: f32):
      %p = arith.mulf %x, %y : f32
      %t = arith.addf %s, %p : f32
      linalg.yield %t : f32
    } -> tensor<64x64xf32>
    return %r, %q : tensor<96x64xf32>, tensor<64x64xf32>
  }
}

// -----

// Pallas' `acc_ref[...] += jnp.dot(x, y)`: a contraction from zeros, then
// `acc + dot` written into `acc`. The tiles compute it: the fill of the
// dot's init becomes each tile's (zeros in registers), and the add reads
// `acc` through its destination's block argument (so bufferization updates
// it in place; the input slice is left unread), in 64-column panels
// (B packed) and 4-row strips, after each strip's k loop.
#lhs = affine_map<(i, j, k) -> (i, k)>
#rhs = affine_map<(i, j, k) -> (k, j)>
#out = affine_map<(i, j, k) -> (i, j)>
#id = affine_map<(i, j) -> (i, j)>
module attributes {tessel.register_tile = array<i64: 4, 64>} {
  // CHECK-LABEL: func.func @acc_plus_dot(
  // CHECK-SAME: %[[A:.*]]: tensor<8x16xf32>, %[[B:.*]]: tensor<16x128xf32>, %[[ACC:.*]]: tensor<8x128xf32>
  // CHECK-NOT: linalg.fill
  // CHECK: scf.for %{{.*}} = %c0 to %c128 step %c64 iter_args(%[[PANELS:.*]] = %[[ACC]])
  // CHECK: linalg.copy
  // CHECK: scf.for %{{.*}} = %c0 to %c8 step %c4
  // CHECK: %[[ZEROS:.*]] = linalg.fill {tessel.init_group = 0 : i64, tessel.vectorize} {{.*}} -> tensor<4x64xf32>
  // CHECK: scf.for {{.*}} iter_args(%{{.*}} = %[[ZEROS]])
  // CHECK: tessel.contraction, tessel.register_tile = array<i64: 4, 64>
  // CHECK: } {tessel.reduction_loop}
  // CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<4x64xf32>, tensor<4x64xf32>) outs(%{{.*}} : tensor<4x64xf32>)
  // CHECK-SAME: tessel.epilogue_group = 0 : i64, tessel.vectorize
  // CHECK-NEXT: ^bb0(%{{.*}}: f32, %[[DOT:.*]]: f32, %[[OLD:.*]]: f32):
  // CHECK-NEXT: arith.addf %[[OLD]], %[[DOT]]
  // CHECK-NOT: linalg.generic
  // CHECK: return
  func.func @acc_plus_dot(%a: tensor<8x16xf32>, %b: tensor<16x128xf32>, %acc: tensor<8x128xf32>) -> tensor<8x128xf32> {
    %zero = arith.constant 0.0 : f32
    %empty = tensor.empty() : tensor<8x128xf32>
    %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<8x128xf32>) -> tensor<8x128xf32>
    %dot = linalg.generic {indexing_maps = [#lhs, #rhs, #out], iterator_types = ["parallel", "parallel", "reduction"], tessel.contraction}
        ins(%a, %b : tensor<8x16xf32>, tensor<16x128xf32>) outs(%init : tensor<8x128xf32>) {
    ^bb0(%x: f32, %y: f32, %s: f32):
      %p = arith.mulf %x, %y : f32
      %t = arith.addf %s, %p : f32
      linalg.yield %t : f32
    } -> tensor<8x128xf32>
    %sum = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%acc, %dot : tensor<8x128xf32>, tensor<8x128xf32>) outs(%acc : tensor<8x128xf32>) {
    ^bb0(%old: f32, %d: f32, %unused: f32):
      %t = arith.addf %old, %d : f32
      linalg.yield %t : f32
    } -> tensor<8x128xf32>
    return %sum : tensor<8x128xf32>
  }

  // Consumers the tiles cannot compute are left alone: a dot with two
  // users, one reduced by its consumer, and a select on a mask (a vector
  // of i1 loaded from memory is packed bits to LLVM, the buffer a byte per
  // element).
  // CHECK-LABEL: func.func @not_epilogues(
  // CHECK: } {tessel.reduction_loop}
  // CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<8x128xf32>) outs(%{{.*}} : tensor<8x128xf32>) {
  // CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
  // CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}}, %{{.*}} : tensor<8x128xi1>, tensor<8x128xf32>, tensor<8x128xf32>) outs(%{{.*}} : tensor<8x128xf32>) {
  // CHECK-NOT: tessel.epilogue_group
  func.func @not_epilogues(%a: tensor<8x16xf32>, %b: tensor<16x128xf32>, %c: tensor<8x128xf32>, %row: tensor<8xf32>,
      %mask: tensor<8x128xi1>) -> (tensor<8x128xf32>, tensor<8x128xf32>, tensor<8xf32>, tensor<8x128xf32>) {
    %dot = linalg.generic {indexing_maps = [#lhs, #rhs, #out], iterator_types = ["parallel", "parallel", "reduction"], tessel.contraction}
        ins(%a, %b : tensor<8x16xf32>, tensor<16x128xf32>) outs(%c : tensor<8x128xf32>) {
    ^bb0(%x: f32, %y: f32, %s: f32):
      %p = arith.mulf %x, %y : f32
      %t = arith.addf %s, %p : f32
      linalg.yield %t : f32
    } -> tensor<8x128xf32>
    %twice = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%dot : tensor<8x128xf32>) outs(%c : tensor<8x128xf32>) {
    ^bb0(%d: f32, %unused: f32):
      %t = arith.addf %d, %d : f32
      linalg.yield %t : f32
    } -> tensor<8x128xf32>
    %dot2 = linalg.generic {indexing_maps = [#lhs, #rhs, #out], iterator_types = ["parallel", "parallel", "reduction"], tessel.contraction}
        ins(%a, %b : tensor<8x16xf32>, tensor<16x128xf32>) outs(%c : tensor<8x128xf32>) {
    ^bb0(%x: f32, %y: f32, %s: f32):
      %p = arith.mulf %x, %y : f32
      %t = arith.addf %s, %p : f32
      linalg.yield %t : f32
    } -> tensor<8x128xf32>
    %sums = linalg.generic {indexing_maps = [#id, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]}
        ins(%dot2 : tensor<8x128xf32>) outs(%row : tensor<8xf32>) {
    ^bb0(%d: f32, %s: f32):
      %t = arith.addf %s, %d : f32
      linalg.yield %t : f32
    } -> tensor<8xf32>
    %dot3 = linalg.generic {indexing_maps = [#lhs, #rhs, #out], iterator_types = ["parallel", "parallel", "reduction"], tessel.contraction}
        ins(%a, %b : tensor<8x16xf32>, tensor<16x128xf32>) outs(%c : tensor<8x128xf32>) {
    ^bb0(%x: f32, %y: f32, %s: f32):
      %p = arith.mulf %x, %y : f32
      %t = arith.addf %s, %p : f32
      linalg.yield %t : f32
    } -> tensor<8x128xf32>
    %masked = linalg.generic {indexing_maps = [#id, #id, #id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%mask, %dot3, %c : tensor<8x128xi1>, tensor<8x128xf32>, tensor<8x128xf32>) outs(%c : tensor<8x128xf32>) {
    ^bb0(%keep: i1, %d: f32, %other: f32, %unused: f32):
      %t = arith.select %keep, %d, %other : f32
      linalg.yield %t : f32
    } -> tensor<8x128xf32>
    return %dot, %twice, %sums, %masked : tensor<8x128xf32>, tensor<8x128xf32>, tensor<8xf32>, tensor<8x128xf32>
  }
}


// -----

// The same with 10 rows in 4-row tiles: the epilogue's panel is split
// into two whole strips and a remainder strip of 2 rows, the contraction
// (read by the add as its second operand) and its fill fused into both,
// and no contraction over the whole panel is left.
#lhs = affine_map<(i, j, k) -> (i, k)>
#rhs = affine_map<(i, j, k) -> (k, j)>
#out = affine_map<(i, j, k) -> (i, j)>
#id = affine_map<(i, j) -> (i, j)>
module attributes {tessel.register_tile = array<i64: 4, 64>} {
  // CHECK-LABEL: func.func @acc_plus_dot_with_a_remainder_strip(
  // CHECK-NOT: linalg.fill
  // CHECK: scf.for %{{.*}} = %c0 to %c128 step %c64
  // CHECK: linalg.copy
  // CHECK-NOT: tensor<10x16xf32>, tensor<16x64xf32>
  // CHECK: scf.for %{{.*}} = %c0 to %c8 step %c4
  // CHECK: %[[ZEROS:.*]] = linalg.fill {{.*}}tessel.vectorize{{.*}} -> tensor<4x64xf32>
  // CHECK: scf.for {{.*}} iter_args(%{{.*}} = %[[ZEROS]])
  // CHECK: } {tessel.reduction_loop}
  // CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<4x64xf32>)
  // CHECK-SAME: tessel.epilogue_group = 0 : i64, tessel.vectorize
  // CHECK: %[[REST:.*]] = linalg.fill {{.*}}tessel.vectorize{{.*}} -> tensor<2x64xf32>
  // CHECK: scf.for {{.*}} iter_args(%{{.*}} = %[[REST]])
  // CHECK: } {tessel.reduction_loop}
  // CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<2x64xf32>)
  // CHECK-SAME: tessel.epilogue_group = 0 : i64, tessel.vectorize
  // CHECK-NOT: tessel.contraction
  // CHECK: return
  func.func @acc_plus_dot_with_a_remainder_strip(%a: tensor<10x16xf32>, %b: tensor<16x128xf32>, %acc: tensor<10x128xf32>) -> tensor<10x128xf32> {
    %zero = arith.constant 0.0 : f32
    %empty = tensor.empty() : tensor<10x128xf32>
    %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<10x128xf32>) -> tensor<10x128xf32>
    %dot = linalg.generic {indexing_maps = [#lhs, #rhs, #out], iterator_types = ["parallel", "parallel", "reduction"], tessel.contraction}
        ins(%a, %b : tensor<10x16xf32>, tensor<16x128xf32>) outs(%init : tensor<10x128xf32>) {
    ^bb0(%x: f32, %y: f32, %s: f32):
      %p = arith.mulf %x, %y : f32
      %t = arith.addf %s, %p : f32
      linalg.yield %t : f32
    } -> tensor<10x128xf32>
    %sum = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%acc, %dot : tensor<10x128xf32>, tensor<10x128xf32>) outs(%acc : tensor<10x128xf32>) {
    ^bb0(%old: f32, %d: f32, %unused: f32):
      %t = arith.addf %old, %d : f32
      linalg.yield %t : f32
    } -> tensor<10x128xf32>
    return %sum : tensor<10x128xf32>
  }
}
// -----

// A contraction on buffers (tiles are made on tensors, before
// bufferization) is left as it is, not a crash.
#lhs = affine_map<(i, j, k) -> (i, k)>
#rhs = affine_map<(i, j, k) -> (k, j)>
#out = affine_map<(i, j, k) -> (i, j)>
// CHECK-LABEL: func.func @on_buffers
// CHECK-NOT: scf.for
// CHECK: linalg.generic
// CHECK-SAME: tessel.contraction
// CHECK-NOT: scf.for
func.func @on_buffers(%a: memref<8x16xf32>, %b: memref<16x128xf32>, %c: memref<8x128xf32>) {
  linalg.generic {indexing_maps = [#lhs, #rhs, #out], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<8x16xf32>, memref<16x128xf32>) outs(%c : memref<8x128xf32>) attrs = {tessel.contraction} {
  ^bb0(%x: f32, %y: f32, %s: f32):
    %p = arith.mulf %x, %y : f32
    %t = arith.addf %s, %p : f32
    linalg.yield %t : f32
  }
  return
}

// -----

// A contraction into a filled block that no epilogue consumes (a reduction
// reads it, and it is returned): each register tile's k loop starts from a
// tile of the fill (vectorized into a constant accumulator), and the block
// itself is not filled.
#lhs = affine_map<(i, j, k) -> (i, k)>
#rhs = affine_map<(i, j, k) -> (k, j)>
#out = affine_map<(i, j, k) -> (i, j)>
#id = affine_map<(i, j) -> (i, j)>
module attributes {tessel.register_tile = array<i64: 4, 32>} {
  // CHECK-LABEL: func.func @filled(
  // CHECK-NOT: linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<8x128xf32>)
  // CHECK: %[[TILE:.*]] = linalg.fill {tessel.vectorize} ins(%{{.*}} : f32) outs(%{{.*}} : tensor<4x32xf32>)
  // CHECK-NEXT: scf.for {{.*}} iter_args(%{{.*}} = %[[TILE]]) -> (tensor<4x32xf32>)
  // CHECK: } {tessel.reduction_loop}
  // CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
  func.func @filled(%a: tensor<8x16xf32>, %b: tensor<16x128xf32>, %row: tensor<8xf32>) -> (tensor<8xf32>, tensor<8x128xf32>) {
    %zero = arith.constant 0.0 : f32
    %empty = tensor.empty() : tensor<8x128xf32>
    %filled = linalg.fill ins(%zero : f32) outs(%empty : tensor<8x128xf32>) -> tensor<8x128xf32>
    %dot = linalg.generic {indexing_maps = [#lhs, #rhs, #out], iterator_types = ["parallel", "parallel", "reduction"], tessel.contraction}
        ins(%a, %b : tensor<8x16xf32>, tensor<16x128xf32>) outs(%filled : tensor<8x128xf32>) {
    ^bb0(%x: f32, %y: f32, %s: f32):
      %p = arith.mulf %x, %y : f32
      %t = arith.addf %s, %p : f32
      linalg.yield %t : f32
    } -> tensor<8x128xf32>
    %sums = linalg.generic {indexing_maps = [#id, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]}
        ins(%dot : tensor<8x128xf32>) outs(%row : tensor<8xf32>) {
    ^bb0(%d: f32, %s: f32):
      %t = arith.addf %s, %d : f32
      linalg.yield %t : f32
    } -> tensor<8xf32>
    return %sums, %dot : tensor<8xf32>, tensor<8x128xf32>
  }
}

// -----

// Rows the tile does not divide (10 rows of 4-row tiles: two whole strips
// and a remainder strip of 2): the remainder strip reads rows the main
// strips' insert leaves alone, so both k loops start from a tile of the
// fill and the block is not filled.
#lhs = affine_map<(i, j, k) -> (i, k)>
#rhs = affine_map<(i, j, k) -> (k, j)>
#out = affine_map<(i, j, k) -> (i, j)>
module attributes {tessel.register_tile = array<i64: 4, 32>} {
  // CHECK-LABEL: func.func @filled_with_a_remainder_strip(
  // CHECK-NOT: linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<10x128xf32>)
  // CHECK: scf.for %{{.*}} = %{{.*}} to %c8 step %c4
  // CHECK: %[[MAIN:.*]] = linalg.fill {tessel.vectorize} ins(%{{.*}} : f32) outs(%{{.*}} : tensor<4x32xf32>)
  // CHECK-NEXT: scf.for {{.*}} iter_args(%{{.*}} = %[[MAIN]]) -> (tensor<4x32xf32>)
  // CHECK: %[[REST:.*]] = linalg.fill {tessel.vectorize} ins(%{{.*}} : f32) outs(%{{.*}} : tensor<2x32xf32>)
  // CHECK-NEXT: scf.for {{.*}} iter_args(%{{.*}} = %[[REST]]) -> (tensor<2x32xf32>)
  // CHECK-NOT: linalg.fill
  // CHECK: return
  func.func @filled_with_a_remainder_strip(%a: tensor<10x16xf32>, %b: tensor<16x128xf32>) -> tensor<10x128xf32> {
    %zero = arith.constant 0.0 : f32
    %empty = tensor.empty() : tensor<10x128xf32>
    %filled = linalg.fill ins(%zero : f32) outs(%empty : tensor<10x128xf32>) -> tensor<10x128xf32>
    %dot = linalg.generic {indexing_maps = [#lhs, #rhs, #out], iterator_types = ["parallel", "parallel", "reduction"], tessel.contraction}
        ins(%a, %b : tensor<10x16xf32>, tensor<16x128xf32>) outs(%filled : tensor<10x128xf32>) {
    ^bb0(%x: f32, %y: f32, %s: f32):
      %p = arith.mulf %x, %y : f32
      %t = arith.addf %s, %p : f32
      linalg.yield %t : f32
    } -> tensor<10x128xf32>
    return %dot : tensor<10x128xf32>
  }
}

// -----

// With k chunks the block keeps its fill: the chunk loop revisits every
// tile, whose later chunks start from the sums of the earlier ones.
#lhs = affine_map<(i, j, k) -> (i, k)>
#rhs = affine_map<(i, j, k) -> (k, j)>
#out = affine_map<(i, j, k) -> (i, j)>
module attributes {tessel.register_tile = array<i64: 4, 32>, tessel.k_chunk = 8 : i64} {
  // CHECK-LABEL: func.func @filled_in_chunks(
  // CHECK: linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<8x128xf32>)
  // CHECK-NOT: linalg.fill {tessel.vectorize}
  // CHECK: return
  func.func @filled_in_chunks(%a: tensor<8x16xf32>, %b: tensor<16x128xf32>) -> tensor<8x128xf32> {
    %zero = arith.constant 0.0 : f32
    %empty = tensor.empty() : tensor<8x128xf32>
    %filled = linalg.fill ins(%zero : f32) outs(%empty : tensor<8x128xf32>) -> tensor<8x128xf32>
    %dot = linalg.generic {indexing_maps = [#lhs, #rhs, #out], iterator_types = ["parallel", "parallel", "reduction"], tessel.contraction}
        ins(%a, %b : tensor<8x16xf32>, tensor<16x128xf32>) outs(%filled : tensor<8x128xf32>) {
    ^bb0(%x: f32, %y: f32, %s: f32):
      %p = arith.mulf %x, %y : f32
      %t = arith.addf %s, %p : f32
      linalg.yield %t : f32
    } -> tensor<8x128xf32>
    return %dot : tensor<8x128xf32>
  }
}

// -----

// Without tessel.k_chunk the CPU's caches decide k's blocks (as tessel
// compile --cpu records them): a 4 x 32 f32 tile's B panel takes 128 bytes
// per k step, so with 4 KiB of L2 (half for the panel) k is split into
// chunks of 16 — the packed panel is 16 x 32 — and with 1 MiB k stays whole.
#lhs = affine_map<(i, j, k) -> (i, k)>
#rhs = affine_map<(i, j, k) -> (k, j)>
#out = affine_map<(i, j, k) -> (i, j)>
module attributes {tessel.register_tile = array<i64: 4, 32>, tessel.l2_bytes = 4096 : i64, tessel.l3_bytes = 1048576 : i64} {
  // CHECK-LABEL: func.func @chunked_by_the_caches(
  // CHECK: linalg.copy {tessel.packing} ins(%{{.*}} : tensor<16x32xf32>)
  func.func @chunked_by_the_caches(%a: tensor<8x64xf32>, %b: tensor<64x64xf32>, %c: tensor<8x64xf32>) -> tensor<8x64xf32> {
    %r = linalg.generic {indexing_maps = [#lhs, #rhs, #out], iterator_types = ["parallel", "parallel", "reduction"], tessel.contraction}
        ins(%a, %b : tensor<8x64xf32>, tensor<64x64xf32>) outs(%c : tensor<8x64xf32>) {
    ^bb0(%x: f32, %y: f32, %s: f32):
      %p = arith.mulf %x, %y : f32
      %t = arith.addf %s, %p : f32
      linalg.yield %t : f32
    } -> tensor<8x64xf32>
    return %r : tensor<8x64xf32>
  }
}

// -----

#lhs = affine_map<(i, j, k) -> (i, k)>
#rhs = affine_map<(i, j, k) -> (k, j)>
#out = affine_map<(i, j, k) -> (i, j)>
module attributes {tessel.register_tile = array<i64: 4, 32>, tessel.l2_bytes = 1048576 : i64, tessel.l3_bytes = 1048576 : i64} {
  // CHECK-LABEL: func.func @whole_in_the_caches(
  // CHECK: linalg.copy {tessel.packing} ins(%{{.*}} : tensor<64x32xf32>)
  func.func @whole_in_the_caches(%a: tensor<8x64xf32>, %b: tensor<64x64xf32>, %c: tensor<8x64xf32>) -> tensor<8x64xf32> {
    %r = linalg.generic {indexing_maps = [#lhs, #rhs, #out], iterator_types = ["parallel", "parallel", "reduction"], tessel.contraction}
        ins(%a, %b : tensor<8x64xf32>, tensor<64x64xf32>) outs(%c : tensor<8x64xf32>) {
    ^bb0(%x: f32, %y: f32, %s: f32):
      %p = arith.mulf %x, %y : f32
      %t = arith.addf %s, %p : f32
      linalg.yield %t : f32
    } -> tensor<8x64xf32>
    return %r : tensor<8x64xf32>
  }
}
