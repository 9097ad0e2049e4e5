// examples/elementwise_16m.mlir over 16,700,000 floats: 255 blocks of
// 65536, the last one partial (53,856 elements in bounds). On a GPU the
// programs with whole blocks run on views of the arrays, the last one on a
// staged copy (grid-to-loops' two versions; test/gpu/partial-blocks.mlir).
func.func @fma_kernel(%x: memref<65536xf32>, %y: memref<65536xf32>, %w: memref<65536xf32>, %o: memref<65536xf32>) {
  %a = block.load %x : memref<65536xf32> -> tensor<65536xf32>
  %b = block.load %y : memref<65536xf32> -> tensor<65536xf32>
  %c = block.load %w : memref<65536xf32> -> tensor<65536xf32>
  %p = arith.mulf %a, %b : tensor<65536xf32>
  %s = arith.addf %p, %c : tensor<65536xf32>
  block.store %s, %o : tensor<65536xf32>, memref<65536xf32>
  return
}

func.func @elementwise_partial(%x: memref<16700000xf32>, %y: memref<16700000xf32>, %w: memref<16700000xf32>, %o: memref<16700000xf32>) {
  grid.call @fma_kernel grid [255] ins(%x, %y, %w : memref<16700000xf32>, memref<16700000xf32>, memref<16700000xf32>) outs(%o : memref<16700000xf32>)
      in_specs [#grid.block<[65536], (i) -> (i)>, #grid.block<[65536], (i) -> (i)>, #grid.block<[65536], (i) -> (i)>]
      out_specs [#grid.block<[65536], (i) -> (i)>]
  return
}
