// TESSEL_CPU=x86-64-v3: JIT-compiled kernels are AVX2 code (ymm registers,
// AVX2's 16-register tiles) on any host that runs AVX2, so an AVX-512
// machine exercises the AVX2 path; TESSEL_JIT_OBJECT writes the code the
// JIT generated. Any CPU LLVM knows works when the host has all its
// features (nehalem: SSE4.2, no AVX); names LLVM does not know, and CPUs
// with features the host lacks (diamondrapids' APX and AVX10.2), are errors.
// SNAPSHOT-FILTER: \s*-?[0-9]+\.[0-9]+(e[-+]?[0-9]+)?\s* =>  <float>
// SNAPSHOT-FILTER: it lacks [^)]* => it lacks <features>
// RUN: env TESSEL_CPU=x86-64-v3 TESSEL_JIT_OBJECT=%t.v3.o tessel run %s --entry matmul --arg 0=random:1 --arg 1=random:2 --check | FileCheck %s
// RUN: llvm-objdump -d %t.v3.o > %t.v3.dis && FileCheck %s --check-prefix=AVX2 --input-file=%t.v3.dis
// RUN: env TESSEL_CPU=pentium9 tessel run %s --entry matmul 2>&1 | FileCheck %s --check-prefix=NAME; test ${PIPESTATUS[0]} -eq 1
// RUN: env TESSEL_CPU=diamondrapids tessel run %s --entry matmul 2>&1 | FileCheck %s --check-prefix=LACKS; test ${PIPESTATUS[0]} -eq 1
// `tessel run --cpu CPU` (and `tune --cpu`) set the same CPU; unknown or
// unrunnable ones are usage errors there.
// RUN: env TESSEL_JIT_OBJECT=%t.flag.o tessel run %s --entry matmul --cpu x86-64-v3 --arg 0=random:1 --arg 1=random:2 --check | FileCheck %s
// RUN: llvm-objdump -d %t.flag.o > %t.flag.dis && FileCheck %s --check-prefix=AVX2 --input-file=%t.flag.dis
// RUN: env TESSEL_JIT_OBJECT=%t.nehalem.o tessel run %s --entry matmul --cpu nehalem --arg 0=random:1 --arg 1=random:2 --check | FileCheck %s
// RUN: llvm-objdump -d %t.nehalem.o > %t.nehalem.dis && FileCheck %s --check-prefix=SSE --input-file=%t.nehalem.dis
// RUN: tessel run %s --entry matmul --cpu pentium9 2>&1 | FileCheck %s --check-prefix=FLAG; test ${PIPESTATUS[0]} -eq 2
// RUN: tessel run %s --entry matmul --cpu diamondrapids 2>&1 | FileCheck %s --check-prefix=FLAG-LACKS; test ${PIPESTATUS[0]} -eq 2

// CHECK: check: compiled code matches the interpreter
// The register tile's FMAs on ymm registers, nothing wider.
// AVX2: vfmadd{{[0-9a-z]*}} {{.*}}%ymm
// AVX2-NOT: zmm
// Nehalem has no AVX and no FMA: 128-bit SSE code, fused multiply-adds as
// calls of fmaf (the entry's argument-unpacking wrapper, which the JIT
// adds for the host, may still use VEX moves).
// SSE-LABEL: <matmul>:
// SSE-NOT: {{ymm|zmm|vfmadd}}
// SSE-LABEL: <matmul..omp_par>:
// SSE: {{movaps|movups}} {{.*}}%xmm
// SSE-NOT: {{ymm|zmm|vfmadd}}
// SSE-LABEL: <_mlir_ciface_matmul>:
// NAME: TESSEL_CPU=pentium9: the JIT targets the host or a CPU this host runs (LLVM's names: x86-64, x86-64-v2, x86-64-v3, x86-64-v4, haswell, znver3, ...)
// LACKS: TESSEL_CPU=diamondrapids: this host cannot run its code (it lacks
// FLAG: tessel: error: --cpu pentium9: run and tune generate code for the host or a CPU this host runs
// FLAG-LACKS: tessel: error: --cpu diamondrapids: this host cannot run its code (it lacks

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
