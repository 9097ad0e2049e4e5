// Blocks that cannot be checked at compile time (over 2^18 programs and a
// non-linear index map) are checked at run time: a program whose block has
// no element in bounds is skipped and reported (exit 1), by compiled code
// and by the interpreter alike; in-bounds grids of that kind run normally.
// RUN: tessel-opt %s --grid-verify-specs > /dev/null
// RUN: tessel run %s --entry out_of_bounds 2>&1 | FileCheck %s --check-prefix=COMPILED; test ${PIPESTATUS[0]} -eq 1
// RUN: tessel run %s --entry out_of_bounds --interpret 2>&1 | FileCheck %s --check-prefix=INTERPRETED; test ${PIPESTATUS[0]} -eq 1
// RUN: tessel run %s --entry in_bounds | FileCheck %s --check-prefix=OK
// RUN: tessel-opt %s --grid-verify-specs --grid-to-loops | FileCheck %s --check-prefix=LOOPS

// COMPILED: tessel: error: Out-of-bounds block index in a program for output #0 of @kernel (called at {{.*}}bounds-at-run-time.mlir:{{[0-9]+}}:{{[0-9]+}}): its block has no element in the array (Pallas requires one); those programs were skipped
// INTERPRETED: tessel: error: interpreter: Out-of-bounds block index [100000] for operand #0 at grid point [5]: the block starts at element 100000 of dimension 0, outside the array of size 100000
// OK: arg0: memref<131073xi32>
// OK-NEXT: [     0      1      2 ... 131070 131071 131072]
// LOOPS: memref.global @__tessel_out_of_bounds : memref<i32> = dense<0>
// LOOPS: scf.if
// LOOPS: } else {
// LOOPS: memref.get_global @__tessel_out_of_bounds
func.func @kernel(%o: memref<1xi32>) {
  %i = grid.program_id 0
  %c2 = arith.constant 2 : index
  %h = arith.floordivsi %i, %c2 : index
  %v = arith.index_cast %h : index to i32
  %t = tensor.splat %v : tensor<1xi32>
  block.store %t, %o : tensor<1xi32>, memref<1xi32>
  return
}
func.func @out_of_bounds(%o: memref<100000xi32>) {
  grid.call @kernel grid [262145] ins() outs(%o : memref<100000xi32>)
      in_specs [] out_specs [#grid.block<[1], (i) -> ((i mod 7) * 20000)>] semantics [arbitrary]
  return
}
func.func @in_bounds(%o: memref<131073xi32>) {
  grid.call @kernel grid [262145] ins() outs(%o : memref<131073xi32>)
      in_specs [] out_specs [#grid.block<[1], (i) -> (i floordiv 2)>] semantics [arbitrary]
  return
}
