// Atomics that return the old values, the new kinds and compare-and-swap,
// end to end: on the CPU against the interpreter (--check), and by the
// harness on the emulated GPU against the same CHECK lines; the ROCm path
// compiles for every chip. Each program touches its own elements, or the
// programs run in order (an arbitrary axis), so the old values are
// deterministic.
// RUN: tessel run %s --entry tickets --check | FileCheck %s --check-prefix=TICKETS
// RUN: tessel run %s --entry bits --arg 0=random:1 --arg 1=random:2 --check | FileCheck %s --check-prefix=BITS
// RUN: tessel run %s --entry swap --arg 0=random:3 --arg 1=random:4 --check | FileCheck %s --check-prefix=SWAP
// RUN: tessel run %s --entry cas --check | FileCheck %s --check-prefix=CAS
// RUN: tessel compile %s --target rocm --chip gfx90a --emit asm -o %t.gfx90a.s && FileCheck %s --check-prefix=ASM --input-file=%t.gfx90a.s
// RUN: tessel compile %s --target rocm --chip gfx942 --emit hsaco -o %t.gfx942.hsaco
// RUN: tessel compile %s --target rocm --chip gfx1100 --emit hsaco -o %t.gfx1100.hsaco
// ASM: {{global|flat|buffer}}_atomic_cmpswap

// Each of four programs, in order, takes a ticket from a shared counter
// (add returning the old count) and writes it to its own slot.
// TICKETS:      arg0: memref<1xi32>
// TICKETS-NEXT: [4]
// TICKETS-NEXT: arg1: memref<4xi32>
// TICKETS-NEXT: [0 1 2 3]
// TICKETS: check: compiled code matches the interpreter
func.func @tickets_kernel(%counter: memref<1xi32>, %ticket: memref<1xi32>) {
  %one = arith.constant dense<1> : tensor<1xi32>
  %old = block.atomic_rmw add %one, %counter : tensor<1xi32>, memref<1xi32> -> tensor<1xi32>
  block.store %old, %ticket : tensor<1xi32>, memref<1xi32>
  return
}
func.func @tickets(%counter: memref<1xi32>, %tickets: memref<4xi32>) {
  grid.call @tickets_kernel grid [4] ins() outs(%counter, %tickets : memref<1xi32>, memref<4xi32>)
      in_specs [] out_specs [#grid.block<[1], (i) -> (0)>, #grid.block<[1], (i) -> (i)>]
  return
}

// and, or, xor into x (one 2x4 block per program), the old x of each step
// stored next to it: x ends as v ^ x0, o is x0 & v and a is v (checked with
// numpy against x0 = the first result ^ v).
// BITS:      arg0: memref<4x4xi32>
// BITS-NEXT: {{\[\[}} 7 -2  3 -2]
// BITS-NEXT:  [ 1  4 -8  4]
// BITS-NEXT:  [ 5  7 -6 -7]
// BITS-NEXT:  [-6  3  0  1]]
// BITS:      arg2: memref<4x4xi32>
// BITS-NEXT: {{\[\[}} 0  1  4  1]
// BITS-NEXT:  [-6 -6  3 -6]
// BITS-NEXT:  [ 0 -8  0  6]
// BITS-NEXT:  [ 4 -4  7  2]]
// BITS:      arg3: memref<4x4xi32>
// BITS-NEXT: {{\[\[}} 2 -7  7 -3]
// BITS: check: compiled code matches the interpreter
func.func @bits_kernel(%v: memref<2x4xi32>, %x: memref<2x4xi32>, %o: memref<2x4xi32>, %a: memref<2x4xi32>) {
  %w = block.load %v : memref<2x4xi32> -> tensor<2x4xi32>
  %before_and = block.atomic_rmw and %w, %x : tensor<2x4xi32>, memref<2x4xi32> -> tensor<2x4xi32>
  %before_or = block.atomic_rmw or %w, %x : tensor<2x4xi32>, memref<2x4xi32> -> tensor<2x4xi32>
  %before_xor = block.atomic_rmw xor %before_and, %x : tensor<2x4xi32>, memref<2x4xi32> -> tensor<2x4xi32>
  block.store %before_or, %o : tensor<2x4xi32>, memref<2x4xi32>
  block.store %before_xor, %a : tensor<2x4xi32>, memref<2x4xi32>
  return
}
func.func @bits(%x: memref<4x4xi32>, %v: memref<4x4xi32>, %o: memref<4x4xi32>, %a: memref<4x4xi32>) {
  grid.call @bits_kernel grid [2] ins(%v : memref<4x4xi32>) outs(%x, %o, %a : memref<4x4xi32>, memref<4x4xi32>, memref<4x4xi32>)
      in_specs [#grid.block<[2, 4], (i) -> (i, 0)>]
      out_specs [#grid.block<[2, 4], (i) -> (i, 0)>, #grid.block<[2, 4], (i) -> (i, 0)>, #grid.block<[2, 4], (i) -> (i, 0)>]
  return
}

// xchg of f32 blocks, masked to the first three lanes: the old values come
// back, the fourth lane keeps its element and returns zero.
// SWAP: check: compiled code matches the interpreter
func.func @swap_kernel(%v: memref<4xf32>, %x: memref<4xf32>, %old: memref<4xf32>) {
  %w = block.load %v : memref<4xf32> -> tensor<4xf32>
  %lane = block.iota dim 0 : tensor<4xi32>
  %three = arith.constant dense<3> : tensor<4xi32>
  %m = arith.cmpi slt, %lane, %three : tensor<4xi32>
  %o = block.atomic_rmw xchg %w, %x mask %m : tensor<4xf32>, memref<4xf32> -> tensor<4xf32>
  block.store %o, %old : tensor<4xf32>, memref<4xf32>
  return
}
func.func @swap(%x: memref<8xf32>, %v: memref<8xf32>, %old: memref<8xf32>) {
  grid.call @swap_kernel grid [2] ins(%v : memref<8xf32>) outs(%x, %old : memref<8xf32>, memref<8xf32>)
      in_specs [#grid.block<[4], (i) -> (i)>] out_specs [#grid.block<[4], (i) -> (i)>, #grid.block<[4], (i) -> (i)>]
  return
}

// Compare-and-swap: lanes whose element is 0 become lane + 10, the others
// keep theirs; run twice in order, so the second pass finds the first's.
// CAS:      arg0: memref<4xi32>
// CAS-NEXT: [10 11 12 13]
// CAS-NEXT: arg1: memref<2x4xi32>
// CAS-NEXT: {{\[\[}} 0  0  0  0]
// CAS-NEXT:  [10 11 12 13]]
// CAS: check: compiled code matches the interpreter
func.func @cas_kernel(%x: memref<4xi32>, %seen: memref<1x4xi32>) {
  %zero = arith.constant dense<0> : tensor<4xi32>
  %lane = block.iota dim 0 : tensor<4xi32>
  %ten = arith.constant dense<10> : tensor<4xi32>
  %new = arith.addi %lane, %ten : tensor<4xi32>
  %old = block.atomic_cas %zero, %new, %x : tensor<4xi32>, memref<4xi32> -> tensor<4xi32>
  %row = tensor.expand_shape %old [[0, 1]] output_shape [1, 4] : tensor<4xi32> into tensor<1x4xi32>
  block.store %row, %seen : tensor<1x4xi32>, memref<1x4xi32>
  return
}
func.func @cas(%x: memref<4xi32>, %seen: memref<2x4xi32>) {
  grid.call @cas_kernel grid [2] ins() outs(%x, %seen : memref<4xi32>, memref<2x4xi32>)
      in_specs [] out_specs [#grid.block<full>, #grid.block<[1, 4], (i) -> (i, 0)>]
  return
}
