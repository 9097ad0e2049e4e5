// tessel-prefetch: the ordered loop of an arbitrary axis, num_stages deep.
// With 3 stages over 8 steps: a prologue prefetching the blocks of steps 0
// and 1, a steady-state loop over steps 0..5 prefetching step k + 2, and an
// epilogue loop over steps 6..7 without prefetches. Only blocks that move
// along the axis are prefetched (not the output revisited along it).
// RUN: tessel-opt %s --split-input-file --verify-diagnostics --grid-verify-specs --grid-to-loops --tessel-prefetch | FileCheck %s
// RUN: tessel-opt %s --split-input-file --verify-diagnostics --grid-verify-specs --grid-to-loops --tessel-pipeline | FileCheck %s

module attributes {tessel.num_stages = 3 : i64} {
  func.func @matmul_kernel(%x: memref<16x8xf32>, %y: memref<8x16xf32>, %z: memref<16x16xf32>) {
    %a = block.load %x : memref<16x8xf32> -> tensor<16x8xf32>
    %b = block.load %y : memref<8x16xf32> -> tensor<8x16xf32>
    %acc = block.load %z : memref<16x16xf32> -> tensor<16x16xf32>
    %c = block.dot %a, %b acc %acc : tensor<16x8xf32>, tensor<8x16xf32>, tensor<16x16xf32> -> tensor<16x16xf32>
    block.store %c, %z : tensor<16x16xf32>, memref<16x16xf32>
    return
  }
  // CHECK-LABEL: func.func @matmul(
  // CHECK: scf.forall (%[[I:.*]], %[[J:.*]]) in (2, 2) {
  // Prologue: steps 0 and 1, both inputs, a cache line (16 f32) at a time.
  // CHECK:   %[[K0:.*]] = arith.constant 0 : index
  // CHECK:   %[[X0:.*]] = memref.subview %arg0[%{{.*}}, %{{.*}}] [16, 8]
  // CHECK:   scf.for %[[R:.*]] =
  // CHECK:     scf.for %[[C:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
  // CHECK:       memref.prefetch %[[X0]][%[[R]], %[[C]]], read, locality<3>, data
  // CHECK:   memref.subview %arg1
  // CHECK:   memref.prefetch
  // CHECK:   %[[K1:.*]] = arith.constant 1 : index
  // CHECK:   memref.subview %arg0
  // CHECK:   memref.prefetch
  // CHECK:   memref.subview %arg1
  // CHECK:   memref.prefetch
  // Steady state: steps 0..5, each prefetching step k + 2.
  // CHECK:   scf.for %[[K:.*]] = %{{.*}} to %[[SPLIT:.*]] step %{{.*}} {
  // CHECK:     %[[TWO:.*]] = arith.constant 2 : index
  // CHECK:     %[[NEXT:.*]] = arith.addi %[[K]], %[[TWO]] : index
  // CHECK:     affine.apply #{{.*}}(%[[I]], %[[J]], %[[NEXT]])
  // CHECK:     memref.prefetch
  // CHECK:     memref.prefetch
  // CHECK-NOT: memref.prefetch
  // CHECK:     func.call @matmul_kernel__call0(
  // CHECK:   } {tessel.arbitrary_axis = 2 : i64, tessel.pipeline = "steady"}
  // Epilogue: the last two steps, no prefetches.
  // CHECK:   scf.for %{{.*}} = %[[SPLIT]] to %{{.*}} step %{{.*}} {
  // CHECK-NOT: memref.prefetch
  // CHECK:     func.call @matmul_kernel__call0(
  // CHECK:   } {tessel.arbitrary_axis = 2 : i64, tessel.pipeline = "epilogue"}
  func.func @matmul(%x: memref<32x64xf32>, %y: memref<64x32xf32>, %z: memref<32x32xf32>) {
    grid.call @matmul_kernel grid [2, 2, 8] ins(%x, %y : memref<32x64xf32>, memref<64x32xf32>) outs(%z : memref<32x32xf32>)
        in_specs [#grid.block<[16, 8], (i, j, k) -> (i, k)>, #grid.block<[8, 16], (i, j, k) -> (k, j)>]
        out_specs [#grid.block<[16, 16], (i, j, k) -> (i, j)>]
    return
  }
}

// -----

// Fewer steps than stages: left alone.
module attributes {tessel.num_stages = 4 : i64} {
  func.func @short_kernel(%x: memref<4xf32>, %o: memref<4xf32>) {
    %v = block.load %x : memref<4xf32> -> tensor<4xf32>
    %acc = block.load %o : memref<4xf32> -> tensor<4xf32>
    %s = arith.addf %acc, %v : tensor<4xf32>
    block.store %s, %o : tensor<4xf32>, memref<4xf32>
    return
  }
  // CHECK-LABEL: func.func @short(
  // CHECK-NOT: memref.prefetch
  // CHECK: } {tessel.arbitrary_axis = 0 : i64}
  func.func @short(%x: memref<12xf32>, %o: memref<4xf32>) {
    grid.call @short_kernel grid [3] ins(%x : memref<12xf32>) outs(%o : memref<4xf32>)
        in_specs [#grid.block<[4], (k) -> (k)>] out_specs [#grid.block<[4], (k) -> (0)>]
    return
  }
}

// -----

// The knob table rejects it before any pass runs (grid-verify-specs).
// expected-error @+1 {{tessel.num_stages must be an integer in [1, 8], got 0 : i64}}
module attributes {tessel.num_stages = 0 : i64} {
}
