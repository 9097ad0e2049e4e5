// tessel-fast-math: f32 math.exp / math.tanh (scalars and vectors) become
// polynomial approximations in arith/math ops that vectorize; other
// element types keep their libm lowering. Accuracy: test/accuracy. Code for
// 256-bit vectors (AVX2, whatever the host): 2^n as two powers of two built
// from the exponent's bits; AVX-512's form: tessel-fast-math-avx512.mlir.
// RUN: tessel-opt %s --tessel-fast-math | FileCheck %s
module attributes {tessel.vector_bits = 256 : i64} {

// CHECK-LABEL: func.func @exp_scalar(
// CHECK-SAME: %[[X:.*]]: f32
// CHECK-NOT: math.exp
// Range reduction: n = x log2 e rounded by adding 1.5 * 2^23 (one FMA),
// r = x - n ln2 in two parts.
// CHECK: %[[XL:.*]] = arith.maximumf %[[X]], %{{.*}} : f32
// CHECK: %[[XC:.*]] = arith.minimumf %[[XL]], %{{.*}} : f32
// CHECK: %[[MAGIC:.*]] = arith.constant 0x4B400000 : f32
// CHECK: %[[T:.*]] = math.fma %[[XC]], %{{.*}}, %[[MAGIC]] : f32
// CHECK: %[[N:.*]] = arith.subf %[[T]], %[[MAGIC]] : f32
// CHECK: math.fma %[[N]]
// CHECK: math.fma %[[N]]
// Scaling by 2^n in two halves, n's integer from the sum's bits (no
// fptosi, which is poison for NaN): a NaN x is NaN throughout, no select.
// CHECK-NOT: arith.fptosi
// CHECK: %[[MAGIC_BITS:.*]] = arith.constant 1262485504 : i32
// CHECK: %[[BITS:.*]] = arith.bitcast %[[T]] : f32 to i32
// CHECK: arith.subi %[[BITS]], %[[MAGIC_BITS]] : i32
// CHECK: arith.shrsi
// CHECK: arith.shli
// CHECK: arith.bitcast %{{.*}} : i32 to f32
// CHECK: %[[Y:.*]] = arith.mulf
// CHECK-NEXT: %[[R:.*]] = arith.mulf %[[Y]], %{{.*}} : f32
// CHECK-NEXT: return %[[R]]
func.func @exp_scalar(%x: f32) -> f32 {
  %r = math.exp %x : f32
  return %r : f32
}

// CHECK-LABEL: func.func @exp_vector(
// CHECK-NOT: math.exp
// CHECK: arith.constant dense<1.44269502> : vector<16xf32>
// CHECK-NOT: math.floor
// CHECK: arith.bitcast %{{.*}} : vector<16xf32> to vector<16xi32>
// CHECK: arith.bitcast %{{.*}} : vector<16xi32> to vector<16xf32>
// CHECK-NOT: arith.select
func.func @exp_vector(%x: vector<16xf32>) -> vector<16xf32> {
  %r = math.exp %x : vector<16xf32>
  return %r : vector<16xf32>
}

// CHECK-LABEL: func.func @tanh_scalar(
// CHECK-SAME: %[[X:.*]]: f32
// CHECK-NOT: math.tanh
// CHECK-NOT: math.exp
// Odd polynomial below 0.625, 1 - 2 / (e^2|x| + 1) with x's sign above.
// CHECK: %[[Z:.*]] = arith.mulf %[[X]], %[[X]] : f32
// CHECK: %[[SMALL:.*]] = math.fma %{{.*}}, %[[X]], %[[X]] : f32
// CHECK: %[[AX:.*]] = math.absf %[[X]] : f32
// CHECK: %[[FRAC:.*]] = arith.divf
// CHECK-NEXT: %[[LARGE:.*]] = arith.subf %{{.*}}, %[[FRAC]] : f32
// CHECK: %[[SIGNED:.*]] = math.copysign %[[LARGE]], %[[X]] : f32
// CHECK: %[[IS_SMALL:.*]] = arith.cmpf olt, %[[AX]], %{{.*}} : f32
// CHECK: %[[R:.*]] = arith.select %[[IS_SMALL]], %[[SMALL]], %[[SIGNED]] : f32
// CHECK: return %[[R]]
func.func @tanh_scalar(%x: f32) -> f32 {
  %r = math.tanh %x : f32
  return %r : f32
}

// CHECK-LABEL: func.func @others(
// CHECK: math.exp %{{.*}} : f64
// CHECK: math.tanh %{{.*}} : f16
// CHECK: math.rsqrt %{{.*}} : f32
func.func @others(%x: f64, %y: f16, %z: f32) -> (f64, f16, f32) {
  %a = math.exp %x : f64
  %b = math.tanh %y : f16
  %c = math.rsqrt %z : f32
  return %a, %b, %c : f64, f16, f32
}
}
