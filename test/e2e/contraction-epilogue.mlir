// Element-wise epilogues computed by the contraction's register tiles
// (tessel-tile): Pallas' `acc_ref[...] += jnp.dot(x, y)` over a K grid
// axis (a scratch accumulator, as JAX's TPU matmul), a bias + ReLU applied
// to a dot, a batched dot scaled, and an 8-bit dot added to an i32
// accumulator (VNNI's form where the host has it). Each tile's dot runs
// from zeros over all of its k before the epilogue, so the results match
// the interpreter's bit for bit, as host code and as AVX2 code.
// RUN: tessel run %s --entry matmul --arg 0=random:1 --arg 1=random:2 --check | FileCheck %s
// RUN: tessel run %s --entry matmul --register-tile 3x16 --arg 0=random:1 --arg 1=random:2 --check | FileCheck %s
// RUN: tessel run %s --entry matmul --cpu x86-64-v3 --arg 0=random:1 --arg 1=random:2 --check | FileCheck %s
// RUN: tessel run %s --entry bias_relu --arg 0=random:3 --arg 1=random:4 --arg 2=random:5 --check | FileCheck %s
// RUN: tessel run %s --entry batched --arg 0=random:6 --arg 1=random:7 --check | FileCheck %s
// RUN: tessel run %s --entry int8 --arg 0=random:8 --arg 1=random:9 --check | FileCheck %s
// RUN: tessel run %s --entry int8 --cpu x86-64-v3 --arg 0=random:8 --arg 1=random:9 --check | FileCheck %s

// CHECK: check: compiled code matches the interpreter

func.func @matmul_kernel(%x: memref<64x32xf32>, %y: memref<32x128xf32>, %z: memref<64x128xf32>, %acc: memref<64x128xf32>) {
  %k = grid.program_id 2
  %c0 = arith.constant 0 : index
  %first = arith.cmpi eq, %k, %c0 : index
  scf.if %first {
    %zeros = arith.constant dense<0.0> : tensor<64x128xf32>
    block.store %zeros, %acc : tensor<64x128xf32>, memref<64x128xf32>
  }
  %old = block.load %acc : memref<64x128xf32> -> tensor<64x128xf32>
  %a = block.load %x : memref<64x32xf32> -> tensor<64x32xf32>
  %b = block.load %y : memref<32x128xf32> -> tensor<32x128xf32>
  %d = block.dot %a, %b : tensor<64x32xf32>, tensor<32x128xf32> -> tensor<64x128xf32>
  %sum = arith.addf %old, %d : tensor<64x128xf32>
  block.store %sum, %acc : tensor<64x128xf32>, memref<64x128xf32>
  %out = block.load %acc : memref<64x128xf32> -> tensor<64x128xf32>
  block.store %out, %z : tensor<64x128xf32>, memref<64x128xf32>
  return
}

func.func @matmul(%x: memref<128x96xf32>, %y: memref<96x256xf32>, %z: memref<128x256xf32>) {
  grid.call @matmul_kernel grid [2, 2, 3]
      ins(%x, %y : memref<128x96xf32>, memref<96x256xf32>) outs(%z : memref<128x256xf32>) scratch(memref<64x128xf32>)
      in_specs [#grid.block<[64, 32], (i, j, k) -> (i, k)>, #grid.block<[32, 128], (i, j, k) -> (k, j)>]
      out_specs [#grid.block<[64, 128], (i, j, k) -> (i, j)>]
  return
}

func.func @bias_relu_kernel(%x: memref<32x48xf32>, %y: memref<48x64xf32>, %bias: memref<32x64xf32>, %z: memref<32x64xf32>) {
  %a = block.load %x : memref<32x48xf32> -> tensor<32x48xf32>
  %b = block.load %y : memref<48x64xf32> -> tensor<48x64xf32>
  %c = block.load %bias : memref<32x64xf32> -> tensor<32x64xf32>
  %d = block.dot %a, %b : tensor<32x48xf32>, tensor<48x64xf32> -> tensor<32x64xf32>
  %s = arith.addf %d, %c : tensor<32x64xf32>
  %zero = arith.constant dense<0.0> : tensor<32x64xf32>
  %r = arith.maximumf %s, %zero : tensor<32x64xf32>
  block.store %r, %z : tensor<32x64xf32>, memref<32x64xf32>
  return
}

func.func @bias_relu(%x: memref<64x48xf32>, %y: memref<48x128xf32>, %bias: memref<64x128xf32>, %z: memref<64x128xf32>) {
  grid.call @bias_relu_kernel grid [2, 2]
      ins(%x, %y, %bias : memref<64x48xf32>, memref<48x128xf32>, memref<64x128xf32>) outs(%z : memref<64x128xf32>)
      in_specs [#grid.block<[32, 48], (i, j) -> (i, 0)>, #grid.block<[48, 64], (i, j) -> (0, j)>, #grid.block<[32, 64], (i, j) -> (i, j)>]
      out_specs [#grid.block<[32, 64], (i, j) -> (i, j)>]
  return
}

func.func @batched_kernel(%x: memref<2x16x24xf32>, %y: memref<2x24x32xf32>, %z: memref<2x16x32xf32>) {
  %a = block.load %x : memref<2x16x24xf32> -> tensor<2x16x24xf32>
  %b = block.load %y : memref<2x24x32xf32> -> tensor<2x24x32xf32>
  %d = block.dot %a, %b : tensor<2x16x24xf32>, tensor<2x24x32xf32> -> tensor<2x16x32xf32>
  %scale = arith.constant dense<0.125> : tensor<2x16x32xf32>
  %s = arith.mulf %d, %scale : tensor<2x16x32xf32>
  block.store %s, %z : tensor<2x16x32xf32>, memref<2x16x32xf32>
  return
}

func.func @batched(%x: memref<4x16x24xf32>, %y: memref<4x24x32xf32>, %z: memref<4x16x32xf32>) {
  grid.call @batched_kernel grid [2]
      ins(%x, %y : memref<4x16x24xf32>, memref<4x24x32xf32>) outs(%z : memref<4x16x32xf32>)
      in_specs [#grid.block<[2, 16, 24], (b) -> (b, 0, 0)>, #grid.block<[2, 24, 32], (b) -> (b, 0, 0)>]
      out_specs [#grid.block<[2, 16, 32], (b) -> (b, 0, 0)>]
  return
}

// x * 16 and y * 16 + 15 span all of i8 (the random inputs are -8..7).
func.func @int8_kernel(%x: memref<32x64xi8>, %y: memref<64x48xi8>, %z: memref<32x48xi32>) {
  %k = grid.program_id 2
  %c0 = arith.constant 0 : index
  %first = arith.cmpi eq, %k, %c0 : index
  scf.if %first {
    %zeros = arith.constant dense<0> : tensor<32x48xi32>
    block.store %zeros, %z : tensor<32x48xi32>, memref<32x48xi32>
  }
  %old = block.load %z : memref<32x48xi32> -> tensor<32x48xi32>
  %a0 = block.load %x : memref<32x64xi8> -> tensor<32x64xi8>
  %b0 = block.load %y : memref<64x48xi8> -> tensor<64x48xi8>
  %sa = arith.constant dense<16> : tensor<32x64xi8>
  %sb = arith.constant dense<16> : tensor<64x48xi8>
  %ob = arith.constant dense<15> : tensor<64x48xi8>
  %a = arith.muli %a0, %sa : tensor<32x64xi8>
  %b16 = arith.muli %b0, %sb : tensor<64x48xi8>
  %b = arith.addi %b16, %ob : tensor<64x48xi8>
  %d = block.dot %a, %b : tensor<32x64xi8>, tensor<64x48xi8> -> tensor<32x48xi32>
  %sum = arith.addi %old, %d : tensor<32x48xi32>
  block.store %sum, %z : tensor<32x48xi32>, memref<32x48xi32>
  return
}

func.func @int8(%x: memref<64x128xi8>, %y: memref<128x96xi8>, %z: memref<64x96xi32>) {
  grid.call @int8_kernel grid [2, 2, 2]
      ins(%x, %y : memref<64x128xi8>, memref<128x96xi8>) outs(%z : memref<64x96xi32>)
      in_specs [#grid.block<[32, 64], (i, j, k) -> (i, k)>, #grid.block<[64, 48], (i, j, k) -> (k, j)>]
      out_specs [#grid.block<[32, 48], (i, j, k) -> (i, j)>]
  return
}
