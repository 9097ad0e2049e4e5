// Kernels checked as JAX's TPU interpreter checks them
// (`--out-of-bounds-reads`, `--uninitialized-memory`; what
// InterpretParams sets from Python): programs 2 and 3 read past x. With
// `raise` the call fails naming the first such read and its line (exit 1);
// with `uninitialized` those reads give the fill. Unchecked, the kernel
// would read past the array.
// RUN: tessel run --device cpu %s --entry shifted --out-of-bounds-reads raise 2>&1 | FileCheck %s --check-prefix=RAISE; test ${PIPESTATUS[0]} -eq 1
// RUN: tessel run --device cpu %s --entry shifted --out-of-bounds-reads uninitialized --uninitialized-memory nan | FileCheck %s --check-prefix=NAN
// RUN: tessel run --device cpu %s --entry shifted --out-of-bounds-reads uninitialized --uninitialized-memory zero | FileCheck %s --check-prefix=ZERO
// RUN: tessel run --device cpu %s --entry inside --out-of-bounds-reads raise | FileCheck %s --check-prefix=INSIDE
// RAISE: tessel: error: Out-of-bounds read of a load from memref<5xf32> at {{.*}}checked-accesses.mlir:[[@LINE+12]]:8: reading a (1) window but the ref has shape (5)
// NAN: arg1: memref<4xf32>
// NAN-NEXT: [ 0.  0. nan nan]
// ZERO: arg1: memref<4xf32>
// ZERO-NEXT: [0. 0. 0. 0.]
// INSIDE: arg1: memref<4xf32>
// INSIDE-NEXT: [0. 0. 0. 0.]

func.func @shifted_kernel(%x: memref<5xf32>, %o: memref<1xf32>) {
  %i = grid.program_id 0
  %c3 = arith.constant 3 : index
  %j = arith.addi %i, %c3 : index
  %v = memref.load %x[%j] : memref<5xf32>
  %c0 = arith.constant 0 : index
  memref.store %v, %o[%c0] : memref<1xf32>
  return
}
func.func @inside_kernel(%x: memref<5xf32>, %o: memref<1xf32>) {
  %i = grid.program_id 0
  %c1 = arith.constant 1 : index
  %j = arith.addi %i, %c1 : index
  %v = memref.load %x[%j] : memref<5xf32>
  %c0 = arith.constant 0 : index
  memref.store %v, %o[%c0] : memref<1xf32>
  return
}
func.func @shifted(%x: memref<5xf32>, %o: memref<4xf32>) {
  grid.call @shifted_kernel grid [4] ins(%x : memref<5xf32>) outs(%o : memref<4xf32>)
      in_specs [#grid.block<full>] out_specs [#grid.block<[1], (i) -> (i)>]
  return
}
func.func @inside(%x: memref<5xf32>, %o: memref<4xf32>) {
  grid.call @inside_kernel grid [4] ins(%x : memref<5xf32>) outs(%o : memref<4xf32>)
      in_specs [#grid.block<full>] out_specs [#grid.block<[1], (i) -> (i)>]
  return
}
