// RUN: tessel-opt %s --split-input-file --tessel-matrix-cores --canonicalize --cse | FileCheck %s

// An f32 contraction on gfx90a (the default chip): four waves as 2x2, one
// 16x16 tile each. Lane l of a wave is (lo, hi) = (l % 16, l / 16): its A
// fragment for step s is A[row + lo][k + 4s + hi], its B fragment
// B[k + 4s + hi][col + lo], and the instruction computes the tile
// transposed (B's fragment first), so its four accumulators are
// C[row + lo][col + 4 hi .. + 3]: one vector load before the k loop, one
// vector store after. Each work-item stages its share of the 16-deep
// chunks itself (matrix_staging): A by rows, B transposed to columns,
// as [hi][row or column][s]: a lane's four steps are one 16-byte LDS read
// per operand, and the 16 lanes of a group read neighbouring rows (no bank
// conflicts). The k loop is software-pipelined as its dependence graph
// asks (pipeline_schedule.rs): four 32-cycle MFMAs per chunk make a short
// interval, so the loads of chunk c + 3 are issued before chunk c's
// compute, and after it (and a barrier) the registers of chunk c + 1 are
// stored to LDS. Chunks 1 and 2 are loaded before the loop and ride it as
// iteration arguments; the loop is unrolled by three chunks (0 to 192
// step 48) so that each carried chunk's registers are free again when
// the chunk replacing them arrives (no copies), and stays a loop (LLVM's
// unrolling disabled: unrolled, every chunk's loads would be in flight at
// once). Scheduler fences keep each step's loads, compute and stores in
// that order (LLVM would otherwise sink the loads below the MFMAs).
// CHECK: #[[ROLLED_ATTR:.*]] = #llvm.loop_annotation<unroll = #{{.*}}>
// CHECK-LABEL: func.func @f32_on_cdna
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C4:.*]] = arith.constant 4 : index
// CHECK-DAG: %[[C16:.*]] = arith.constant 16 : index
// CHECK-DAG: %[[C48:.*]] = arith.constant 48 : index
// CHECK-DAG: %[[C64:.*]] = arith.constant 64 : index
// CHECK-DAG: %[[C192:.*]] = arith.constant 192 : index
// CHECK: scf.forall
// CHECK: %[[TID:.*]] = gpu.thread_id x
// CHECK: %[[LANE:.*]] = arith.remui %[[TID]], %[[C64]]
// CHECK: %[[WAVE:.*]] = arith.divui %[[TID]], %[[C64]]
// CHECK: %[[LO:.*]] = arith.remui %[[LANE]], %[[C16]]
// CHECK: %[[HI:.*]] = arith.divui %[[LANE]], %[[C16]]
// CHECK: %[[HI4:.*]] = arith.muli %[[HI]], %[[C4]]
// CHECK: %[[LA:.*]] = memref.alloc() {alignment = 64 : i64, tessel.staged} : memref<128x4xf32>
// CHECK: %[[LB:.*]] = memref.alloc() {alignment = 64 : i64, tessel.staged} : memref<128x4xf32>
// CHECK: %[[ROW:.*]] = arith.addi %{{.*}}, %[[LO]]
// CHECK: %[[COL:.*]] = arith.addi %{{.*}}, %[[LO]]
// CHECK: %[[COLS:.*]] = arith.addi %{{.*}}, %[[HI4]]
// CHECK: %[[INIT:.*]] = vector.load %{{.*}}[%[[ROW]], %[[COLS]]] : memref<32x32xf32, strided<[64, 1], offset: ?>>, vector<4xf32>
// The first chunk, staged before the loop: two A and two B elements per
// item; then chunks 1 and 2 into registers.
// CHECK: vector.load %{{.*}} : memref<32x16xf32, strided<[256, 1]>>, vector<2xf32>
// CHECK: vector.load %{{.*}} : memref<16x32xf32, strided<[64, 1], offset: ?>>, vector<2xf32>
// CHECK-COUNT-2: vector.store %{{.*}}, %[[LA]]
// CHECK-COUNT-2: vector.store %{{.*}}, %[[LB]]
// CHECK: gpu.barrier
// CHECK: %[[A1:.*]] = vector.load %{{.*}} : memref<32x16xf32, strided<[256, 1], offset: 16>>, vector<2xf32>
// CHECK: %[[B1:.*]] = vector.load %{{.*}} : memref<16x32xf32, strided<[64, 1], offset: ?>>, vector<2xf32>
// CHECK: %[[A2:.*]] = vector.load %{{.*}} : memref<32x16xf32, strided<[256, 1], offset: 32>>, vector<2xf32>
// CHECK: %[[B2:.*]] = vector.load %{{.*}} : memref<16x32xf32, strided<[64, 1], offset: ?>>, vector<2xf32>
// CHECK: %[[RES:.*]]:5 = scf.for %[[K:.*]] = %[[C0]] to %[[C192]] step %[[C48]] iter_args(%[[ACC:.*]] = %[[INIT]], %[[FA1:.*]] = %[[A1]], %[[FB1:.*]] = %[[B1]], %{{.*}} = %[[A2]], %{{.*}} = %[[B2]]) -> (vector<4xf32>, vector<2xf32>, vector<2xf32>, vector<2xf32>, vector<2xf32>) {
// CHECK: %[[AHEAD:.*]] = arith.addi %[[K]], %[[C48]]
// CHECK: memref.subview %{{.*}}[0, %[[AHEAD]]] [32, 16] [1, 1]
// CHECK: memref.subview %{{.*}}[%[[AHEAD]], 0] [16, 32] [1, 1]
// CHECK: %[[GA:.*]] = vector.load {{.*}} vector<2xf32>
// CHECK: %[[GB:.*]] = vector.load {{.*}} vector<2xf32>
// CHECK-NEXT: amdgpu.sched_barrier allow = <none>
// CHECK: %[[RA:.*]] = vector.load %[[LA]][%[[AROW:.*]], %[[C0]]] : memref<128x4xf32>, vector<4xf32>
// CHECK: %[[RB:.*]] = vector.load %[[LB]][%[[BROW:.*]], %[[C0]]] : memref<128x4xf32>, vector<4xf32>
// CHECK: %[[A0:.*]] = vector.extract %[[RA]][0]
// CHECK: %[[B0:.*]] = vector.extract %[[RB]][0]
// CHECK: %[[M0:.*]] = amdgpu.mfma 16x16x4 %[[B0]] * %[[A0]] + %[[ACC]] blgp = none : f32, f32, vector<4xf32>
// CHECK: %[[M1:.*]] = amdgpu.mfma 16x16x4 %{{.*}} * %{{.*}} + %[[M0]]
// CHECK: %[[M2:.*]] = amdgpu.mfma 16x16x4 %{{.*}} * %{{.*}} + %[[M1]]
// CHECK: %[[M3:.*]] = amdgpu.mfma 16x16x4 %{{.*}} * %{{.*}} + %[[M2]]
// CHECK-NEXT: amdgpu.sched_barrier allow = <none>
// CHECK-NEXT: gpu.barrier
// CHECK: vector.extract %[[FA1]][0]
// CHECK: vector.store %{{.*}}, %[[LA]]
// CHECK: vector.store %{{.*}}, %[[LA]]
// CHECK: vector.extract %[[FB1]][0]
// CHECK: vector.store %{{.*}}, %[[LB]]
// CHECK: vector.store %{{.*}}, %[[LB]]
// CHECK-NEXT: gpu.barrier
// Two more steps: chunks c + 1 and c + 2, their loads c + 4 and c + 5.
// CHECK-COUNT-8: amdgpu.mfma 16x16x4
// CHECK: scf.yield %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : vector<4xf32>, vector<2xf32>, vector<2xf32>, vector<2xf32>, vector<2xf32>
// CHECK: } {loop_annotation = #[[ROLLED:.*]], tessel.lds_chunks}
// The last four chunks after the loop (chunk 15's loads in the first).
// CHECK: memref.subview %{{.*}}[0, 240] [32, 16] [1, 1]
// CHECK-COUNT-16: amdgpu.mfma 16x16x4
// CHECK: vector.store %{{.*}}, %{{.*}}[%[[ROW]], %[[COLS]]] : memref<32x32xf32, strided<[64, 1], offset: ?>>, vector<4xf32>
// CHECK-NOT: linalg.
#a = affine_map<(i, j, k) -> (i, k)>
#b = affine_map<(i, j, k) -> (k, j)>
#c = affine_map<(i, j, k) -> (i, j)>
func.func @f32_on_cdna(%x: memref<32x256xf32>, %y: memref<256x64xf32>, %z: memref<32x64xf32>) {
  scf.forall (%p) in (2) {
    %j = affine.apply affine_map<(p) -> (p * 32)>(%p)
    %yb = memref.subview %y[0, %j] [256, 32] [1, 1] : memref<256x64xf32> to memref<256x32xf32, strided<[64, 1], offset: ?>>
    %zb = memref.subview %z[0, %j] [32, 32] [1, 1] : memref<32x64xf32> to memref<32x32xf32, strided<[64, 1], offset: ?>>
    linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"], tessel.contraction}
        ins(%x, %yb : memref<32x256xf32>, memref<256x32xf32, strided<[64, 1], offset: ?>>)
        outs(%zb : memref<32x32xf32, strided<[64, 1], offset: ?>>) {
    ^bb0(%u: f32, %v: f32, %s: f32):
      %t = math.fma %u, %v, %s : f32
      linalg.yield %t : f32
    }
  }
  return
}

// -----

// A block larger than the waves' tiles: 8x4 tiles of 16 per wave (128
// accumulator registers, half of what a lane may hold with four waves)
// make 256x128 sub-blocks, and a loop walks the 512x128 block's two;
// thirty-two accumulators ride the k loop (three pipelined chunks, the
// fourth after it).
// CHECK-LABEL: func.func @sub_blocks
// CHECK: scf.for %[[SM:.*]] = %{{.*}} to %{{.*}} step %[[C256:.*]] {
// CHECK: memref.subview %{{.*}}[%[[SM]], 0] [256, 128] [1, 1]
// CHECK-COUNT-32: vector.load
// CHECK: scf.for {{.*}} iter_args({{.*}}) -> (vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>) {
// CHECK-COUNT-128: amdgpu.mfma 16x16x4
// CHECK: } {loop_annotation = #[[ROLLED:.*]], tessel.lds_chunks}
// CHECK-COUNT-128: amdgpu.mfma 16x16x4
// CHECK-COUNT-32: vector.store %{{.*}} : memref<256x128xf32, strided<[128, 1], offset: ?>>, vector<4xf32>
#a = affine_map<(i, j, k) -> (i, k)>
#b = affine_map<(i, j, k) -> (k, j)>
#c = affine_map<(i, j, k) -> (i, j)>
func.func @sub_blocks(%x: memref<512x64xf32>, %y: memref<64x128xf32>, %z: memref<512x128xf32>) {
  scf.forall (%p) in (1) {
    linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"], tessel.contraction}
        ins(%x, %y : memref<512x64xf32>, memref<64x128xf32>) outs(%z : memref<512x128xf32>) {
    ^bb0(%u: f32, %v: f32, %s: f32):
      %t = math.fma %u, %v, %s : f32
      linalg.yield %t : f32
    }
  }
  return
}

// -----

// Inside an arbitrary grid axis's loop (its k steps not merged into one
// contraction: an epilogue on the last, say), the loop's own values live
// beside the accumulators: 64 registers a lane, 4x4 tiles of 16 per wave,
// so a loop walks the 256x128 block's two 128x128 sub-blocks; sixteen
// accumulators ride the k loop. An arbitrary grid axis (an ordered
// scf.for) holds programs too.
// CHECK-LABEL: func.func @sub_blocks_in_grid_steps
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK: scf.for %[[SM:.*]] = %{{.*}} to %{{.*}} step %[[C128:.*]] {
// CHECK: memref.subview %{{.*}}[%[[SM]], 0] [128, 128] [1, 1]
// CHECK-COUNT-16: vector.load
// CHECK: scf.for {{.*}} iter_args({{.*}}) -> (vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>) {
// CHECK-COUNT-64: amdgpu.mfma 16x16x4
// CHECK: } {loop_annotation = #[[ROLLED:.*]], tessel.lds_chunks}
// CHECK-COUNT-64: amdgpu.mfma 16x16x4
// CHECK-COUNT-16: vector.store %{{.*}} : memref<128x128xf32, strided<[128, 1], offset: ?>>, vector<4xf32>
#a = affine_map<(i, j, k) -> (i, k)>
#b = affine_map<(i, j, k) -> (k, j)>
#c = affine_map<(i, j, k) -> (i, j)>
func.func @sub_blocks_in_grid_steps(%x: memref<256x64xf32>, %y: memref<64x128xf32>, %z: memref<256x128xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  scf.for %k = %c0 to %c3 step %c1 {
    linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"], tessel.contraction}
        ins(%x, %y : memref<256x64xf32>, memref<64x128xf32>) outs(%z : memref<256x128xf32>) {
    ^bb0(%u: f32, %v: f32, %s: f32):
      %t = math.fma %u, %v, %s : f32
      linalg.yield %t : f32
    }
  } {tessel.arbitrary_axis = 0 : i64}
  return
}

// -----

// Two stages (tessel.num_stages = 2): two LDS buffers per operand, chunk
// c computed from buffers c % 2 while chunk c + 1 is stored into the
// others: one barrier per chunk, none before the stores. The schedule
// loads three chunks ahead (as @f32_on_cdna), so the loop is unrolled by
// six chunks (both buffers, three chunks in flight: 0 to 384 step 96) and
// the last eight chunks follow it.
// CHECK-LABEL: func.func @double_buffered
// CHECK-COUNT-4: memref.alloc() {alignment = 64 : i64, tessel.staged}
// CHECK-COUNT-4: vector.store
// CHECK-NEXT: gpu.barrier
// CHECK: scf.for %{{.*}} = %{{.*}} to %c384 step %c96 iter_args
// CHECK-COUNT-2: vector.load %{{.*}}strided
// CHECK-NEXT: amdgpu.sched_barrier
// CHECK-COUNT-4: amdgpu.mfma
// CHECK-NEXT: amdgpu.sched_barrier
// CHECK-NOT: gpu.barrier
// CHECK-COUNT-4: vector.store
// CHECK-NEXT: gpu.barrier
// CHECK-COUNT-2: vector.load %{{.*}}strided
// CHECK-NEXT: amdgpu.sched_barrier
// CHECK-COUNT-4: amdgpu.mfma
// CHECK-NEXT: amdgpu.sched_barrier
// CHECK-NOT: gpu.barrier
// CHECK-COUNT-4: vector.store
// CHECK-NEXT: gpu.barrier
// CHECK-COUNT-16: amdgpu.mfma
// CHECK: scf.yield
// CHECK: } {loop_annotation = #[[ROLLED:.*]], tessel.lds_chunks}
// CHECK-COUNT-32: amdgpu.mfma
// CHECK-NOT: gpu.barrier
// CHECK-NOT: linalg.copy
#a = affine_map<(i, j, k) -> (i, k)>
#b = affine_map<(i, j, k) -> (k, j)>
#c = affine_map<(i, j, k) -> (i, j)>
module attributes {tessel.num_stages = 2 : i64} {
  func.func @double_buffered(%x: memref<32x512xf32>, %y: memref<512x32xf32>, %z: memref<32x32xf32>) {
    scf.forall (%p) in (1) {
      linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"], tessel.contraction}
          ins(%x, %y : memref<32x512xf32>, memref<512x32xf32>) outs(%z : memref<32x32xf32>) {
      ^bb0(%u: f32, %v: f32, %s: f32):
        %t = math.fma %u, %v, %s : f32
        linalg.yield %t : f32
      }
    }
    return
  }
}

// -----

// 8-bit integers on gfx942 (one wave): 16x16x32 i8 MFMAs; a lane's A
// fragment is 8 consecutive k of its row, its B fragment 8 consecutive k
// of its column: both staged as [hi][row or column][8] (B transposed, each
// item two k by eight columns, transposed in registers), so both are one
// 8-byte LDS read.
// A single chunk: no loop.
// CHECK-LABEL: func.func @i8_on_gfx942
// CHECK: %[[LA:.*]] = memref.alloc() {{.*}} : memref<64x8xi8>
// CHECK: %[[LB:.*]] = memref.alloc() {{.*}} : memref<128x8xi8>
// CHECK: vector.load %{{.*}} : memref<16x32xi32>, vector<4xi32>
// CHECK: %[[GA:.*]] = vector.load %{{.*}} : memref<16x32xi8>, vector<8xi8>
// CHECK-COUNT-2: vector.load %{{.*}} : memref<32x32xi8>, vector<8xi8>
// CHECK: vector.store %[[GA]], %[[LA]][{{.*}}] : memref<64x8xi8>, vector<8xi8>
// CHECK-COUNT-8: vector.store %{{.*}}, %[[LB]][{{.*}}] : memref<128x8xi8>, vector<2xi8>
// CHECK: gpu.barrier
// CHECK: vector.load %[[LA]][{{.*}}] : memref<64x8xi8>, vector<8xi8>
// CHECK-COUNT-2: vector.load %[[LB]][{{.*}}] : memref<128x8xi8>, vector<8xi8>
// CHECK-NOT: memref.load
// CHECK: amdgpu.mfma 16x16x32 %{{.*}} * %{{.*}} + %{{.*}} blgp = none : vector<8xi8>, vector<8xi8>, vector<4xi32>
#a = affine_map<(i, j, k) -> (i, k)>
#b = affine_map<(i, j, k) -> (k, j)>
#c = affine_map<(i, j, k) -> (i, j)>
module attributes {tessel.chip = "gfx942", tessel.num_warps = 1 : i64} {
  func.func @i8_on_gfx942(%x: memref<16x32xi8>, %y: memref<32x32xi8>, %z: memref<16x32xi32>) {
    scf.forall (%p) in (1) {
      linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"], tessel.contraction}
          ins(%x, %y : memref<16x32xi8>, memref<32x32xi8>) outs(%z : memref<16x32xi32>) {
      ^bb0(%u: i8, %v: i8, %s: i32):
        %uw = arith.extsi %u : i8 to i32
        %vw = arith.extsi %v : i8 to i32
        %m = arith.muli %uw, %vw : i32
        %t = arith.addi %s, %m : i32
        linalg.yield %t : i32
      }
    }
    return
  }
}

// -----

// 8-bit integers on gfx1100 (wave32): WMMA, A and B fragments as the
// instruction takes them (A first): a lane holds a whole k step of its
// row (column), so the staged layout is plain [row][k] for A and
// [column][k] for B, each fragment one 16-byte LDS read. A lane's 8
// accumulators are in rows 2r + hi of its column: loaded and stored one
// by one.
// CHECK-LABEL: func.func @i8_on_rdna3
// CHECK: %[[TID:.*]] = gpu.thread_id x
// CHECK: arith.remui %[[TID]], %c32
// CHECK-COUNT-8: memref.load %{{.*}} : memref<16x16xi32>
// CHECK: vector.from_elements {{.*}} : vector<8xi32>
// CHECK: gpu.barrier
// CHECK-COUNT-2: vector.load %{{.*}} : memref<16x16xi8>, vector<16xi8>
// CHECK: amdgpu.wmma 16x16x16 %{{.*}} * %{{.*}} + %{{.*}} : vector<16xi8>, vector<16xi8>, vector<8xi32>
// CHECK-COUNT-8: memref.store
#a = affine_map<(i, j, k) -> (i, k)>
#b = affine_map<(i, j, k) -> (k, j)>
#c = affine_map<(i, j, k) -> (i, j)>
module attributes {tessel.chip = "gfx1100", tessel.num_warps = 1 : i64} {
  func.func @i8_on_rdna3(%x: memref<16x16xi8>, %y: memref<16x16xi8>, %z: memref<16x16xi32>) {
    scf.forall (%p) in (1) {
      linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"], tessel.contraction}
          ins(%x, %y : memref<16x16xi8>, memref<16x16xi8>) outs(%z : memref<16x16xi32>) {
      ^bb0(%u: i8, %v: i8, %s: i32):
        %uw = arith.extsi %u : i8 to i32
        %vw = arith.extsi %v : i8 to i32
        %m = arith.muli %uw, %vw : i32
        %t = arith.addi %s, %m : i32
        linalg.yield %t : i32
      }
    }
    return
  }
}

// -----

// Left to the FMA path: f32 on RDNA3 (no f32 WMMA); f16 operands (the
// instructions sum several products per step with their own rounding);
// sizes not multiples of 16; a block too small for four waves of 16x16
// tiles; a contraction outside any grid's programs; and everything when
// tessel.matrix_cores = 0 (next case).
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: gpu.thread_id
// CHECK-COUNT-5: linalg.generic
#a = affine_map<(i, j, k) -> (i, k)>
#b = affine_map<(i, j, k) -> (k, j)>
#c = affine_map<(i, j, k) -> (i, j)>
module attributes {tessel.chip = "gfx1100"} {
  func.func @left_alone(%x: memref<64x64xf32>, %h: memref<64x64xf16>, %o: memref<64x64xf32>,
                        %x12: memref<12x16xf32>, %y12: memref<16x12xf32>, %o12: memref<12x12xf32>) {
    scf.forall (%p) in (1) {
      linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"], tessel.contraction}
          ins(%x, %x : memref<64x64xf32>, memref<64x64xf32>) outs(%o : memref<64x64xf32>) {
      ^bb0(%u: f32, %v: f32, %s: f32):
        %t = math.fma %u, %v, %s : f32
        linalg.yield %t : f32
      }
      linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"], tessel.contraction}
          ins(%h, %h : memref<64x64xf16>, memref<64x64xf16>) outs(%o : memref<64x64xf32>) {
      ^bb0(%u: f16, %v: f16, %s: f32):
        %uw = arith.extf %u : f16 to f32
        %vw = arith.extf %v : f16 to f32
        %t = math.fma %uw, %vw, %s : f32
        linalg.yield %t : f32
      }
      linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"], tessel.contraction}
          ins(%x12, %y12 : memref<12x16xf32>, memref<16x12xf32>) outs(%o12 : memref<12x12xf32>) {
      ^bb0(%u: f32, %v: f32, %s: f32):
        %t = math.fma %u, %v, %s : f32
        linalg.yield %t : f32
      }
    }
    linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"], tessel.contraction}
        ins(%x, %x : memref<64x64xf32>, memref<64x64xf32>) outs(%o : memref<64x64xf32>) {
    ^bb0(%u: f32, %v: f32, %s: f32):
      %t = math.fma %u, %v, %s : f32
      linalg.yield %t : f32
    }
    return
  }
  func.func @too_small(%x: memref<16x16xf32>, %o: memref<16x16xf32>) {
    scf.forall (%p) in (1) {
      linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"], tessel.contraction}
          ins(%x, %x : memref<16x16xf32>, memref<16x16xf32>) outs(%o : memref<16x16xf32>) {
      ^bb0(%u: f32, %v: f32, %s: f32):
        %t = math.fma %u, %v, %s : f32
        linalg.yield %t : f32
      }
    }
    return
  }
}

// -----

// CHECK-LABEL: func.func @switched_off
// CHECK-NOT: amdgpu.mfma
// CHECK: linalg.generic
#a = affine_map<(i, j, k) -> (i, k)>
#b = affine_map<(i, j, k) -> (k, j)>
#c = affine_map<(i, j, k) -> (i, j)>
module attributes {tessel.matrix_cores = 0 : i64} {
  func.func @switched_off(%x: memref<64x64xf32>, %o: memref<64x64xf32>) {
    scf.forall (%p) in (1) {
      linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"], tessel.contraction}
          ins(%x, %x : memref<64x64xf32>, memref<64x64xf32>) outs(%o : memref<64x64xf32>) {
      ^bb0(%u: f32, %v: f32, %s: f32):
        %t = math.fma %u, %v, %s : f32
        linalg.yield %t : f32
      }
    }
    return
  }
}

// -----

// WMMA needs wave32: with 64-wide wavefronts on gfx1100 the contraction
// stays on FMAs.
// CHECK-LABEL: func.func @wave_mismatch
// CHECK-NOT: amdgpu.wmma
// CHECK: linalg.generic
#a = affine_map<(i, j, k) -> (i, k)>
#b = affine_map<(i, j, k) -> (k, j)>
#c = affine_map<(i, j, k) -> (i, j)>
module attributes {tessel.chip = "gfx1100", tessel.wave_size = 64 : i64, tessel.num_warps = 1 : i64} {
  func.func @wave_mismatch(%x: memref<16x16xi8>, %y: memref<16x16xi8>, %z: memref<16x16xi32>) {
    scf.forall (%p) in (1) {
      linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"], tessel.contraction}
          ins(%x, %y : memref<16x16xi8>, memref<16x16xi8>) outs(%z : memref<16x16xi32>) {
      ^bb0(%u: i8, %v: i8, %s: i32):
        %uw = arith.extsi %u : i8 to i32
        %vw = arith.extsi %v : i8 to i32
        %m = arith.muli %uw, %vw : i32
        %t = arith.addi %s, %m : i32
        linalg.yield %t : i32
      }
    }
    return
  }
}

// -----

// The k loop's software pipeline comes from its dependence graph
// (pipeline_schedule.rs): two 16-cycle i8 MFMAs per 32-k chunk (the
// module's; by default i8 chunks are 64 k, 64 bytes a row) make an
// interval of 144 cycles (the loads', stores' and reads' issue, the one
// LDS buffer's store-barrier-read cycle), over which a 500-cycle global
// load spans four chunks. So each chunk's loads are issued four chunks
// before its compute: three chunks' registers ride the loop (three loads
// each: A's 8 bytes, B's two rows), which is unrolled by four steps
// (0 to 384 step 128: no register copies between iterations), its
// accumulators starting from the fill of C right before the contraction
// (which goes: no store of the block and load back). Between a step's
// loads, compute and stores, fences for LLVM's scheduler.
// CHECK-LABEL: func.func @loads_run_ahead
// CHECK-NOT: linalg.fill
// CHECK-DAG: %[[ZEROS:.*]] = arith.constant dense<0> : vector<4xi32>
// CHECK-NOT: vector.load %arg2
// CHECK: scf.for %{{.*}} = %c0 to %c384 step %c128 iter_args(%{{.*}} = %[[ZEROS]], %{{.*}} = %[[ZEROS]], {{.*}}) -> (vector<4xi32>, vector<4xi32>, vector<8xi8>, vector<8xi8>, vector<8xi8>, vector<8xi8>, vector<8xi8>, vector<8xi8>, vector<8xi8>, vector<8xi8>, vector<8xi8>) {
// CHECK-COUNT-4: amdgpu.sched_barrier allow = <none>
// CHECK: scf.yield
#a = affine_map<(i, j, k) -> (i, k)>
#b = affine_map<(i, j, k) -> (k, j)>
#c = affine_map<(i, j, k) -> (i, j)>
module attributes {tessel.chip = "gfx942", tessel.num_warps = 1 : i64, tessel.lds_chunk = 32 : i64} {
  func.func @loads_run_ahead(%x: memref<16x512xi8>, %y: memref<512x32xi8>, %z: memref<16x32xi32>) {
    %zero = arith.constant 0 : i32
    scf.forall (%p) in (1) {
      linalg.fill ins(%zero : i32) outs(%z : memref<16x32xi32>)
      linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"], tessel.contraction}
          ins(%x, %y : memref<16x512xi8>, memref<512x32xi8>) outs(%z : memref<16x32xi32>) {
      ^bb0(%u: i8, %v: i8, %s: i32):
        %uw = arith.extsi %u : i8 to i32
        %vw = arith.extsi %v : i8 to i32
        %m = arith.muli %uw, %vw : i32
        %t = arith.addi %s, %m : i32
        linalg.yield %t : i32
      }
    }
    return
  }
}

// -----

// Only bodies that compute block.dot go to the matrix cores, read from
// their dataflow: an fma with the accumulator as a factor (acc * u + v),
// an i8 body subtracting the product or multiplying an input by itself,
// and an f32 body yielding the input stay on FMAs (by op names alone, the
// first three once passed).
// CHECK-LABEL: func.func @not_block_dots
// CHECK-NOT: amdgpu.mfma
// CHECK: math.fma %{{.*}}, %{{.*}}, %{{.*}} : f32
// CHECK: arith.subi
// CHECK: arith.muli
// CHECK: linalg.yield %{{.*}} : f32
#a = affine_map<(i, j, k) -> (i, k)>
#b = affine_map<(i, j, k) -> (k, j)>
#c = affine_map<(i, j, k) -> (i, j)>
module attributes {tessel.chip = "gfx942"} {
  func.func @not_block_dots(%x: memref<64x64xf32>, %o: memref<64x64xf32>, %xi: memref<64x64xi8>, %oi: memref<64x64xi32>) {
    scf.forall (%p) in (1) {
      linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"], tessel.contraction}
          ins(%x, %x : memref<64x64xf32>, memref<64x64xf32>) outs(%o : memref<64x64xf32>) {
      ^bb0(%u: f32, %v: f32, %s: f32):
        %t = math.fma %s, %u, %v : f32
        linalg.yield %t : f32
      }
      linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"], tessel.contraction}
          ins(%xi, %xi : memref<64x64xi8>, memref<64x64xi8>) outs(%oi : memref<64x64xi32>) {
      ^bb0(%u: i8, %v: i8, %s: i32):
        %uw = arith.extsi %u : i8 to i32
        %vw = arith.extsi %v : i8 to i32
        %m = arith.muli %uw, %vw : i32
        %t = arith.subi %s, %m : i32
        linalg.yield %t : i32
      }
      linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"], tessel.contraction}
          ins(%xi, %xi : memref<64x64xi8>, memref<64x64xi8>) outs(%oi : memref<64x64xi32>) {
      ^bb0(%u: i8, %v: i8, %s: i32):
        %uw = arith.extsi %u : i8 to i32
        %vw = arith.extsi %v : i8 to i32
        %m = arith.muli %uw, %uw : i32
        %t = arith.addi %s, %m : i32
        linalg.yield %t : i32
      }
      linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"], tessel.contraction}
          ins(%x, %x : memref<64x64xf32>, memref<64x64xf32>) outs(%o : memref<64x64xf32>) {
      ^bb0(%u: f32, %v: f32, %s: f32):
        %t = math.fma %u, %v, %s : f32
        linalg.yield %u : f32
      }
    }
    return
  }
}
