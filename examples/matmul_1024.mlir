// matmul, 1024x1024x1024 f32, written Pallas style: 256x256 blocks, K on an
// arbitrary grid axis, the output block accumulated in place across it.
//   tessel run examples/matmul_1024.mlir --entry matmul_1024 --arg 0=random:1 --arg 1=random:2 --bench
func.func @matmul_1024_kernel(%x: memref<256x256xf32>, %y: memref<256x256xf32>, %z: memref<256x256xf32>) {
  %k = grid.program_id 2
  %c0 = arith.constant 0 : index
  %first = arith.cmpi eq, %k, %c0 : index
  scf.if %first {
    %zeros = arith.constant dense<0.0> : tensor<256x256xf32>
    block.store %zeros, %z : tensor<256x256xf32>, memref<256x256xf32>
  }
  %a = block.load %x : memref<256x256xf32> -> tensor<256x256xf32>
  %bt = block.load %y : memref<256x256xf32> -> tensor<256x256xf32>
  %acc = block.load %z : memref<256x256xf32> -> tensor<256x256xf32>
  %c = block.dot %a, %bt acc %acc : tensor<256x256xf32>, tensor<256x256xf32>, tensor<256x256xf32> -> tensor<256x256xf32>
  block.store %c, %z : tensor<256x256xf32>, memref<256x256xf32>
  return
}

func.func @matmul_1024(%x: memref<1024x1024xf32>, %y: memref<1024x1024xf32>, %z: memref<1024x1024xf32>) {
  grid.call @matmul_1024_kernel grid [4, 4, 4]
      ins(%x, %y : memref<1024x1024xf32>, memref<1024x1024xf32>) outs(%z : memref<1024x1024xf32>)
      in_specs [#grid.block<[256, 256], (i, j, k) -> (i, k)>, #grid.block<[256, 256], (i, j, k) -> (k, j)>]
      out_specs [#grid.block<[256, 256], (i, j, k) -> (i, j)>]
  return
}
