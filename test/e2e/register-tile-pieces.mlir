// Register tiles whose rows are not a power of two long (three vectors:
// 4 x 24 of AVX2, 4 x 48 of AVX-512; 3 x 20, 16 + 4 lanes) compute the
// interpreter's numbers and keep their accumulators in power-of-two
// vectors across the k loop: LLVM passes a <24 x float> between blocks
// element by element, which made such tiles 20-40x slower.
// RUN: tessel run %s --entry matmul --arg 0=random:1 --arg 1=random:2 --cpu x86-64-v3 --register-tile 4x24 --check | FileCheck %s
// RUN: tessel run %s --entry matmul --arg 0=random:1 --arg 1=random:2 --cpu x86-64-v3 --register-tile 4x24 --pad-tiles --check | FileCheck %s
// RUN: tessel run %s --entry matmul --arg 0=random:1 --arg 1=random:2 --register-tile 4x48 --check | FileCheck %s
// RUN: tessel run %s --entry matmul --arg 0=random:1 --arg 1=random:2 --register-tile 3x20 --pad-tiles --check | FileCheck %s
// RUN: tessel run %s --entry matmul --arg 0=random:1 --arg 1=random:2 --check | FileCheck %s
// RUN: tessel compile %s --target cpu --emit llvm --cpu x86-64-v3 --register-tile 4x24 -o %t.ll
// RUN: FileCheck %s --check-prefix=LLVM < %t.ll
// RUN: tessel compile %s --target cpu --emit llvm --cpu skylake-avx512 --register-tile 4x48 -o %t.512.ll
// RUN: FileCheck %s --check-prefix=LLVM512 < %t.512.ll
// CHECK: check: compiled code matches the interpreter
// LLVM-NOT: phi <24 x float>
// LLVM: phi <8 x float>
// LLVM-NOT: phi <24 x float>
// LLVM512-NOT: phi <48 x float>
// LLVM512: phi <16 x float>
// LLVM512-NOT: phi <48 x float>

// K on an arbitrary axis, the output block accumulated in place; 48
// columns per block.
func.func @matmul_kernel(%x: memref<32x32xf32>, %y: memref<32x48xf32>, %z: memref<32x48xf32>) {
  %k = grid.program_id 2
  %c0 = arith.constant 0 : index
  %first = arith.cmpi eq, %k, %c0 : index
  scf.if %first {
    %zeros = arith.constant dense<0.0> : tensor<32x48xf32>
    block.store %zeros, %z : tensor<32x48xf32>, memref<32x48xf32>
  }
  %a = block.load %x : memref<32x32xf32> -> tensor<32x32xf32>
  %b = block.load %y : memref<32x48xf32> -> tensor<32x48xf32>
  %acc = block.load %z : memref<32x48xf32> -> tensor<32x48xf32>
  %c = block.dot %a, %b acc %acc : tensor<32x32xf32>, tensor<32x48xf32>, tensor<32x48xf32> -> tensor<32x48xf32>
  block.store %c, %z : tensor<32x48xf32>, memref<32x48xf32>
  return
}
func.func @matmul(%x: memref<64x64xf32>, %y: memref<64x96xf32>, %z: memref<64x96xf32>) {
  grid.call @matmul_kernel grid [2, 2, 2] ins(%x, %y : memref<64x64xf32>, memref<64x96xf32>) outs(%z : memref<64x96xf32>)
      in_specs [#grid.block<[32, 32], (i, j, k) -> (i, k)>, #grid.block<[32, 48], (i, j, k) -> (k, j)>]
      out_specs [#grid.block<[32, 48], (i, j, k) -> (i, j)>]
  return
}
