// block.load / block.store in all their forms: whole ref, window, mask,
// other, 2-D windows, scalars, and every element type of Pallas kernels.
// RUN: tessel-opt %s | FileCheck %s
// RUN: tessel-opt %s > %t.1 && tessel-opt %t.1 > %t.2 && diff %t.1 %t.2

// CHECK-LABEL: func.func @windows
func.func @windows(%x: memref<16x64xf32>, %o: memref<16x64xf32>, %i: index, %j: index,
                   %m: tensor<4x8xi1>, %zero: f32) {
  // CHECK: %[[W:.*]] = block.load %{{.*}}[%{{.*}}, %{{.*}}] [4, 8] mask %{{.*}} other %{{.*}} : memref<16x64xf32> -> tensor<4x8xf32>
  %w = block.load %x[%i, %j] [4, 8] mask %m other %zero : memref<16x64xf32> -> tensor<4x8xf32>
  // CHECK: block.store %[[W]], %{{.*}}[%{{.*}}, %{{.*}}] : tensor<4x8xf32>, memref<16x64xf32>
  block.store %w, %o[%j, %i] : tensor<4x8xf32>, memref<16x64xf32>
  // A mask without `other` leaves masked-off elements unspecified.
  // CHECK: block.load %{{.*}} mask %{{.*}} : memref<16x64xf32> -> tensor<16x64xf32>
  %all_m = tensor.splat %zero : tensor<16x64xf32>
  %cmp = arith.cmpf olt, %all_m, %all_m : tensor<16x64xf32>
  %v = block.load %x mask %cmp : memref<16x64xf32> -> tensor<16x64xf32>
  // CHECK: block.store %{{.*}}, %{{.*}} mask %{{.*}} : tensor<16x64xf32>, memref<16x64xf32>
  block.store %v, %o mask %cmp : tensor<16x64xf32>, memref<16x64xf32>
  return
}

// CHECK-LABEL: func.func @scalars
func.func @scalars(%x: memref<f32>, %o: memref<f32>) {
  // CHECK: block.load %{{.*}} : memref<f32> -> tensor<f32>
  %s = block.load %x : memref<f32> -> tensor<f32>
  // CHECK: block.store %{{.*}}, %{{.*}} : tensor<f32>, memref<f32>
  block.store %s, %o : tensor<f32>, memref<f32>
  return
}

// CHECK-LABEL: func.func @element_types
// CHECK-COUNT-8: block.load
func.func @element_types(%a: memref<4xf64>, %b: memref<4xf16>, %c: memref<4xbf16>, %d: memref<4xi8>,
                         %e: memref<4xi16>, %f: memref<4xi32>, %g: memref<4xi64>, %h: memref<4xi1>) {
  %0 = block.load %a : memref<4xf64> -> tensor<4xf64>
  %1 = block.load %b : memref<4xf16> -> tensor<4xf16>
  %2 = block.load %c : memref<4xbf16> -> tensor<4xbf16>
  %3 = block.load %d : memref<4xi8> -> tensor<4xi8>
  %4 = block.load %e : memref<4xi16> -> tensor<4xi16>
  %5 = block.load %f : memref<4xi32> -> tensor<4xi32>
  %6 = block.load %g : memref<4xi64> -> tensor<4xi64>
  %7 = block.load %h : memref<4xi1> -> tensor<4xi1>
  return
}

// Gathers and scatters along one dimension: whole refs and windows,
// masked, indices of any integer type or index.
// CHECK-LABEL: func.func @gathers
// CHECK: block.load %{{.*}} gather %{{.*}} dim 0 : memref<16x8xf32>, tensor<4xi32> -> tensor<4x8xf32>
// CHECK: block.load %{{.*}}[%{{.*}}, %{{.*}}] [2, 3] gather %{{.*}} dim 1 mask %{{.*}} other %{{.*}} : memref<16x8xf32>, tensor<3xindex> -> tensor<2x3xf32>
// CHECK: block.store %{{.*}}, %{{.*}} scatter %{{.*}} dim 0 : tensor<4x8xf32>, memref<16x8xf32>, tensor<4xi32>
// CHECK: block.store %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}] scatter %{{.*}} dim 1 mask %{{.*}} : tensor<2x3xf32>, memref<16x8xf32>, tensor<3xindex>
func.func @gathers(%x: memref<16x8xf32>, %t: tensor<4xi32>, %u: tensor<3xindex>, %i: index, %j: index,
                   %m: tensor<2x3xi1>, %zero: f32) {
  %a = block.load %x gather %t dim 0 : memref<16x8xf32>, tensor<4xi32> -> tensor<4x8xf32>
  %b = block.load %x[%i, %j] [2, 3] gather %u dim 1 mask %m other %zero : memref<16x8xf32>, tensor<3xindex> -> tensor<2x3xf32>
  block.store %a, %x scatter %t dim 0 : tensor<4x8xf32>, memref<16x8xf32>, tensor<4xi32>
  block.store %b, %x[%i, %j] scatter %u dim 1 mask %m : tensor<2x3xf32>, memref<16x8xf32>, tensor<3xindex>
  return
}
