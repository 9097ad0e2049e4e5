// Index maps that are functions, and scalar prefetch: a BlockSpec's map
// may be a func.func of the program ids and the call's scalar arrays
// (`scalars(..)`, Pallas' num_scalar_prefetch), which kernels also get,
// whole, as their first refs. Expected values are numpy's.
// On the CPU against the interpreter (--check); the harness reruns each
// `tessel run` on the emulated GPU; the ROCm path compiles for every chip.
// RUN: tessel run %s --entry paged --arg 0=test/e2e/Inputs/block_tables_2x3.npy --arg 1=test/e2e/Inputs/pages_8x4.npy --check | FileCheck %s --check-prefix=PAGED
// RUN: tessel run %s --entry causal --arg 0=test/e2e/Inputs/rows_3x4.npy --check | FileCheck %s --check-prefix=CAUSAL
// RUN: tessel run %s --entry causal --arg 0=test/e2e/Inputs/rows_3x4.npy --interpret | FileCheck %s --check-prefix=CAUSAL
// RUN: tessel compile %s --target rocm --chip gfx90a --emit hsaco -o %t.gfx90a.hsaco
// RUN: tessel compile %s --target rocm --chip gfx942 --emit hsaco -o %t.gfx942.hsaco
// RUN: tessel compile %s --target rocm --chip gfx1100 --emit hsaco -o %t.gfx1100.hsaco

// Paged access: program (i, j) reads the page tables[i, j] names
// (p[t].sum(1)) and adds the page number, read in the kernel from the
// same scalar array (+ t.sum(1)).
// PAGED:      arg2: memref<2x4xf32>
// PAGED-NEXT: {{\[\[}}60. 63. 66. 69.]
// PAGED-NEXT:  [55. 58. 61. 64.]]
// PAGED:      check: compiled code matches the interpreter
func.func @page_of(%i: index, %j: index, %tables: memref<2x3xi32>) -> (index, index) {
  %t = memref.load %tables[%i, %j] : memref<2x3xi32>
  %page = arith.index_cast %t : i32 to index
  %c0 = arith.constant 0 : index
  return %page, %c0 : index, index
}
func.func @paged_kernel(%tables: memref<2x3xi32>, %page: memref<1x4xf32>, %o: memref<1x4xf32>) {
  %i = grid.program_id 0
  %j = grid.program_id 1
  %c0 = arith.constant 0 : index
  %first = arith.cmpi eq, %j, %c0 : index
  scf.if %first {
    %zero = arith.constant dense<0.0> : tensor<1x4xf32>
    block.store %zero, %o : tensor<1x4xf32>, memref<1x4xf32>
  }
  %t = memref.load %tables[%i, %j] : memref<2x3xi32>
  %tf = arith.sitofp %t : i32 to f32
  %ts = tensor.splat %tf : tensor<1x4xf32>
  %p = block.load %page : memref<1x4xf32> -> tensor<1x4xf32>
  %acc = block.load %o : memref<1x4xf32> -> tensor<1x4xf32>
  %sum = arith.addf %acc, %p : tensor<1x4xf32>
  %sum2 = arith.addf %sum, %ts : tensor<1x4xf32>
  block.store %sum2, %o : tensor<1x4xf32>, memref<1x4xf32>
  return
}
func.func @paged(%tables: memref<2x3xi32>, %pages: memref<8x4xf32>, %o: memref<2x4xf32>) {
  grid.call @paged_kernel grid [2, 3] scalars(%tables : memref<2x3xi32>)
      ins(%pages : memref<8x4xf32>) outs(%o : memref<2x4xf32>)
      in_specs [#grid.block<[1, 4], @page_of>] out_specs [#grid.block<[1, 4], (i, j) -> (i, 0)>]
  return
}

// Causal flash attention's clamp: program (i, j) reads block min(i, j)
// (a select on a comparison, not affine), and sums them over j.
// CAUSAL:      arg1: memref<3x4xf32>
// CAUSAL-NEXT: {{\[\[}} 0.  3.  6.  9.]
// CAUSAL-NEXT:  [ 8. 11. 14. 17.]
// CAUSAL-NEXT:  [12. 15. 18. 21.]]
func.func @below_diagonal(%i: index, %j: index) -> (index, index) {
  %later = arith.cmpi sgt, %j, %i : index
  %k = arith.select %later, %i, %j : index
  %c0 = arith.constant 0 : index
  return %k, %c0 : index, index
}
func.func @causal_kernel(%x: memref<1x4xf32>, %o: memref<1x4xf32>) {
  %j = grid.program_id 1
  %c0 = arith.constant 0 : index
  %first = arith.cmpi eq, %j, %c0 : index
  scf.if %first {
    %zero = arith.constant dense<0.0> : tensor<1x4xf32>
    block.store %zero, %o : tensor<1x4xf32>, memref<1x4xf32>
  }
  %v = block.load %x : memref<1x4xf32> -> tensor<1x4xf32>
  %acc = block.load %o : memref<1x4xf32> -> tensor<1x4xf32>
  %sum = arith.addf %acc, %v : tensor<1x4xf32>
  block.store %sum, %o : tensor<1x4xf32>, memref<1x4xf32>
  return
}
func.func @causal(%x: memref<3x4xf32>, %o: memref<3x4xf32>) {
  grid.call @causal_kernel grid [3, 3] ins(%x : memref<3x4xf32>) outs(%o : memref<3x4xf32>)
      in_specs [#grid.block<[1, 4], @below_diagonal>] out_specs [#grid.block<[1, 4], (i, j) -> (i, 0)>]
  return
}
