// Small versions of the benchmark workloads in examples/ (same kernels,
// smaller sizes), compiled and checked against the reference interpreter.
// RUN: tessel run %s --entry attention --arg 0=random:1 --arg 1=random:2 --arg 2=random:3 --check | FileCheck %s
// RUN: tessel run %s --entry matmul_bias_relu --arg 0=random:1 --arg 1=random:2 --arg 2=random:3 --check | FileCheck %s
// RUN: tessel run %s --entry softmax --arg 0=random:1 --check | FileCheck %s
// RUN: tessel run %s --entry layernorm --arg 0=random:1 --arg 1=random:2 --arg 2=random:3 --check | FileCheck %s
// RUN: tessel run %s --entry elementwise --arg 0=random:1 --arg 1=random:2 --arg 2=random:3 --check | FileCheck %s
// block.reduce's float order is unspecified (compiled code reassociates it
// as the host's vectorizer likes), so the sum runs on dyadic inputs (k/1024)
// whose every partial sum is exact: any order prints the same bits.
// RUN: tessel run %s --entry sum --arg 0=test/e2e/Inputs/dyadic_8192.npy --check | FileCheck %s --check-prefixes=CHECK,SUM
// SUM: [20.791992  -6.2421875]
// CHECK: check: compiled code matches the interpreter
func.func @attention_kernel(%q: memref<64x16xf32>, %kt: memref<16x256xf32>, %v: memref<256x16xf32>, %o: memref<64x16xf32>) {
  %qv = block.load %q : memref<64x16xf32> -> tensor<64x16xf32>
  %scale = arith.constant dense<0.25> : tensor<64x16xf32>
  %qs = arith.mulf %qv, %scale : tensor<64x16xf32>
  %ninf = arith.constant dense<0xFF800000> : tensor<64xf32>
  %zero_l = arith.constant dense<0.0> : tensor<64xf32>
  %zero_acc = arith.constant dense<0.0> : tensor<64x16xf32>
  %c0 = arith.constant 0 : index
  %step = arith.constant 32 : index
  %end = arith.constant 256 : index
  %m, %l, %acc = scf.for %j = %c0 to %end step %step
      iter_args(%m0 = %ninf, %l0 = %zero_l, %a0 = %zero_acc) -> (tensor<64xf32>, tensor<64xf32>, tensor<64x16xf32>) {
    %kb = block.load %kt[%c0, %j] [16, 32] : memref<16x256xf32> -> tensor<16x32xf32>
    %vb = block.load %v[%j, %c0] [32, 16] : memref<256x16xf32> -> tensor<32x16xf32>
    %s = block.dot %qs, %kb : tensor<64x16xf32>, tensor<16x32xf32> -> tensor<64x32xf32>
    %bm = block.reduce max %s dims [1] : tensor<64x32xf32> -> tensor<64xf32>
    %mn = arith.maximumf %m0, %bm : tensor<64xf32>
    %mnb = block.broadcast %mn dims [1] : tensor<64xf32> -> tensor<64x32xf32>
    %sd = arith.subf %s, %mnb : tensor<64x32xf32>
    %p = math.exp %sd : tensor<64x32xf32>
    %dm = arith.subf %m0, %mn : tensor<64xf32>
    %alpha = math.exp %dm : tensor<64xf32>
    %ps = block.reduce sum %p dims [1] : tensor<64x32xf32> -> tensor<64xf32>
    %la = arith.mulf %l0, %alpha : tensor<64xf32>
    %ln = arith.addf %la, %ps : tensor<64xf32>
    %ab = block.broadcast %alpha dims [1] : tensor<64xf32> -> tensor<64x16xf32>
    %as = arith.mulf %a0, %ab : tensor<64x16xf32>
    %an = block.dot %p, %vb acc %as : tensor<64x32xf32>, tensor<32x16xf32>, tensor<64x16xf32> -> tensor<64x16xf32>
    scf.yield %mn, %ln, %an : tensor<64xf32>, tensor<64xf32>, tensor<64x16xf32>
  }
  %lb = block.broadcast %l dims [1] : tensor<64xf32> -> tensor<64x16xf32>
  %out = arith.divf %acc, %lb : tensor<64x16xf32>
  block.store %out, %o : tensor<64x16xf32>, memref<64x16xf32>
  return
}

func.func @attention(%q: memref<256x16xf32>, %kt: memref<16x256xf32>, %v: memref<256x16xf32>, %o: memref<256x16xf32>) {
  grid.call @attention_kernel grid [4] ins(%q, %kt, %v : memref<256x16xf32>, memref<16x256xf32>, memref<256x16xf32>) outs(%o : memref<256x16xf32>)
      in_specs [#grid.block<[64, 16], (i) -> (i, 0)>, #grid.block<full>, #grid.block<full>]
      out_specs [#grid.block<[64, 16], (i) -> (i, 0)>]
  return
}

func.func @matmul_bias_relu_kernel(%x: memref<16x16xf32>, %y: memref<16x16xf32>, %bias: memref<1x16xf32>, %z: memref<16x16xf32>) {
  %k = grid.program_id 2
  %c0 = arith.constant 0 : index
  %first = arith.cmpi eq, %k, %c0 : index
  scf.if %first {
    %zeros = arith.constant dense<0.0> : tensor<16x16xf32>
    block.store %zeros, %z : tensor<16x16xf32>, memref<16x16xf32>
  }
  %a = block.load %x : memref<16x16xf32> -> tensor<16x16xf32>
  %bt = block.load %y : memref<16x16xf32> -> tensor<16x16xf32>
  %acc = block.load %z : memref<16x16xf32> -> tensor<16x16xf32>
  %c = block.dot %a, %bt acc %acc : tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32> -> tensor<16x16xf32>
  %n = grid.num_programs 2
  %c1 = arith.constant 1 : index
  %last_k = arith.subi %n, %c1 : index
  %last = arith.cmpi eq, %k, %last_k : index
  %out = scf.if %last -> (tensor<16x16xf32>) {
    %bv = block.load %bias : memref<1x16xf32> -> tensor<1x16xf32>
    %bb = block.broadcast %bv dims [] : tensor<1x16xf32> -> tensor<16x16xf32>
    %s = arith.addf %c, %bb : tensor<16x16xf32>
    %zero = arith.constant dense<0.0> : tensor<16x16xf32>
    %r = arith.maximumf %s, %zero : tensor<16x16xf32>
    scf.yield %r : tensor<16x16xf32>
  } else {
    scf.yield %c : tensor<16x16xf32>
  }
  block.store %out, %z : tensor<16x16xf32>, memref<16x16xf32>
  return
}

func.func @matmul_bias_relu(%x: memref<48x48xf32>, %y: memref<48x48xf32>, %bias: memref<1x48xf32>, %z: memref<48x48xf32>) {
  grid.call @matmul_bias_relu_kernel grid [3, 3, 3]
      ins(%x, %y, %bias : memref<48x48xf32>, memref<48x48xf32>, memref<1x48xf32>) outs(%z : memref<48x48xf32>)
      in_specs [#grid.block<[16, 16], (i, j, k) -> (i, k)>, #grid.block<[16, 16], (i, j, k) -> (k, j)>, #grid.block<[1, 16], (i, j, k) -> (0, j)>]
      out_specs [#grid.block<[16, 16], (i, j, k) -> (i, j)>]
  return
}
func.func @softmax_kernel(%x: memref<8x48xf32>, %o: memref<8x48xf32>) {
  %v = block.load %x : memref<8x48xf32> -> tensor<8x48xf32>
  %m = block.reduce max %v dims [1] : tensor<8x48xf32> -> tensor<8xf32>
  %mb = block.broadcast %m dims [1] : tensor<8xf32> -> tensor<8x48xf32>
  %d = arith.subf %v, %mb : tensor<8x48xf32>
  %e = math.exp %d : tensor<8x48xf32>
  %s = block.reduce sum %e dims [1] : tensor<8x48xf32> -> tensor<8xf32>
  %sb = block.broadcast %s dims [1] : tensor<8xf32> -> tensor<8x48xf32>
  %r = arith.divf %e, %sb : tensor<8x48xf32>
  block.store %r, %o : tensor<8x48xf32>, memref<8x48xf32>
  return
}

func.func @softmax(%x: memref<48x48xf32>, %o: memref<48x48xf32>) {
  grid.call @softmax_kernel grid [6] ins(%x : memref<48x48xf32>) outs(%o : memref<48x48xf32>)
      in_specs [#grid.block<[8, 48], (i) -> (i, 0)>] out_specs [#grid.block<[8, 48], (i) -> (i, 0)>]
  return
}
func.func @layernorm_kernel(%x: memref<8x48xf32>, %gamma: memref<48xf32>, %beta: memref<48xf32>, %o: memref<8x48xf32>) {
  %v = block.load %x : memref<8x48xf32> -> tensor<8x48xf32>
  %n = arith.constant dense<48.0> : tensor<8xf32>
  %s = block.reduce sum %v dims [1] : tensor<8x48xf32> -> tensor<8xf32>
  %mean = arith.divf %s, %n : tensor<8xf32>
  %mb = block.broadcast %mean dims [1] : tensor<8xf32> -> tensor<8x48xf32>
  %d = arith.subf %v, %mb : tensor<8x48xf32>
  %sq = arith.mulf %d, %d : tensor<8x48xf32>
  %ss = block.reduce sum %sq dims [1] : tensor<8x48xf32> -> tensor<8xf32>
  %var = arith.divf %ss, %n : tensor<8xf32>
  %eps = arith.constant dense<1.0e-5> : tensor<8xf32>
  %ve = arith.addf %var, %eps : tensor<8xf32>
  %inv = math.rsqrt %ve : tensor<8xf32>
  %ib = block.broadcast %inv dims [1] : tensor<8xf32> -> tensor<8x48xf32>
  %y = arith.mulf %d, %ib : tensor<8x48xf32>
  %g = block.load %gamma : memref<48xf32> -> tensor<48xf32>
  %b = block.load %beta : memref<48xf32> -> tensor<48xf32>
  %gb = block.broadcast %g dims [0] : tensor<48xf32> -> tensor<8x48xf32>
  %bb = block.broadcast %b dims [0] : tensor<48xf32> -> tensor<8x48xf32>
  %scaled = arith.mulf %y, %gb : tensor<8x48xf32>
  %r = arith.addf %scaled, %bb : tensor<8x48xf32>
  block.store %r, %o : tensor<8x48xf32>, memref<8x48xf32>
  return
}

func.func @layernorm(%x: memref<48x48xf32>, %gamma: memref<48xf32>, %beta: memref<48xf32>, %o: memref<48x48xf32>) {
  grid.call @layernorm_kernel grid [6] ins(%x, %gamma, %beta : memref<48x48xf32>, memref<48xf32>, memref<48xf32>) outs(%o : memref<48x48xf32>)
      in_specs [#grid.block<[8, 48], (i) -> (i, 0)>, #grid.block<full>, #grid.block<full>]
      out_specs [#grid.block<[8, 48], (i) -> (i, 0)>]
  return
}
func.func @fma_kernel(%x: memref<512xf32>, %y: memref<512xf32>, %w: memref<512xf32>, %o: memref<512xf32>) {
  %a = block.load %x : memref<512xf32> -> tensor<512xf32>
  %b = block.load %y : memref<512xf32> -> tensor<512xf32>
  %c = block.load %w : memref<512xf32> -> tensor<512xf32>
  %p = arith.mulf %a, %b : tensor<512xf32>
  %s = arith.addf %p, %c : tensor<512xf32>
  block.store %s, %o : tensor<512xf32>, memref<512xf32>
  return
}

func.func @elementwise(%x: memref<4096xf32>, %y: memref<4096xf32>, %w: memref<4096xf32>, %o: memref<4096xf32>) {
  grid.call @fma_kernel grid [8] ins(%x, %y, %w : memref<4096xf32>, memref<4096xf32>, memref<4096xf32>) outs(%o : memref<4096xf32>)
      in_specs [#grid.block<[512], (i) -> (i)>, #grid.block<[512], (i) -> (i)>, #grid.block<[512], (i) -> (i)>]
      out_specs [#grid.block<[512], (i) -> (i)>]
  return
}
func.func @sum_kernel(%x: memref<1024xf32>, %o: memref<1xf32>) {
  %k = grid.program_id 1
  %c0 = arith.constant 0 : index
  %first = arith.cmpi eq, %k, %c0 : index
  scf.if %first {
    %zero = arith.constant dense<0.0> : tensor<1xf32>
    block.store %zero, %o : tensor<1xf32>, memref<1xf32>
  }
  %v = block.load %x : memref<1024xf32> -> tensor<1024xf32>
  %s = block.reduce sum %v dims [0] : tensor<1024xf32> -> tensor<f32>
  %s1 = block.broadcast %s dims [0] : tensor<f32> -> tensor<1xf32>
  %acc = block.load %o : memref<1xf32> -> tensor<1xf32>
  %t = arith.addf %acc, %s1 : tensor<1xf32>
  block.store %t, %o : tensor<1xf32>, memref<1xf32>
  return
}

func.func @sum(%x: memref<8192xf32>, %o: memref<2xf32>) {
  grid.call @sum_kernel grid [2, 4] ins(%x : memref<8192xf32>) outs(%o : memref<2xf32>)
      in_specs [#grid.block<[1024], (c, i) -> (c * 4 + i)>] out_specs [#grid.block<[1], (c, i) -> (c)>]
  return
}
