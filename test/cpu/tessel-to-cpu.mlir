// tessel-to-cpu, the named pipeline (lowering/src/cpu.rs): grid/block IR all
// the way to the LLVM dialect, parallel grid axes on OpenMP threads.
// RUN: tessel-opt %s --tessel-to-cpu | FileCheck %s
// RUN: tessel-opt %s --pass-pipeline='builtin.module(tessel-to-cpu)' | FileCheck %s

// CHECK-NOT: grid.
// CHECK-NOT: block.
// CHECK: llvm.func @matmul(
// CHECK: omp.parallel
// CHECK: omp.wsloop
// The contraction: register tiles of vector FMAs.
// CHECK: llvm.intr.fma({{.*}}) : (vector<{{[0-9]+}}xf32>, vector<{{[0-9]+}}xf32>, vector<{{[0-9]+}}xf32>)
// CHECK-NOT: builtin.unrealized_conversion_cast
// The register tile is explicit so the output does not depend on the
// host's vector width (the default is measured in e2e tests).
module attributes {tessel.register_tile = array<i64: 4, 16>} {
func.func @matmul_kernel(%x: memref<16x32xf32>, %y: memref<32x16xf32>, %z: memref<16x16xf32>) {
  %a = block.load %x : memref<16x32xf32> -> tensor<16x32xf32>
  %b = block.load %y : memref<32x16xf32> -> tensor<32x16xf32>
  %c = block.dot %a, %b : tensor<16x32xf32>, tensor<32x16xf32> -> tensor<16x16xf32>
  block.store %c, %z : tensor<16x16xf32>, memref<16x16xf32>
  return
}
func.func @matmul(%x: memref<64x32xf32>, %y: memref<32x64xf32>, %z: memref<64x64xf32>) {
  grid.call @matmul_kernel grid [4, 4]
      ins(%x, %y : memref<64x32xf32>, memref<32x64xf32>) outs(%z : memref<64x64xf32>)
      in_specs [#grid.block<[16, 32], (i, j) -> (i, 0)>, #grid.block<[32, 16], (i, j) -> (0, j)>]
      out_specs [#grid.block<[16, 16], (i, j) -> (i, j)>]
  return
}
}
