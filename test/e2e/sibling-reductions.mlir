// Several reductions of one block whose results have the same type, each
// stored to its own ref. (CSE once merged their identity fills, and
// empty-tensor elimination then computed one reduction in the other's
// ref: the row maxima came out as the column maxima, on the CPU and the
// GPU.) Expected values are numpy's: y = (arange(16).reshape(4, 4) * 5) %
// 16 - 8; y.max(1), y.max(0), y.min(1), y.sum(0).
// On the CPU against the interpreter (--check); the harness reruns each
// `tessel run` on the emulated GPU.
// RUN: tessel run %s --entry main --check | FileCheck %s

// CHECK:      arg0: memref<4xi32>
// CHECK-NEXT: [7 6 5 4]
// CHECK-NEXT: arg1: memref<4xi32>
// CHECK-NEXT: [4 5 6 7]
// CHECK-NEXT: arg2: memref<4xi32>
// CHECK-NEXT: [-8 -5 -6 -7]
// CHECK-NEXT: arg3: memref<4xi32>
// CHECK-NEXT: [-8 -4  0  4]
// CHECK:      check: compiled code matches the interpreter
func.func @kernel(%row_max: memref<4xi32>, %col_max: memref<4xi32>, %row_min: memref<4xi32>, %col_sum: memref<4xi32>) {
  %i = block.iota dim 0 : tensor<4x4xi32>
  %j = block.iota dim 1 : tensor<4x4xi32>
  %four = arith.constant dense<4> : tensor<4x4xi32>
  %five = arith.constant dense<5> : tensor<4x4xi32>
  %sixteen = arith.constant dense<16> : tensor<4x4xi32>
  %eight = arith.constant dense<8> : tensor<4x4xi32>
  %rows = arith.muli %i, %four : tensor<4x4xi32>
  %x = arith.addi %rows, %j : tensor<4x4xi32>
  %x5 = arith.muli %x, %five : tensor<4x4xi32>
  %m = arith.remsi %x5, %sixteen : tensor<4x4xi32>
  %y = arith.subi %m, %eight : tensor<4x4xi32>
  %a = block.reduce max %y dims [1] : tensor<4x4xi32> -> tensor<4xi32>
  block.store %a, %row_max : tensor<4xi32>, memref<4xi32>
  %b = block.reduce max %y dims [0] : tensor<4x4xi32> -> tensor<4xi32>
  block.store %b, %col_max : tensor<4xi32>, memref<4xi32>
  %c = block.reduce min %y dims [1] : tensor<4x4xi32> -> tensor<4xi32>
  block.store %c, %row_min : tensor<4xi32>, memref<4xi32>
  %d = block.reduce sum %y dims [0] : tensor<4x4xi32> -> tensor<4xi32>
  block.store %d, %col_sum : tensor<4xi32>, memref<4xi32>
  return
}
func.func @main(%row_max: memref<4xi32>, %col_max: memref<4xi32>, %row_min: memref<4xi32>, %col_sum: memref<4xi32>) {
  grid.call @kernel grid [] ins() outs(%row_max, %col_max, %row_min, %col_sum : memref<4xi32>, memref<4xi32>, memref<4xi32>, memref<4xi32>)
      in_specs [] out_specs [#grid.block<full>, #grid.block<full>, #grid.block<full>, #grid.block<full>]
  return
}
