// A grid whose blocks do not divide the array on the GPU:
// examples/elementwise_16m.mlir over 16,700,000 floats, 255 blocks of
// 65536, the last one partial (53,856 elements in bounds). The programs
// with whole blocks (work-group 0's, run here by the wave interpreter) run
// the kernel's version on views of the arrays, as when the blocks divide
// them (the same round trips and bytes as the element-wise kernel, through
// buffer resources), not through copies in workgroup memory; only the last
// program stages its block (grid-to-loops' two versions). The end-to-end
// numbers of both versions: test/e2e/partial-blocks.mlir.
// RUN: tessel compile %s --target rocm --chip gfx942 --emit asm -o %t.s
// RUN: python3 benchmarks/amdgpu/interpreter.py %t.s | FileCheck %s
// RUN: FileCheck %s --check-prefix=ASM < %t.s
// CHECK: wave 0 executes {{[0-9]+}} loads 3072 stores 1024 bytes per lane in 16 round trips
// ASM-COUNT-3: buffer_load_dwordx4
// ASM: buffer_store_dwordx4

func.func @fma_kernel(%x: memref<65536xf32>, %y: memref<65536xf32>, %w: memref<65536xf32>, %o: memref<65536xf32>) {
  %a = block.load %x : memref<65536xf32> -> tensor<65536xf32>
  %b = block.load %y : memref<65536xf32> -> tensor<65536xf32>
  %c = block.load %w : memref<65536xf32> -> tensor<65536xf32>
  %p = arith.mulf %a, %b : tensor<65536xf32>
  %s = arith.addf %p, %c : tensor<65536xf32>
  block.store %s, %o : tensor<65536xf32>, memref<65536xf32>
  return
}

func.func @elementwise_partial(%x: memref<16700000xf32>, %y: memref<16700000xf32>, %w: memref<16700000xf32>, %o: memref<16700000xf32>) {
  grid.call @fma_kernel grid [255] ins(%x, %y, %w : memref<16700000xf32>, memref<16700000xf32>, memref<16700000xf32>) outs(%o : memref<16700000xf32>)
      in_specs [#grid.block<[65536], (i) -> (i)>, #grid.block<[65536], (i) -> (i)>, #grid.block<[65536], (i) -> (i)>]
      out_specs [#grid.block<[65536], (i) -> (i)>]
  return
}
