// RUN: tessel-opt %s --split-input-file --tessel-widen-operands | FileCheck %s

// A contraction of f16 operands into f32 results reads its operands
// widened once, by element-wise generics, and becomes an f32 contraction
// (the same products: f16 x f16 is exact in f32).
// CHECK-LABEL: func.func @half
// CHECK: %[[AW:.*]] = linalg.generic {{.*}} ins(%arg0 : tensor<8x16xf16>) outs(%{{.*}} : tensor<8x16xf32>)
// CHECK: arith.extf %{{.*}} : f16 to f32
// CHECK: %[[BW:.*]] = linalg.generic {{.*}} ins(%arg1 : tensor<16x4xf16>) outs(%{{.*}} : tensor<16x4xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[AW]], %[[BW]] : tensor<8x16xf32>, tensor<16x4xf32>) outs(%arg2 : tensor<8x4xf32>) attrs = {tessel.contraction}
// CHECK-NEXT: ^bb0(%[[X:.*]]: f32, %[[Y:.*]]: f32, %[[S:.*]]: f32):
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[X]], %[[Y]] : f32
// CHECK-NEXT: %[[T:.*]] = arith.addf %[[S]], %[[P]] : f32
#a = affine_map<(i, j, k) -> (i, k)>
#b = affine_map<(i, j, k) -> (k, j)>
#c = affine_map<(i, j, k) -> (i, j)>
func.func @half(%x: tensor<8x16xf16>, %y: tensor<16x4xf16>, %z: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %r = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"], tessel.contraction}
      ins(%x, %y : tensor<8x16xf16>, tensor<16x4xf16>) outs(%z : tensor<8x4xf32>) {
  ^bb0(%u: f16, %v: f16, %s: f32):
    %uw = arith.extf %u : f16 to f32
    %vw = arith.extf %v : f16 to f32
    %p = arith.mulf %uw, %vw : f32
    %t = arith.addf %s, %p : f32
    linalg.yield %t : f32
  } -> tensor<8x4xf32>
  return %r : tensor<8x4xf32>
}

// -----

// Batched int8 into i32: sign-extended once; same-type contractions and
// other generics are left alone.
// CHECK-LABEL: func.func @batched_int8
// CHECK: arith.extsi %{{.*}} : i8 to i32
// CHECK: arith.extsi %{{.*}} : i8 to i32
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<2x4x8xi32>, tensor<2x8x4xi32>) outs(%arg2 : tensor<2x4x4xi32>) attrs = {tessel.contraction}
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.muli
// CHECK-NEXT: arith.addi
// CHECK: linalg.generic {{.*}} ins(%arg3, %arg3 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%arg4 : tensor<4x4xf32>) attrs = {tessel.contraction}
// CHECK-NEXT: ^bb0(%{{.*}}: f32, %{{.*}}: f32, %{{.*}}: f32):
// CHECK-NEXT: arith.mulf
#a3 = affine_map<(b, i, j, k) -> (b, i, k)>
#b3 = affine_map<(b, i, j, k) -> (b, k, j)>
#c3 = affine_map<(b, i, j, k) -> (b, i, j)>
#a = affine_map<(i, j, k) -> (i, k)>
#b = affine_map<(i, j, k) -> (k, j)>
#c = affine_map<(i, j, k) -> (i, j)>
func.func @batched_int8(%x: tensor<2x4x8xi8>, %y: tensor<2x8x4xi8>, %z: tensor<2x4x4xi32>,
                        %f: tensor<4x4xf32>, %g: tensor<4x4xf32>) -> (tensor<2x4x4xi32>, tensor<4x4xf32>) {
  %r = linalg.generic {indexing_maps = [#a3, #b3, #c3], iterator_types = ["parallel", "parallel", "parallel", "reduction"], tessel.contraction}
      ins(%x, %y : tensor<2x4x8xi8>, tensor<2x8x4xi8>) outs(%z : tensor<2x4x4xi32>) {
  ^bb0(%u: i8, %v: i8, %s: i32):
    %uw = arith.extsi %u : i8 to i32
    %vw = arith.extsi %v : i8 to i32
    %p = arith.muli %uw, %vw : i32
    %t = arith.addi %s, %p : i32
    linalg.yield %t : i32
  } -> tensor<2x4x4xi32>
  %q = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"], tessel.contraction}
      ins(%f, %f : tensor<4x4xf32>, tensor<4x4xf32>) outs(%g : tensor<4x4xf32>) {
  ^bb0(%u: f32, %v: f32, %s: f32):
    %p = arith.mulf %u, %v : f32
    %t = arith.addf %s, %p : f32
    linalg.yield %t : f32
  } -> tensor<4x4xf32>
  return %r, %q : tensor<2x4x4xi32>, tensor<4x4xf32>
}
