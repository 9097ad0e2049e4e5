// RUN: tessel-opt %s --split-input-file --tessel-split-reductions --canonicalize | FileCheck %s

// 8 row sums over 4096 with 256 work-items: 32 partials per row, partial p
// summing elements p, p + 32, ... (the reduction loop innermost); the 32
// partials of a row are combined in turn by 4 (each summing 8), and those
// 4 by one: a tree, no work-item folding 32 in a row.
// CHECK-LABEL: func.func @rows
// CHECK: %[[X:.*]] = tensor.expand_shape %{{.*}} {{\[\[}}0], [1, 2]] output_shape [8, 128, 32]
// CHECK: %[[P:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[X]] : tensor<8x128x32xf32>) outs(%{{.*}} : tensor<8x32xf32>)
// CHECK: arith.addf {{.*}} fastmath<reassoc>
// CHECK: %[[X2:.*]] = tensor.expand_shape %[[P]] {{\[\[}}0], [1, 2]] output_shape [8, 8, 4]
// CHECK: %[[P2:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[X2]] : tensor<8x8x4xf32>) outs(%{{.*}} : tensor<8x4xf32>)
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[P2]] : tensor<8x4xf32>) outs(%{{.*}} : tensor<8xf32>)
func.func @rows(%x: tensor<8x4096xf32>) -> tensor<8xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<8xf32>) -> tensor<8xf32>
  %r = linalg.reduce ins(%x : tensor<8x4096xf32>) outs(%init : tensor<8xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc fastmath<reassoc> : f32
      linalg.yield %s : f32
    }
  return %r : tensor<8xf32>
}

// -----

// A full integer sum: 128 work-items (2 wavefronts of 64) take 128
// partials, 8 items combine them (16 each), one item the 8; a float sum
// without reassoc keeps its order.
// CHECK-LABEL: func.func @full
// CHECK: tensor.expand_shape %{{.*}} {{\[\[}}0, 1]] output_shape [8, 128] : tensor<1024xi32> into tensor<8x128xi32>
// CHECK: iterator_types = ["parallel", "reduction"]} ins(%{{.*}} : tensor<8x128xi32>) outs(%{{.*}} : tensor<128xi32>)
// CHECK: tensor.expand_shape %{{.*}} {{\[\[}}0, 1]] output_shape [16, 8] : tensor<128xi32> into tensor<16x8xi32>
// CHECK: iterator_types = ["parallel", "reduction"]} ins(%{{.*}} : tensor<16x8xi32>) outs(%{{.*}} : tensor<8xi32>)
// CHECK: iterator_types = ["reduction"]} ins(%{{.*}} : tensor<8xi32>)
// CHECK: linalg.reduce ins(%{{.*}} : tensor<1024xf32>)
module attributes {tessel.num_warps = 2 : i64} {
  func.func @full(%x: tensor<1024xi32>, %y: tensor<1024xf32>) -> (tensor<i32>, tensor<f32>) {
    %zero = arith.constant 0 : i32
    %empty = tensor.empty() : tensor<i32>
    %init = linalg.fill ins(%zero : i32) outs(%empty : tensor<i32>) -> tensor<i32>
    %r = linalg.reduce ins(%x : tensor<1024xi32>) outs(%init : tensor<i32>) dimensions = [0]
      (%in: i32, %acc: i32) {
        %s = arith.addi %in, %acc : i32
        linalg.yield %s : i32
      }
    %fzero = arith.constant 0.0 : f32
    %fempty = tensor.empty() : tensor<f32>
    %finit = linalg.fill ins(%fzero : f32) outs(%fempty : tensor<f32>) -> tensor<f32>
    %f = linalg.reduce ins(%y : tensor<1024xf32>) outs(%finit : tensor<f32>) dimensions = [0]
      (%in: f32, %acc: f32) {
        %s = arith.addf %in, %acc : f32
        linalg.yield %s : f32
      }
    return %r, %f : tensor<i32>, tensor<f32>
  }
}

// -----

// One row of 4096 (a one-row softmax's max and sum): 256 partials, then
// three levels: 256 -> 16 -> 4 -> 1.
// CHECK-LABEL: func.func @one_row
// CHECK: ins(%{{.*}} : tensor<1x16x256xf32>) outs(%{{.*}} : tensor<1x256xf32>)
// CHECK: ins(%{{.*}} : tensor<1x16x16xf32>) outs(%{{.*}} : tensor<1x16xf32>)
// CHECK: ins(%{{.*}} : tensor<1x4x4xf32>) outs(%{{.*}} : tensor<1x4xf32>)
// CHECK: iterator_types = ["parallel", "reduction"]} ins(%{{.*}} : tensor<1x4xf32>) outs(%{{.*}} : tensor<1xf32>)
func.func @one_row(%x: tensor<1x4096xf32>) -> tensor<1xf32> {
  %lowest = arith.constant 0xFF800000 : f32
  %empty = tensor.empty() : tensor<1xf32>
  %init = linalg.fill ins(%lowest : f32) outs(%empty : tensor<1xf32>) -> tensor<1xf32>
  %r = linalg.reduce ins(%x : tensor<1x4096xf32>) outs(%init : tensor<1xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %m = arith.maximumf %in, %acc fastmath<reassoc> : f32
      linalg.yield %m : f32
    }
  return %r : tensor<1xf32>
}
