// An output revisited along an *outer* grid axis (inferred semantics
// [arbitrary, parallel]: the K-accumulating sum of the Pallas docs with K
// first). On the GPU the ordered axis stays a host loop around ordered
// launches of the parallel programs (it failed before: "block work nested
// in 'scf.forall' cannot be shared among work-items"). The harness reruns
// the `tessel run` line on the emulated GPU; test/gpu's host_program test
// checks the HIP launcher's three ordered launches.
// RUN: tessel run %s --entry main --arg 0=random:1 --check | FileCheck %s
// RUN: tessel compile %s --target rocm --chip gfx90a -o %t.gfx90a && llvm-readelf --notes %t.gfx90a | FileCheck %s --check-prefix=HSACO
// RUN: tessel compile %s --target rocm --chip gfx942 -o %t.gfx942 && llvm-readelf --notes %t.gfx942 | FileCheck %s --check-prefix=HSACO
// RUN: tessel compile %s --target rocm --chip gfx1100 -o %t.gfx1100 && llvm-readelf --notes %t.gfx1100 | FileCheck %s --check-prefix=HSACO
// RUN: tessel compile %s --target rocm --emit mlir -o %t.mlir && FileCheck %s --check-prefix=HOST --input-file=%t.mlir
// Column sums over the three row blocks of x.
// CHECK:      arg1: memref<4x16xi32>
// CHECK-NEXT: {{\[\[}} -1   6  12  -4 -16 -11  -8  -7  -6  -7 -13   0   6  -4  17  11]
// CHECK-NEXT:  [  0   3  -6  -3  11 -14  -5  -5  11  -8   5  -2  -5   3  -4  -4]
// CHECK-NEXT:  [-14   3   3  -3  -1  -3  -1  -2  -9  -1   3  -1   4  18  12   0]
// CHECK-NEXT:  [ -5  -3  -3  -1   4   3  -1 -10  -5 -12  -2 -11   5   2  -5  -4]]
// CHECK: check: compiled code matches the interpreter
// HSACO: .name: main_kernel
// HOST: scf.for %[[K:.*]] = %c0 to %c3 step %c1 {
// HOST-NEXT: gpu.launch_func @main_kernel::@main_kernel blocks in (%c2, %c1, %c1) {{.*}} args({{.*}}, %[[K]] : index)
func.func @kernel(%x: memref<4x8xi32>, %o: memref<4x8xi32>) {
  %k = grid.program_id 0
  %c0 = arith.constant 0 : index
  %first = arith.cmpi eq, %k, %c0 : index
  scf.if %first {
    %z = arith.constant dense<0> : tensor<4x8xi32>
    block.store %z, %o : tensor<4x8xi32>, memref<4x8xi32>
  }
  %a = block.load %x : memref<4x8xi32> -> tensor<4x8xi32>
  %acc = block.load %o : memref<4x8xi32> -> tensor<4x8xi32>
  %s = arith.addi %a, %acc : tensor<4x8xi32>
  block.store %s, %o : tensor<4x8xi32>, memref<4x8xi32>
  return
}
func.func @main(%x: memref<12x16xi32>, %o: memref<4x16xi32>) {
  grid.call @kernel grid [3, 2] ins(%x : memref<12x16xi32>) outs(%o : memref<4x16xi32>)
      in_specs [#grid.block<[4, 8], (k, j) -> (k, j)>] out_specs [#grid.block<[4, 8], (k, j) -> (0, j)>]
  return
}
