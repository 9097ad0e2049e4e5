// Flash-style attention in one kernel: sequence 2048, head dim 64, f32.
// Each program owns 128 query rows and walks the keys/values in blocks of
// 128 with an online softmax (running max, denominator and accumulator as
// scf.for iter_args). K comes transposed (64x2048), as block.dot has no
// transposed-operand form yet.
//   tessel run examples/attention_2048.mlir --entry attention_2048 --arg 0=random:1 --arg 1=random:2 --arg 2=random:3 --bench
func.func @attention_2048_kernel(%q: memref<128x64xf32>, %kt: memref<64x2048xf32>, %v: memref<2048x64xf32>, %o: memref<128x64xf32>) {
  %qv = block.load %q : memref<128x64xf32> -> tensor<128x64xf32>
  %scale = arith.constant dense<0.125> : tensor<128x64xf32>
  %qs = arith.mulf %qv, %scale : tensor<128x64xf32>
  %ninf = arith.constant dense<0xFF800000> : tensor<128xf32>
  %zero_l = arith.constant dense<0.0> : tensor<128xf32>
  %zero_acc = arith.constant dense<0.0> : tensor<128x64xf32>
  %c0 = arith.constant 0 : index
  %step = arith.constant 128 : index
  %end = arith.constant 2048 : index
  %m, %l, %acc = scf.for %j = %c0 to %end step %step
      iter_args(%m0 = %ninf, %l0 = %zero_l, %a0 = %zero_acc) -> (tensor<128xf32>, tensor<128xf32>, tensor<128x64xf32>) {
    %kb = block.load %kt[%c0, %j] [64, 128] : memref<64x2048xf32> -> tensor<64x128xf32>
    %vb = block.load %v[%j, %c0] [128, 64] : memref<2048x64xf32> -> tensor<128x64xf32>
    %s = block.dot %qs, %kb : tensor<128x64xf32>, tensor<64x128xf32> -> tensor<128x128xf32>
    %bm = block.reduce max %s dims [1] : tensor<128x128xf32> -> tensor<128xf32>
    %mn = arith.maximumf %m0, %bm : tensor<128xf32>
    %mnb = block.broadcast %mn dims [1] : tensor<128xf32> -> tensor<128x128xf32>
    %sd = arith.subf %s, %mnb : tensor<128x128xf32>
    %p = math.exp %sd : tensor<128x128xf32>
    %dm = arith.subf %m0, %mn : tensor<128xf32>
    %alpha = math.exp %dm : tensor<128xf32>
    %ps = block.reduce sum %p dims [1] : tensor<128x128xf32> -> tensor<128xf32>
    %la = arith.mulf %l0, %alpha : tensor<128xf32>
    %ln = arith.addf %la, %ps : tensor<128xf32>
    %ab = block.broadcast %alpha dims [1] : tensor<128xf32> -> tensor<128x64xf32>
    %as = arith.mulf %a0, %ab : tensor<128x64xf32>
    %an = block.dot %p, %vb acc %as : tensor<128x128xf32>, tensor<128x64xf32>, tensor<128x64xf32> -> tensor<128x64xf32>
    scf.yield %mn, %ln, %an : tensor<128xf32>, tensor<128xf32>, tensor<128x64xf32>
  }
  %lb = block.broadcast %l dims [1] : tensor<128xf32> -> tensor<128x64xf32>
  %out = arith.divf %acc, %lb : tensor<128x64xf32>
  block.store %out, %o : tensor<128x64xf32>, memref<128x64xf32>
  return
}

func.func @attention_2048(%q: memref<2048x64xf32>, %kt: memref<64x2048xf32>, %v: memref<2048x64xf32>, %o: memref<2048x64xf32>) {
  grid.call @attention_2048_kernel grid [16] ins(%q, %kt, %v : memref<2048x64xf32>, memref<64x2048xf32>, memref<2048x64xf32>) outs(%o : memref<2048x64xf32>)
      in_specs [#grid.block<[128, 64], (i) -> (i, 0)>, #grid.block<full>, #grid.block<full>]
      out_specs [#grid.block<[128, 64], (i) -> (i, 0)>]
  return
}
