// matmul + bias + relu fused in the epilogue of the last K step, 2048x2048x2048 f32, written Pallas style: 256x256 blocks, K on an
// arbitrary grid axis, the output block accumulated in place across it.
//   tessel run examples/matmul_bias_relu_2048.mlir --entry matmul_bias_relu_2048 --arg 0=random:1 --arg 1=random:2 --arg 2=random:3 --bench
func.func @matmul_bias_relu_2048_kernel(%x: memref<256x256xf32>, %y: memref<256x256xf32>, %bias: memref<1x256xf32>, %z: memref<256x256xf32>) {
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
  %n = grid.num_programs 2
  %c1 = arith.constant 1 : index
  %last_k = arith.subi %n, %c1 : index
  %last = arith.cmpi eq, %k, %last_k : index
  %out = scf.if %last -> (tensor<256x256xf32>) {
    %bv = block.load %bias : memref<1x256xf32> -> tensor<1x256xf32>
    %bb = block.broadcast %bv dims [] : tensor<1x256xf32> -> tensor<256x256xf32>
    %s = arith.addf %c, %bb : tensor<256x256xf32>
    %zero = arith.constant dense<0.0> : tensor<256x256xf32>
    %r = arith.maximumf %s, %zero : tensor<256x256xf32>
    scf.yield %r : tensor<256x256xf32>
  } else {
    scf.yield %c : tensor<256x256xf32>
  }
  block.store %out, %z : tensor<256x256xf32>, memref<256x256xf32>
  return
}

func.func @matmul_bias_relu_2048(%x: memref<2048x2048xf32>, %y: memref<2048x2048xf32>, %bias: memref<1x2048xf32>, %z: memref<2048x2048xf32>) {
  grid.call @matmul_bias_relu_2048_kernel grid [8, 8, 8]
      ins(%x, %y, %bias : memref<2048x2048xf32>, memref<2048x2048xf32>, memref<1x2048xf32>) outs(%z : memref<2048x2048xf32>)
      in_specs [#grid.block<[256, 256], (i, j, k) -> (i, k)>, #grid.block<[256, 256], (i, j, k) -> (k, j)>, #grid.block<[1, 256], (i, j, k) -> (0, j)>]
      out_specs [#grid.block<[256, 256], (i, j, k) -> (i, j)>]
  return
}
