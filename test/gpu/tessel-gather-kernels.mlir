// RUN: tessel-opt %s --tessel-gather-kernels | FileCheck %s

// Kernels outlined into two gpu.modules end up in the first, the second
// renamed after its module, with the launches and a shared global fixed up.
// CHECK: func.func @two
// CHECK: gpu.launch_func @first::@first blocks
// CHECK: gpu.launch_func @first::@second blocks
// CHECK: gpu.module @first {
// CHECK: memref.global "private" constant @table
// CHECK: gpu.func @first
// CHECK: gpu.func @second
// CHECK-NOT: memref.global
// CHECK: }
// CHECK-NOT: gpu.module
module attributes {gpu.container_module} {
  func.func @two(%m: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @first::@first blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%m : memref<4xf32>)
    gpu.launch_func @second::@kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%m : memref<4xf32>)
    return
  }
  gpu.module @first {
    memref.global "private" constant @table : memref<4xf32> = dense<1.0>
    gpu.func @first(%m: memref<4xf32>) kernel {
      gpu.return
    }
  }
  gpu.module @second {
    memref.global "private" constant @table : memref<4xf32> = dense<1.0>
    gpu.func @kernel(%m: memref<4xf32>) kernel {
      %t = memref.get_global @table : memref<4xf32>
      gpu.return
    }
  }
}
