// tessel-widen-bf16: bf16 -> f32 widening as exact integer bit operations
// (scalars and vectors); other extensions are left alone.
// RUN: tessel-opt %s --tessel-widen-bf16 | FileCheck %s
// RUN: tessel run %s --entry widen --arg 0=random:1 --check | FileCheck %s --check-prefix=CHECKED

// CHECK-LABEL: func.func @scalar(
// CHECK-SAME: %[[X:.*]]: bf16
// CHECK: %[[BITS:.*]] = arith.bitcast %[[X]] : bf16 to i16
// CHECK: %[[WIDE:.*]] = arith.extui %[[BITS]] : i16 to i32
// CHECK: %[[SIXTEEN:.*]] = arith.constant 16 : i32
// CHECK: %[[HIGH:.*]] = arith.shli %[[WIDE]], %[[SIXTEEN]] : i32
// CHECK: %[[F:.*]] = arith.bitcast %[[HIGH]] : i32 to f32
// CHECK: return %[[F]]
func.func @scalar(%x: bf16) -> f32 {
  %y = arith.extf %x : bf16 to f32
  return %y : f32
}

// CHECK-LABEL: func.func @single_lane(
// CHECK: arith.bitcast %{{.*}} : vector<1xbf16> to vector<1xi16>
// CHECK: arith.constant dense<16> : vector<1xi32>
// CHECK: arith.bitcast %{{.*}} : vector<1xi32> to vector<1xf32>
func.func @single_lane(%x: vector<1xbf16>) -> vector<1xf32> {
  %y = arith.extf %x : vector<1xbf16> to vector<1xf32>
  return %y : vector<1xf32>
}

// CHECK-LABEL: func.func @others(
// CHECK: arith.extf %{{.*}} : f16 to f32
// CHECK: arith.extf %{{.*}} : bf16 to f64
func.func @others(%x: f16, %y: bf16) -> (f32, f64) {
  %a = arith.extf %x : f16 to f32
  %b = arith.extf %y : bf16 to f64
  return %a, %b : f32, f64
}

// End to end:
// compiled widening equals the interpreter's.
// CHECKED: check: compiled code matches the interpreter
func.func @widen_kernel(%x: memref<7xbf16>, %y: memref<7xf32>) {
  %v = block.load %x : memref<7xbf16> -> tensor<7xbf16>
  %w = arith.extf %v : tensor<7xbf16> to tensor<7xf32>
  block.store %w, %y : tensor<7xf32>, memref<7xf32>
  return
}
func.func @widen(%x: memref<7xbf16>, %y: memref<7xf32>) {
  grid.call @widen_kernel grid [1] ins(%x : memref<7xbf16>) outs(%y : memref<7xf32>)
      in_specs [#grid.block<full>] out_specs [#grid.block<full>]
  return
}

// Narrowing f32 -> bf16: round to nearest even on the bits, NaNs quieted
// (subnormals kept, unlike x86's vcvtneps2bf16).
// CHECK-LABEL: func.func @narrow(
// CHECK-SAME: %[[X:.*]]: vector<8xf32>
// CHECK: %[[BITS:.*]] = arith.bitcast %[[X]] : vector<8xf32> to vector<8xi32>
// CHECK: arith.constant dense<32767> : vector<8xi32>
// CHECK: %[[UPPER:.*]] = arith.shrui %[[BITS]]
// CHECK: %[[ODD:.*]] = arith.andi %[[UPPER]]
// CHECK: %[[BIAS:.*]] = arith.addi %{{.*}}, %[[ODD]]
// CHECK: %[[BIASED:.*]] = arith.addi %[[BITS]], %[[BIAS]]
// CHECK: %[[ROUNDED:.*]] = arith.shrui %[[BIASED]]
// CHECK: %[[NAN:.*]] = arith.cmpf uno, %[[X]], %[[X]] : vector<8xf32>
// CHECK: %[[CHOSEN:.*]] = arith.select %[[NAN]], %{{.*}}, %[[ROUNDED]] : vector<8xi1>, vector<8xi32>
// CHECK: %[[SHORT:.*]] = arith.trunci %[[CHOSEN]] : vector<8xi32> to vector<8xi16>
// CHECK: arith.bitcast %[[SHORT]] : vector<8xi16> to vector<8xbf16>
// CHECK-NOT: arith.truncf
func.func @narrow(%x: vector<8xf32>) -> vector<8xbf16> {
  %y = arith.truncf %x : vector<8xf32> to vector<8xbf16>
  return %y : vector<8xbf16>
}
