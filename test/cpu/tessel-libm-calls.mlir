// tessel-libm-calls: math.expm1/log1p/erf/erfc/cbrt on f32 and f64 become calls
// of the C library's functions (declared once), vectors lane by lane,
// f16/bf16 through f32; other math ops are left alone.
// Accuracy: test/accuracy.
// RUN: tessel-opt %s --tessel-libm-calls | FileCheck %s

// CHECK-DAG: func.func private @expm1f(f32) -> f32
// CHECK-DAG: func.func private @log1p(f64) -> f64
// CHECK-DAG: func.func private @erff(f32) -> f32
// CHECK-DAG: func.func private @cbrtf(f32) -> f32
// CHECK-DAG: func.func private @erfcf(f32) -> f32
// CHECK-DAG: func.func private @erfc(f64) -> f64

// CHECK-LABEL: func.func @scalars(
// CHECK-SAME: %[[X:.*]]: f32, %[[Y:.*]]: f64
// CHECK: %[[A:.*]] = call @expm1f(%[[X]]) : (f32) -> f32
// CHECK: %[[B:.*]] = call @expm1f(%[[A]]) : (f32) -> f32
// CHECK: %[[C:.*]] = call @log1p(%[[Y]]) : (f64) -> f64
// CHECK: %[[D:.*]] = call @erff(%[[B]]) : (f32) -> f32
// CHECK: %[[E:.*]] = call @cbrtf(%[[D]]) : (f32) -> f32
// CHECK: math.exp %[[E]] : f32
// CHECK-NOT: math.expm1
func.func @scalars(%x: f32, %y: f64) -> (f32, f64) {
  %a = math.expm1 %x : f32
  %b = math.expm1 %a : f32
  %c = math.log1p %y : f64
  %d = math.erf %b : f32
  %e = math.cbrt %d : f32
  %f = math.exp %e : f32
  return %f, %c : f32, f64
}

// CHECK-LABEL: func.func @vector(
// CHECK-SAME: %[[V:.*]]: vector<2xf32>
// CHECK: %[[L0:.*]] = vector.extract %[[V]][0] : f32 from vector<2xf32>
// CHECK: %[[R0:.*]] = call @log1pf(%[[L0]])
// CHECK: %[[W0:.*]] = vector.insert %[[R0]], %{{.*}} [0] : f32 into vector<2xf32>
// CHECK: %[[L1:.*]] = vector.extract %[[V]][1] : f32 from vector<2xf32>
// CHECK: %[[R1:.*]] = call @log1pf(%[[L1]])
// CHECK: %[[W1:.*]] = vector.insert %[[R1]], %[[W0]] [1] : f32 into vector<2xf32>
// CHECK: return %[[W1]]
func.func @vector(%x: vector<2xf32>) -> vector<2xf32> {
  %r = math.log1p %x : vector<2xf32>
  return %r : vector<2xf32>
}

// f16 and bf16 are computed by the f32 function and rounded back.
// CHECK-LABEL: func.func @half(
// CHECK: %[[W:.*]] = arith.extf %{{.*}} : bf16 to f32
// CHECK: %[[C:.*]] = call @cbrtf(%[[W]]) : (f32) -> f32
// CHECK: arith.truncf %[[C]] : f32 to bf16
// CHECK: arith.extf %{{.*}} : f16 to f32
// CHECK: call @expm1f
// CHECK: arith.truncf %{{.*}} : f32 to f16
// Other math ops are left alone.
// CHECK: math.sqrt
func.func @half(%x: bf16, %y: f16) -> (bf16, f16, f32) {
  %r = math.cbrt %x : bf16
  %s = math.expm1 %y : f16
  %one = arith.constant 1.0 : f32
  %t = math.sqrt %one : f32
  return %r, %s, %t : bf16, f16, f32
}

// erfc (exact GELU's function) in every width: the C library's erfcf and
// erfc, bf16 through f32.
// CHECK-LABEL: func.func @complementary_error_function(
// CHECK-SAME: %[[X:.*]]: f32, %[[Y:.*]]: f64, %[[Z:.*]]: bf16
// CHECK: call @erfcf(%[[X]]) : (f32) -> f32
// CHECK: call @erfc(%[[Y]]) : (f64) -> f64
// CHECK: %[[ZW:.*]] = arith.extf %[[Z]] : bf16 to f32
// CHECK: %[[ZC:.*]] = call @erfcf(%[[ZW]]) : (f32) -> f32
// CHECK: arith.truncf %[[ZC]] : f32 to bf16
// CHECK-NOT: math.erfc
func.func @complementary_error_function(%x: f32, %y: f64, %z: bf16) -> (f32, f64, bf16) {
  %a = math.erfc %x : f32
  %b = math.erfc %y : f64
  %c = math.erfc %z : bf16
  return %a, %b, %c : f32, f64, bf16
}
