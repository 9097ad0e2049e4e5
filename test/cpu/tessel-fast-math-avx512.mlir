// tessel-fast-math for AVX-512 (x86 code with 512-bit vectors, as `tessel
// compile --cpu` records it or as the host has it): 2^n is llvm.ldexp,
// which x86 lowers to one vscalefps per vector (it rounds gradual
// underflow, overflows to inf and keeps NaN), so neither the exponent's
// integer arithmetic nor the NaN select is emitted. The exponent is made
// NaN-free first (its conversion to an integer would be poison). Accuracy
// of the host's code: test/accuracy (on AVX-512 hosts this form).
// RUN: tessel-opt %s --tessel-fast-math | FileCheck %s
// RUN: tessel compile %s --target cpu --cpu sapphirerapids --emit asm -o %t.spr.s && FileCheck %s --check-prefix=SPR --input-file=%t.spr.s
// RUN: tessel compile %s --target cpu --cpu x86-64-v3 --emit asm -o %t.v3.s && FileCheck %s --check-prefix=AVX2 --input-file=%t.v3.s
// SPR: vscalefps
// AVX2-NOT: vscalefps
// AVX2: vpslld $23
module attributes {tessel.vector_bits = 512 : i64, tessel.pmaddwd = 1 : i64} {
// CHECK-LABEL: func.func @exp_scalar(
// CHECK-SAME: %[[X:.*]]: f32
// CHECK-NOT: math.exp
// CHECK: %[[XL:.*]] = arith.maximumf %[[X]], %{{.*}} : f32
// CHECK: %[[XC:.*]] = arith.minimumf %[[XL]], %{{.*}} : f32
// CHECK: %[[N:.*]] = math.floor %{{.*}} : f32
// CHECK: %[[E:.*]] = arith.addf %{{.*}}, %{{.*}} : f32
// CHECK: %[[NN:.*]] = arith.maxnumf %[[N]], %{{.*}} : f32
// CHECK: %[[NI:.*]] = arith.fptosi %[[NN]] : f32 to i32
// CHECK: %[[R:.*]] = llvm.intr.ldexp(%[[E]], %[[NI]]) : (f32, i32) -> f32
// CHECK-NOT: arith.select
// CHECK: return %[[R]]
func.func @exp_scalar(%x: f32) -> f32 {
  %r = math.exp %x : f32
  return %r : f32
}

// 1-D vectors call the intrinsic's vector form (the LLVM dialect's ldexp
// op takes no vector exponent).
// CHECK-LABEL: func.func @exp_vector(
// CHECK-NOT: arith.shli
// CHECK: llvm.call_intrinsic "llvm.ldexp.v16f32.v16i32"(%{{.*}}, %{{.*}}) : (vector<16xf32>, vector<16xi32>) -> vector<16xf32>
// CHECK-NOT: arith.select
// CHECK: return
func.func @exp_vector(%x: vector<16xf32>) -> vector<16xf32> {
  %r = math.exp %x : vector<16xf32>
  return %r : vector<16xf32>
}

// n-D vectors are no LLVM type: the two powers of two (n by the magic
// number, no NaN select).
// CHECK-LABEL: func.func @exp_matrix(
// CHECK-NOT: ldexp
// CHECK: arith.bitcast %{{.*}} : vector<2x16xf32> to vector<2x16xi32>
// CHECK: arith.shli %{{.*}} : vector<2x16xi32>
// CHECK-NOT: arith.select
func.func @exp_matrix(%x: vector<2x16xf32>) -> vector<2x16xf32> {
  %r = math.exp %x : vector<2x16xf32>
  return %r : vector<2x16xf32>
}

// tanh's large-argument branch uses the same exp.
// CHECK-LABEL: func.func @tanh_scalar(
// CHECK: llvm.intr.ldexp
// CHECK: math.copysign
func.func @tanh_scalar(%x: f32) -> f32 {
  %r = math.tanh %x : f32
  return %r : f32
}

// A softmax-like kernel: its exp loop is vectorized by LLVM, 2^n included.
func.func @softmax_kernel(%x: memref<16x256xf32>, %y: memref<16x256xf32>) {
  %v = block.load %x : memref<16x256xf32> -> tensor<16x256xf32>
  %e = math.exp %v : tensor<16x256xf32>
  block.store %e, %y : tensor<16x256xf32>, memref<16x256xf32>
  return
}

func.func @softmax(%x: memref<64x256xf32>, %y: memref<64x256xf32>) {
  grid.call @softmax_kernel grid [4] ins(%x : memref<64x256xf32>) outs(%y : memref<64x256xf32>)
      in_specs [#grid.block<[16, 256], (i) -> (i, 0)>]
      out_specs [#grid.block<[16, 256], (i) -> (i, 0)>]
  return
}
}
