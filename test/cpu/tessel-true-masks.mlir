// tessel-true-masks: block loads and stores whose masks hold everywhere
// (iota compared with a constant the predicate accepts over the whole
// range, splat true, and/or/broadcast of such masks) are marked
// tessel.mask_true, for block-to-linalg to lower as plain accesses.
// RUN: tessel-opt %s --tessel-true-masks | FileCheck %s
// RUN: tessel run %s --entry main --arg 0=random:1 --check | FileCheck %s --check-prefix=CHECKED

// CHECK-LABEL: func.func @kernel(
func.func @kernel(%x: memref<16xf32>, %y: memref<16xf32>) {
  %iota = block.iota dim 0 : tensor<16xi32>
  %c16 = arith.constant 16 : i32
  %n = tensor.splat %c16 : tensor<16xi32>
  // iota < 16 over 0..15: true everywhere.
  %m = arith.cmpi slt, %iota, %n : tensor<16xi32>
  %ninf = arith.constant 0xFF800000 : f32
  %c0 = arith.constant 0 : index
  // CHECK: block.load %{{.*}} mask %{{.*}} other %{{.*}} {tessel.mask_true}
  %v = block.load %x[%c0] [16] mask %m other %ninf : memref<16xf32> -> tensor<16xf32>
  // and with splat true: still true.
  %all = arith.constant dense<true> : tensor<16xi1>
  %both = arith.andi %m, %all : tensor<16xi1>
  // 15 >= iota (swapped operands): true.
  %c15 = arith.constant dense<15> : tensor<16xi32>
  %ge = arith.cmpi sge, %c15, %iota : tensor<16xi32>
  %three = arith.andi %both, %ge : tensor<16xi1>
  // CHECK: block.store %{{.*}} mask %{{.*}} {tessel.mask_true}
  block.store %v, %y mask %three : tensor<16xf32>, memref<16xf32>
  // iota < 15 fails at 15: not marked.
  %some = arith.cmpi slt, %iota, %c15 : tensor<16xi32>
  %w = block.load %x mask %some other %ninf : memref<16xf32> -> tensor<16xf32>
  // CHECK: block.store %{{.*}} mask %{{.*}} :
  // CHECK-NOT: tessel.mask_true
  block.store %w, %y mask %some : tensor<16xf32>, memref<16xf32>
  return
}

// CHECKED: check: compiled code matches the interpreter
func.func @main(%x: memref<32xf32>, %y: memref<32xf32>) {
  grid.call @kernel grid [2] ins(%x : memref<32xf32>) outs(%y : memref<32xf32>)
      in_specs [#grid.block<[16], (i) -> (i)>] out_specs [#grid.block<[16], (i) -> (i)>]
  return
}
