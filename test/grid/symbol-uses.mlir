// grid.call is a symbol user: symbol-dce keeps private kernels (and index
// functions) that a call names and drops the rest; inlining leaves kernels alone.
// RUN: tessel-opt %s --symbol-dce | FileCheck %s
// RUN: tessel-opt %s --inline --symbol-dce | FileCheck %s

// CHECK-NOT: @unused
// CHECK: func.func private @kernel
// CHECK: grid.call @kernel
// CHECK: grid.call @kernel
// CHECK: func.func private @blocks_of
func.func private @unused(%o: memref<2xf32>) { return }
func.func private @kernel(%o: memref<2xf32>) {
  %z = arith.constant dense<0.0> : tensor<2xf32>
  block.store %z, %o : tensor<2xf32>, memref<2xf32>
  return
}
func.func @launch(%o: memref<8xf32>) {
  grid.call @kernel grid [4] ins() outs(%o : memref<8xf32>) in_specs [] out_specs [#grid.block<[2], (i) -> (i)>]
  // An index function named by a BlockSpec is used too.
  grid.call @kernel grid [4] ins() outs(%o : memref<8xf32>) in_specs [] out_specs [#grid.block<[2], @blocks_of>]
  return
}
func.func private @blocks_of(%i: index) -> index { return %i : index }
