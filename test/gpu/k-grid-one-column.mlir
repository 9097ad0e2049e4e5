// K on the grid with one column block (grid [2, 1, 4]): B's view has a
// constant column offset, and the grid's k axis is still merged into the
// one k loop (tessel-merge-k-steps), so the accumulator is neither loaded
// nor stored around it. The emulated GPU computes the interpreter's bits.
// RUN: tessel compile %s --target rocm --chip gfx942 --emit asm -o %t.gfx942.s
// RUN: python3 benchmarks/amdgpu/hot_loop.py %t.gfx942.s | FileCheck %s
// RUN: tessel run %s --entry matmul --arg 0=random:1 --arg 1=random:2 --device rocm-emulated --chip gfx942 --check | FileCheck %s --check-prefix=EXACT
// CHECK: matrix 12
// CHECK: waits-before-matrix no
// CHECK-NEXT: around none
// EXACT: check: compiled code matches the interpreter
func.func @matmul_kernel(%x: memref<32x256xf32>, %y: memref<256x32xf32>, %z: memref<32x32xf32>) {
  %k = grid.program_id 2
  %c0 = arith.constant 0 : index
  %first = arith.cmpi eq, %k, %c0 : index
  scf.if %first {
    %zeros = arith.constant dense<0.0> : tensor<32x32xf32>
    block.store %zeros, %z : tensor<32x32xf32>, memref<32x32xf32>
  }
  %a = block.load %x : memref<32x256xf32> -> tensor<32x256xf32>
  %b = block.load %y : memref<256x32xf32> -> tensor<256x32xf32>
  %acc = block.load %z : memref<32x32xf32> -> tensor<32x32xf32>
  %c = block.dot %a, %b acc %acc : tensor<32x256xf32>, tensor<256x32xf32>, tensor<32x32xf32> -> tensor<32x32xf32>
  block.store %c, %z : tensor<32x32xf32>, memref<32x32xf32>
  return
}

func.func @matmul(%x: memref<64x1024xf32>, %y: memref<1024x32xf32>, %z: memref<64x32xf32>) {
  grid.call @matmul_kernel grid [2, 1, 4] ins(%x, %y : memref<64x1024xf32>, memref<1024x32xf32>) outs(%z : memref<64x32xf32>)
      in_specs [#grid.block<[32, 256], (i, j, k) -> (i, k)>, #grid.block<[256, 32], (i, j, k) -> (k, j)>]
      out_specs [#grid.block<[32, 32], (i, j, k) -> (i, j)>]
  return
}
