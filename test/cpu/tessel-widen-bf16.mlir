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
