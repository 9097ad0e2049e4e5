// An scf.if that yields block values, in a kernel whose last output block
// is partial (15 rows in blocks of 16): the ROCm path refused it ("a local
// buffer yielded by 'scf.forall' cannot be placed in workgroup memory")
// because a conditional's yield was taken for a loop carrying the padded
// output buffer to its next iteration. The harness reruns the `tessel run`
// line on the emulated GPU.
// RUN: tessel run %s --entry main --arg 0=random:1 --check | FileCheck %s
// RUN: tessel compile %s --target rocm --chip gfx90a -o %t.gfx90a && llvm-readelf --notes %t.gfx90a | FileCheck %s --check-prefix=HSACO
// RUN: tessel compile %s --target rocm --chip gfx942 -o %t.gfx942 && llvm-readelf --notes %t.gfx942 | FileCheck %s --check-prefix=HSACO
// RUN: tessel compile %s --target rocm --chip gfx1100 -o %t.gfx1100 && llvm-readelf --notes %t.gfx1100 | FileCheck %s --check-prefix=HSACO
// Program 0 doubles its rows, program 1 negates them.
// CHECK:      arg1: memref<31x2xi32>
// CHECK-NEXT: {{\[\[}} 10  14]
// CHECK:       [-12 -10]
// CHECK-NEXT:  [ -6 -12]
// CHECK-NEXT:  [  5  -6]
// CHECK-NEXT:  [  1   2]
// CHECK:       [ -6   1]]
// CHECK: check: compiled code matches the interpreter
// HSACO: .name: main_kernel
func.func @kernel(%x: memref<16x2xi32>, %o: memref<16x2xi32>) {
  %a = block.load %x : memref<16x2xi32> -> tensor<16x2xi32>
  %i = grid.program_id 0
  %c0 = arith.constant 0 : index
  %first = arith.cmpi eq, %i, %c0 : index
  %r = scf.if %first -> tensor<16x2xi32> {
    %two = arith.constant dense<2> : tensor<16x2xi32>
    %d = arith.muli %a, %two : tensor<16x2xi32>
    scf.yield %d : tensor<16x2xi32>
  } else {
    %zero = arith.constant dense<0> : tensor<16x2xi32>
    %n = arith.subi %zero, %a : tensor<16x2xi32>
    scf.yield %n : tensor<16x2xi32>
  }
  block.store %r, %o : tensor<16x2xi32>, memref<16x2xi32>
  return
}
func.func @main(%x: memref<31x2xi32>, %o: memref<31x2xi32>) {
  grid.call @kernel grid [2] ins(%x : memref<31x2xi32>) outs(%o : memref<31x2xi32>)
      in_specs [#grid.block<[16, 2], (i) -> (i, 0)>] out_specs [#grid.block<[16, 2], (i) -> (i, 0)>]
  return
}

// One-element blocks under scf.if and scf.while: once their loops fold
// away, the ROCm path saw control flow that writes memory and yields a
// buffer and refused it ("'scf.if' writes memory outside block work and
// has results"). A conditional's results now become selects (its writes
// on work-item 0); a loop runs on every item, its writes on item 0
// inside. Program 0 doubles its element; then each is tripled by a loop
// of three steps.
// RUN: tessel run %s --entry single --arg 0=test/e2e/Inputs/steps_6x1.npy --check | FileCheck %s --check-prefix=SINGLE
// RUN: tessel compile %s --target rocm --chip gfx942 -o %t.single.gfx942
// RUN: tessel run %s --entry single_loop --arg 0=test/e2e/Inputs/steps_6x1.npy --check | FileCheck %s --check-prefix=LOOP
// LOOP:      arg1: memref<6x1xi32>
// LOOP-NEXT: {{\[\[}}-189]
// LOOP-NEXT:  [-108]
// LOOP-NEXT:  [ -27]
// LOOP-NEXT:  [  54]
// LOOP-NEXT:  [ 135]
// LOOP-NEXT:  [ 216]]
// LOOP: check: compiled code matches the interpreter
// SINGLE:      arg1: memref<6x1xi32>
// SINGLE-NEXT: {{\[\[}}-14]
// SINGLE-NEXT:  [ -4]
// SINGLE-NEXT:  [ -1]
// SINGLE-NEXT:  [  2]
// SINGLE-NEXT:  [  5]
// SINGLE-NEXT:  [  8]]
// SINGLE: check: compiled code matches the interpreter
func.func @single_kernel(%x: memref<1x1xi32>, %o: memref<1x1xi32>) {
  %v = block.load %x : memref<1x1xi32> -> tensor<1x1xi32>
  %p = grid.program_id 0
  %c0 = arith.constant 0 : index
  %first = arith.cmpi eq, %p, %c0 : index
  %q = scf.if %first -> tensor<1x1xi32> {
    %two = arith.constant dense<2> : tensor<1x1xi32>
    %doubled = arith.muli %v, %two : tensor<1x1xi32>
    scf.yield %doubled : tensor<1x1xi32>
  } else {
    scf.yield %v : tensor<1x1xi32>
  }
  block.store %q, %o : tensor<1x1xi32>, memref<1x1xi32>
  return
}
func.func @single(%x: memref<6x1xi32>, %o: memref<6x1xi32>) {
  grid.call @single_kernel grid [6] ins(%x : memref<6x1xi32>) outs(%o : memref<6x1xi32>)
      in_specs [#grid.block<[1, 1], (i) -> (i, 0)>] out_specs [#grid.block<[1, 1], (i) -> (i, 0)>]
  return
}
func.func @single_loop_kernel(%x: memref<1x1xi32>, %o: memref<1x1xi32>) {
  %v = block.load %x : memref<1x1xi32> -> tensor<1x1xi32>
  %zero = arith.constant 0 : i32
  %one = arith.constant 1 : i32
  %limit = arith.constant 3 : i32
  %r:2 = scf.while (%acc = %v, %n = %zero) : (tensor<1x1xi32>, i32) -> (tensor<1x1xi32>, i32) {
    %c = arith.cmpi slt, %n, %limit : i32
    scf.condition(%c) %acc, %n : tensor<1x1xi32>, i32
  } do {
  ^bb0(%acc: tensor<1x1xi32>, %n: i32):
    %three = arith.constant dense<3> : tensor<1x1xi32>
    %next = arith.muli %acc, %three : tensor<1x1xi32>
    %n1 = arith.addi %n, %one : i32
    scf.yield %next, %n1 : tensor<1x1xi32>, i32
  }
  block.store %r#0, %o : tensor<1x1xi32>, memref<1x1xi32>
  return
}
func.func @single_loop(%x: memref<6x1xi32>, %o: memref<6x1xi32>) {
  grid.call @single_loop_kernel grid [6] ins(%x : memref<6x1xi32>) outs(%o : memref<6x1xi32>)
      in_specs [#grid.block<[1, 1], (i) -> (i, 0)>] out_specs [#grid.block<[1, 1], (i) -> (i, 0)>]
  return
}
