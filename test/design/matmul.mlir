// The reference matmul kernel (Pallas' canonical example) parses, verifies and prints back
// byte-stably.
// RUN: tessel-opt %s | FileCheck %s
// RUN: tessel-opt %s > %t.1 && tessel-opt %t.1 > %t.2 && diff %t.1 %t.2

// CHECK-LABEL: func.func @matmul_kernel(
// CHECK-SAME: %[[X:.*]]: memref<128x256xf32>, %[[Y:.*]]: memref<256x128xf32>, %[[Z:.*]]: memref<128x128xf32>)
// CHECK: %[[A:.*]] = block.load %[[X]] : memref<128x256xf32> -> tensor<128x256xf32>
// CHECK: %[[B:.*]] = block.load %[[Y]] : memref<256x128xf32> -> tensor<256x128xf32>
// CHECK: %[[C:.*]] = block.dot %[[A]], %[[B]] : tensor<128x256xf32>, tensor<256x128xf32> -> tensor<128x128xf32>
// CHECK: block.store %[[C]], %[[Z]] : tensor<128x128xf32>, memref<128x128xf32>
func.func @matmul_kernel(%x: memref<128x256xf32>, %y: memref<256x128xf32>,
                         %z: memref<128x128xf32>) {
  %a = block.load %x : memref<128x256xf32> -> tensor<128x256xf32>
  %b = block.load %y : memref<256x128xf32> -> tensor<256x128xf32>
  %c = block.dot %a, %b : tensor<128x256xf32>, tensor<256x128xf32> -> tensor<128x128xf32>
  block.store %c, %z : tensor<128x128xf32>, memref<128x128xf32>
  return
}

// CHECK-LABEL: func.func @matmul(
// CHECK: grid.call @matmul_kernel grid [8, 8]
// CHECK-SAME: ins(%{{.*}}, %{{.*}} : memref<1024x256xf32>, memref<256x1024xf32>)
// CHECK-SAME: outs(%{{.*}} : memref<1024x1024xf32>)
// CHECK-SAME: in_specs [#grid.block<[128, 256], (d0, d1) -> (d0, 0)>, #grid.block<[256, 128], (d0, d1) -> (0, d1)>]
// CHECK-SAME: out_specs [#grid.block<[128, 128], (d0, d1) -> (d0, d1)>]{{$}}
func.func @matmul(%x: memref<1024x256xf32>, %y: memref<256x1024xf32>,
                  %z: memref<1024x1024xf32>) {
  grid.call @matmul_kernel grid [8, 8]
      ins(%x, %y : memref<1024x256xf32>, memref<256x1024xf32>)
      outs(%z : memref<1024x1024xf32>)
      in_specs [#grid.block<[128, 256], (i, j) -> (i, 0)>,
                #grid.block<[256, 128], (i, j) -> (0, j)>]
      out_specs [#grid.block<[128, 128], (i, j) -> (i, j)>]
  return
}
