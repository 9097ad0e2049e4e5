// Every element type of Pallas kernels end to end: x * y + x on partial
// 3x4 blocks of 7x9 arrays, plus i1 masks and bf16 dots accumulating in f32,
// compiled and checked against the reference interpreter.
// RUN: tessel run %s --entry f64 --arg 0=random:1 --arg 1=random:2 --check | FileCheck %s --check-prefix=CHECKED
// RUN: tessel run %s --entry f32 --arg 0=random:1 --arg 1=random:2 --check | FileCheck %s --check-prefix=CHECKED
// RUN: tessel run %s --entry f16 --arg 0=random:1 --arg 1=random:2 --check | FileCheck %s --check-prefix=CHECKED
// RUN: tessel run %s --entry bf16 --arg 0=random:1 --arg 1=random:2 --check | FileCheck %s --check-prefix=CHECKED
// RUN: tessel run %s --entry i8 --arg 0=random:1 --arg 1=random:2 --check | FileCheck %s --check-prefix=CHECKED
// RUN: tessel run %s --entry i16 --arg 0=random:1 --arg 1=random:2 --check | FileCheck %s --check-prefix=CHECKED
// RUN: tessel run %s --entry i32 --arg 0=random:1 --arg 1=random:2 --check | FileCheck %s --check-prefix=CHECKED
// RUN: tessel run %s --entry i64 --arg 0=random:1 --arg 1=random:2 --check | FileCheck %s --check-prefix=CHECKED
// RUN: tessel run %s --entry masks --arg 0=random:3 --arg 1=random:4 --check | FileCheck %s --check-prefix=CHECKED
// RUN: tessel run %s --entry bf16_dot --arg 0=random:5 --arg 1=random:6 --check | FileCheck %s --check-prefix=CHECKED
// RUN: tessel run %s --entry i8_dot --arg 0=random:7 --arg 1=random:8 --check | FileCheck %s --check-prefix=CHECKED
// RUN: tessel run %s --entry f16_dot --arg 0=random:9 --arg 1=random:10 --arg 2=random:11 --check | FileCheck %s --check-prefix=CHECKED
// i1 to the signed ops is -1 for true: a signed max of booleans is their
// `and`, extsi makes true -1 (the interpreter once read true as +1 there).
// RUN: tessel run %s --entry signed_i1 --arg 0=random:3 --check | FileCheck %s --check-prefix=SIGNED-I1
// CHECKED: check: compiled code matches the interpreter
// SIGNED-I1: arg1: memref<6xi32>
// SIGNED-I1-NEXT: [ 0  0  0  0  0 -1]
// SIGNED-I1-NEXT: arg2: memref<6x2xi32>
// SIGNED-I1-NEXT: {{\[\[}} 0  0]
// SIGNED-I1-NEXT: [ 0  0]
// SIGNED-I1-NEXT: [ 0  0]
// SIGNED-I1-NEXT: [ 0 -1]
// SIGNED-I1-NEXT: [ 0 -1]
// SIGNED-I1-NEXT: [-1 -1]]
// SIGNED-I1: check: compiled code matches the interpreter

func.func @k_f64(%x: memref<3x4xf64>, %y: memref<3x4xf64>, %o: memref<3x4xf64>) {
  %a = block.load %x : memref<3x4xf64> -> tensor<3x4xf64>
  %b = block.load %y : memref<3x4xf64> -> tensor<3x4xf64>
  %p = arith.mulf %a, %b : tensor<3x4xf64>
  %s = arith.addf %p, %a : tensor<3x4xf64>
  block.store %s, %o : tensor<3x4xf64>, memref<3x4xf64>
  return
}
func.func @f64(%x: memref<7x9xf64>, %y: memref<7x9xf64>, %o: memref<7x9xf64>) {
  grid.call @k_f64 grid [3, 3] ins(%x, %y : memref<7x9xf64>, memref<7x9xf64>) outs(%o : memref<7x9xf64>)
      in_specs [#grid.block<[3, 4], (i, j) -> (i, j)>, #grid.block<[3, 4], (i, j) -> (i, j)>]
      out_specs [#grid.block<[3, 4], (i, j) -> (i, j)>]
  return
}

func.func @k_f32(%x: memref<3x4xf32>, %y: memref<3x4xf32>, %o: memref<3x4xf32>) {
  %a = block.load %x : memref<3x4xf32> -> tensor<3x4xf32>
  %b = block.load %y : memref<3x4xf32> -> tensor<3x4xf32>
  %p = arith.mulf %a, %b : tensor<3x4xf32>
  %s = arith.addf %p, %a : tensor<3x4xf32>
  block.store %s, %o : tensor<3x4xf32>, memref<3x4xf32>
  return
}
func.func @f32(%x: memref<7x9xf32>, %y: memref<7x9xf32>, %o: memref<7x9xf32>) {
  grid.call @k_f32 grid [3, 3] ins(%x, %y : memref<7x9xf32>, memref<7x9xf32>) outs(%o : memref<7x9xf32>)
      in_specs [#grid.block<[3, 4], (i, j) -> (i, j)>, #grid.block<[3, 4], (i, j) -> (i, j)>]
      out_specs [#grid.block<[3, 4], (i, j) -> (i, j)>]
  return
}

func.func @k_f16(%x: memref<3x4xf16>, %y: memref<3x4xf16>, %o: memref<3x4xf16>) {
  %a = block.load %x : memref<3x4xf16> -> tensor<3x4xf16>
  %b = block.load %y : memref<3x4xf16> -> tensor<3x4xf16>
  %p = arith.mulf %a, %b : tensor<3x4xf16>
  %s = arith.addf %p, %a : tensor<3x4xf16>
  block.store %s, %o : tensor<3x4xf16>, memref<3x4xf16>
  return
}
func.func @f16(%x: memref<7x9xf16>, %y: memref<7x9xf16>, %o: memref<7x9xf16>) {
  grid.call @k_f16 grid [3, 3] ins(%x, %y : memref<7x9xf16>, memref<7x9xf16>) outs(%o : memref<7x9xf16>)
      in_specs [#grid.block<[3, 4], (i, j) -> (i, j)>, #grid.block<[3, 4], (i, j) -> (i, j)>]
      out_specs [#grid.block<[3, 4], (i, j) -> (i, j)>]
  return
}

func.func @k_bf16(%x: memref<3x4xbf16>, %y: memref<3x4xbf16>, %o: memref<3x4xbf16>) {
  %a = block.load %x : memref<3x4xbf16> -> tensor<3x4xbf16>
  %b = block.load %y : memref<3x4xbf16> -> tensor<3x4xbf16>
  %p = arith.mulf %a, %b : tensor<3x4xbf16>
  %s = arith.addf %p, %a : tensor<3x4xbf16>
  block.store %s, %o : tensor<3x4xbf16>, memref<3x4xbf16>
  return
}
func.func @bf16(%x: memref<7x9xbf16>, %y: memref<7x9xbf16>, %o: memref<7x9xbf16>) {
  grid.call @k_bf16 grid [3, 3] ins(%x, %y : memref<7x9xbf16>, memref<7x9xbf16>) outs(%o : memref<7x9xbf16>)
      in_specs [#grid.block<[3, 4], (i, j) -> (i, j)>, #grid.block<[3, 4], (i, j) -> (i, j)>]
      out_specs [#grid.block<[3, 4], (i, j) -> (i, j)>]
  return
}

func.func @k_i8(%x: memref<3x4xi8>, %y: memref<3x4xi8>, %o: memref<3x4xi8>) {
  %a = block.load %x : memref<3x4xi8> -> tensor<3x4xi8>
  %b = block.load %y : memref<3x4xi8> -> tensor<3x4xi8>
  %p = arith.muli %a, %b : tensor<3x4xi8>
  %s = arith.addi %p, %a : tensor<3x4xi8>
  block.store %s, %o : tensor<3x4xi8>, memref<3x4xi8>
  return
}
func.func @i8(%x: memref<7x9xi8>, %y: memref<7x9xi8>, %o: memref<7x9xi8>) {
  grid.call @k_i8 grid [3, 3] ins(%x, %y : memref<7x9xi8>, memref<7x9xi8>) outs(%o : memref<7x9xi8>)
      in_specs [#grid.block<[3, 4], (i, j) -> (i, j)>, #grid.block<[3, 4], (i, j) -> (i, j)>]
      out_specs [#grid.block<[3, 4], (i, j) -> (i, j)>]
  return
}

func.func @k_i16(%x: memref<3x4xi16>, %y: memref<3x4xi16>, %o: memref<3x4xi16>) {
  %a = block.load %x : memref<3x4xi16> -> tensor<3x4xi16>
  %b = block.load %y : memref<3x4xi16> -> tensor<3x4xi16>
  %p = arith.muli %a, %b : tensor<3x4xi16>
  %s = arith.addi %p, %a : tensor<3x4xi16>
  block.store %s, %o : tensor<3x4xi16>, memref<3x4xi16>
  return
}
func.func @i16(%x: memref<7x9xi16>, %y: memref<7x9xi16>, %o: memref<7x9xi16>) {
  grid.call @k_i16 grid [3, 3] ins(%x, %y : memref<7x9xi16>, memref<7x9xi16>) outs(%o : memref<7x9xi16>)
      in_specs [#grid.block<[3, 4], (i, j) -> (i, j)>, #grid.block<[3, 4], (i, j) -> (i, j)>]
      out_specs [#grid.block<[3, 4], (i, j) -> (i, j)>]
  return
}

func.func @k_i32(%x: memref<3x4xi32>, %y: memref<3x4xi32>, %o: memref<3x4xi32>) {
  %a = block.load %x : memref<3x4xi32> -> tensor<3x4xi32>
  %b = block.load %y : memref<3x4xi32> -> tensor<3x4xi32>
  %p = arith.muli %a, %b : tensor<3x4xi32>
  %s = arith.addi %p, %a : tensor<3x4xi32>
  block.store %s, %o : tensor<3x4xi32>, memref<3x4xi32>
  return
}
func.func @i32(%x: memref<7x9xi32>, %y: memref<7x9xi32>, %o: memref<7x9xi32>) {
  grid.call @k_i32 grid [3, 3] ins(%x, %y : memref<7x9xi32>, memref<7x9xi32>) outs(%o : memref<7x9xi32>)
      in_specs [#grid.block<[3, 4], (i, j) -> (i, j)>, #grid.block<[3, 4], (i, j) -> (i, j)>]
      out_specs [#grid.block<[3, 4], (i, j) -> (i, j)>]
  return
}

func.func @k_i64(%x: memref<3x4xi64>, %y: memref<3x4xi64>, %o: memref<3x4xi64>) {
  %a = block.load %x : memref<3x4xi64> -> tensor<3x4xi64>
  %b = block.load %y : memref<3x4xi64> -> tensor<3x4xi64>
  %p = arith.muli %a, %b : tensor<3x4xi64>
  %s = arith.addi %p, %a : tensor<3x4xi64>
  block.store %s, %o : tensor<3x4xi64>, memref<3x4xi64>
  return
}
func.func @i64(%x: memref<7x9xi64>, %y: memref<7x9xi64>, %o: memref<7x9xi64>) {
  grid.call @k_i64 grid [3, 3] ins(%x, %y : memref<7x9xi64>, memref<7x9xi64>) outs(%o : memref<7x9xi64>)
      in_specs [#grid.block<[3, 4], (i, j) -> (i, j)>, #grid.block<[3, 4], (i, j) -> (i, j)>]
      out_specs [#grid.block<[3, 4], (i, j) -> (i, j)>]
  return
}

// i1 masks as data: o = select(m, x, -x).
func.func @k_masks(%m: memref<3x4xi1>, %x: memref<3x4xf32>, %o: memref<3x4xf32>) {
  %mm = block.load %m : memref<3x4xi1> -> tensor<3x4xi1>
  %a = block.load %x : memref<3x4xf32> -> tensor<3x4xf32>
  %n = arith.negf %a : tensor<3x4xf32>
  %s = arith.select %mm, %a, %n : tensor<3x4xi1>, tensor<3x4xf32>
  block.store %s, %o : tensor<3x4xf32>, memref<3x4xf32>
  return
}
func.func @masks(%m: memref<7x9xi1>, %x: memref<7x9xf32>, %o: memref<7x9xf32>) {
  grid.call @k_masks grid [3, 3] ins(%m, %x : memref<7x9xi1>, memref<7x9xf32>) outs(%o : memref<7x9xf32>)
      in_specs [#grid.block<[3, 4], (i, j) -> (i, j)>, #grid.block<[3, 4], (i, j) -> (i, j)>]
      out_specs [#grid.block<[3, 4], (i, j) -> (i, j)>]
  return
}

// bf16 operands, f32 accumulation (and i8 into i32).
func.func @k_bf16_dot(%x: memref<4x8xbf16>, %y: memref<8x4xbf16>, %o: memref<4x4xf32>) {
  %a = block.load %x : memref<4x8xbf16> -> tensor<4x8xbf16>
  %b = block.load %y : memref<8x4xbf16> -> tensor<8x4xbf16>
  %c = block.dot %a, %b : tensor<4x8xbf16>, tensor<8x4xbf16> -> tensor<4x4xf32>
  block.store %c, %o : tensor<4x4xf32>, memref<4x4xf32>
  return
}
func.func @bf16_dot(%x: memref<8x8xbf16>, %y: memref<8x8xbf16>, %o: memref<8x8xf32>) {
  grid.call @k_bf16_dot grid [2, 2] ins(%x, %y : memref<8x8xbf16>, memref<8x8xbf16>) outs(%o : memref<8x8xf32>)
      in_specs [#grid.block<[4, 8], (i, j) -> (i, 0)>, #grid.block<[8, 4], (i, j) -> (0, j)>]
      out_specs [#grid.block<[4, 4], (i, j) -> (i, j)>]
  return
}
func.func @k_i8_dot(%x: memref<4x8xi8>, %y: memref<8x4xi8>, %o: memref<4x4xi32>) {
  %a = block.load %x : memref<4x8xi8> -> tensor<4x8xi8>
  %b = block.load %y : memref<8x4xi8> -> tensor<8x4xi8>
  %c = block.dot %a, %b : tensor<4x8xi8>, tensor<8x4xi8> -> tensor<4x4xi32>
  block.store %c, %o : tensor<4x4xi32>, memref<4x4xi32>
  return
}
func.func @i8_dot(%x: memref<8x8xi8>, %y: memref<8x8xi8>, %o: memref<8x8xi32>) {
  grid.call @k_i8_dot grid [2, 2] ins(%x, %y : memref<8x8xi8>, memref<8x8xi8>) outs(%o : memref<8x8xi32>)
      in_specs [#grid.block<[4, 8], (i, j) -> (i, 0)>, #grid.block<[8, 4], (i, j) -> (0, j)>]
      out_specs [#grid.block<[4, 4], (i, j) -> (i, j)>]
  return
}

// f16 operands accumulated into an f32 `acc`.
func.func @k_f16_dot(%x: memref<4x8xf16>, %y: memref<8x4xf16>, %a: memref<4x4xf32>, %o: memref<4x4xf32>) {
  %xa = block.load %x : memref<4x8xf16> -> tensor<4x8xf16>
  %yb = block.load %y : memref<8x4xf16> -> tensor<8x4xf16>
  %acc = block.load %a : memref<4x4xf32> -> tensor<4x4xf32>
  %c = block.dot %xa, %yb acc %acc : tensor<4x8xf16>, tensor<8x4xf16>, tensor<4x4xf32> -> tensor<4x4xf32>
  block.store %c, %o : tensor<4x4xf32>, memref<4x4xf32>
  return
}
func.func @f16_dot(%x: memref<8x8xf16>, %y: memref<8x8xf16>, %a: memref<8x8xf32>, %o: memref<8x8xf32>) {
  grid.call @k_f16_dot grid [2, 2] ins(%x, %y, %a : memref<8x8xf16>, memref<8x8xf16>, memref<8x8xf32>) outs(%o : memref<8x8xf32>)
      in_specs [#grid.block<[4, 8], (i, j) -> (i, 0)>, #grid.block<[8, 4], (i, j) -> (0, j)>, #grid.block<[4, 4], (i, j) -> (i, j)>]
      out_specs [#grid.block<[4, 4], (i, j) -> (i, j)>]
  return
}

func.func @k_signed_i1(%x: memref<6x2xf32>, %o: memref<6xi32>, %e: memref<6x2xi32>) {
  %a = block.load %x : memref<6x2xf32> -> tensor<6x2xf32>
  %z = arith.constant dense<0.0> : tensor<6x2xf32>
  %pos = arith.cmpf ogt, %a, %z : tensor<6x2xf32>
  %m = block.reduce max %pos dims [1] : tensor<6x2xi1> -> tensor<6xi1>
  %w = arith.extsi %m : tensor<6xi1> to tensor<6xi32>
  block.store %w, %o : tensor<6xi32>, memref<6xi32>
  %ew = arith.extsi %pos : tensor<6x2xi1> to tensor<6x2xi32>
  block.store %ew, %e : tensor<6x2xi32>, memref<6x2xi32>
  return
}
func.func @signed_i1(%x: memref<6x2xf32>, %o: memref<6xi32>, %e: memref<6x2xi32>) {
  grid.call @k_signed_i1 grid [] ins(%x : memref<6x2xf32>) outs(%o, %e : memref<6xi32>, memref<6x2xi32>)
      in_specs [#grid.block<full>] out_specs [#grid.block<full>, #grid.block<full>]
  return
}
