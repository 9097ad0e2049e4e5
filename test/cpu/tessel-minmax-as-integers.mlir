// tessel-minmax-as-integers: a linalg.reduce whose combiner is
// arith.maximumf/minimumf of f32/f64 becomes one reduction of two integer
// accumulators (maxsi/minsi of order-preserving keys, maxui of magnitudes
// to see NaNs), started from the init's key and magnitude, and a decode:
// the key flipped back, or NaN. Other reductions are left alone.
// RUN: tessel-opt %s --tessel-minmax-as-integers | FileCheck %s
// Results with NaN, infinities, signed zeros and denormals:
// test/e2e/float-extremes.mlir.

// CHECK-LABEL: func.func @row_max(
// CHECK-SAME: %[[X:.*]]: tensor<8x16xf32>
// CHECK-DAG: %[[SHIFT:.*]] = arith.constant 31 : i32
// CHECK-DAG: %[[MAGNITUDE:.*]] = arith.constant 2147483647 : i32
// CHECK-DAG: %[[INF:.*]] = arith.constant 2139095040 : i32
// CHECK-DAG: %[[NAN_BITS:.*]] = arith.constant 2143289344 : i32
// CHECK: %[[NAN:.*]] = arith.bitcast %[[NAN_BITS]] : i32 to f32
// The init's keys and magnitudes.
// CHECK: %[[START:.*]]:2 = linalg.generic {{.*}} iterator_types = ["parallel"]} ins(%[[INIT:.*]] : tensor<8xf32>)
// CHECK: linalg.yield
// One pass over the input: keys, magnitudes, integer max of both.
// CHECK: %[[ACC:.*]]:2 = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[X]] : tensor<8x16xf32>) outs(%[[START]]#0, %[[START]]#1 : tensor<8xi32>, tensor<8xi32>)
// CHECK: ^bb0(%[[V:.*]]: f32, %[[K_ACC:.*]]: i32, %[[M_ACC:.*]]: i32):
// CHECK: %[[BITS:.*]] = arith.bitcast %[[V]] : f32 to i32
// CHECK: %[[SIGN:.*]] = arith.shrsi %[[BITS]], %[[SHIFT]] : i32
// CHECK: %[[FLIP:.*]] = arith.andi %[[SIGN]], %[[MAGNITUDE]] : i32
// CHECK: %[[KEY:.*]] = arith.xori %[[BITS]], %[[FLIP]] : i32
// CHECK: %[[MAG:.*]] = arith.andi %[[BITS]], %[[MAGNITUDE]] : i32
// CHECK: %[[K:.*]] = arith.maxsi %[[KEY]], %[[K_ACC]] : i32
// CHECK: %[[M:.*]] = arith.maxui %[[MAG]], %[[M_ACC]] : i32
// CHECK: linalg.yield %[[K]], %[[M]] : i32, i32
// Decoded: the key flipped back, NaN if a magnitude exceeded +inf's.
// CHECK: %[[R:.*]] = linalg.generic {{.*}} ins(%[[ACC]]#0, %[[ACC]]#1 : tensor<8xi32>, tensor<8xi32>) outs(%[[INIT]] : tensor<8xf32>)
// CHECK: ^bb0(%[[KR:.*]]: i32, %[[MR:.*]]: i32, %{{.*}}: f32):
// CHECK: arith.xori %[[KR]]
// CHECK: %[[VALUE:.*]] = arith.bitcast %{{.*}} : i32 to f32
// CHECK: %[[IS_NAN:.*]] = arith.cmpi ugt, %[[MR]], %[[INF]] : i32
// CHECK: arith.select %[[IS_NAN]], %[[NAN]], %[[VALUE]] : f32
// CHECK-NOT: arith.maximumf
// CHECK: return %[[R]]
func.func @row_max(%x: tensor<8x16xf32>) -> tensor<8xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<8xf32>
  %init = linalg.fill ins(%ninf : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %r = linalg.reduce ins(%x : tensor<8x16xf32>) outs(%init : tensor<8xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %m = arith.maximumf %in, %acc fastmath<reassoc> : f32
      linalg.yield %m : f32
    }
  return %r : tensor<8xf32>
}

// f64 (i64 keys), a minimum (minsi), the accumulator first in the
// combiner, a whole-tensor reduction to a 0-d result.
// CHECK-LABEL: func.func @all_min(
// CHECK-DAG: arith.constant 63 : i64
// CHECK-DAG: arith.constant 9223372036854775807 : i64
// CHECK-DAG: arith.constant 9218868437227405312 : i64
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction"]} ins(%{{.*}} : tensor<16xf64>) outs(%{{.*}}, %{{.*}} : tensor<i64>, tensor<i64>)
// CHECK: arith.minsi
// CHECK: arith.maxui
// CHECK-NOT: arith.minimumf
// CHECK: return
func.func @all_min(%y: tensor<16xf64>, %init: tensor<f64>) -> tensor<f64> {
  %r = linalg.reduce ins(%y : tensor<16xf64>) outs(%init : tensor<f64>) dimensions = [0]
    (%in: f64, %acc: f64) {
      %m = arith.minimumf %acc, %in : f64
      linalg.yield %m : f64
    }
  return %r : tensor<f64>
}

// Left alone: maxnumf (NaN-ignoring), f16, a body doing more than the
// combine, a combiner not of the element and the accumulator.
// CHECK-LABEL: func.func @left_alone(
// CHECK-NOT: arith.maxsi
// CHECK: arith.maxnumf
// CHECK: arith.maximumf {{.*}} : f16
// CHECK: arith.mulf
// CHECK-NEXT: arith.maximumf
// CHECK: arith.maximumf %[[IN:.*]], %[[IN]] : f32
// CHECK-NOT: arith.maxsi
// CHECK: return
func.func @left_alone(%x: tensor<16xf32>, %h: tensor<16xf16>, %i: tensor<f32>, %ih: tensor<f16>)
    -> (tensor<f32>, tensor<f16>, tensor<f32>, tensor<f32>) {
  %a = linalg.reduce ins(%x : tensor<16xf32>) outs(%i : tensor<f32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %m = arith.maxnumf %in, %acc : f32
      linalg.yield %m : f32
    }
  %b = linalg.reduce ins(%h : tensor<16xf16>) outs(%ih : tensor<f16>) dimensions = [0]
    (%in: f16, %acc: f16) {
      %m = arith.maximumf %in, %acc : f16
      linalg.yield %m : f16
    }
  %c = linalg.reduce ins(%x : tensor<16xf32>) outs(%i : tensor<f32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %twice = arith.mulf %in, %in : f32
      %m = arith.maximumf %twice, %acc : f32
      linalg.yield %m : f32
    }
  %d = linalg.reduce ins(%x : tensor<16xf32>) outs(%i : tensor<f32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %m = arith.maximumf %in, %in : f32
      linalg.yield %m : f32
    }
  return %a, %b, %c, %d : tensor<f32>, tensor<f16>, tensor<f32>, tensor<f32>
}
