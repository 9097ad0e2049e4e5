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
