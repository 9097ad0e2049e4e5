// tessel-total-division: integer division and remainder defined for every
// operand, as XLA defines them (x / 0 = -1, x % 0 = x, INT_MIN / -1 =
// INT_MIN, INT_MIN % -1 = 0): the divisor becomes 1 where the op is
// undefined, then a zero divisor's result is selected. Running the pass
// again changes nothing.
// RUN: tessel-opt %s --tessel-total-division | FileCheck %s
// RUN: tessel-opt %s --tessel-total-division --tessel-total-division | FileCheck %s

// CHECK-LABEL: func.func @signed_tensor
// CHECK-SAME: (%[[A:.*]]: tensor<4x8xi32>, %[[B:.*]]: tensor<4x8xi32>)
// CHECK: %[[ZERO:.*]] = arith.constant dense<0> : tensor<4x8xi32>
// CHECK: %[[ONE:.*]] = arith.constant dense<1> : tensor<4x8xi32>
// CHECK: %[[ALL_ONES:.*]] = arith.constant dense<-1> : tensor<4x8xi32>
// CHECK: %[[BY_ZERO:.*]] = arith.cmpi eq, %[[B]], %[[ZERO]] : tensor<4x8xi32>
// CHECK: %[[LOWEST:.*]] = arith.constant dense<-2147483648> : tensor<4x8xi32>
// CHECK: %[[A_LOWEST:.*]] = arith.cmpi eq, %[[A]], %[[LOWEST]]
// CHECK: %[[B_MINUS_ONE:.*]] = arith.cmpi eq, %[[B]], %[[ALL_ONES]]
// CHECK: %[[OVERFLOW:.*]] = arith.andi %[[A_LOWEST]], %[[B_MINUS_ONE]] : tensor<4x8xi1>
// CHECK: %[[UNDEFINED:.*]] = arith.ori %[[BY_ZERO]], %[[OVERFLOW]] : tensor<4x8xi1>
// CHECK: %[[DIVISOR:.*]] = arith.select %[[UNDEFINED]], %[[ONE]], %[[B]] : tensor<4x8xi1>, tensor<4x8xi32>
// CHECK: %[[Q:.*]] = arith.divsi %[[A]], %[[DIVISOR]] {tessel.total} : tensor<4x8xi32>
// CHECK: %[[RESULT:.*]] = arith.select %[[BY_ZERO]], %[[ALL_ONES]], %[[Q]] : tensor<4x8xi1>, tensor<4x8xi32>
// CHECK: return %[[RESULT]]
func.func @signed_tensor(%a: tensor<4x8xi32>, %b: tensor<4x8xi32>) -> tensor<4x8xi32> {
  %q = arith.divsi %a, %b : tensor<4x8xi32>
  return %q : tensor<4x8xi32>
}

// The remainder by zero is the dividend; unsigned ops need no overflow test.
// CHECK-LABEL: func.func @unsigned_scalar_remainder
// CHECK-SAME: (%[[A:.*]]: i8, %[[B:.*]]: i8)
// CHECK: %[[BY_ZERO:.*]] = arith.cmpi eq, %[[B]], %{{.*}} : i8
// CHECK-NOT: arith.andi
// CHECK: %[[DIVISOR:.*]] = arith.select %[[BY_ZERO]], %{{.*}}, %[[B]] : i8
// CHECK: %[[R:.*]] = arith.remui %[[A]], %[[DIVISOR]] {tessel.total} : i8
// CHECK: arith.select %[[BY_ZERO]], %[[A]], %[[R]] : i8
func.func @unsigned_scalar_remainder(%a: i8, %b: i8) -> i8 {
  %r = arith.remui %a, %b : i8
  return %r : i8
}

// Vectors, and the rounding divisions.
// CHECK-LABEL: func.func @vectors
// CHECK: arith.cmpi eq, %{{.*}}, %{{.*}} : vector<16xi64>
// CHECK: arith.select %{{.*}}, %{{.*}}, %{{.*}} : vector<16xi1>, vector<16xi64>
// CHECK: arith.floordivsi %{{.*}}, %{{.*}} {tessel.total} : vector<16xi64>
// CHECK: arith.ceildivsi %{{.*}}, %{{.*}} {tessel.total} : vector<16xi64>
func.func @vectors(%a: vector<16xi64>, %b: vector<16xi64>) -> (vector<16xi64>, vector<16xi64>) {
  %f = arith.floordivsi %a, %b : vector<16xi64>
  %c = arith.ceildivsi %a, %b : vector<16xi64>
  return %f, %c : vector<16xi64>, vector<16xi64>
}

// Left alone: divisions by a constant that is neither 0 nor -1 (always
// defined; a splat counts), `index` arithmetic (addresses).
// CHECK-LABEL: func.func @always_defined
// CHECK-NOT: arith.select
// CHECK: arith.divsi %{{.*}}, %{{.*}} : i32
// CHECK: arith.remsi %{{.*}}, %{{.*}} : tensor<8xi32>
// CHECK: arith.divui %{{.*}}, %{{.*}} : index
// CHECK-NOT: arith.select
func.func @always_defined(%a: i32, %t: tensor<8xi32>, %i: index, %j: index) -> (i32, tensor<8xi32>, index) {
  %seven = arith.constant 7 : i32
  %q = arith.divsi %a, %seven : i32
  %threes = arith.constant dense<3> : tensor<8xi32>
  %r = arith.remsi %t, %threes : tensor<8xi32>
  %k = arith.divui %i, %j : index
  return %q, %r, %k : i32, tensor<8xi32>, index
}

// A constant -1 or 0 divisor is guarded like any other.
// CHECK-LABEL: func.func @by_minus_one
// CHECK: arith.select
// CHECK: arith.divsi %{{.*}}, %{{.*}} {tessel.total} : i32
func.func @by_minus_one(%a: i32) -> i32 {
  %minus_one = arith.constant -1 : i32
  %q = arith.divsi %a, %minus_one : i32
  return %q : i32
}
