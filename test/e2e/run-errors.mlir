// tessel run on bad input: a clear error, exit 1 (2 for usage errors), and
// nothing written.
// RUN: rm -rf %t.d %t.none && tessel run %s --entry iota8 --device cpu --dump %t.d > /dev/null
// RUN: tessel run %s --entry iota8 --device tpu 2>&1 | FileCheck %s --check-prefix=DEVICE; test ${PIPESTATUS[0]} -eq 2
// RUN: tessel run %s --entry nope --dump %t.none 2>&1 | FileCheck %s --check-prefix=ENTRY; test ${PIPESTATUS[0]} -eq 1 && test ! -e %t.none
// RUN: tessel run %s --entry scalar 2>&1 | FileCheck %s --check-prefix=SCALAR; test ${PIPESTATUS[0]} -eq 1
// RUN: tessel run %s --entry dynamic 2>&1 | FileCheck %s --check-prefix=DYNAMIC; test ${PIPESTATUS[0]} -eq 1
// RUN: tessel run %s --entry floats4 --arg 0=%t.d/arg0.npy --dump %t.none 2>&1 | FileCheck %s --check-prefix=NPY; test ${PIPESTATUS[0]} -eq 1 && test ! -e %t.none
// RUN: tessel run %s --entry floats4 --arg 0=%t.d/missing.npy 2>&1 | FileCheck %s --check-prefix=MISSING; test ${PIPESTATUS[0]} -eq 1
// RUN: printf 'not an npy file' > %t.bad.npy && tessel run %s --entry floats4 --arg 0=%t.bad.npy 2>&1 | FileCheck %s --check-prefix=BROKEN; test ${PIPESTATUS[0]} -eq 1
// RUN: tessel run %s --entry floats4 --arg 3=zeros 2>&1 | FileCheck %s --check-prefix=INDEX; test ${PIPESTATUS[0]} -eq 1
// RUN: tessel run %s --entry floats4 --arg 0:zeros 2>&1 | FileCheck %s --check-prefix=SYNTAX; test ${PIPESTATUS[0]} -eq 2
// RUN: tessel run %s 2>&1 | FileCheck %s --check-prefix=USAGE; test ${PIPESTATUS[0]} -eq 2
// RUN: tessel run %s --entry overflowing 2>&1 | FileCheck %s --check-prefix=OVERFLOW; test ${PIPESTATUS[0]} -eq 1
// RUN: tessel run %s --entry petabytes 2>&1 | FileCheck %s --check-prefix=PETABYTES; test ${PIPESTATUS[0]} -eq 1
// RUN: tessel run %s --entry petabytes --arg 0=random:1 2>&1 | FileCheck %s --check-prefix=PETABYTES; test ${PIPESTATUS[0]} -eq 1
// RUN: tessel run %s --entry floats3x4 --arg 0=test/e2e/Inputs/fortran_3x4.npy | FileCheck %s --check-prefix=FORTRAN

// ENTRY: run-errors.mlir: error: no function @nope
// SCALAR: run-errors.mlir:[[@LINE+8]]:1: error: argument #0 of @scalar must be a memref, got f32
// DYNAMIC: run-errors.mlir:[[@LINE+8]]:1: error: argument #0 of @dynamic must have a static shape, got memref<?xf32>
// NPY: tessel: error: argument #0: '{{.*}}arg0.npy' holds <i4 [8] but the argument is <f4 [4]
// MISSING: tessel: error: argument #0: cannot read '{{.*}}missing.npy'
// BROKEN: tessel: error: argument #0: cannot read '{{.*}}.bad.npy'
// INDEX: error: --arg 3: @floats4 has 1 arguments
// SYNTAX: tessel: error: --arg '0:zeros': expected N=SOURCE
// USAGE: error: the following required arguments were not provided:
// DEVICE: error: invalid value 'tpu' for '--device <DEVICE>'
func.func @scalar(%x: f32) { return }
func.func @dynamic(%x: memref<?xf32>) { return }
func.func @floats4(%x: memref<4xf32>) { return }
func.func @iota_kernel(%o: memref<8xi32>) {
  %i = grid.program_id 0
  %v = arith.index_cast %i : index to i32
  %t = tensor.splat %v : tensor<1xi32>
  block.store %t, %o[%i] : tensor<1xi32>, memref<8xi32>
  return
}
func.func @iota8(%o: memref<8xi32>) {
  grid.call @iota_kernel grid [8] ins() outs(%o : memref<8xi32>) in_specs [] out_specs [#grid.block<full>]
  return
}

// Arguments too large to allocate are errors, never an abort: a size that
// overflows is located at the function; one the machine cannot hold (4 PB,
// beyond any x86-64 address space) is reported when allocating.
// OVERFLOW: run-errors.mlir:[[@LINE+3]]:1: error: argument #0 of @overflowing is too large to allocate, got memref<100000000000x100000000000xf32>
// PETABYTES: tessel: error: argument #0: an array of 1000000000x1000000xf32 is too large to allocate
// PETABYTES-NOT: memory allocation
func.func @overflowing(%x: memref<100000000000x100000000000xf32>) { return }
func.func @petabytes(%x: memref<1000000000x1000000xf32>) { return }

// A Fortran-order .npy (numpy saves a transposed array as is) is read
// and laid out row-major.
// FORTRAN:      arg0: memref<3x4xf32>
// FORTRAN-NEXT: {{\[\[}} 0.  1.  2.  3.]
// FORTRAN-NEXT:  [ 4.  5.  6.  7.]
// FORTRAN-NEXT:  [ 8.  9. 10. 11.]]
func.func @floats3x4(%x: memref<3x4xf32>) { return }
