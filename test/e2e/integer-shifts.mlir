// Integer shifts by the bit width or more (the amount read as unsigned)
// give 0, or the sign for the arithmetic right shift, as XLA defines them
// (tessel-saturating-shifts; arith makes them poison). The interpreter
// computes the same (--check). The harness reruns each `tessel run` on the
// emulated GPU; the ROCm path compiles for every chip.
// RUN: tessel run %s --entry shifts --arg 0=test/e2e/Inputs/shifted_i32_8.npy --arg 1=test/e2e/Inputs/shift_amounts_i32_8.npy --check | FileCheck %s
// RUN: tessel compile %s --target rocm --chip gfx90a --emit hsaco -o %t.gfx90a.hsaco
// RUN: tessel compile %s --target rocm --chip gfx942 --emit hsaco -o %t.gfx942.hsaco
// RUN: tessel compile %s --target rocm --chip gfx1100 --emit hsaco -o %t.gfx1100.hsaco

// CHECK: arg0: memref<8xi32>
// CHECK-NEXT: [ 1  1 -8  8 -8 -8  3  3]
// CHECK: arg1: memref<8xi32>
// CHECK-NEXT: [31 32 40 40 32 -1  1 33]
// CHECK: arg2: memref<8xi32>
// CHECK-NEXT: [-2147483648           0           0           0           0           0
// CHECK-NEXT:            6           0]
// CHECK: arg3: memref<8xi32>
// CHECK-NEXT: [ 0  0 -1  0 -1 -1  1  0]
// CHECK: arg4: memref<8xi32>
// CHECK-NEXT: [0 0 0 0 0 0 1 0]
func.func @shifts_kernel(%x: memref<8xi32>, %y: memref<8xi32>, %l: memref<8xi32>, %r: memref<8xi32>, %u: memref<8xi32>) {
  %a = block.load %x : memref<8xi32> -> tensor<8xi32>
  %b = block.load %y : memref<8xi32> -> tensor<8xi32>
  %left = arith.shli %a, %b : tensor<8xi32>
  %arithmetic = arith.shrsi %a, %b : tensor<8xi32>
  %logical = arith.shrui %a, %b : tensor<8xi32>
  block.store %left, %l : tensor<8xi32>, memref<8xi32>
  block.store %arithmetic, %r : tensor<8xi32>, memref<8xi32>
  block.store %logical, %u : tensor<8xi32>, memref<8xi32>
  return
}

func.func @shifts(%x: memref<8xi32>, %y: memref<8xi32>, %l: memref<8xi32>, %r: memref<8xi32>, %u: memref<8xi32>) {
  grid.call @shifts_kernel grid [1] ins(%x, %y : memref<8xi32>, memref<8xi32>)
      outs(%l, %r, %u : memref<8xi32>, memref<8xi32>, memref<8xi32>)
      in_specs [#grid.block<full>, #grid.block<full>] out_specs [#grid.block<full>, #grid.block<full>, #grid.block<full>]
  return
}
