// RUN: tessel-opt %s --split-input-file --tessel-matrix-cores --tessel-register-tiles --canonicalize --cse | FileCheck %s

// f32 on gfx1100 (no f32 WMMA: matrix cores leave it): 4 waves of 32 = 128
// work-items as 16 rows x 8 columns, each a 4x8 tile (32 accumulators),
// so one 64x64 sub-block covers the block. Work-item t is (t / 8, t % 8):
// rows 4 (t / 8) .. + 3, columns 8 (t % 8) .. + 7; its accumulators are
// four row vectors of C, loaded before the k loop and stored after it.
// The 16-deep chunks are staged k-major: B as it is ([k][n], 8 values per
// item in two 16-byte loads, one 32-byte LDS store), A transposed ([k][m]:
// two rows of 4 k per item, stored as four pairs of m). Per k step, one
// vector of 4 A values and one of 8 B values, then per tile row an FMA of
// the A value broadcast with the B row: 32 FMAs per 12 values read. The
// chunk loop is the pipelined one (k = 32: the second chunk's loads before
// the first's FMAs, stored to LDS after them; scheduler fences between
// loads, FMAs and stores). The k-step loop is
// unrolled by two (RDNA 3 dual-issues pairs of the two steps' FMAs).
// CHECK: #[[UNROLL:.*]] = #llvm.loop_unroll<count = 2 : i32>
// CHECK: #[[STEPS:.*]] = #llvm.loop_annotation<unroll = #[[UNROLL]]>
// CHECK-LABEL: func.func @f32_on_rdna3
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[C4:.*]] = arith.constant 4 : index
// CHECK-DAG: %[[C8:.*]] = arith.constant 8 : index
// CHECK-DAG: %[[C16:.*]] = arith.constant 16 : index
// CHECK: scf.forall
// CHECK: %[[TID:.*]] = gpu.thread_id x
// CHECK: %[[TX:.*]] = arith.remui %[[TID]], %[[C8]]
// CHECK: %[[TY:.*]] = arith.divui %[[TID]], %[[C8]]
// CHECK: %[[AROW:.*]] = arith.muli %[[TY]], %[[C4]]
// CHECK: %[[BCOL:.*]] = arith.muli %[[TX]], %[[C8]]
// CHECK: %[[LB:.*]] = memref.alloc() {alignment = 64 : i64, tessel.staged} : memref<16x64xf32>
// CHECK: %[[LA:.*]] = memref.alloc() {alignment = 64 : i64, tessel.staged} : memref<16x64xf32>
// CHECK: %[[INIT0:.*]] = vector.load %[[CS:.*]][%[[AROW]], %[[BCOL]]] : memref<64x64xf32, strided<[128, 1], offset: ?>>, vector<8xf32>
// CHECK-COUNT-3: vector.load %[[CS]][%{{.*}}, %[[BCOL]]] : memref<64x64xf32, strided<[128, 1], offset: ?>>, vector<8xf32>
// CHECK-COUNT-2: vector.load %{{.*}} : memref<16x64xf32, strided<[128, 1], offset: ?>>, vector<4xf32>
// CHECK-COUNT-2: vector.load %{{.*}} : memref<64x16xf32, strided<[32, 1]>>, vector<4xf32>
// CHECK: vector.store %{{.*}}, %[[LB]][%{{.*}}] : memref<16x64xf32>, vector<8xf32>
// CHECK-COUNT-4: vector.store %{{.*}}, %[[LA]][%{{.*}}] : memref<16x64xf32>, vector<2xf32>
// CHECK-NEXT: gpu.barrier
// The second chunk's global loads, then the first chunk's FMAs.
// CHECK-COUNT-4: vector.load %{{.*}}strided{{.*}} vector<4xf32>
// CHECK: %[[FIRST:.*]]:4 = scf.for %[[K:.*]] = %[[C0]] to %[[C16]] step %[[C1]] iter_args(%[[ACC0:.*]] = %[[INIT0]], %{{.*}}) -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>) {
// CHECK-NEXT: %[[A:.*]] = vector.load %[[LA]][%[[K]], %[[AROW]]] : memref<16x64xf32>, vector<4xf32>
// CHECK-NEXT: %[[B:.*]] = vector.load %[[LB]][%[[K]], %[[BCOL]]] : memref<16x64xf32>, vector<8xf32>
// CHECK-NEXT: %[[A0:.*]] = vector.extract %[[A]][0] : f32 from vector<4xf32>
// CHECK-NEXT: %[[A0S:.*]] = vector.broadcast %[[A0]] : f32 to vector<8xf32>
// CHECK-NEXT: %[[F0:.*]] = math.fma %[[A0S]], %[[B]], %[[ACC0]] : vector<8xf32>
// CHECK-COUNT-3: math.fma
// CHECK: scf.yield %[[F0]], %{{.*}}, %{{.*}}, %{{.*}} : vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>
// CHECK-NEXT: } {loop_annotation = #[[STEPS]]}
// CHECK-NEXT: amdgpu.sched_barrier allow = <none>
// CHECK-NEXT: gpu.barrier
// CHECK: vector.store %{{.*}}, %[[LB]]
// CHECK-COUNT-4: vector.store %{{.*}}, %[[LA]]
// CHECK-NEXT: gpu.barrier
// CHECK: %[[LAST:.*]]:4 = scf.for %{{.*}} iter_args(%{{.*}} = %[[FIRST]]#0, %{{.*}} = %[[FIRST]]#1, %{{.*}} = %[[FIRST]]#2, %{{.*}} = %[[FIRST]]#3)
// CHECK-COUNT-4: math.fma
// CHECK: vector.store %[[LAST]]#0, %[[CS]][%[[AROW]], %[[BCOL]]]
// CHECK-COUNT-3: vector.store %[[LAST]]#{{[123]}}, %[[CS]]
// CHECK-NOT: linalg.generic
#a = affine_map<(i, j, k) -> (i, k)>
#b = affine_map<(i, j, k) -> (k, j)>
#c = affine_map<(i, j, k) -> (i, j)>
module attributes {tessel.chip = "gfx1100"} {
  func.func @f32_on_rdna3(%x: memref<64x32xf32>, %y: memref<32x128xf32>, %z: memref<64x128xf32>) {
    scf.forall (%p) in (2) {
      %j = affine.apply affine_map<(p) -> (p * 64)>(%p)
      %yb = memref.subview %y[0, %j] [32, 64] [1, 1] : memref<32x128xf32> to memref<32x64xf32, strided<[128, 1], offset: ?>>
      %zb = memref.subview %z[0, %j] [64, 64] [1, 1] : memref<64x128xf32> to memref<64x64xf32, strided<[128, 1], offset: ?>>
      linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"], tessel.contraction}
          ins(%x, %yb : memref<64x32xf32>, memref<32x64xf32, strided<[128, 1], offset: ?>>)
          outs(%zb : memref<64x64xf32, strided<[128, 1], offset: ?>>) {
      ^bb0(%u: f32, %v: f32, %s: f32):
        %t = math.fma %u, %v, %s : f32
        linalg.yield %t : f32
      }
    }
    return
  }
}

// -----

// f16 x f16 -> f32 on gfx942 (the MFMAs' f16 sums round differently: left
// to FMAs), two stages, k on an arbitrary grid axis: 256 work-items as
// 16 x 16 with 8x8 tiles (64 accumulators) make 128x128 sub-blocks, a loop
// walks the block's two. The body's casts apply to whole tile rows: A's
// value widened per row, B's row once per step; 16 bytes of f16 per read.
// Double buffering: four LDS buffers, chunk c + 1 stored into the other
// pair while chunk c is computed.
// CHECK-LABEL: func.func @f16_sub_blocks
// CHECK: scf.for
// CHECK: gpu.thread_id x
// CHECK-COUNT-4: memref.alloc() {alignment = 64 : i64, tessel.staged} : memref<16x128xf16>
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %[[C128:.*]] {
// CHECK-COUNT-8: vector.load %{{.*}} : memref<128x128xf32, strided<[128, 1], offset: ?>>, vector<8xf32>
// CHECK: scf.for %{{.*}} iter_args({{.*}}) -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>) {
// CHECK-NEXT: %[[A:.*]] = vector.load %{{.*}} : memref<16x128xf16>, vector<8xf16>
// CHECK-NEXT: %[[B:.*]] = vector.load %{{.*}} : memref<16x128xf16>, vector<8xf16>
// CHECK-NEXT: %[[A0:.*]] = vector.extract %[[A]][0] : f16 from vector<8xf16>
// CHECK-NEXT: %[[A0S:.*]] = vector.broadcast %[[A0]] : f16 to vector<8xf16>
// CHECK-NEXT: %[[A0W:.*]] = arith.extf %[[A0S]] : vector<8xf16> to vector<8xf32>
// CHECK-NEXT: %[[BW:.*]] = arith.extf %[[B]] : vector<8xf16> to vector<8xf32>
// CHECK-NEXT: math.fma %[[A0W]], %[[BW]], %{{.*}} : vector<8xf32>
// CHECK-COUNT-7: math.fma %{{.*}}, %[[BW]], %{{.*}} : vector<8xf32>
// CHECK-COUNT-8: vector.store %{{.*}} : memref<128x128xf32, strided<[128, 1], offset: ?>>, vector<8xf32>
// CHECK: {tessel.arbitrary_axis = 0 : i64}
#a = affine_map<(i, j, k) -> (i, k)>
#b = affine_map<(i, j, k) -> (k, j)>
#c = affine_map<(i, j, k) -> (i, j)>
module attributes {tessel.chip = "gfx942", tessel.num_stages = 2 : i64} {
  func.func @f16_sub_blocks(%x: memref<256x64xf16>, %y: memref<64x128xf16>, %z: memref<256x128xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c3 = arith.constant 3 : index
    scf.for %k = %c0 to %c3 step %c1 {
      linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"], tessel.contraction}
          ins(%x, %y : memref<256x64xf16>, memref<64x128xf16>) outs(%z : memref<256x128xf32>) {
      ^bb0(%u: f16, %v: f16, %s: f32):
        %uw = arith.extf %u : f16 to f32
        %vw = arith.extf %v : f16 to f32
        %t = math.fma %uw, %vw, %s : f32
        linalg.yield %t : f32
      }
    } {tessel.arbitrary_axis = 0 : i64}
    return
  }
}

// -----

// The wanted tile (tessel.register_tile = 2x4, one wave of 64): f64 FMAs
// and an i16 x i16 -> i32 multiply-add (the body's extsi, muli, addi on
// tile rows). 64 items of 2x4 tiles cover 32x16: a loop walks the two
// sub-blocks.
// CHECK-LABEL: func.func @wanted_tile
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK: scf.for %{{.*}} iter_args({{.*}}) -> (vector<4xf64>, vector<4xf64>) {
// CHECK-NEXT: vector.load %{{.*}} : memref<16x32xf64>, vector<2xf64>
// CHECK-NEXT: vector.load %{{.*}} : memref<16x16xf64>, vector<4xf64>
// CHECK-COUNT-2: math.fma %{{.*}} : vector<4xf64>
// CHECK: scf.for %{{.*}} iter_args({{.*}}) -> (vector<4xi32>, vector<4xi32>) {
// CHECK-NEXT: vector.load %{{.*}} : memref<16x32xi16>, vector<2xi16>
// CHECK-NEXT: %[[B:.*]] = vector.load %{{.*}} : memref<16x16xi16>, vector<4xi16>
// CHECK-NEXT: %[[A0:.*]] = vector.extract
// CHECK-NEXT: %[[A0S:.*]] = vector.broadcast %[[A0]] : i16 to vector<4xi16>
// CHECK-NEXT: %[[A0W:.*]] = arith.extsi %[[A0S]] : vector<4xi16> to vector<4xi32>
// CHECK-NEXT: %[[BW:.*]] = arith.extsi %[[B]] : vector<4xi16> to vector<4xi32>
// CHECK-NEXT: %[[P:.*]] = arith.muli %[[A0W]], %[[BW]] : vector<4xi32>
// CHECK-NEXT: arith.addi %{{.*}}, %[[P]] : vector<4xi32>
#a = affine_map<(i, j, k) -> (i, k)>
#b = affine_map<(i, j, k) -> (k, j)>
#c = affine_map<(i, j, k) -> (i, j)>
module attributes {tessel.chip = "gfx90a", tessel.num_warps = 1 : i64, tessel.register_tile = array<i64: 2, 4>} {
  func.func @wanted_tile(%x: memref<32x16xf64>, %y: memref<16x32xf64>, %z: memref<32x32xf64>,
                         %p: memref<32x16xi16>, %q: memref<16x32xi16>, %r: memref<32x32xi32>) {
    scf.forall (%i) in (1) {
      linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"], tessel.contraction}
          ins(%x, %y : memref<32x16xf64>, memref<16x32xf64>) outs(%z : memref<32x32xf64>) {
      ^bb0(%u: f64, %v: f64, %s: f64):
        %t = math.fma %u, %v, %s : f64
        linalg.yield %t : f64
      }
      linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"], tessel.contraction}
          ins(%p, %q : memref<32x16xi16>, memref<16x32xi16>) outs(%r : memref<32x32xi32>) {
      ^bb0(%u: i16, %v: i16, %s: i32):
        %uw = arith.extsi %u : i16 to i32
        %vw = arith.extsi %v : i16 to i32
        %m = arith.muli %uw, %vw : i32
        %t = arith.addi %s, %m : i32
        linalg.yield %t : i32
      }
    }
    return
  }
}

// -----

// Left to tessel-lds-stage: fewer results than work-items (8x8 with
// 256); a body with rewriting flags (fast-math contract: the tile would
// re-emit it without them); a contraction outside any grid's programs;
// and f32 on gfx90a, which matrix cores took first.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: gpu.thread_id
// CHECK-COUNT-3: linalg.generic
// CHECK-NOT: linalg.generic
// CHECK: gpu.thread_id x
// CHECK: amdgpu.mfma
#a = affine_map<(i, j, k) -> (i, k)>
#b = affine_map<(i, j, k) -> (k, j)>
#c = affine_map<(i, j, k) -> (i, j)>
module attributes {tessel.chip = "gfx90a"} {
  func.func @left_alone(%x: memref<8x8xf64>, %o: memref<8x8xf64>, %h: memref<64x64xf16>, %f: memref<64x64xf32>) {
    scf.forall (%p) in (1) {
      linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"], tessel.contraction}
          ins(%x, %x : memref<8x8xf64>, memref<8x8xf64>) outs(%o : memref<8x8xf64>) {
      ^bb0(%u: f64, %v: f64, %s: f64):
        %t = math.fma %u, %v, %s : f64
        linalg.yield %t : f64
      }
      linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"], tessel.contraction}
          ins(%h, %h : memref<64x64xf16>, memref<64x64xf16>) outs(%f : memref<64x64xf32>) {
      ^bb0(%u: f16, %v: f16, %s: f32):
        %uw = arith.extf %u : f16 to f32
        %vw = arith.extf %v : f16 to f32
        %t = math.fma %uw, %vw, %s fastmath<contract> : f32
        linalg.yield %t : f32
      }
    }
    linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"], tessel.contraction}
        ins(%h, %h : memref<64x64xf16>, memref<64x64xf16>) outs(%f : memref<64x64xf32>) {
    ^bb0(%u: f16, %v: f16, %s: f32):
      %uw = arith.extf %u : f16 to f32
      %vw = arith.extf %v : f16 to f32
      %t = math.fma %uw, %vw, %s : f32
      linalg.yield %t : f32
    }
    scf.forall (%p) in (1) {
      linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"], tessel.contraction}
          ins(%f, %f : memref<64x64xf32>, memref<64x64xf32>) outs(%f : memref<64x64xf32>) {
      ^bb0(%u: f32, %v: f32, %s: f32):
        %t = math.fma %u, %v, %s : f32
        linalg.yield %t : f32
      }
    }
    return
  }
}

// -----

// A contraction right after a fill of its whole output (what `block.dot
// ... acc` of a splat constant bufferizes to): the accumulators start as
// the fill value in registers, and the fill goes: C is written once, by
// the tiles' stores, and never read.
// CHECK-LABEL: func.func @from_a_fill
// CHECK-NOT: linalg.fill
// CHECK-DAG: %[[START:.*]] = arith.constant dense<2.000000e+00> : vector<8xf32>
// CHECK-NOT: vector.load %{{.*}} : memref<64x64xf32>
// CHECK: scf.for %{{.*}} iter_args(%{{.*}} = %[[START]], %{{.*}} = %[[START]], %{{.*}} = %[[START]], %{{.*}} = %[[START]])
// CHECK-COUNT-4: vector.store %{{.*}} : memref<64x64xf32>, vector<8xf32>
#a = affine_map<(i, j, k) -> (i, k)>
#b = affine_map<(i, j, k) -> (k, j)>
#c = affine_map<(i, j, k) -> (i, j)>
module attributes {tessel.chip = "gfx1100"} {
  func.func @from_a_fill(%x: memref<64x32xf32>, %y: memref<32x64xf32>, %z: memref<64x64xf32>) {
    %two = arith.constant 2.0 : f32
    scf.forall (%p) in (1) {
      linalg.fill ins(%two : f32) outs(%z : memref<64x64xf32>)
      linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"], tessel.contraction}
          ins(%x, %y : memref<64x32xf32>, memref<32x64xf32>) outs(%z : memref<64x64xf32>) {
      ^bb0(%u: f32, %v: f32, %s: f32):
        %t = math.fma %u, %v, %s : f32
        linalg.yield %t : f32
      }
    }
    return
  }
}
