// block.atomic_rmw: add|max|min, whole ref or window, with a mask.
// RUN: tessel-opt %s | FileCheck %s
// RUN: tessel-opt %s > %t.1 && tessel-opt %t.1 > %t.2 && diff %t.1 %t.2

// CHECK-LABEL: func.func @atomics
func.func @atomics(%s1: tensor<1xf32>, %o: memref<1xf32>, %w: tensor<16xi32>, %o64: memref<64xi32>,
                   %off: index, %m: tensor<16xi1>) {
  // CHECK: block.atomic_rmw add %{{.*}}, %{{.*}} : tensor<1xf32>, memref<1xf32>
  block.atomic_rmw add %s1, %o : tensor<1xf32>, memref<1xf32>
  // CHECK: block.atomic_rmw max %{{.*}}, %{{.*}}[%{{.*}}] mask %{{.*}} : tensor<16xi32>, memref<64xi32>
  block.atomic_rmw max %w, %o64[%off] mask %m : tensor<16xi32>, memref<64xi32>
  // CHECK: block.atomic_rmw min %{{.*}}, %{{.*}}[%{{.*}}] : tensor<16xi32>, memref<64xi32>
  block.atomic_rmw min %w, %o64[%off] : tensor<16xi32>, memref<64xi32>
  return
}
