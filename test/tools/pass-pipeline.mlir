// Tessel's Rust passes are registered by name: they work as flags and
// inside --pass-pipeline strings, mixed with upstream passes, and nested
// func.func passes are nested implicitly like in mlir-opt.
// RUN: tessel-opt %s --pass-pipeline='builtin.module(grid-verify-specs,cse,canonicalize)' | FileCheck %s
// RUN: tessel-opt %s --grid-verify-specs --cse --canonicalize | FileCheck %s
// RUN: tessel-opt %s --pass-pipeline='builtin.module(func.func(cse),grid-verify-specs)' | FileCheck %s
// RUN: tessel-opt %s --grid-verify-specs --convert-linalg-to-loops | FileCheck %s --check-prefix=NESTED
// RUN: tessel-opt --list-passes | FileCheck %s --check-prefix=LIST

// LIST: grid-verify-specs
// LIST-SAME: Check BlockSpecs over the whole grid and infer axis semantics

// CHECK-LABEL: func.func @kernel
// CHECK-COUNT-1: grid.program_id 0
// CHECK-NOT: grid.program_id
func.func @kernel(%o: memref<2x3xindex>) {
  %p = grid.program_id 0
  %q = grid.program_id 0
  %s = arith.addi %p, %q : index
  %b = tensor.splat %s : tensor<2x3xindex>
  block.store %b, %o : tensor<2x3xindex>, memref<2x3xindex>
  return
}
// CHECK: semantics [parallel, parallel, arbitrary]
// NESTED: semantics [parallel, parallel, arbitrary]
func.func @launch(%o: memref<8x6xindex>) {
  grid.call @kernel grid [4, 2, 3] ins() outs(%o : memref<8x6xindex>)
      in_specs [] out_specs [#grid.block<[2, 3], (i, j, k) -> (i, j)>]
  return
}
