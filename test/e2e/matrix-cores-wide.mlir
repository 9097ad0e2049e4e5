// Blocks larger than four waves' 64 accumulator registers a lane cover,
// on the emulated GPU: the MFMA kernels keep up to 128 accumulator
// registers a lane with up to eight waves (tessel-matrix-cores), so
// four waves' 8x4 tiles of 16 cover a 256x128 block in one pass; one wave
// walks it in four 64x128 sub-blocks of 4x8 tiles; eight waves,
// double-buffered, cover it with 4x4 tiles each in 8-deep chunks (LDS
// holds two 256x8 and 8x128 pairs). Every arrangement prints the CPU's
// bits (block.dot: one fused multiply-add per k step, in k order).
// (Apart from e2e/matrix-cores.mlir: `tessel run` compiles every kernel
// of a file, and these take the emulator's pipeline a while.)
// RUN: tessel run %s --entry wide --arg 0=random:5 --arg 1=random:6 --dump %t.cpu | FileCheck %s
// RUN: tessel run %s --entry wide --arg 0=random:5 --arg 1=random:6 --device rocm-emulated --chip gfx942 --dump %t.four | FileCheck %s
// RUN: tessel run %s --entry wide --arg 0=random:5 --arg 1=random:6 --device rocm-emulated --chip gfx90a --num-warps 1 --dump %t.one | FileCheck %s
// RUN: tessel run %s --entry wide --arg 0=random:5 --arg 1=random:6 --device rocm-emulated --chip gfx942 --num-warps 8 --num-stages 2 --dump %t.eight | FileCheck %s
// RUN: cmp %t.cpu/arg2.npy %t.four/arg2.npy && cmp %t.cpu/arg2.npy %t.one/arg2.npy && cmp %t.cpu/arg2.npy %t.eight/arg2.npy
// CHECK: arg2: memref<256x256xf32>
// CHECK-NEXT: {{\[\[}}-2.7493587   2.7483451  -0.59593266 ... -1.3910062   3.6982386
func.func @wide_kernel(%x: memref<256x64xf32>, %y: memref<64x128xf32>, %z: memref<256x128xf32>) {
  %a = block.load %x : memref<256x64xf32> -> tensor<256x64xf32>
  %b = block.load %y : memref<64x128xf32> -> tensor<64x128xf32>
  %c = block.dot %a, %b : tensor<256x64xf32>, tensor<64x128xf32> -> tensor<256x128xf32>
  block.store %c, %z : tensor<256x128xf32>, memref<256x128xf32>
  return
}

func.func @wide(%x: memref<256x64xf32>, %y: memref<64x256xf32>, %z: memref<256x256xf32>) {
  grid.call @wide_kernel grid [1, 2]
      ins(%x, %y : memref<256x64xf32>, memref<64x256xf32>) outs(%z : memref<256x256xf32>)
      in_specs [#grid.block<[256, 64], (i, j) -> (i, 0)>, #grid.block<[64, 128], (i, j) -> (0, j)>]
      out_specs [#grid.block<[256, 128], (i, j) -> (i, j)>]
  return
}
