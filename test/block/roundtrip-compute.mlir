// block.dot (plain, accumulated, batched, widening), block.reduce (all
// kinds), block.broadcast (new dims, size-1 stretch) and block.iota; the
// pure ones fold away under CSE/canonicalize when unused.
// RUN: tessel-opt %s | FileCheck %s
// RUN: tessel-opt %s > %t.1 && tessel-opt %t.1 > %t.2 && diff %t.1 %t.2
// RUN: tessel-opt %s --canonicalize | FileCheck %s --check-prefix=DCE

// DCE-LABEL: func.func @compute
// DCE-NOT: block.
// DCE: return
// CHECK-LABEL: func.func @compute
func.func @compute(%a: tensor<32x16xf32>, %b: tensor<16x8xf32>, %ab: tensor<2x32x16xf16>,
                   %bb: tensor<2x16x8xf16>, %acc: tensor<2x32x8xf32>, %ai: tensor<4x4xi8>,
                   %v: tensor<4x128xf32>, %row: tensor<1x128xf32>) {
  // CHECK: block.dot %{{.*}}, %{{.*}} : tensor<32x16xf32>, tensor<16x8xf32> -> tensor<32x8xf32>
  %0 = block.dot %a, %b : tensor<32x16xf32>, tensor<16x8xf32> -> tensor<32x8xf32>
  // CHECK: block.dot %{{.*}}, %{{.*}} acc %{{.*}} : tensor<2x32x16xf16>, tensor<2x16x8xf16>, tensor<2x32x8xf32> -> tensor<2x32x8xf32>
  %1 = block.dot %ab, %bb acc %acc : tensor<2x32x16xf16>, tensor<2x16x8xf16>, tensor<2x32x8xf32> -> tensor<2x32x8xf32>
  // CHECK: block.dot %{{.*}}, %{{.*}} : tensor<4x4xi8>, tensor<4x4xi8> -> tensor<4x4xi32>
  %2 = block.dot %ai, %ai : tensor<4x4xi8>, tensor<4x4xi8> -> tensor<4x4xi32>
  // CHECK: block.reduce sum %{{.*}} dims [1]
  %3 = block.reduce sum %v dims [1] : tensor<4x128xf32> -> tensor<4xf32>
  // CHECK: block.reduce max %{{.*}} dims [0]
  %4 = block.reduce max %v dims [0] : tensor<4x128xf32> -> tensor<128xf32>
  // CHECK: block.reduce min %{{.*}} dims [0, 1] : tensor<4x128xf32> -> tensor<f32>
  %5 = block.reduce min %v dims [0, 1] : tensor<4x128xf32> -> tensor<f32>
  // CHECK: block.reduce prod %{{.*}} dims [1]
  %6 = block.reduce prod %v dims [1] : tensor<4x128xf32> -> tensor<4xf32>
  // CHECK: block.reduce umax %{{.*}} dims [1] : tensor<4x4xi8> -> tensor<4xi8>
  %umax = block.reduce umax %ai dims [1] : tensor<4x4xi8> -> tensor<4xi8>
  // CHECK: block.reduce umin %{{.*}} dims [0] : tensor<4x4xi8> -> tensor<4xi8>
  %umin = block.reduce umin %ai dims [0] : tensor<4x4xi8> -> tensor<4xi8>
  // CHECK: block.broadcast %{{.*}} dims [0, 1] : tensor<f32> -> tensor<4x128xf32>
  %7 = block.broadcast %5 dims [0, 1] : tensor<f32> -> tensor<4x128xf32>
  // CHECK: block.broadcast %{{.*}} dims [] : tensor<1x128xf32> -> tensor<4x128xf32>
  %8 = block.broadcast %row dims [] : tensor<1x128xf32> -> tensor<4x128xf32>
  // CHECK: block.iota dim 0 : tensor<4x128xi32>
  %9 = block.iota dim 0 : tensor<4x128xi32>
  // CHECK: block.iota dim 0 : tensor<8xindex>
  %10 = block.iota dim 0 : tensor<8xindex>
  return
}
