// f32 matmul 2048^3 in 256x256 output blocks, K on an arbitrary grid axis
// in steps of 256, eight waves per workgroup (as Triton's 256x256 tiles
// run best: with four, its 128x128 results per wave fill the AGPRs and
// leave one wave per SIMD). Eight waves' 128 accumulator registers per
// lane cover the whole block in one pass: A and B are staged once per
// chunk, not once per 128x128 sub-block.
module attributes {tessel.num_warps = 8 : i64} {
  func.func @matmul_kernel(%x: memref<256x256xf32>, %y: memref<256x256xf32>, %z: memref<256x256xf32>) {
    %k = grid.program_id 2
    %c0 = arith.constant 0 : index
    %first = arith.cmpi eq, %k, %c0 : index
    scf.if %first {
      %zeros = arith.constant dense<0.0> : tensor<256x256xf32>
      block.store %zeros, %z : tensor<256x256xf32>, memref<256x256xf32>
    }
    %a = block.load %x : memref<256x256xf32> -> tensor<256x256xf32>
    %b = block.load %y : memref<256x256xf32> -> tensor<256x256xf32>
    %acc = block.load %z : memref<256x256xf32> -> tensor<256x256xf32>
    %c = block.dot %a, %b acc %acc : tensor<256x256xf32>, tensor<256x256xf32>, tensor<256x256xf32> -> tensor<256x256xf32>
    block.store %c, %z : tensor<256x256xf32>, memref<256x256xf32>
    return
  }

  func.func @matmul(%x: memref<2048x2048xf32>, %y: memref<2048x2048xf32>, %z: memref<2048x2048xf32>) {
    grid.call @matmul_kernel grid [8, 8, 8]
        ins(%x, %y : memref<2048x2048xf32>, memref<2048x2048xf32>) outs(%z : memref<2048x2048xf32>)
        in_specs [#grid.block<[256, 256], (i, j, k) -> (i, k)>, #grid.block<[256, 256], (i, j, k) -> (k, j)>]
        out_specs [#grid.block<[256, 256], (i, j, k) -> (i, j)>]
    return
  }
}
