// Element-wise results computed in an operand's buffer
// (tessel-elementwise-in-place): where the operand is dead afterwards
// (a loop-carried accumulator rescaled each trip, as attention's), and
// where it is not (x read again after 2x; an input block, whose buffer is
// never written). Every form must compute the interpreter's numbers, and
// the input arrays must come back unchanged (--check compares every
// argument after the run with the interpreter's).
// RUN: tessel run %s --entry in_place --arg 0=random:1 --arg 1=random:2 --check | FileCheck %s
// RUN: tessel run %s --entry in_place --arg 0=random:1 --arg 1=random:2 --check --cpu x86-64-v3 | FileCheck %s
// CHECK: check: compiled code matches the interpreter

func.func @in_place_kernel(%x: memref<16x8xf32>, %s: memref<16xf32>, %o: memref<16x8xf32>) {
  %xv = block.load %x : memref<16x8xf32> -> tensor<16x8xf32>
  %sv = block.load %s : memref<16xf32> -> tensor<16xf32>
  %two = arith.constant dense<2.0> : tensor<16x8xf32>
  %doubled = arith.mulf %xv, %two : tensor<16x8xf32>
  %again = arith.addf %doubled, %xv : tensor<16x8xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %acc = scf.for %i = %c0 to %c3 step %c1 iter_args(%a = %again) -> (tensor<16x8xf32>) {
    %sb = block.broadcast %sv dims [1] : tensor<16xf32> -> tensor<16x8xf32>
    %scaled = arith.mulf %a, %sb : tensor<16x8xf32>
    %next = arith.addf %scaled, %xv : tensor<16x8xf32>
    scf.yield %next : tensor<16x8xf32>
  }
  block.store %acc, %o : tensor<16x8xf32>, memref<16x8xf32>
  return
}

func.func @in_place(%x: memref<16x8xf32>, %s: memref<16xf32>, %o: memref<16x8xf32>) {
  grid.call @in_place_kernel grid [1] ins(%x, %s : memref<16x8xf32>, memref<16xf32>) outs(%o : memref<16x8xf32>)
      in_specs [#grid.block<full>, #grid.block<full>] out_specs [#grid.block<full>]
  return
}
