// Masks used more than once and bool arrays: every lane keeps its own bit
// on every path. (On the ROCm path, a mask written to memory a byte per
// element was read back as a bit-packed `<4 x i1>` vector: only every
// fourth lane kept its bit.) The harness also runs these lines on the
// emulated GPU against the same CHECK lines.
// RUN: tessel run %s --entry twice --arg 0=random:1 --check | FileCheck %s --check-prefix=TWICE
// RUN: tessel run %s --entry bools --arg 0=random:2 --arg 1=random:3 --arg 2=random:4 --check | FileCheck %s --check-prefix=BOOLS
// No chip's code reads a mask from memory as a vector of bits.
// RUN: tessel compile %s --target rocm --chip gfx90a --emit llvm -o %t.gfx90a.ll && FileCheck %s --check-prefix=LLVM --input-file=%t.gfx90a.ll
// RUN: tessel compile %s --target rocm --chip gfx942 --emit llvm -o %t.gfx942.ll && FileCheck %s --check-prefix=LLVM --input-file=%t.gfx942.ll
// RUN: tessel compile %s --target rocm --chip gfx1100 --emit llvm -o %t.gfx1100.ll && FileCheck %s --check-prefix=LLVM --input-file=%t.gfx1100.ll
// RUN: tessel run %s --entry wide --arg 0=random:5 --check | FileCheck %s --check-prefix=WIDE
// LLVM-NOT: load <{{[0-9]+}} x i1>

// TWICE:      arg1: memref<4xi32>
// TWICE-NEXT: [314 311 285 306]
// TWICE-NEXT: arg2: memref<4x8xi32>
// TWICE-NEXT: {{\[\[}} 5  7  4  3 -5  0  0  0]
// TWICE-NEXT:  [ 4 -4  0  7  4  0  0  0]
// TWICE-NEXT:  [-7  0 -6 -2  0  0  0  0]
// TWICE-NEXT:  [ 4  6  4 -2 -6  0  0  0]]
// TWICE: check: compiled code matches the interpreter

// BOOLS:      arg3: memref<4x8xi32>
// BOOLS-NEXT: {{\[\[}}-1 -1 -7 -1 -1 -1 -1 -1]
// BOOLS-NEXT:  [-1 -1 -5 -1 -2  2 -1 -3]
// BOOLS-NEXT:  [-1 -1  3 -1  7 -2 -1 -1]
// BOOLS-NEXT:  [-1 -7  0  1  2 -1 -1 -3]]
// BOOLS: check: compiled code matches the interpreter

// One mask (columns 0..4) for a masked load, whose sum is taken, and a
// masked store of what was loaded.
func.func @twice_kernel(%x: memref<4x8xi32>, %s: memref<4xi32>, %o: memref<4x8xi32>) {
  %col = block.iota dim 1 : tensor<4x8xi32>
  %five = arith.constant dense<5> : tensor<4x8xi32>
  %m = arith.cmpi slt, %col, %five : tensor<4x8xi32>
  %other = arith.constant 100 : i32
  %q = block.load %x mask %m other %other : memref<4x8xi32> -> tensor<4x8xi32>
  %r = block.reduce sum %q dims [1] : tensor<4x8xi32> -> tensor<4xi32>
  block.store %r, %s : tensor<4xi32>, memref<4xi32>
  block.store %q, %o mask %m : tensor<4x8xi32>, memref<4x8xi32>
  return
}
func.func @twice(%x: memref<4x8xi32>, %s: memref<4xi32>, %o: memref<4x8xi32>) {
  grid.call @twice_kernel grid [] ins(%x : memref<4x8xi32>) outs(%s, %o : memref<4xi32>, memref<4x8xi32>)
      in_specs [#grid.block<full>] out_specs [#grid.block<full>, #grid.block<full>]
  return
}

// A bool array as a mask, in two row blocks: x where it is set, y's
// values stored where it is not.
func.func @bools_kernel(%b: memref<2x8xi1>, %x: memref<2x8xi32>, %y: memref<2x8xi32>, %o: memref<2x8xi32>) {
  %m = block.load %b : memref<2x8xi1> -> tensor<2x8xi1>
  %zero = arith.constant 0 : i32
  %xs = block.load %x mask %m other %zero : memref<2x8xi32> -> tensor<2x8xi32>
  %ys = block.load %y : memref<2x8xi32> -> tensor<2x8xi32>
  %v = arith.select %m, %xs, %ys : tensor<2x8xi1>, tensor<2x8xi32>
  block.store %v, %o : tensor<2x8xi32>, memref<2x8xi32>
  %true = arith.constant dense<true> : tensor<2x8xi1>
  %not = arith.xori %m, %true : tensor<2x8xi1>
  %minus = arith.constant dense<-1> : tensor<2x8xi32>
  block.store %minus, %o mask %not : tensor<2x8xi32>, memref<2x8xi32>
  return
}
func.func @bools(%b: memref<4x8xi1>, %x: memref<4x8xi32>, %y: memref<4x8xi32>, %o: memref<4x8xi32>) {
  grid.call @bools_kernel grid [2] ins(%b, %x, %y : memref<4x8xi1>, memref<4x8xi32>, memref<4x8xi32>)
      outs(%o : memref<4x8xi32>)
      in_specs [#grid.block<[2, 8], (i) -> (i, 0)>, #grid.block<[2, 8], (i) -> (i, 0)>, #grid.block<[2, 8], (i) -> (i, 0)>]
      out_specs [#grid.block<[2, 8], (i) -> (i, 0)>]
  return
}

// A masked window wider than its ref (Pallas-Triton's
// `x_ref.at[pl.ds(0, next_pow2(n))]` with `mask=iota < n`): masked-off
// lanes read `other` and are never stored.
// WIDE:      arg0: memref<5xi32>
// WIDE-NEXT: [-6 -3 -6 -8  0]
// WIDE-NEXT: arg1: memref<5xi32>
// WIDE-NEXT: [-12  -6 -12 -16   0]
// WIDE-NEXT: arg2: memref<1xi32>
// WIDE-NEXT: [-40]
// WIDE: check: compiled code matches the interpreter
func.func @wide_kernel(%x: memref<5xi32>, %o: memref<5xi32>, %s: memref<1xi32>) {
  %c0 = arith.constant 0 : index
  %lanes = block.iota dim 0 : tensor<8xi32>
  %n = arith.constant dense<5> : tensor<8xi32>
  %m = arith.cmpi slt, %lanes, %n : tensor<8xi32>
  %one = arith.constant 1 : i32
  %v = block.load %x[%c0] [8] mask %m other %one : memref<5xi32> -> tensor<8xi32>
  %two = arith.constant dense<2> : tensor<8xi32>
  %d = arith.muli %v, %two : tensor<8xi32>
  %t = block.reduce sum %d dims [0] : tensor<8xi32> -> tensor<i32>
  %total = tensor.extract %t[] : tensor<i32>
  %total1 = tensor.splat %total : tensor<1xi32>
  block.store %d, %o[%c0] mask %m : tensor<8xi32>, memref<5xi32>
  block.store %total1, %s : tensor<1xi32>, memref<1xi32>
  return
}
func.func @wide(%x: memref<5xi32>, %o: memref<5xi32>, %s: memref<1xi32>) {
  grid.call @wide_kernel grid [] ins(%x : memref<5xi32>) outs(%o, %s : memref<5xi32>, memref<1xi32>)
      in_specs [#grid.block<full>] out_specs [#grid.block<full>, #grid.block<full>]
  return
}
