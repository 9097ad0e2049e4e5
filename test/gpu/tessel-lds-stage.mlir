// RUN: tessel-opt %s --split-input-file --tessel-lds-stage --canonicalize | FileCheck %s

// k is split into chunks (16 by default, shrunk to a divisor of k: 12 for
// 24); each chunk of both operands is copied to a local buffer (LDS after
// grid-to-gpu) that the contraction then reads.
// CHECK-LABEL: func.func @staged
// CHECK: %[[C12:.*]] = arith.constant 12 : index
// CHECK: scf.for %[[K:.*]] = %{{.*}} to %{{.*}} step %[[C12]] {
// CHECK: %[[A:.*]] = memref.subview %{{.*}}[0, %[[K]]] [32, 12] [1, 1]
// CHECK: %[[B:.*]] = memref.subview %{{.*}}[%[[K]], 0] [12, 64] [1, 1]
// CHECK: %[[LA:.*]] = memref.view %{{.*}}[%{{.*}}][] : memref<1536xi8> to memref<32x12xf32>
// CHECK: %[[LB:.*]] = memref.view %{{.*}}[%{{.*}}][] : memref<3072xi8> to memref<12x64xf32>
// CHECK: linalg.copy ins(%[[A]] : {{.*}}) outs(%[[LA]] : memref<32x12xf32>)
// CHECK: linalg.copy ins(%[[B]] : {{.*}}) outs(%[[LB]] : memref<12x64xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[LA]], %[[LB]] : memref<32x12xf32>, memref<12x64xf32>)
// CHECK: math.fma
// CHECK: } {tessel.lds_chunks}
#a = affine_map<(i, j, k) -> (i, k)>
#b = affine_map<(i, j, k) -> (k, j)>
#c = affine_map<(i, j, k) -> (i, j)>
func.func @staged(%x: memref<32x24xf32>, %y: memref<24x64xf32>, %z: memref<32x64xf32>) {
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"], tessel.contraction}
      ins(%x, %y : memref<32x24xf32>, memref<24x64xf32>) outs(%z : memref<32x64xf32>) {
  ^bb0(%u: f32, %v: f32, %s: f32):
    %t = math.fma %u, %v, %s : f32
    linalg.yield %t : f32
  }
  return
}

// -----

// `tessel.lds_chunk` sets the chunk; unmarked generics are left alone.
// CHECK-LABEL: func.func @chunk_of_four
// CHECK: %[[C4:.*]] = arith.constant 4 : index
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %[[C4]] {
// CHECK: } {tessel.lds_chunks}
// CHECK-NOT: scf.for
#a = affine_map<(i, j, k) -> (i, k)>
#b = affine_map<(i, j, k) -> (k, j)>
#c = affine_map<(i, j, k) -> (i, j)>
module attributes {tessel.lds_chunk = 4 : i64} {
  func.func @chunk_of_four(%x: memref<8x8xf32>, %y: memref<8x8xf32>, %z: memref<8x8xf32>) {
    linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"], tessel.contraction}
        ins(%x, %y : memref<8x8xf32>, memref<8x8xf32>) outs(%z : memref<8x8xf32>) {
    ^bb0(%u: f32, %v: f32, %s: f32):
      %t = math.fma %u, %v, %s : f32
      linalg.yield %t : f32
    }
    linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%x, %y : memref<8x8xf32>, memref<8x8xf32>) outs(%z : memref<8x8xf32>) {
    ^bb0(%u: f32, %v: f32, %s: f32):
      %t = math.fma %u, %v, %s : f32
      linalg.yield %t : f32
    }
    return
  }
}

// -----

// Two stages: four LDS buffers (chunk 8 keeps them within 32 KiB: 2 x
// (256 + 256) x 4 bytes per k step), chunk 0 copied first, then pairs of
// steps each copying the next chunk into one buffer while computing from
// the other, and a last pair without a further copy.
// CHECK-LABEL: func.func @double_buffered
// CHECK-COUNT-4: memref.alloc() {alignment = 64 : i64, tessel.staged}
// CHECK: linalg.copy
// CHECK: linalg.copy
// CHECK: scf.for %[[K:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK: linalg.copy
// CHECK: linalg.copy
// CHECK: linalg.generic {{.*}} ins(%[[A0:.*]], %[[B0:.*]] : memref<256x8xf32>, memref<8x256xf32>)
// CHECK: linalg.copy {{.*}} outs(%[[A0]]
// CHECK: linalg.copy {{.*}} outs(%[[B0]]
// CHECK: linalg.generic {{.*}} ins(%[[A1:.*]], %[[B1:.*]] : memref<256x8xf32>, memref<8x256xf32>)
// CHECK: } {tessel.lds_chunks}
// CHECK: linalg.copy {{.*}} outs(%[[A1]]
// CHECK: linalg.copy {{.*}} outs(%[[B1]]
// CHECK: linalg.generic {{.*}} ins(%[[A0]], %[[B0]]
// CHECK: linalg.generic {{.*}} ins(%[[A1]], %[[B1]]
// CHECK-NOT: linalg.generic
#a = affine_map<(i, j, k) -> (i, k)>
#b = affine_map<(i, j, k) -> (k, j)>
#c = affine_map<(i, j, k) -> (i, j)>
module attributes {tessel.num_stages = 2 : i64} {
  func.func @double_buffered(%x: memref<256x64xf32>, %y: memref<64x256xf32>, %z: memref<256x256xf32>) {
    linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"], tessel.contraction}
        ins(%x, %y : memref<256x64xf32>, memref<64x256xf32>) outs(%z : memref<256x256xf32>) {
    ^bb0(%u: f32, %v: f32, %s: f32):
      %t = math.fma %u, %v, %s : f32
      linalg.yield %t : f32
    }
    return
  }
}
