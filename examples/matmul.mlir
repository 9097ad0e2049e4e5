// The reference Pallas matmul: one 128x128 output block per program.
func.func @matmul_kernel(%x: memref<128x256xf32>, %y: memref<256x128xf32>,
                         %z: memref<128x128xf32>) {
  %a = block.load %x : memref<128x256xf32> -> tensor<128x256xf32>
  %b = block.load %y : memref<256x128xf32> -> tensor<256x128xf32>
  %c = block.dot %a, %b : tensor<128x256xf32>, tensor<256x128xf32> -> tensor<128x128xf32>
  block.store %c, %z : tensor<128x128xf32>, memref<128x128xf32>
  return
}

func.func @matmul(%x: memref<1024x256xf32>, %y: memref<256x1024xf32>,
                  %z: memref<1024x1024xf32>) {
  grid.call @matmul_kernel grid [8, 8]
      ins(%x, %y : memref<1024x256xf32>, memref<256x1024xf32>)
      outs(%z : memref<1024x1024xf32>)
      in_specs [#grid.block<[128, 256], (i, j) -> (i, 0)>,
                #grid.block<[256, 128], (i, j) -> (0, j)>]
      out_specs [#grid.block<[128, 128], (i, j) -> (i, j)>]
  return
}
