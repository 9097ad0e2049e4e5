// Contractions on AMD matrix cores, run on the emulated GPU: the ROCm
// pipeline's MFMA (gfx90a, gfx942) and WMMA (gfx1100) kernels print
// exactly what the CPU's FMA code prints (f32 MFMAs are one fused
// multiply-add per k step in k order, like block.dot; integer sums are
// exact). Every chip, wave count, pipelining depth and the FMA fallback
// (--matrix-cores off; f32 on gfx1100) prints the same bits. The emulator
// computes each matrix instruction from AMD's documented register
// layouts; the kernels load their fragments by Tessel's own closed forms:
// a mismatch between the two would show here.
// RUN: tessel run %s --entry matmul --arg 0=random:1 --arg 1=random:2 --dump %t.cpu | FileCheck %s --check-prefix=F32
// RUN: tessel run %s --entry matmul --arg 0=random:1 --arg 1=random:2 --device rocm-emulated --chip gfx90a --dump %t.gfx90a | FileCheck %s --check-prefix=F32
// RUN: tessel run %s --entry matmul --arg 0=random:1 --arg 1=random:2 --device rocm-emulated --chip gfx942 --num-warps 2 --dump %t.gfx942 | FileCheck %s --check-prefix=F32
// RUN: tessel run %s --entry matmul --arg 0=random:1 --arg 1=random:2 --device rocm-emulated --chip gfx90a --num-warps 1 --num-stages 2 --dump %t.staged | FileCheck %s --check-prefix=F32
// RUN: tessel run %s --entry matmul --arg 0=random:1 --arg 1=random:2 --device rocm-emulated --chip gfx1100 --dump %t.gfx1100 | FileCheck %s --check-prefix=F32
// RUN: tessel run %s --entry matmul --arg 0=random:1 --arg 1=random:2 --device rocm-emulated --matrix-cores off --dump %t.fma | FileCheck %s --check-prefix=F32
// RUN: cmp %t.cpu/arg2.npy %t.gfx90a/arg2.npy
// RUN: cmp %t.cpu/arg2.npy %t.gfx942/arg2.npy
// RUN: cmp %t.cpu/arg2.npy %t.staged/arg2.npy
// RUN: cmp %t.cpu/arg2.npy %t.gfx1100/arg2.npy
// RUN: cmp %t.cpu/arg2.npy %t.fma/arg2.npy
// RUN: tessel run %s --entry matmul_i8 --arg 0=random:3 --arg 1=random:4 --dump %t.i8cpu | FileCheck %s --check-prefix=I8
// RUN: tessel run %s --entry matmul_i8 --arg 0=random:3 --arg 1=random:4 --device rocm-emulated --chip gfx90a --dump %t.i8gfx90a | FileCheck %s --check-prefix=I8
// RUN: tessel run %s --entry matmul_i8 --arg 0=random:3 --arg 1=random:4 --device rocm-emulated --chip gfx942 --num-stages 2 --dump %t.i8gfx942 | FileCheck %s --check-prefix=I8
// RUN: tessel run %s --entry matmul_i8 --arg 0=random:3 --arg 1=random:4 --device rocm-emulated --chip gfx1100 --dump %t.i8gfx1100 | FileCheck %s --check-prefix=I8
// RUN: tessel run %s --entry matmul_i8 --arg 0=random:3 --arg 1=random:4 --device rocm-emulated --chip gfx1100 --num-warps 2 --dump %t.i8wide | FileCheck %s --check-prefix=I8
// RUN: cmp %t.i8cpu/arg2.npy %t.i8gfx90a/arg2.npy
// RUN: cmp %t.i8cpu/arg2.npy %t.i8gfx942/arg2.npy
// RUN: cmp %t.i8cpu/arg2.npy %t.i8gfx1100/arg2.npy
// RUN: tessel run %s --entry matmul_i8 --arg 0=random:3 --arg 1=random:4 --device rocm-emulated --grid-order column-major --dump %t.i8columns | FileCheck %s --check-prefix=I8
// RUN: cmp %t.i8cpu/arg2.npy %t.i8wide/arg2.npy && cmp %t.i8cpu/arg2.npy %t.i8columns/arg2.npy
// The compiled (CPU) code against the reference interpreter:
// RUN: tessel run %s --entry matmul --arg 0=random:1 --arg 1=random:2 --check | FileCheck %s --check-prefix=CHECKED
// RUN: tessel run %s --entry matmul_i8 --arg 0=random:3 --arg 1=random:4 --check | FileCheck %s --check-prefix=CHECKED
// CHECKED: check: compiled code matches the interpreter

// 64x64 f32 blocks summed over an arbitrary k axis (accumulated in place).
// F32: arg2: memref<128x64xf32>
// F32-NEXT: {{\[\[}}-1.1491079  -0.2918222  -3.0203373  ... -6.4270964   0.73297364
// F32: [-0.29556698  2.3648007  -1.1214836  ... -0.82601655  0.53354764
func.func @matmul_kernel(%x: memref<64x32xf32>, %y: memref<32x64xf32>, %z: memref<64x64xf32>) {
  %k = grid.program_id 1
  %c0 = arith.constant 0 : index
  %first = arith.cmpi eq, %k, %c0 : index
  scf.if %first {
    %zeros = arith.constant dense<0.0> : tensor<64x64xf32>
    block.store %zeros, %z : tensor<64x64xf32>, memref<64x64xf32>
  }
  %a = block.load %x : memref<64x32xf32> -> tensor<64x32xf32>
  %b = block.load %y : memref<32x64xf32> -> tensor<32x64xf32>
  %acc = block.load %z : memref<64x64xf32> -> tensor<64x64xf32>
  %c = block.dot %a, %b acc %acc : tensor<64x32xf32>, tensor<32x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  block.store %c, %z : tensor<64x64xf32>, memref<64x64xf32>
  return
}

func.func @matmul(%x: memref<128x96xf32>, %y: memref<96x64xf32>, %z: memref<128x64xf32>) {
  grid.call @matmul_kernel grid [2, 3]
      ins(%x, %y : memref<128x96xf32>, memref<96x64xf32>) outs(%z : memref<128x64xf32>)
      in_specs [#grid.block<[64, 32], (i, k) -> (i, k)>, #grid.block<[32, 64], (i, k) -> (k, 0)>]
      out_specs [#grid.block<[64, 64], (i, k) -> (i, 0)>]
  return
}

// 8-bit integers into i32.
// I8: arg2: memref<64x64xi32>
// I8-NEXT: {{\[\[}}   8  -28  202 ...  142  125 -151]
// I8: [ 165  -53   75 ... -377 -131 -234]]
func.func @matmul_i8_kernel(%x: memref<32x64xi8>, %y: memref<64x32xi8>, %z: memref<32x32xi32>) {
  %a = block.load %x : memref<32x64xi8> -> tensor<32x64xi8>
  %b = block.load %y : memref<64x32xi8> -> tensor<64x32xi8>
  %c = block.dot %a, %b : tensor<32x64xi8>, tensor<64x32xi8> -> tensor<32x32xi32>
  block.store %c, %z : tensor<32x32xi32>, memref<32x32xi32>
  return
}

func.func @matmul_i8(%x: memref<64x64xi8>, %y: memref<64x64xi8>, %z: memref<64x64xi32>) {
  grid.call @matmul_i8_kernel grid [2, 2]
      ins(%x, %y : memref<64x64xi8>, memref<64x64xi8>) outs(%z : memref<64x64xi32>)
      in_specs [#grid.block<[32, 64], (i, j) -> (i, 0)>, #grid.block<[64, 32], (i, j) -> (0, j)>]
      out_specs [#grid.block<[32, 32], (i, j) -> (i, j)>]
  return
}
