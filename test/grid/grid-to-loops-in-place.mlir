// grid-to-loops marks which block.loads may skip their copy: refs nothing
// writes (tessel.read_only) and accumulators stored back once, whose loaded
// value is dead by then (tessel.in_place). Every other load copies, so a
// loaded value never changes when its ref is stored to. The RUN lines with
// --check run each case compiled and interpreted and compare the bits.
// RUN: tessel-opt %s --split-input-file --grid-verify-specs --grid-to-loops | FileCheck %s
// RUN: tessel run %s --entry accumulate --arg 0=random:1 --arg 1=random:2 --check | FileCheck %s --check-prefix=CHECKED
// RUN: tessel run %s --entry used_after_store --arg 0=random:1 --arg 1=random:2 --check | FileCheck %s --check-prefix=CHECKED
// RUN: tessel run %s --entry aliased --arg 0=random:1 --check | FileCheck %s --check-prefix=CHECKED
// RUN: tessel run %s --entry conditional --arg 0=random:1 --arg 1=random:2 --check | FileCheck %s --check-prefix=CHECKED
// CHECKED: check: compiled code matches the interpreter

// The accumulator pattern: in place.
// CHECK-LABEL: func.func private @accumulate_kernel__call0(
// CHECK: block.load %arg0 {tessel.read_only}
// CHECK: block.load %arg1 {tessel.in_place}
func.func @accumulate_kernel(%x: memref<8x16xf32>, %o: memref<8x16xf32>) {
  %a = block.load %x : memref<8x16xf32> -> tensor<8x16xf32>
  %acc = block.load %o : memref<8x16xf32> -> tensor<8x16xf32>
  %s = arith.addf %acc, %a : tensor<8x16xf32>
  block.store %s, %o : tensor<8x16xf32>, memref<8x16xf32>
  return
}
func.func @accumulate(%x: memref<32x16xf32>, %o: memref<8x16xf32>) {
  grid.call @accumulate_kernel grid [4] ins(%x : memref<32x16xf32>) outs(%o : memref<8x16xf32>)
      in_specs [#grid.block<[8, 16], (k) -> (k, 0)>] out_specs [#grid.block<[8, 16], (k) -> (0, 0)>]
  return
}

// -----

// The loaded value is read again after the first store: copied.
// CHECK-LABEL: func.func private @used_after_store_kernel__call0(
// CHECK: block.load %arg1 : memref<8x16xf32
func.func @used_after_store_kernel(%x: memref<8x16xf32>, %o: memref<8x16xf32>) {
  %a = block.load %x : memref<8x16xf32> -> tensor<8x16xf32>
  %acc = block.load %o : memref<8x16xf32> -> tensor<8x16xf32>
  %s = arith.addf %acc, %a : tensor<8x16xf32>
  block.store %s, %o : tensor<8x16xf32>, memref<8x16xf32>
  %t = arith.mulf %acc, %s : tensor<8x16xf32>
  block.store %t, %o : tensor<8x16xf32>, memref<8x16xf32>
  return
}
func.func @used_after_store(%x: memref<32x16xf32>, %o: memref<8x16xf32>) {
  grid.call @used_after_store_kernel grid [4] ins(%x : memref<32x16xf32>) outs(%o : memref<8x16xf32>)
      in_specs [#grid.block<[8, 16], (k) -> (k, 0)>] out_specs [#grid.block<[8, 16], (k) -> (0, 0)>]
  return
}

// -----

// The same array as input and output: neither read-only nor in place.
// CHECK-LABEL: func.func private @aliased_kernel__call0(
// CHECK: block.load %arg1 : memref<8x16xf32
// CHECK: block.load %arg0 : memref<8x16xf32
func.func @aliased_kernel(%x: memref<8x16xf32>, %o: memref<8x16xf32>) {
  %acc = block.load %o : memref<8x16xf32> -> tensor<8x16xf32>
  %doubled = arith.addf %acc, %acc : tensor<8x16xf32>
  block.store %doubled, %o : tensor<8x16xf32>, memref<8x16xf32>
  %a = block.load %x : memref<8x16xf32> -> tensor<8x16xf32>
  %s = arith.addf %a, %a : tensor<8x16xf32>
  block.store %s, %o : tensor<8x16xf32>, memref<8x16xf32>
  return
}
func.func @aliased(%x: memref<8x16xf32>) {
  grid.call @aliased_kernel grid [1] ins(%x : memref<8x16xf32>) outs(%x : memref<8x16xf32>)
      in_specs [#grid.block<full>] out_specs [#grid.block<full>]
  return
}

// -----

// A load nested in a region: copied (only top-level loads are analysed).
// CHECK-LABEL: func.func private @conditional_kernel__call0(
// CHECK: block.load %arg1 : memref<8x16xf32
func.func @conditional_kernel(%x: memref<8x16xf32>, %o: memref<8x16xf32>) {
  %k = grid.program_id 0
  %c0 = arith.constant 0 : index
  %first = arith.cmpi eq, %k, %c0 : index
  %a = block.load %x : memref<8x16xf32> -> tensor<8x16xf32>
  scf.if %first {
    block.store %a, %o : tensor<8x16xf32>, memref<8x16xf32>
  } else {
    %acc = block.load %o : memref<8x16xf32> -> tensor<8x16xf32>
    %s = arith.maximumf %acc, %a : tensor<8x16xf32>
    block.store %s, %o : tensor<8x16xf32>, memref<8x16xf32>
  }
  return
}
func.func @conditional(%x: memref<32x16xf32>, %o: memref<8x16xf32>) {
  grid.call @conditional_kernel grid [4] ins(%x : memref<32x16xf32>) outs(%o : memref<8x16xf32>)
      in_specs [#grid.block<[8, 16], (k) -> (k, 0)>] out_specs [#grid.block<[8, 16], (k) -> (0, 0)>]
  return
}
