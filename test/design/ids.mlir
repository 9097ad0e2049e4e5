// A call without inputs still writes the empty lists (Pallas' in_specs=[]):
// Pallas' show_program_ids example.
// RUN: tessel-opt %s | FileCheck %s
// RUN: tessel-opt %s > %t.1 && tessel-opt %t.1 > %t.2 && diff %t.1 %t.2

// CHECK-LABEL: func.func @ids_kernel
// CHECK: %[[I:.*]] = grid.program_id 0
// CHECK: %[[J:.*]] = grid.program_id 1
// CHECK: %{{.*}} = tensor.splat %{{.*}} : tensor<2x3xi32>
func.func @ids_kernel(%o: memref<2x3xi32>) {
  %i = grid.program_id 0
  %j = grid.program_id 1
  %c10 = arith.constant 10 : index
  %t = arith.muli %i, %c10 : index
  %v = arith.addi %t, %j : index
  %v32 = arith.index_cast %v : index to i32
  %block = tensor.splat %v32 : tensor<2x3xi32>
  block.store %block, %o : tensor<2x3xi32>, memref<2x3xi32>
  return
}

// CHECK-LABEL: func.func @show_program_ids
// CHECK: grid.call @ids_kernel grid [4, 2] ins() outs(%{{.*}} : memref<8x6xi32>) in_specs [] out_specs [#grid.block<[2, 3], (d0, d1) -> (d0, d1)>]
func.func @show_program_ids(%o: memref<8x6xi32>) {
  grid.call @ids_kernel grid [4, 2] ins() outs(%o : memref<8x6xi32>)
      in_specs [] out_specs [#grid.block<[2, 3], (i, j) -> (i, j)>]
  return
}
