// Kernels print (block.print, pl.debug_print): one line per print, in
// program order (a kernel that prints runs its grid in order, its axes
// written parallel or not), integers and floats of every width, with
// placeholders or the values after the format (booleans as 1 and 0). On AMD GPUs printing is
// refused where it stands.
// RUN: tessel run %s --device cpu --entry main --arg 0=random:1 | FileCheck %s
// RUN: tessel run %s --interpret --entry main --arg 0=random:1 | FileCheck %s
// RUN: not tessel run %s --entry main --device rocm-emulated --arg 0=random:1 2>&1 | FileCheck %s --check-prefix=GPU
// CHECK: program 0, 0: first = {{-?[0-9.e-]+}}
// CHECK-NEXT: ids 0 0 1 1
// CHECK-NEXT: program 0, 1: first = {{-?[0-9.e-]+}}
// CHECK-NEXT: ids 0 1 1 1
// CHECK-NEXT: program 1, 0: first = {{-?[0-9.e-]+}}
// CHECK-NEXT: ids 1 0 -1 0
// CHECK-NEXT: program 1, 1: first = {{-?[0-9.e-]+}}
// CHECK-NEXT: ids 1 1 -1 0
// CHECK-NEXT: {braces} 2.5
// GPU: debug-print.mlir:{{[0-9]+}}:3: error: block-to-linalg: block.print: printing from kernels runs on the CPU only, not on AMD GPUs yet

func.func @kernel(%x: memref<8x128xf32>, %o: memref<8x128xf32>) {
  %i = grid.program_id 0
  %j = grid.program_id 1
  %c0 = arith.constant 0 : index
  %first = memref.load %x[%c0, %c0] : memref<8x128xf32>
  block.print "program {}, {}: first = {}" %i, %j, %first : index, index, f32
  %zero = arith.cmpi eq, %i, %c0 : index
  %c1_i8 = arith.constant 1 : i8
  %cm1_i8 = arith.constant -1 : i8
  %sign = arith.select %zero, %c1_i8, %cm1_i8 : i8
  block.print "ids" %i, %j, %sign, %zero : index, index, i8, i1
  %v = block.load %x : memref<8x128xf32> -> tensor<8x128xf32>
  block.store %v, %o : tensor<8x128xf32>, memref<8x128xf32>
  return
}

func.func @done(%o: memref<8x128xf32>) {
  %h = arith.constant 2.5 : bf16
  block.print "{{braces}} {}" %h : bf16
  return
}

func.func @main(%x: memref<16x256xf32>, %o: memref<16x256xf32>, %p: memref<8x128xf32>) {
  grid.call @kernel grid [2, 2] ins(%x : memref<16x256xf32>) outs(%o : memref<16x256xf32>)
      in_specs [#grid.block<[8, 128], (i, j) -> (i, j)>] out_specs [#grid.block<[8, 128], (i, j) -> (i, j)>]
      semantics [parallel, parallel]
  grid.call @done grid [] ins() outs(%p : memref<8x128xf32>) in_specs [] out_specs [#grid.block<[8, 128]>]
  return
}
