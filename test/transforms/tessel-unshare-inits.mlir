// Inits CSE merged get one copy per use: each reduction its own fill, each
// fill its own empty tensor.
// RUN: tessel-opt %s --tessel-unshare-inits | FileCheck %s

// CHECK-LABEL: func.func @sibling_reductions
// CHECK-COUNT-2: tensor.empty() : tensor<4xi32>
// CHECK-NOT: tensor.empty
// CHECK-COUNT-2: linalg.fill
// CHECK-NOT: linalg.fill
// CHECK: linalg.generic
// CHECK: linalg.generic
#rows = affine_map<(i, j) -> (i, j)>
#cols = affine_map<(i, j) -> (j, i)>
#out = affine_map<(i, j) -> (i)>
func.func @sibling_reductions(%x: tensor<4x4xi32>) -> (tensor<4xi32>, tensor<4xi32>) {
  %id = arith.constant -2147483648 : i32
  %empty = tensor.empty() : tensor<4xi32>
  %init = linalg.fill ins(%id : i32) outs(%empty : tensor<4xi32>) -> tensor<4xi32>
  %rows = linalg.generic {indexing_maps = [#rows, #out], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x4xi32>) outs(%init : tensor<4xi32>) {
    ^bb0(%in: i32, %acc: i32):
      %m = arith.maxsi %in, %acc : i32
      linalg.yield %m : i32
  } -> tensor<4xi32>
  %cols = linalg.generic {indexing_maps = [#cols, #out], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x4xi32>) outs(%init : tensor<4xi32>) {
    ^bb0(%in: i32, %acc: i32):
      %m = arith.maxsi %in, %acc : i32
      linalg.yield %m : i32
  } -> tensor<4xi32>
  return %rows, %cols : tensor<4xi32>, tensor<4xi32>
}

// A single use stays as it is.
// CHECK-LABEL: func.func @single_use
// CHECK-COUNT-1: tensor.empty
// CHECK-NOT: tensor.empty
func.func @single_use(%x: tensor<4xi32>) -> tensor<4xi32> {
  %empty = tensor.empty() : tensor<4xi32>
  %y = linalg.copy ins(%x : tensor<4xi32>) outs(%empty : tensor<4xi32>) -> tensor<4xi32>
  return %y : tensor<4xi32>
}
