// Every exact form of the block dialect's surface syntax, in one kernel.
// RUN: tessel-opt %s | FileCheck %s
// RUN: tessel-opt %s > %t.1 && tessel-opt %t.1 > %t.2 && diff %t.1 %t.2

// CHECK-LABEL: func.func @forms
func.func @forms(%x: memref<8x128xf32>, %x64: memref<64xf32>, %x4: memref<4x128xf32>,
                 %o: memref<8x128xf32>, %o64: memref<64xf32>, %o1: memref<1xf32>,
                 %off: index, %ninf: f32, %m: tensor<4x128xi1>, %m2: tensor<16xi1>,
                 %a: tensor<32x16xf32>, %b: tensor<16x16xf32>,
                 %ah: tensor<32x16xbf16>, %bh: tensor<16x16xbf16>, %c0: tensor<32x16xf32>,
                 %u: tensor<128xf32>, %s1: tensor<1xf32>) {
  // CHECK: block.load %{{.*}} : memref<8x128xf32> -> tensor<8x128xf32>
  %v8 = block.load %x : memref<8x128xf32> -> tensor<8x128xf32>
  // CHECK: block.load %{{.*}}[%{{.*}}] [16] : memref<64xf32> -> tensor<16xf32>
  %w = block.load %x64[%off] [16] : memref<64xf32> -> tensor<16xf32>
  // CHECK: block.load %{{.*}} mask %{{.*}} other %{{.*}} : memref<4x128xf32> -> tensor<4x128xf32>
  %v = block.load %x4 mask %m other %ninf : memref<4x128xf32> -> tensor<4x128xf32>
  // CHECK: block.store %{{.*}}, %{{.*}} : tensor<8x128xf32>, memref<8x128xf32>
  block.store %v8, %o : tensor<8x128xf32>, memref<8x128xf32>
  // CHECK: block.store %{{.*}}, %{{.*}}[%{{.*}}] mask %{{.*}} : tensor<16xf32>, memref<64xf32>
  block.store %w, %o64[%off] mask %m2 : tensor<16xf32>, memref<64xf32>
  // CHECK: block.dot %{{.*}}, %{{.*}} : tensor<32x16xf32>, tensor<16x16xf32> -> tensor<32x16xf32>
  %c = block.dot %a, %b : tensor<32x16xf32>, tensor<16x16xf32> -> tensor<32x16xf32>
  // CHECK: block.dot %{{.*}}, %{{.*}} acc %{{.*}} : tensor<32x16xbf16>, tensor<16x16xbf16>, tensor<32x16xf32> -> tensor<32x16xf32>
  %cw = block.dot %ah, %bh acc %c0 : tensor<32x16xbf16>, tensor<16x16xbf16>, tensor<32x16xf32> -> tensor<32x16xf32>
  // CHECK: block.reduce sum %{{.*}} dims [1] : tensor<4x128xf32> -> tensor<4xf32>
  %s = block.reduce sum %v dims [1] : tensor<4x128xf32> -> tensor<4xf32>
  // CHECK: block.reduce sum %{{.*}} dims [0] : tensor<128xf32> -> tensor<f32>
  %t = block.reduce sum %u dims [0] : tensor<128xf32> -> tensor<f32>
  // CHECK: block.broadcast %{{.*}} dims [1] : tensor<4xf32> -> tensor<4x128xf32>
  %bc = block.broadcast %s dims [1] : tensor<4xf32> -> tensor<4x128xf32>
  // CHECK: block.iota dim 1 : tensor<4x128xi32>
  %i = block.iota dim 1 : tensor<4x128xi32>
  // CHECK: block.atomic_rmw add %{{.*}}, %{{.*}} : tensor<1xf32>, memref<1xf32>
  block.atomic_rmw add %s1, %o1 : tensor<1xf32>, memref<1xf32>
  return
}
