// f32 matmul 2048^3, 128x128 output blocks, K on an arbitrary grid axis in
// steps of 128 (the Pallas idiom: the output block revisited across k).
func.func @matmul_kernel(%x: memref<128x128xf32>, %y: memref<128x128xf32>, %z: memref<128x128xf32>) {
  %k = grid.program_id 2
  %c0 = arith.constant 0 : index
  %first = arith.cmpi eq, %k, %c0 : index
  scf.if %first {
    %zeros = arith.constant dense<0.0> : tensor<128x128xf32>
    block.store %zeros, %z : tensor<128x128xf32>, memref<128x128xf32>
  }
  %a = block.load %x : memref<128x128xf32> -> tensor<128x128xf32>
  %b = block.load %y : memref<128x128xf32> -> tensor<128x128xf32>
  %acc = block.load %z : memref<128x128xf32> -> tensor<128x128xf32>
  %c = block.dot %a, %b acc %acc : tensor<128x128xf32>, tensor<128x128xf32>, tensor<128x128xf32> -> tensor<128x128xf32>
  block.store %c, %z : tensor<128x128xf32>, memref<128x128xf32>
  return
}

func.func @matmul(%x: memref<2048x2048xf32>, %y: memref<2048x2048xf32>, %z: memref<2048x2048xf32>) {
  grid.call @matmul_kernel grid [16, 16, 16]
      ins(%x, %y : memref<2048x2048xf32>, memref<2048x2048xf32>) outs(%z : memref<2048x2048xf32>)
      in_specs [#grid.block<[128, 128], (i, j, k) -> (i, k)>, #grid.block<[128, 128], (i, j, k) -> (k, j)>]
      out_specs [#grid.block<[128, 128], (i, j, k) -> (i, j)>]
  return
}
