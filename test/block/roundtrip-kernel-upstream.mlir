// Kernels mix block ops with upstream arith/math/scf/tensor: a fused
// activation with pl.when (scf.if) and a fori_loop (scf.for) over windows.
// RUN: tessel-opt %s | FileCheck %s
// RUN: tessel-opt %s > %t.1 && tessel-opt %t.1 > %t.2 && diff %t.1 %t.2

// CHECK-LABEL: func.func @fused
// CHECK: math.exp
// CHECK: arith.select
// CHECK: scf.if
// CHECK: block.store
func.func @fused(%x: memref<8x128xf32>, %o: memref<8x128xf32>) {
  %v = block.load %x : memref<8x128xf32> -> tensor<8x128xf32>
  %zero = arith.constant 0.0 : f32
  %z = tensor.splat %zero : tensor<8x128xf32>
  %pos = arith.cmpf ogt, %v, %z : tensor<8x128xf32>
  %e = math.exp %v : tensor<8x128xf32>
  %r = arith.select %pos, %v, %e : tensor<8x128xi1>, tensor<8x128xf32>
  %pid = grid.program_id 0
  %c0 = arith.constant 0 : index
  %first = arith.cmpi eq, %pid, %c0 : index
  scf.if %first {
    block.store %z, %o : tensor<8x128xf32>, memref<8x128xf32>
  }
  block.store %r, %o : tensor<8x128xf32>, memref<8x128xf32>
  return
}

// CHECK-LABEL: func.func @loop
// CHECK: scf.for
// CHECK: block.load %{{.*}}[%{{.*}}] [16]
// CHECK: block.store %{{.*}}, %{{.*}}[%{{.*}}]
func.func @loop(%x: memref<64xf32>, %o: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  scf.for %i = %c0 to %c64 step %c16 {
    %w = block.load %x[%i] [16] : memref<64xf32> -> tensor<16xf32>
    %d = arith.addf %w, %w : tensor<16xf32>
    block.store %d, %o[%i] : tensor<16xf32>, memref<64xf32>
  }
  return
}
