// AArch64 objects run: tessel compile --target-triple aarch64-linux-gnu
// (NEON register tiles, for neoverse-n1 and neoverse-v2) linked with clang and lld
// against Debian's arm64 C library, and run under qemu-user with a
// one-thread OpenMP runtime (Inputs/serial_openmp.c: no arm64 libomp is
// installed). The C caller's inputs are small integers, so every sum is
// exact: the AArch64 results equal the host's (the same caller on the
// host's shared library, real libomp) and numpy's x @ y.
// RUN: tessel compile %s --target cpu --target-triple aarch64-linux-gnu --cpu neoverse-n1 --emit obj -o %t.n1.o
// RUN: clang-22 --target=aarch64-linux-gnu -fuse-ld=lld -O1 test/e2e/Inputs/matmul_caller.c test/e2e/Inputs/serial_openmp.c %t.n1.o -o %t.n1 && qemu-aarch64 -L /usr/aarch64-linux-gnu %t.n1 | FileCheck %s
// RUN: llvm-objdump -d %t.n1.o > %t.n1.dis && FileCheck %s --check-prefix=NEON --input-file=%t.n1.dis
// RUN: tessel compile %s --target cpu --target-triple aarch64-linux-gnu --cpu neoverse-v2 --emit obj -o %t.v2.o
// RUN: clang-22 --target=aarch64-linux-gnu -fuse-ld=lld -O1 test/e2e/Inputs/matmul_caller.c test/e2e/Inputs/serial_openmp.c %t.v2.o -o %t.v2 && qemu-aarch64 -L /usr/aarch64-linux-gnu %t.v2 | FileCheck %s
// RUN: tessel compile %s --target cpu --emit so -o %t.so && clang-22 test/e2e/Inputs/matmul_caller.c %t.so -o %t.host && %t.host | FileCheck %s

// CHECK: z[0][0] = 10.0, z[127][127] = 73.0, weighted sum = -1020.0
// NEON: fmla v{{[0-9]+}}.4s

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
