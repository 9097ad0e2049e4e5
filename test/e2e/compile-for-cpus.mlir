// tessel compile --cpu NAME / --target-triple T: code for a CPU or an
// architecture other than the host's, whatever the host is. Register tiles
// follow the named CPU's vector width and registers (CpuModel).
// RUN: tessel compile %s --target cpu --cpu x86-64-v3 --emit asm -o %t.v3.s && FileCheck %s --check-prefix=AVX2 --input-file=%t.v3.s
// RUN: tessel compile %s --target cpu --cpu sapphirerapids --emit asm -o %t.spr.s && FileCheck %s --check-prefix=AVX512 --input-file=%t.spr.s
// RUN: tessel compile %s --target cpu --target-triple aarch64-linux-gnu --cpu neoverse-v2 --emit obj -o %t.a64.o && llvm-readelf -h %t.a64.o > %t.a64.h && FileCheck %s --check-prefix=ELF --input-file=%t.a64.h
// RUN: llvm-objdump -d %t.a64.o > %t.a64.dis && FileCheck %s --check-prefix=NEON --input-file=%t.a64.dis
// RUN: tessel compile %s --target cpu --cpu pentium9 -o %t.none 2>&1 | FileCheck %s --check-prefix=UNKNOWN; test ${PIPESTATUS[0]} -eq 2
// RUN: tessel compile %s --target rocm --cpu x86-64-v3 -o %t.none 2>&1 | FileCheck %s --check-prefix=ROCM; test ${PIPESTATUS[0]} -eq 2
// RUN: tessel compile %s --target cpu --target-triple aarch64-linux-gnu --emit so -o %t.none.so 2>&1 | FileCheck %s --check-prefix=SO; test ${PIPESTATUS[0]} -eq 1

// x86-64-v3 code has the register tile's FMAs on ymm registers and no AVX-512.
// AVX2: vfmadd{{[0-9a-z]*}} {{.*}}%ymm
// AVX2-NOT: zmm
// AVX512: vfmadd{{[0-9a-z]*}} {{.*}}%zmm
// ELF: Machine: AArch64
// NEON: fmla v{{[0-9]+}}.4s
// UNKNOWN: tessel: error: unknown CPU 'pentium9' for x86_64
// ROCM: tessel: error: --cpu and --target-triple are for --target cpu
// SO: shared libraries are linked for this machine's architecture only, not aarch64-linux-gnu

func.func @matmul_kernel(%x: memref<64x32xf32>, %y: memref<32x64xf32>, %z: memref<64x64xf32>) {
  %a = block.load %x : memref<64x32xf32> -> tensor<64x32xf32>
  %b = block.load %y : memref<32x64xf32> -> tensor<32x64xf32>
  %c = block.dot %a, %b : tensor<64x32xf32>, tensor<32x64xf32> -> tensor<64x64xf32>
  block.store %c, %z : tensor<64x64xf32>, memref<64x64xf32>
  return
}

func.func @matmul(%x: memref<128x32xf32>, %y: memref<32x128xf32>, %z: memref<128x128xf32>) {
  grid.call @matmul_kernel grid [2, 2]
      ins(%x, %y : memref<128x32xf32>, memref<32x128xf32>) outs(%z : memref<128x128xf32>)
      in_specs [#grid.block<[64, 32], (i, j) -> (i, 0)>, #grid.block<[32, 64], (i, j) -> (0, j)>]
      out_specs [#grid.block<[64, 64], (i, j) -> (i, j)>]
  return
}
