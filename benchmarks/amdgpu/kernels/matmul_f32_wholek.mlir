// f32 matmul 2048^3, 128x128 output blocks, the whole of K in each program.
func.func @matmul_kernel(%x: memref<128x2048xf32>, %y: memref<2048x128xf32>, %z: memref<128x128xf32>) {
  %a = block.load %x : memref<128x2048xf32> -> tensor<128x2048xf32>
  %b = block.load %y : memref<2048x128xf32> -> tensor<2048x128xf32>
  %zeros = arith.constant dense<0.0> : tensor<128x128xf32>
  %c = block.dot %a, %b acc %zeros : tensor<128x2048xf32>, tensor<2048x128xf32>, tensor<128x128xf32> -> tensor<128x128xf32>
  block.store %c, %z : tensor<128x128xf32>, memref<128x128xf32>
  return
}

func.func @matmul(%x: memref<2048x2048xf32>, %y: memref<2048x2048xf32>, %z: memref<2048x2048xf32>) {
  grid.call @matmul_kernel grid [16, 16]
      ins(%x, %y : memref<2048x2048xf32>, memref<2048x2048xf32>) outs(%z : memref<2048x2048xf32>)
      in_specs [#grid.block<[128, 2048], (i, j) -> (i, 0)>, #grid.block<[2048, 128], (i, j) -> (0, j)>]
      out_specs [#grid.block<[128, 128], (i, j) -> (i, j)>]
  return
}
