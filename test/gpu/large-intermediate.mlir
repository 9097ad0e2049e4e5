// A 256 x 256 f32 dot (256 KiB, over any chip's LDS) read twice, by a row
// max and by the subtraction of it: the ROCm pipeline cannot recompute it
// and keeps it in global scratch, a slice per program (lit.rs'
// host_program checks the launch passes it); the emulated GPU's results
// match the interpreter's.
// RUN: tessel run %s --entry centered --device rocm-emulated --arg 0=random:1 --arg 1=random:2 --check | FileCheck %s
// CHECK: check: compiled code matches the interpreter
func.func @centered_kernel(%x: memref<256x64xf32>, %y: memref<64x256xf32>, %o: memref<256x256xf32>) {
  %a = block.load %x : memref<256x64xf32> -> tensor<256x64xf32>
  %b = block.load %y : memref<64x256xf32> -> tensor<64x256xf32>
  %c = block.dot %a, %b : tensor<256x64xf32>, tensor<64x256xf32> -> tensor<256x256xf32>
  %m = block.reduce max %c dims [1] : tensor<256x256xf32> -> tensor<256xf32>
  %mb = block.broadcast %m dims [1] : tensor<256xf32> -> tensor<256x256xf32>
  %d = arith.subf %c, %mb : tensor<256x256xf32>
  block.store %d, %o : tensor<256x256xf32>, memref<256x256xf32>
  return
}

func.func @centered(%x: memref<512x64xf32>, %y: memref<64x512xf32>, %o: memref<512x512xf32>) {
  grid.call @centered_kernel grid [2, 2]
      ins(%x, %y : memref<512x64xf32>, memref<64x512xf32>) outs(%o : memref<512x512xf32>)
      in_specs [#grid.block<[256, 64], (i, j) -> (i, 0)>, #grid.block<[64, 256], (i, j) -> (0, j)>]
      out_specs [#grid.block<[256, 256], (i, j) -> (i, j)>]
  return
}
