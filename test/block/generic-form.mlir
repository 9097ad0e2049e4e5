// The generic form of every Tessel op parses back to the same custom form
// (properties, segment sizes and enum attributes survive the trip).
// RUN: tessel-opt %s --mlir-print-op-generic | tessel-opt - > %t.generic && tessel-opt %s > %t.custom && diff %t.generic %t.custom
// RUN: tessel-opt %s --mlir-print-op-generic | FileCheck %s

// CHECK: "block.reduce"(%{{.*}}) <{dims = array<i64: 1>, kind = 0 : i32}>
// CHECK: "block.atomic_rmw"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{kind = 1 : i32, operandSegmentSizes = array<i32: 1, 1, 1, 1>}>
// CHECK: "grid.call"(%{{.*}}, %{{.*}}) <{callee = @k, grid = array<i64: 2, 2>, in_specs = [#grid.block<[2, 64], (d0, d1) -> (d0, d1)>], operandSegmentSizes = array<i32: 1, 1, 0, 0>, out_specs = [#grid.block<[2], (d0, d1) -> (d0)>], scratch = [memref<2xf32>], semantics = [0 : i32, 1 : i32]}>
func.func @k(%x: memref<2x64xf32>, %o: memref<2xf32>, %s: memref<2xf32>) {
  %v = block.load %x : memref<2x64xf32> -> tensor<2x64xf32>
  %r = block.reduce sum %v dims [1] : tensor<2x64xf32> -> tensor<2xf32>
  %c0 = arith.constant 0 : index
  %m = arith.constant dense<true> : tensor<2xi1>
  block.atomic_rmw max %r, %o[%c0] mask %m : tensor<2xf32>, memref<2xf32>
  return
}
func.func @f(%x: memref<4x128xf32>, %o: memref<4xf32>) {
  grid.call @k grid [2, 2] ins(%x : memref<4x128xf32>) outs(%o : memref<4xf32>) scratch(memref<2xf32>)
      in_specs [#grid.block<[2, 64], (i, j) -> (i, j)>] out_specs [#grid.block<[2], (i, j) -> (i)>]
      semantics [parallel, arbitrary]
  return
}
