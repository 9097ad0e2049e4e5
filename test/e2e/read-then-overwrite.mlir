// A load reads its ref as it is at the load: a masked window or a gather
// read from a ref the kernel then overwrites keeps the old values. (These
// loads once lowered to tensor generics that fusion moved into their
// consumer, after the overwrite: the CPU and the GPU read zeros.)
// On the CPU against the interpreter (--check); the harness reruns each
// `tessel run` on the emulated GPU.
// RUN: tessel run %s --entry window --check | FileCheck %s --check-prefix=WINDOW
// RUN: tessel run %s --entry gather --check | FileCheck %s --check-prefix=GATHER

// WINDOW:      arg0: memref<8xf32>
// WINDOW-NEXT: [0. 0. 0. 0. 0. 0. 0. 0.]
// WINDOW-NEXT: arg1: memref<8xf32>
// WINDOW-NEXT: [ 6.  8. 10. 12. 14. -1. -1. -1.]
// WINDOW:      check: compiled code matches the interpreter
func.func @window_kernel(%x: memref<8xf32>, %o: memref<8xf32>) {
  %i = block.iota dim 0 : tensor<8xi32>
  %f = arith.sitofp %i : tensor<8xi32> to tensor<8xf32>
  block.store %f, %x : tensor<8xf32>, memref<8xf32>
  %c3 = arith.constant 3 : index
  %three = arith.constant dense<3> : tensor<8xi32>
  %at = arith.addi %i, %three : tensor<8xi32>
  %eight = arith.constant dense<8> : tensor<8xi32>
  %m = arith.cmpi slt, %at, %eight : tensor<8xi32>
  %half = arith.constant -0.5 : f32
  %v = block.load %x[%c3] [8] mask %m other %half : memref<8xf32> -> tensor<8xf32>
  %z = arith.constant dense<0.0> : tensor<8xf32>
  block.store %z, %x : tensor<8xf32>, memref<8xf32>
  %two = arith.constant dense<2.0> : tensor<8xf32>
  %d = arith.mulf %v, %two : tensor<8xf32>
  block.store %d, %o : tensor<8xf32>, memref<8xf32>
  return
}
func.func @window(%x: memref<8xf32>, %o: memref<8xf32>) {
  grid.call @window_kernel grid [] ins() outs(%x, %o : memref<8xf32>, memref<8xf32>)
      in_specs [] out_specs [#grid.block<full>, #grid.block<full>]
  return
}

// GATHER:      arg0: memref<4x2xi32>
// GATHER-NEXT: {{\[\[}}0 0]
// GATHER-NEXT:  [2 3]
// GATHER-NEXT:  [0 0]
// GATHER-NEXT:  [0 0]]
// GATHER-NEXT: arg1: memref<3x2xi32>
// GATHER-NEXT: {{\[\[}}60 70]
// GATHER-NEXT:  [ 0 10]
// GATHER-NEXT:  [40 50]]
// GATHER:      check: compiled code matches the interpreter
func.func @gather_kernel(%x: memref<4x2xi32>, %o: memref<3x2xi32>) {
  %i = block.iota dim 0 : tensor<4x2xi32>
  %j = block.iota dim 1 : tensor<4x2xi32>
  %two = arith.constant dense<2> : tensor<4x2xi32>
  %row = arith.muli %i, %two : tensor<4x2xi32>
  %v = arith.addi %row, %j : tensor<4x2xi32>
  block.store %v, %x : tensor<4x2xi32>, memref<4x2xi32>
  %idx = arith.constant dense<[3, 0, 2]> : tensor<3xi32>
  %g = block.load %x gather %idx dim 0 : memref<4x2xi32>, tensor<3xi32> -> tensor<3x2xi32>
  %z = arith.constant dense<0> : tensor<3x2xi32>
  block.store %z, %x scatter %idx dim 0 : tensor<3x2xi32>, memref<4x2xi32>, tensor<3xi32>
  %ten = arith.constant dense<10> : tensor<3x2xi32>
  %d = arith.muli %g, %ten : tensor<3x2xi32>
  block.store %d, %o : tensor<3x2xi32>, memref<3x2xi32>
  return
}
func.func @gather(%x: memref<4x2xi32>, %o: memref<3x2xi32>) {
  grid.call @gather_kernel grid [] ins() outs(%x, %o : memref<4x2xi32>, memref<3x2xi32>)
      in_specs [] out_specs [#grid.block<full>, #grid.block<full>]
  return
}
