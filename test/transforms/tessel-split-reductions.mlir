// RUN: tessel-opt %s --split-input-file --tessel-split-reductions --canonicalize | FileCheck %s
// RUN: tessel-opt %s --split-input-file --tessel-split-reductions --canonicalize | FileCheck %s --check-prefix=MAPS
// MAPS: #[[IN:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d2, d1, d3)>
// MAPS: #[[OUT:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1)>
// MAPS-LABEL: func.func @rows
// MAPS: linalg.generic {indexing_maps = [#[[IN]], #[[OUT]]]

// 8 row sums over 4096 with 256 work-items: 32 partials per row, one per
// work-item, partial p folding the 16-byte vectors p, p + 32, ... of its
// row (the elements (s * 32 + p) * 4 + v: two reduction dimensions,
// innermost, from -0.0, the sum's neutral element); a row's 32 partials
// sit in consecutive lanes, so their combine (into the reduction's init)
// is marked to run across lanes (tessel-cross-lane-reductions).
// CHECK-LABEL: func.func @rows
// CHECK-DAG: %[[NEUTRAL:.*]] = arith.constant -0.000000e+00 : f32
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[INIT:.*]] = linalg.fill ins(%[[ZERO]] : f32)
// CHECK: %[[X:.*]] = tensor.expand_shape %{{.*}} {{\[\[}}0], [1, 2, 3]] output_shape [8, 32, 32, 4]
// CHECK: %[[FILL:.*]] = linalg.fill ins(%[[NEUTRAL]] : f32) outs(%{{.*}} : tensor<8x32xf32>)
// CHECK: %[[P:.*]] = linalg.generic {indexing_maps = [#[[IN:.*]], #[[OUT:.*]]], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%[[X]] : tensor<8x32x32x4xf32>) outs(%[[FILL]] : tensor<8x32xf32>) {
// CHECK: arith.addf {{.*}} fastmath<reassoc>
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[P]] : tensor<8x32xf32>) outs(%[[INIT]] : tensor<8xf32>) attrs = {tessel.cross_lane}
// CHECK-NOT: tessel.split_combine
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

// A full integer sum: 128 work-items (2 waves of 64) take 128 partials;
// each wave's 64 are combined across its lanes (contiguous clusters of
// the partials), then the 2 by one item. A float sum without reassoc
// keeps its order.
// CHECK-LABEL: func.func @full
// CHECK: tensor.expand_shape %{{.*}} {{\[\[}}0, 1, 2]] output_shape [2, 128, 4] : tensor<1024xi32> into tensor<2x128x4xi32>
// CHECK: iterator_types = ["parallel", "reduction", "reduction"]} ins(%{{.*}} : tensor<2x128x4xi32>) outs(%{{.*}} : tensor<128xi32>) {
// CHECK: tensor.expand_shape %{{.*}} {{\[\[}}0, 1]] output_shape [2, 64] : tensor<128xi32> into tensor<2x64xi32>
// CHECK: iterator_types = ["parallel", "reduction"]} ins(%{{.*}} : tensor<2x64xi32>) outs(%{{.*}} : tensor<2xi32>) attrs = {tessel.cross_lane}
// CHECK: iterator_types = ["reduction"]} ins(%{{.*}} : tensor<2xi32>)
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

// One row of 4096 (a one-row softmax's max and sum): 256 partials, a
// wave's 64 combined across lanes, then the 4 waves' by one item.
// CHECK-LABEL: func.func @one_row
// CHECK: ins(%{{.*}} : tensor<1x4x256x4xf32>) outs(%{{.*}} : tensor<1x256xf32>) {
// CHECK: ins(%{{.*}} : tensor<1x4x64xf32>) outs(%{{.*}} : tensor<1x4xf32>) attrs = {tessel.cross_lane}
// CHECK: iterator_types = ["parallel", "reduction"]} ins(%{{.*}} : tensor<1x4xf32>) outs(%{{.*}} : tensor<1xf32>) {
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

// -----

// Partials that do not give every work-item one (3 rows x 64 = 192 of 256)
// are combined as a tree through LDS (64 -> 8 -> 1, at most eight folded
// by one item), not across lanes.
// CHECK-LABEL: func.func @three_rows
// CHECK-NOT: tessel.cross_lane
// CHECK: ins(%{{.*}} : tensor<3x16x64x4xf32>) outs(%{{.*}} : tensor<3x64xf32>) {
// CHECK: ins(%{{.*}} : tensor<3x8x8xf32>) outs(%{{.*}} : tensor<3x8xf32>) {
// CHECK: iterator_types = ["parallel", "reduction"]} ins(%{{.*}} : tensor<3x8xf32>) outs(%{{.*}} : tensor<3xf32>) {
// CHECK-NOT: tessel.cross_lane
func.func @three_rows(%x: tensor<3x4096xf32>) -> tensor<3xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<3xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<3xf32>) -> tensor<3xf32>
  %r = linalg.reduce ins(%x : tensor<3x4096xf32>) outs(%init : tensor<3xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc fastmath<reassoc> : f32
      linalg.yield %s : f32
    }
  return %r : tensor<3xf32>
}

// -----

// Column reductions: 8 columns of 64 take 32 partials each (partial p of
// column j in work-item 32 j + p after the interchange: the reduction
// innermost); 2 columns of 4096 take 128, two clusters of 64 lanes each.
// CHECK-LABEL: func.func @columns
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%{{.*}} : tensor<32x8xf32>) outs(%{{.*}} : tensor<8xf32>) attrs = {tessel.cross_lane}
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%{{.*}} : tensor<2x64x2xf32>) outs(%{{.*}} : tensor<2x2xf32>) attrs = {tessel.cross_lane}
func.func @columns(%x: tensor<64x8xf32>, %y: tensor<4096x2xf32>) -> (tensor<8xf32>, tensor<2xf32>) {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<8xf32>) -> tensor<8xf32>
  %r = linalg.reduce ins(%x : tensor<64x8xf32>) outs(%init : tensor<8xf32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc fastmath<reassoc> : f32
      linalg.yield %s : f32
    }
  %empty2 = tensor.empty() : tensor<2xf32>
  %init2 = linalg.fill ins(%zero : f32) outs(%empty2 : tensor<2xf32>) -> tensor<2xf32>
  %r2 = linalg.reduce ins(%y : tensor<4096x2xf32>) outs(%init2 : tensor<2xf32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %m = arith.maximumf %in, %acc fastmath<reassoc> : f32
      linalg.yield %m : f32
    }
  return %r, %r2 : tensor<8xf32>, tensor<2xf32>
}

// -----

// A reduction with an element-wise producer fused in (softmax's sum of
// exp(x - max), the maxima a second input): split like any other, the
// second input (one value per row) read as it was.
// CHECK-LABEL: func.func @fused_producer
// CHECK: %[[P:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%{{.*}}, %arg1 : tensor<8x32x32x4xf32>, tensor<8xf32>) outs(%{{.*}} : tensor<8x32xf32>) {
// CHECK: math.exp
// CHECK: linalg.generic {{.*}} ins(%[[P]] : tensor<8x32xf32>) outs(%{{.*}} : tensor<8xf32>) attrs = {tessel.cross_lane}
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @fused_producer(%x: tensor<8x4096xf32>, %m: tensor<8xf32>) -> tensor<8xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<8xf32>) -> tensor<8xf32>
  %r = linalg.generic {indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x, %m : tensor<8x4096xf32>, tensor<8xf32>) outs(%init : tensor<8xf32>) {
  ^bb0(%a: f32, %mm: f32, %acc: f32):
    %d = arith.subf %a, %mm : f32
    %e = math.exp %d : f32
    %s = arith.addf %e, %acc fastmath<reassoc> : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  return %r : tensor<8xf32>
}

// -----

// Four rows of 100 with 256 work-items: 50 partials per row (the largest
// divisor of 100 up to 64), and 50 partials of 4-element vectors do not
// fit in a row of 100: upstream's scalar split, partial p folding
// elements p and p + 50.
// CHECK-LABEL: func.func @odd_rows
// CHECK: tensor.expand_shape %{{.*}} {{\[\[}}0], [1, 2]] output_shape [4, 2, 50]
// CHECK: iterator_types = ["parallel", "parallel", "reduction"]} ins(%{{.*}} : tensor<4x2x50xf32>) outs(%{{.*}} : tensor<4x50xf32>) {
func.func @odd_rows(%x: tensor<4x100xf32>) -> tensor<4xf32> {
  %lowest = arith.constant 0xFF800000 : f32
  %empty = tensor.empty() : tensor<4xf32>
  %init = linalg.fill ins(%lowest : f32) outs(%empty : tensor<4xf32>) -> tensor<4xf32>
  %r = linalg.reduce ins(%x : tensor<4x100xf32>) outs(%init : tensor<4xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %m = arith.maximumf %in, %acc fastmath<reassoc> : f32
      linalg.yield %m : f32
    }
  return %r : tensor<4xf32>
}
