// Pallas' show_program_ids (grid/BlockSpec docs): every program fills its
// block of an 8x6 int32 array with 10 * program_id(0) + program_id(1).
//   tessel run examples/show_program_ids.mlir --entry show_program_ids
func.func @program_ids_kernel(%o: memref<2x3xi32>) {
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

func.func @show_program_ids(%o: memref<8x6xi32>) {
  grid.call @program_ids_kernel grid [4, 2] ins() outs(%o : memref<8x6xi32>)
      in_specs [] out_specs [#grid.block<[2, 3], (i, j) -> (i, j)>]
  return
}
