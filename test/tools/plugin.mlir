// Upstream mlir-opt-22 loads Tessel's dialect plugin and then parses,
// verifies and prints Tessel IR exactly like tessel-opt.
// RUN: mlir-opt --load-dialect-plugin=%plugin %s | FileCheck %s
// RUN: mlir-opt --load-dialect-plugin=%plugin %s > %t.up && tessel-opt %s > %t.own && diff %t.up %t.own

// CHECK: block.dot %{{.*}}, %{{.*}} : tensor<128x256xf32>, tensor<256x128xf32> -> tensor<128x128xf32>
// CHECK: grid.call @kernel grid [8, 8] ins(
// CHECK-SAME: in_specs [#grid.block<[128, 256], (d0, d1) -> (d0, 0)>, #grid.block<[256, 128], (d0, d1) -> (0, d1)>]
func.func @kernel(%x: memref<128x256xf32>, %y: memref<256x128xf32>, %z: memref<128x128xf32>) {
  %a = block.load %x : memref<128x256xf32> -> tensor<128x256xf32>
  %b = block.load %y : memref<256x128xf32> -> tensor<256x128xf32>
  %c = block.dot %a, %b : tensor<128x256xf32>, tensor<256x128xf32> -> tensor<128x128xf32>
  block.store %c, %z : tensor<128x128xf32>, memref<128x128xf32>
  return
}
func.func @matmul(%x: memref<1024x256xf32>, %y: memref<256x1024xf32>, %z: memref<1024x1024xf32>) {
  grid.call @kernel grid [8, 8]
      ins(%x, %y : memref<1024x256xf32>, memref<256x1024xf32>) outs(%z : memref<1024x1024xf32>)
      in_specs [#grid.block<[128, 256], (i, j) -> (i, 0)>, #grid.block<[256, 128], (i, j) -> (0, j)>]
      out_specs [#grid.block<[128, 128], (i, j) -> (i, j)>]
  return
}

