// 8-bit contractions (i8 x i8 -> i32 block.dot) on VNNI: on CPUs with
// vpdpbusd (AVX-512 VNNI, AVX-VNNI) the register tile is vpdpbusds of
// biased A and packed B (tessel-vnni), exact: the results match the
// interpreter's bit for bit, operands spanning all of i8 (-128 and 127
// included). Without VNNI (skylake-avx512, the x86-64 levels) the tile is
// vpmaddwds of operands sign-extended to i16 (two products per lane, the
// 16-lane AVX-512BW form, AVX2's 8 and SSE2's 4), exact as well.
// RUN: tessel run %s --entry matmul --arg 0=random:1 --arg 1=random:2 --check | FileCheck %s
// RUN: tessel run %s --entry narrow --arg 0=random:3 --arg 1=random:4 --check | FileCheck %s
// RUN: tessel run %s --entry batched --arg 0=random:5 --arg 1=random:6 --check | FileCheck %s
// RUN: env TESSEL_JIT_OBJECT=%t.v3.o tessel run %s --entry matmul --cpu x86-64-v3 --arg 0=random:1 --arg 1=random:2 --check | FileCheck %s
// RUN: llvm-objdump -d %t.v3.o > %t.v3.dis && FileCheck %s --check-prefix=NOVNNI --input-file=%t.v3.dis
// RUN: FileCheck %s --check-prefix=PAIRS-YMM --input-file=%t.v3.dis
// RUN: tessel run %s --entry narrow --cpu x86-64-v3 --arg 0=random:3 --arg 1=random:4 --check | FileCheck %s
// RUN: tessel run %s --entry batched --cpu x86-64-v3 --arg 0=random:5 --arg 1=random:6 --check | FileCheck %s
// RUN: env TESSEL_JIT_OBJECT=%t.sse.o tessel run %s --entry matmul --cpu x86-64 --arg 0=random:1 --arg 1=random:2 --check | FileCheck %s
// RUN: llvm-objdump -d %t.sse.o > %t.sse.dis && FileCheck %s --check-prefix=PAIRS-XMM --input-file=%t.sse.dis
// RUN: tessel compile %s --target cpu --cpu znver4 --emit asm -o %t.zen4.s && FileCheck %s --check-prefix=ZMM --input-file=%t.zen4.s
// RUN: tessel compile %s --target cpu --cpu alderlake --emit asm -o %t.adl.s && FileCheck %s --check-prefix=YMM --input-file=%t.adl.s
// RUN: tessel compile %s --target cpu --cpu skylake-avx512 --emit asm -o %t.skx.s && FileCheck %s --check-prefix=NOVNNI --input-file=%t.skx.s
// RUN: FileCheck %s --check-prefix=PAIRS-ZMM --input-file=%t.skx.s

// CHECK: check: compiled code matches the interpreter
// ZMM: vpdpbusd {{.*}}%zmm{{[0-9]+}}, %zmm{{[0-9]+}}, %zmm{{[0-9]+}}
// YMM: vpdpbusd {{.*}}%ymm{{[0-9]+}}, %ymm{{[0-9]+}}, %ymm{{[0-9]+}}
// YMM-NOT: zmm
// NOVNNI-NOT: vpdpbusd
// PAIRS-YMM: vpmaddwd {{.*}}%ymm{{[0-9]+}}, %ymm{{[0-9]+}}, %ymm{{[0-9]+}}
// PAIRS-XMM: pmaddwd {{.*}}%xmm{{[0-9]+}}, %xmm{{[0-9]+}}
// PAIRS-ZMM: vpmaddwd {{.*}}%zmm{{[0-9]+}}, %zmm{{[0-9]+}}, %zmm{{[0-9]+}}

// x * 16 spans -128..112, x * 16 + 15 spans -113..127 (the random
// inputs are -8..7): two contractions cover both extremes of each operand.
func.func @matmul_kernel(%x: memref<32x64xi8>, %y: memref<64x48xi8>, %z: memref<32x48xi32>) {
  %a = block.load %x : memref<32x64xi8> -> tensor<32x64xi8>
  %b = block.load %y : memref<64x48xi8> -> tensor<64x48xi8>
  %sa = arith.constant dense<16> : tensor<32x64xi8>
  %oa = arith.constant dense<15> : tensor<32x64xi8>
  %sb = arith.constant dense<16> : tensor<64x48xi8>
  %ob = arith.constant dense<15> : tensor<64x48xi8>
  %a16 = arith.muli %a, %sa : tensor<32x64xi8>
  %a16o = arith.addi %a16, %oa : tensor<32x64xi8>
  %b16 = arith.muli %b, %sb : tensor<64x48xi8>
  %b16o = arith.addi %b16, %ob : tensor<64x48xi8>
  %c1 = block.dot %a16, %b16o : tensor<32x64xi8>, tensor<64x48xi8> -> tensor<32x48xi32>
  %c = block.dot %a16o, %b16 acc %c1 : tensor<32x64xi8>, tensor<64x48xi8>, tensor<32x48xi32> -> tensor<32x48xi32>
  block.store %c, %z : tensor<32x48xi32>, memref<32x48xi32>
  return
}

func.func @matmul(%x: memref<64x128xi8>, %y: memref<128x96xi8>, %z: memref<64x96xi32>) {
  grid.call @matmul_kernel grid [2, 2, 2]
      ins(%x, %y : memref<64x128xi8>, memref<128x96xi8>) outs(%z : memref<64x96xi32>)
      in_specs [#grid.block<[32, 64], (i, j, k) -> (i, k)>, #grid.block<[64, 48], (i, j, k) -> (k, j)>]
      out_specs [#grid.block<[32, 48], (i, j, k) -> (i, j)>]
  return
}

// Columns of a block not a multiple of 4 (no vpdpbusd lanes fit): the
// four k of each step as outer products, still exact.
func.func @narrow_kernel(%x: memref<5x12xi8>, %y: memref<12x6xi8>, %z: memref<5x6xi32>) {
  %a = block.load %x : memref<5x12xi8> -> tensor<5x12xi8>
  %b = block.load %y : memref<12x6xi8> -> tensor<12x6xi8>
  %s = arith.constant dense<16> : tensor<12x6xi8>
  %b16 = arith.muli %b, %s : tensor<12x6xi8>
  %c = block.dot %a, %b16 : tensor<5x12xi8>, tensor<12x6xi8> -> tensor<5x6xi32>
  block.store %c, %z : tensor<5x6xi32>, memref<5x6xi32>
  return
}

func.func @narrow(%x: memref<10x12xi8>, %y: memref<12x6xi8>, %z: memref<10x6xi32>) {
  grid.call @narrow_kernel grid [2]
      ins(%x, %y : memref<10x12xi8>, memref<12x6xi8>) outs(%z : memref<10x6xi32>)
      in_specs [#grid.block<[5, 12], (i) -> (i, 0)>, #grid.block<[12, 6], (i) -> (0, 0)>]
      out_specs [#grid.block<[5, 6], (i) -> (i, 0)>]
  return
}

// A batched contraction (batch loop first): each batch its own packed B.
func.func @batched_kernel(%x: memref<2x8x16xi8>, %y: memref<2x16x32xi8>, %z: memref<2x8x32xi32>) {
  %a = block.load %x : memref<2x8x16xi8> -> tensor<2x8x16xi8>
  %b = block.load %y : memref<2x16x32xi8> -> tensor<2x16x32xi8>
  %s = arith.constant dense<16> : tensor<2x8x16xi8>
  %a16 = arith.muli %a, %s : tensor<2x8x16xi8>
  %c = block.dot %a16, %b : tensor<2x8x16xi8>, tensor<2x16x32xi8> -> tensor<2x8x32xi32>
  block.store %c, %z : tensor<2x8x32xi32>, memref<2x8x32xi32>
  return
}

func.func @batched(%x: memref<4x8x16xi8>, %y: memref<4x16x32xi8>, %z: memref<4x8x32xi32>) {
  grid.call @batched_kernel grid [2]
      ins(%x, %y : memref<4x8x16xi8>, memref<4x16x32xi8>) outs(%z : memref<4x8x32xi32>)
      in_specs [#grid.block<[2, 8, 16], (i) -> (i, 0, 0)>, #grid.block<[2, 16, 32], (i) -> (i, 0, 0)>]
      out_specs [#grid.block<[2, 8, 32], (i) -> (i, 0, 0)>]
  return
}
