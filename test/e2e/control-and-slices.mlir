// Kernels with scf.while, scf.index_switch (lax.switch), linalg.transpose
// and tensor.extract_slice run compiled and in the reference interpreter
// (--check), and, through the harness, on the emulated GPU.
// RUN: tessel run %s --entry doubling --arg 0=random:1 --check | FileCheck %s --check-prefix=WHILE
// RUN: tessel run %s --entry switch --arg 0=random:2 --check | FileCheck %s --check-prefix=SWITCH
// RUN: tessel run %s --entry corner_transposed --arg 0=random:3 --check | FileCheck %s --check-prefix=SLICE
// RUN: tessel compile %s --target rocm -o %t.hsaco && llvm-readelf --notes %t.hsaco | FileCheck %s --check-prefix=HSACO
// HSACO-DAG: .name: doubling_kernel
// HSACO-DAG: .name: switch_kernel
// HSACO-DAG: .name: corner_transposed_kernel

// Doubles a block until its sum reaches 1000 (a data-dependent trip count;
// the block is carried through the loop).
// WHILE:      arg1: memref<8xi32>
// WHILE-NEXT: [ 5120  7168  4096  3072 -5120 -2048 -5120 -6144]
// WHILE: check: compiled code matches the interpreter
func.func @doubling_kernel(%x: memref<8xi32>, %o: memref<8xi32>) {
  %v0 = block.load %x : memref<8xi32> -> tensor<8xi32>
  %limit = arith.constant 1000 : i32
  %two = arith.constant dense<2> : tensor<8xi32>
  %zero = arith.constant 0 : i32
  %done = scf.while (%v = %v0) : (tensor<8xi32>) -> tensor<8xi32> {
    %s = block.reduce sum %v dims [0] : tensor<8xi32> -> tensor<i32>
    %total = tensor.extract %s[] : tensor<i32>
    %positive = arith.cmpi sgt, %total, %zero : i32
    %small = arith.cmpi slt, %total, %limit : i32
    %go = arith.andi %positive, %small : i1
    scf.condition(%go) %v : tensor<8xi32>
  } do {
  ^bb0(%v: tensor<8xi32>):
    %d = arith.muli %v, %two : tensor<8xi32>
    scf.yield %d : tensor<8xi32>
  }
  block.store %done, %o : tensor<8xi32>, memref<8xi32>
  return
}
func.func @doubling(%x: memref<8xi32>, %o: memref<8xi32>) {
  grid.call @doubling_kernel grid [] ins(%x : memref<8xi32>) outs(%o : memref<8xi32>)
      in_specs [#grid.block<full>] out_specs [#grid.block<full>]
  return
}

// Program i of four: +1, x2, negation, and (default) unchanged.
// SWITCH:      arg1: memref<4x4xi32>
// SWITCH-NEXT: {{\[\[}}-6 -3  7 -7]
// SWITCH-NEXT:  [-8 -2  0 -2]
// SWITCH-NEXT:  [ 2  5 -2  4]
// SWITCH-NEXT:  [ 0  7 -6  4]]
// SWITCH: check: compiled code matches the interpreter
func.func @switch_kernel(%x: memref<1x4xi32>, %o: memref<1x4xi32>) {
  %v = block.load %x : memref<1x4xi32> -> tensor<1x4xi32>
  %i = grid.program_id 0
  %r = scf.index_switch %i -> tensor<1x4xi32>
  case 0 {
    %one = arith.constant dense<1> : tensor<1x4xi32>
    %a = arith.addi %v, %one : tensor<1x4xi32>
    scf.yield %a : tensor<1x4xi32>
  }
  case 1 {
    %two = arith.constant dense<2> : tensor<1x4xi32>
    %m = arith.muli %v, %two : tensor<1x4xi32>
    scf.yield %m : tensor<1x4xi32>
  }
  case 2 {
    %zero = arith.constant dense<0> : tensor<1x4xi32>
    %n = arith.subi %zero, %v : tensor<1x4xi32>
    scf.yield %n : tensor<1x4xi32>
  }
  default {
    scf.yield %v : tensor<1x4xi32>
  }
  block.store %r, %o : tensor<1x4xi32>, memref<1x4xi32>
  return
}
func.func @switch(%x: memref<4x4xi32>, %o: memref<4x4xi32>) {
  grid.call @switch_kernel grid [4] ins(%x : memref<4x4xi32>) outs(%o : memref<4x4xi32>)
      in_specs [#grid.block<[1, 4], (i) -> (i, 0)>] out_specs [#grid.block<[1, 4], (i) -> (i, 0)>]
  return
}

// The transpose of a block's top-left 2x3 corner.
// SLICE:      arg1: memref<3x2xi32>
// SLICE-NEXT: {{\[\[}} 2  1]
// SLICE-NEXT:  [-7 -5]
// SLICE-NEXT:  [ 7 -6]]
// SLICE: check: compiled code matches the interpreter
func.func @corner_transposed_kernel(%x: memref<4x8xi32>, %o: memref<3x2xi32>) {
  %v = block.load %x : memref<4x8xi32> -> tensor<4x8xi32>
  %corner = tensor.extract_slice %v[0, 0] [2, 3] [1, 1] : tensor<4x8xi32> to tensor<2x3xi32>
  %init = tensor.empty() : tensor<3x2xi32>
  %t = linalg.transpose ins(%corner : tensor<2x3xi32>) outs(%init : tensor<3x2xi32>) permutation = [1, 0]
  block.store %t, %o : tensor<3x2xi32>, memref<3x2xi32>
  return
}
func.func @corner_transposed(%x: memref<4x8xi32>, %o: memref<3x2xi32>) {
  grid.call @corner_transposed_kernel grid [] ins(%x : memref<4x8xi32>) outs(%o : memref<3x2xi32>)
      in_specs [#grid.block<full>] out_specs [#grid.block<full>]
  return
}
