// RUN: tessel-opt %s --tessel-contraction-fma --canonicalize | FileCheck %s

// The multiply-add of a marked float contraction becomes one math.fma;
// integer contractions and unmarked generics keep theirs.
// CHECK-LABEL: func.func @contractions
// CHECK: linalg.generic
// CHECK: ^bb0(%[[X:.*]]: f32, %[[Y:.*]]: f32, %[[S:.*]]: f32):
// CHECK-NEXT: %[[F:.*]] = math.fma %[[X]], %[[Y]], %[[S]] : f32
// CHECK-NEXT: linalg.yield %[[F]] : f32
// CHECK: linalg.generic
// CHECK: arith.muli
// CHECK: arith.addi
// CHECK: linalg.generic
// CHECK: arith.mulf
// CHECK: arith.addf
#a = affine_map<(i, j, k) -> (i, k)>
#b = affine_map<(i, j, k) -> (k, j)>
#c = affine_map<(i, j, k) -> (i, j)>
func.func @contractions(%x: tensor<4x8xf32>, %y: tensor<8x4xf32>, %z: tensor<4x4xf32>,
                        %p: tensor<4x8xi32>, %q: tensor<8x4xi32>, %r: tensor<4x4xi32>)
    -> (tensor<4x4xf32>, tensor<4x4xi32>, tensor<4x4xf32>) {
  %0 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"], tessel.contraction}
      ins(%x, %y : tensor<4x8xf32>, tensor<8x4xf32>) outs(%z : tensor<4x4xf32>) {
  ^bb0(%u: f32, %v: f32, %s: f32):
    %m = arith.mulf %u, %v : f32
    %t = arith.addf %s, %m : f32
    linalg.yield %t : f32
  } -> tensor<4x4xf32>
  %1 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"], tessel.contraction}
      ins(%p, %q : tensor<4x8xi32>, tensor<8x4xi32>) outs(%r : tensor<4x4xi32>) {
  ^bb0(%u: i32, %v: i32, %s: i32):
    %m = arith.muli %u, %v : i32
    %t = arith.addi %s, %m : i32
    linalg.yield %t : i32
  } -> tensor<4x4xi32>
  %2 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %y : tensor<4x8xf32>, tensor<8x4xf32>) outs(%z : tensor<4x4xf32>) {
  ^bb0(%u: f32, %v: f32, %s: f32):
    %m = arith.mulf %u, %v : f32
    %t = arith.addf %s, %m : f32
    linalg.yield %t : f32
  } -> tensor<4x4xf32>
  return %0, %1, %2 : tensor<4x4xf32>, tensor<4x4xi32>, tensor<4x4xf32>
}
