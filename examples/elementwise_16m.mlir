// o = x * y + w over 16M f32 elements, 65536 per program.
//   tessel run examples/elementwise_16m.mlir --entry elementwise_16m --arg 0=random:1 --arg 1=random:2 --arg 2=random:3 --bench
func.func @fma_kernel(%x: memref<65536xf32>, %y: memref<65536xf32>, %w: memref<65536xf32>, %o: memref<65536xf32>) {
  %a = block.load %x : memref<65536xf32> -> tensor<65536xf32>
  %b = block.load %y : memref<65536xf32> -> tensor<65536xf32>
  %c = block.load %w : memref<65536xf32> -> tensor<65536xf32>
  %p = arith.mulf %a, %b : tensor<65536xf32>
  %s = arith.addf %p, %c : tensor<65536xf32>
  block.store %s, %o : tensor<65536xf32>, memref<65536xf32>
  return
}

func.func @elementwise_16m(%x: memref<16777216xf32>, %y: memref<16777216xf32>, %w: memref<16777216xf32>, %o: memref<16777216xf32>) {
  grid.call @fma_kernel grid [256] ins(%x, %y, %w : memref<16777216xf32>, memref<16777216xf32>, memref<16777216xf32>) outs(%o : memref<16777216xf32>)
      in_specs [#grid.block<[65536], (i) -> (i)>, #grid.block<[65536], (i) -> (i)>, #grid.block<[65536], (i) -> (i)>]
      out_specs [#grid.block<[65536], (i) -> (i)>]
  return
}
