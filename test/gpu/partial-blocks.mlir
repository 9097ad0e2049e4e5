// A grid whose blocks do not divide the array on the GPU
// (benchmarks/amdgpu/kernels/elementwise_partial.mlir: element-wise over
// 16,700,000 floats, 255 blocks of 65536, the last one partial). The programs
// with whole blocks (work-group 0's, run here by the wave interpreter) run
// the kernel's version on views of the arrays, as when the blocks divide
// them (the same round trips and bytes as the element-wise kernel, through
// buffer resources), not through copies in workgroup memory (grid-to-loops'
// two versions). The end-to-end numbers of both versions:
// test/e2e/partial-blocks.mlir.
// RUN: tessel compile benchmarks/amdgpu/kernels/elementwise_partial.mlir --target rocm --chip gfx942 --emit asm -o %t.s
// RUN: python3 benchmarks/amdgpu/interpreter.py %t.s | FileCheck %s
// RUN: FileCheck %s --check-prefix=ASM < %t.s
// CHECK: wave 0 executes {{[0-9]+}} loads 3072 stores 1024 bytes per lane in 16 round trips
// ASM-COUNT-3: buffer_load_dwordx4
// ASM: buffer_store_dwordx4
// The edge program (work-group 254): its block lies partly past the
// arrays' ends, where buffer accesses read zeros and write nothing, so it
// runs on views too (tessel-past-end-views): the same instructions and
// round trips as a whole block (before: 13,648 instructions in 1071 round
// trips through staged copies).
// RUN: python3 benchmarks/amdgpu/interpreter.py %t.s --workgroup 254 | FileCheck %s --check-prefix=EDGE
// EDGE: work-group 254
// EDGE-NEXT: wave 0 executes {{[0-9]+}} loads 3072 stores 1024 bytes per lane in 16 round trips
