// tessel-vectorize: a register tile tessel-tile marked (one k step of a
// 4 x 32 tile) becomes FMA outer products: per k, each row's A element is
// broadcast and fused-multiply-added with the B row into that row's
// accumulator vector; the accumulator is read before the k loop and
// written after it, so it lives in registers.
// RUN: tessel-opt %s --split-input-file --tessel-vectorize --canonicalize --cse | FileCheck %s

#lhs = affine_map<(i, j, k) -> (i, k)>
#rhs = affine_map<(i, j, k) -> (k, j)>
#out = affine_map<(i, j, k) -> (i, j)>
// CHECK-LABEL: func.func @tile(
// CHECK-SAME: %[[A:.*]]: tensor<4x16xf32>, %[[B:.*]]: tensor<16x32xf32>, %[[C:.*]]: tensor<4x32xf32>
// CHECK: %[[INIT:.*]] = vector.transfer_read %[[C]][%{{.*}}, %{{.*}}], %{{.*}} {in_bounds = [true, true]} : tensor<4x32xf32>, vector<4x32xf32>
// CHECK: %[[SUM:.*]] = scf.for %[[K:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %[[INIT]]) -> (vector<4x32xf32>) {
// CHECK:   %[[AS:.*]] = tensor.extract_slice %[[A]][0, %[[K]]] [4, 1] [1, 1]
// CHECK:   %[[BS:.*]] = tensor.extract_slice %[[B]][%[[K]], 0] [1, 32] [1, 1]
// CHECK:   %[[AK:.*]] = vector.transfer_read %[[AS]]{{.*}} : tensor<4x1xf32>, vector<4x1xf32>
// CHECK:   %[[BK:.*]] = vector.transfer_read %[[BS]]{{.*}} : tensor<1x32xf32>, vector<1x32xf32>
// CHECK:   %[[ROW:.*]] = vector.extract %[[BK]][0] : vector<32xf32> from vector<1x32xf32>
// CHECK:   %[[A0:.*]] = vector.extract %[[AK]][0, 0] : f32 from vector<4x1xf32>
// CHECK:   %[[A0S:.*]] = vector.broadcast %[[A0]] : f32 to vector<32xf32>
// CHECK:   %[[C0:.*]] = vector.extract %[[ACC]][0] : vector<32xf32> from vector<4x32xf32>
// CHECK:   math.fma %[[A0S]], %[[ROW]], %[[C0]] : vector<32xf32>
// CHECK-COUNT-3: math.fma %{{.*}}, %[[ROW]], %{{.*}} : vector<32xf32>
// CHECK-NOT: vector.fma
// CHECK:   scf.yield %{{.*}} : vector<4x32xf32>
// CHECK: }
// CHECK: %[[R:.*]] = vector.transfer_write %[[SUM]], %[[C]]
// CHECK: return %[[R]]
func.func @tile(%a: tensor<4x16xf32>, %b: tensor<16x32xf32>, %c: tensor<4x32xf32>) -> tensor<4x32xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %r = scf.for %k = %c0 to %c16 step %c1 iter_args(%acc = %c) -> (tensor<4x32xf32>) {
    %ak = tensor.extract_slice %a[0, %k] [4, 1] [1, 1] : tensor<4x16xf32> to tensor<4x1xf32>
    %bk = tensor.extract_slice %b[%k, 0] [1, 32] [1, 1] : tensor<16x32xf32> to tensor<1x32xf32>
    %step = linalg.generic {indexing_maps = [#lhs, #rhs, #out], iterator_types = ["parallel", "parallel", "reduction"], tessel.vectorize}
        ins(%ak, %bk : tensor<4x1xf32>, tensor<1x32xf32>) outs(%acc : tensor<4x32xf32>) {
    ^bb0(%x: f32, %y: f32, %s: f32):
      %p = arith.mulf %x, %y : f32
      %t = arith.addf %s, %p : f32
      linalg.yield %t : f32
    } -> tensor<4x32xf32>
    scf.yield %step : tensor<4x32xf32>
  } {tessel.reduction_loop}
  return %r : tensor<4x32xf32>
}

// -----

// Unmarked generics are not vectorized.
#lhs = affine_map<(i, j, k) -> (i, k)>
#rhs = affine_map<(i, j, k) -> (k, j)>
#out = affine_map<(i, j, k) -> (i, j)>
// CHECK-LABEL: func.func @unmarked(
// CHECK: linalg.generic
// CHECK-NOT: vector.
func.func @unmarked(%a: tensor<4x16xf32>, %b: tensor<16x32xf32>, %c: tensor<4x32xf32>) -> tensor<4x32xf32> {
  %r = linalg.generic {indexing_maps = [#lhs, #rhs, #out], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : tensor<4x16xf32>, tensor<16x32xf32>) outs(%c : tensor<4x32xf32>) {
  ^bb0(%x: f32, %y: f32, %s: f32):
    %p = arith.mulf %x, %y : f32
    %t = arith.addf %s, %p : f32
    linalg.yield %t : f32
  } -> tensor<4x32xf32>
  return %r : tensor<4x32xf32>
}
