// tessel-saturating-shifts: a shift by the bit width or more (the amount
// read as unsigned) gives 0, or the sign for shrsi, as XLA defines it;
// arith makes it poison. Running the pass again changes nothing.
// RUN: tessel-opt %s --tessel-saturating-shifts | FileCheck %s
// RUN: tessel-opt %s --tessel-saturating-shifts --tessel-saturating-shifts | FileCheck %s

// CHECK-LABEL: func.func @left
// CHECK-SAME: (%[[A:.*]]: tensor<8xi32>, %[[B:.*]]: tensor<8xi32>)
// CHECK: %[[WIDTH:.*]] = arith.constant dense<32> : tensor<8xi32>
// CHECK: %[[TOO_FAR:.*]] = arith.cmpi uge, %[[B]], %[[WIDTH]] : tensor<8xi32>
// CHECK: %[[ZERO:.*]] = arith.constant dense<0> : tensor<8xi32>
// CHECK: %[[AMOUNT:.*]] = arith.select %[[TOO_FAR]], %[[ZERO]], %[[B]] : tensor<8xi1>, tensor<8xi32>
// CHECK: %[[SHIFTED:.*]] = arith.shli %[[A]], %[[AMOUNT]] {tessel.saturated} : tensor<8xi32>
// CHECK: %[[RESULT:.*]] = arith.select %[[TOO_FAR]], %[[ZERO]], %[[SHIFTED]] : tensor<8xi1>, tensor<8xi32>
// CHECK: return %[[RESULT]]
func.func @left(%a: tensor<8xi32>, %b: tensor<8xi32>) -> tensor<8xi32> {
  %s = arith.shli %a, %b : tensor<8xi32>
  return %s : tensor<8xi32>
}

// The arithmetic right shift saturates at width - 1 (every bit the sign).
// CHECK-LABEL: func.func @arithmetic_right
// CHECK: %[[TOO_FAR:.*]] = arith.cmpi uge, %{{.*}}, %{{.*}} : i16
// CHECK: %[[LAST:.*]] = arith.constant 15 : i16
// CHECK: %[[AMOUNT:.*]] = arith.select %[[TOO_FAR]], %[[LAST]], %{{.*}} : i16
// CHECK: %[[RESULT:.*]] = arith.shrsi %{{.*}}, %[[AMOUNT]] {tessel.saturated} : i16
// CHECK: return %[[RESULT]]
func.func @arithmetic_right(%a: i16, %b: i16) -> i16 {
  %s = arith.shrsi %a, %b : i16
  return %s : i16
}

// CHECK-LABEL: func.func @logical_right
// CHECK: arith.cmpi uge, %{{.*}}, %{{.*}} : vector<8xi64>
// CHECK: arith.shrui %{{.*}}, %{{.*}} {tessel.saturated} : vector<8xi64>
func.func @logical_right(%a: vector<8xi64>, %b: vector<8xi64>) -> vector<8xi64> {
  %s = arith.shrui %a, %b : vector<8xi64>
  return %s : vector<8xi64>
}

// Left alone: constant amounts below the width, `index` shifts. A constant
// at or past the width, or negative, is guarded.
// CHECK-LABEL: func.func @constants_and_index
// CHECK: arith.shli %{{.*}}, %{{.*}} : i32
// CHECK: arith.shrui %{{.*}}, %{{.*}} : index
// CHECK: arith.cmpi uge
// CHECK: arith.shrsi %{{.*}}, %{{.*}} {tessel.saturated} : i32
func.func @constants_and_index(%a: i32, %i: index, %j: index) -> (i32, index, i32) {
  %three = arith.constant 3 : i32
  %l = arith.shli %a, %three : i32
  %k = arith.shrui %i, %j : index
  %minus_one = arith.constant -1 : i32
  %r = arith.shrsi %a, %minus_one : i32
  return %l, %k, %r : i32, index, i32
}
