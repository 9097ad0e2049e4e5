// Integer division is total (tessel-total-division, as XLA defines it):
// x / 0 = -1 (all ones), x % 0 = x, INT_MIN / -1 = INT_MIN,
// INT_MIN % -1 = 0. Before, a zero divisor killed `tessel run` with SIGFPE
// (x86's idiv); the interpreter now computes the same values (--check).
// The harness reruns each `tessel run` on the emulated GPU; the ROCm path
// compiles for every chip.
// RUN: tessel run %s --entry signed --arg 0=test/e2e/Inputs/dividends_i32_8.npy --arg 1=test/e2e/Inputs/divisors_i32_8.npy --check | FileCheck %s --check-prefix=SIGNED
// RUN: tessel run %s --entry unsigned --arg 0=test/e2e/Inputs/dividends_u8_8.npy --arg 1=test/e2e/Inputs/divisors_u8_8.npy --check | FileCheck %s --check-prefix=UNSIGNED
// RUN: tessel run %s --entry signed --arg 0=test/e2e/Inputs/dividends_i32_8.npy --arg 1=test/e2e/Inputs/divisors_i32_8.npy --interpret | FileCheck %s --check-prefix=SIGNED
// RUN: tessel compile %s --target rocm --chip gfx90a --emit hsaco -o %t.gfx90a.hsaco
// RUN: tessel compile %s --target rocm --chip gfx942 --emit hsaco -o %t.gfx942.hsaco
// RUN: tessel compile %s --target rocm --chip gfx1100 --emit hsaco -o %t.gfx1100.hsaco

// SIGNED: arg2: memref<8xi32>
// SIGNED-NEXT: [         -1          -1 -2147483648          -1           3          -3
// SIGNED-NEXT:           -1          -5]
// SIGNED: arg3: memref<8xi32>
// SIGNED-NEXT: [          7          -7           0 -2147483648           1          -1
// SIGNED-NEXT:            0           0]
// SIGNED: arg4: memref<8xi32>
// SIGNED-NEXT: [         -1          -1 -2147483648          -1           3          -4
// SIGNED-NEXT:           -1          -5]
// SIGNED: arg5: memref<8xi32>
// SIGNED-NEXT: [         -1          -1 -2147483648          -1           4          -3
// SIGNED-NEXT:           -1          -5]
func.func @signed_kernel(%x: memref<8xi32>, %y: memref<8xi32>, %q: memref<8xi32>, %r: memref<8xi32>, %f: memref<8xi32>, %c: memref<8xi32>) {
  %a = block.load %x : memref<8xi32> -> tensor<8xi32>
  %b = block.load %y : memref<8xi32> -> tensor<8xi32>
  %quotient = arith.divsi %a, %b : tensor<8xi32>
  %remainder = arith.remsi %a, %b : tensor<8xi32>
  %floor = arith.floordivsi %a, %b : tensor<8xi32>
  %ceil = arith.ceildivsi %a, %b : tensor<8xi32>
  block.store %quotient, %q : tensor<8xi32>, memref<8xi32>
  block.store %remainder, %r : tensor<8xi32>, memref<8xi32>
  block.store %floor, %f : tensor<8xi32>, memref<8xi32>
  block.store %ceil, %c : tensor<8xi32>, memref<8xi32>
  return
}

func.func @signed(%x: memref<8xi32>, %y: memref<8xi32>, %q: memref<8xi32>, %r: memref<8xi32>, %f: memref<8xi32>, %c: memref<8xi32>) {
  grid.call @signed_kernel grid [1] ins(%x, %y : memref<8xi32>, memref<8xi32>)
      outs(%q, %r, %f, %c : memref<8xi32>, memref<8xi32>, memref<8xi32>, memref<8xi32>)
      in_specs [#grid.block<full>, #grid.block<full>] out_specs [#grid.block<full>, #grid.block<full>, #grid.block<full>, #grid.block<full>]
  return
}

// UNSIGNED: arg2: memref<8xui8>
// UNSIGNED-NEXT: [255 255 255  66   2   0 255   1]
// UNSIGNED: arg3: memref<8xui8>
// UNSIGNED-NEXT: [  7   0 255   2   1   1   2   1]
func.func @unsigned_kernel(%x: memref<8xi8>, %y: memref<8xi8>, %q: memref<8xi8>, %r: memref<8xi8>) {
  %a = block.load %x : memref<8xi8> -> tensor<8xi8>
  %b = block.load %y : memref<8xi8> -> tensor<8xi8>
  %quotient = arith.divui %a, %b : tensor<8xi8>
  %remainder = arith.remui %a, %b : tensor<8xi8>
  block.store %quotient, %q : tensor<8xi8>, memref<8xi8>
  block.store %remainder, %r : tensor<8xi8>, memref<8xi8>
  return
}

func.func @unsigned(%x: memref<8xui8>, %y: memref<8xui8>, %q: memref<8xui8>, %r: memref<8xui8>) {
  grid.call @unsigned_kernel grid [1] ins(%x, %y : memref<8xui8>, memref<8xui8>) outs(%q, %r : memref<8xui8>, memref<8xui8>)
      in_specs [#grid.block<full>, #grid.block<full>] out_specs [#grid.block<full>, #grid.block<full>]
  return
}
