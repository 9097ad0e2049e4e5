// Layer normalization of each row of a 4096x4096 f32 array (scale and
// shift per column, eps = 1e-5), 8 rows per program.
//   tessel run examples/layernorm_4096.mlir --entry layernorm_4096 --arg 0=random:1 --arg 1=random:2 --arg 2=random:3 --bench
func.func @layernorm_kernel(%x: memref<8x4096xf32>, %gamma: memref<4096xf32>, %beta: memref<4096xf32>, %o: memref<8x4096xf32>) {
  %v = block.load %x : memref<8x4096xf32> -> tensor<8x4096xf32>
  %n = arith.constant dense<4096.0> : tensor<8xf32>
  %s = block.reduce sum %v dims [1] : tensor<8x4096xf32> -> tensor<8xf32>
  %mean = arith.divf %s, %n : tensor<8xf32>
  %mb = block.broadcast %mean dims [1] : tensor<8xf32> -> tensor<8x4096xf32>
  %d = arith.subf %v, %mb : tensor<8x4096xf32>
  %sq = arith.mulf %d, %d : tensor<8x4096xf32>
  %ss = block.reduce sum %sq dims [1] : tensor<8x4096xf32> -> tensor<8xf32>
  %var = arith.divf %ss, %n : tensor<8xf32>
  %eps = arith.constant dense<1.0e-5> : tensor<8xf32>
  %ve = arith.addf %var, %eps : tensor<8xf32>
  %inv = math.rsqrt %ve : tensor<8xf32>
  %ib = block.broadcast %inv dims [1] : tensor<8xf32> -> tensor<8x4096xf32>
  %y = arith.mulf %d, %ib : tensor<8x4096xf32>
  %g = block.load %gamma : memref<4096xf32> -> tensor<4096xf32>
  %b = block.load %beta : memref<4096xf32> -> tensor<4096xf32>
  %gb = block.broadcast %g dims [0] : tensor<4096xf32> -> tensor<8x4096xf32>
  %bb = block.broadcast %b dims [0] : tensor<4096xf32> -> tensor<8x4096xf32>
  %scaled = arith.mulf %y, %gb : tensor<8x4096xf32>
  %r = arith.addf %scaled, %bb : tensor<8x4096xf32>
  block.store %r, %o : tensor<8x4096xf32>, memref<8x4096xf32>
  return
}

func.func @layernorm_4096(%x: memref<4096x4096xf32>, %gamma: memref<4096xf32>, %beta: memref<4096xf32>, %o: memref<4096x4096xf32>) {
  grid.call @layernorm_kernel grid [512] ins(%x, %gamma, %beta : memref<4096x4096xf32>, memref<4096xf32>, memref<4096xf32>) outs(%o : memref<4096x4096xf32>)
      in_specs [#grid.block<[8, 4096], (i) -> (i, 0)>, #grid.block<full>, #grid.block<full>]
      out_specs [#grid.block<[8, 4096], (i) -> (i, 0)>]
  return
}
