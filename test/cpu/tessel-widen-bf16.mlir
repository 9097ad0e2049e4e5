// tessel-widen-bf16: bf16 -> f32 widening as exact integer bit operations
// (scalars and vectors); other extensions are left alone. Integers
// converted to bf16 go through f32 and narrow on the bits (LLVM would call
// compiler-rt's __truncsfbf2 on hosts without AVX-512 BF16).
// RUN: tessel-opt %s --tessel-widen-bf16 | FileCheck %s
// RUN: tessel run %s --entry widen --arg 0=random:1 --check | FileCheck %s --check-prefix=CHECKED
// RUN: tessel run %s --entry from_integers --cpu x86-64-v3 --arg 0=random:2 --arg 1=random:3 --check | FileCheck %s --check-prefix=CHECKED
// RUN: env TESSEL_JIT_OBJECT=%t.v3.o tessel run %s --entry arithmetic --cpu x86-64-v3 --arg 0=random:4 --check | FileCheck %s --check-prefix=CHECKED
// RUN: llvm-readelf -s %t.v3.o | FileCheck %s --check-prefix=SYMBOLS

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

// Integers to bf16: converted to f32, then narrowed on the bits.
// CHECK-LABEL: func.func @integers(
// CHECK-SAME: %[[I:.*]]: vector<8xi32>, %[[U:.*]]: i8
// CHECK: %[[W:.*]] = arith.sitofp %[[I]] : vector<8xi32> to vector<8xf32>
// CHECK: arith.bitcast %[[W]] : vector<8xf32> to vector<8xi32>
// CHECK: arith.bitcast %{{.*}} : vector<8xi16> to vector<8xbf16>
// CHECK: %[[V:.*]] = arith.uitofp %[[U]] : i8 to f32
// CHECK: arith.bitcast %[[V]] : f32 to i32
// CHECK: arith.bitcast %{{.*}} : i16 to bf16
// CHECK-NOT: {{(sitofp|uitofp).* to .*bf16}}
func.func @integers(%i: vector<8xi32>, %u: i8) -> (vector<8xbf16>, bf16) {
  %a = arith.sitofp %i : vector<8xi32> to vector<8xbf16>
  %b = arith.uitofp %u : i8 to bf16
  return %a, %b : vector<8xbf16>, bf16
}

// End to end, on the AVX2 target whatever the host (the call LLVM would
// make does not resolve in the JIT): compiled conversions equal the
// interpreter's.
func.func @from_integers_kernel(%x: memref<37xi32>, %u: memref<37xi8>, %y: memref<3x37xbf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %e = memref.load %x[%c1] : memref<37xi32>
  %f = arith.sitofp %e : i32 to bf16
  %splat = tensor.splat %f : tensor<1x37xbf16>
  block.store %splat, %y[%c2, %c0] : tensor<1x37xbf16>, memref<3x37xbf16>
  %v = block.load %x : memref<37xi32> -> tensor<37xi32>
  %w = arith.sitofp %v : tensor<37xi32> to tensor<37xbf16>
  %s = tensor.expand_shape %w [[0, 1]] output_shape [1, 37] : tensor<37xbf16> into tensor<1x37xbf16>
  block.store %s, %y[%c0, %c0] : tensor<1x37xbf16>, memref<3x37xbf16>
  %p = block.load %u : memref<37xi8> -> tensor<37xi8>
  %q = arith.uitofp %p : tensor<37xi8> to tensor<37xbf16>
  %r = tensor.expand_shape %q [[0, 1]] output_shape [1, 37] : tensor<37xbf16> into tensor<1x37xbf16>
  block.store %r, %y[%c1, %c0] : tensor<1x37xbf16>, memref<3x37xbf16>
  return
}
func.func @from_integers(%x: memref<37xi32>, %u: memref<37xi8>, %y: memref<3x37xbf16>) {
  grid.call @from_integers_kernel grid [1] ins(%x, %u : memref<37xi32>, memref<37xi8>) outs(%y : memref<3x37xbf16>)
      in_specs [#grid.block<full>, #grid.block<full>] out_specs [#grid.block<full>]
  return
}

// bf16 arithmetic (scalar and vector) is done in f32 and rounded on the
// bits: the code object calls no compiler-rt conversion, which the JIT
// could not resolve (on CPUs without AVX-512 BF16 LLVM would call
// __truncsfbf2 after each operation).
// SYMBOLS: Symbol table
// SYMBOLS-NOT: __truncsfbf2
// SYMBOLS-NOT: __truncdfbf2
func.func @arithmetic_kernel(%x: memref<37xbf16>, %y: memref<2x37xbf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %two = arith.constant 2.0 : bf16
  %v = block.load %x : memref<37xbf16> -> tensor<37xbf16>
  %twos = tensor.splat %two : tensor<37xbf16>
  %m = arith.mulf %v, %twos : tensor<37xbf16>
  %s = arith.addf %m, %v : tensor<37xbf16>
  %row = tensor.expand_shape %s [[0, 1]] output_shape [1, 37] : tensor<37xbf16> into tensor<1x37xbf16>
  block.store %row, %y[%c0, %c0] : tensor<1x37xbf16>, memref<2x37xbf16>
  %e = memref.load %x[%c3] : memref<37xbf16>
  %f = arith.mulf %e, %two : bf16
  %g = arith.subf %f, %e : bf16
  %splat = tensor.splat %g : tensor<1x37xbf16>
  block.store %splat, %y[%c1, %c0] : tensor<1x37xbf16>, memref<2x37xbf16>
  return
}
func.func @arithmetic(%x: memref<37xbf16>, %y: memref<2x37xbf16>) {
  grid.call @arithmetic_kernel grid [1] ins(%x : memref<37xbf16>) outs(%y : memref<2x37xbf16>)
      in_specs [#grid.block<full>] out_specs [#grid.block<full>]
  return
}
