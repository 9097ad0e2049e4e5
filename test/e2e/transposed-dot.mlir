// Transposed contraction operands end to end (Pallas' `pl.dot(trans_b=True)`,
// attention's `q @ k.T`): on the CPU against the interpreter (--check), and
// by the harness on the emulated GPU against the same CHECK lines; the ROCm
// path compiles for every chip, matrix cores included.
// The i32 results were checked against numpy's q @ k.T of the same inputs.
// RUN: tessel run %s --entry qkt --arg 0=random:1 --arg 1=random:2 --check | FileCheck %s --check-prefix=QKT
// RUN: tessel run %s --entry ta --arg 0=random:3 --arg 1=random:4 --check | FileCheck %s --check-prefix=TA
// RUN: tessel run %s --entry attention_scores --arg 0=random:5 --arg 1=random:6 --check | FileCheck %s --check-prefix=SCORES
// RUN: tessel compile %s --target rocm --chip gfx90a --emit asm -o %t.gfx90a.s && FileCheck %s --check-prefix=MFMA --input-file=%t.gfx90a.s
// RUN: tessel compile %s --target rocm --chip gfx942 --emit asm -o %t.gfx942.s && FileCheck %s --check-prefix=MFMA --input-file=%t.gfx942.s
// RUN: tessel compile %s --target rocm --chip gfx1100 --emit hsaco -o %t.gfx1100.hsaco
// MFMA: v_mfma_f32_16x16x4

// QKT:      arg2: memref<8x8xi32>
// QKT-NEXT: {{\[\[}}-20 -66 -60   3 -42  -4  67 -14]
// QKT-NEXT:  [-13  39  47 -31  20   5 -48 -19]
// QKT-NEXT:  [ 15 -14  10  18  21   0  46  51]
// QKT-NEXT:  [ 62   3 -34  53 -37  -7 -15  35]
// QKT-NEXT:  [-50  28  33 -32  66   6 -19 -37]
// QKT-NEXT:  [ 45  40  53 -15 -43   2 -64  22]
// QKT-NEXT:  [  0 -44 -46  -2 -68  -4  24 -18]
// QKT-NEXT:  [ 20  69  49  -6  23   3 -87  -6]]
// QKT: check: compiled code matches the interpreter
// TA: check: compiled code matches the interpreter
// SCORES: check: compiled code matches the interpreter

// s = q @ k.T, one 4x4 block of s per program: q's rows i, k's rows j.
func.func @qkt_kernel(%q: memref<4x4xi32>, %k: memref<4x4xi32>, %s: memref<4x4xi32>) {
  %a = block.load %q : memref<4x4xi32> -> tensor<4x4xi32>
  %b = block.load %k : memref<4x4xi32> -> tensor<4x4xi32>
  %c = block.dot %a, %b transposed : tensor<4x4xi32>, tensor<4x4xi32> -> tensor<4x4xi32>
  block.store %c, %s : tensor<4x4xi32>, memref<4x4xi32>
  return
}
func.func @qkt(%q: memref<8x4xi32>, %k: memref<8x4xi32>, %s: memref<8x8xi32>) {
  grid.call @qkt_kernel grid [2, 2] ins(%q, %k : memref<8x4xi32>, memref<8x4xi32>) outs(%s : memref<8x8xi32>)
      in_specs [#grid.block<[4, 4], (i, j) -> (i, 0)>, #grid.block<[4, 4], (i, j) -> (j, 0)>]
      out_specs [#grid.block<[4, 4], (i, j) -> (i, j)>]
  return
}

// c = a.T @ b, accumulated over K blocks along an arbitrary axis.
func.func @ta_kernel(%a: memref<4x8xf32>, %b: memref<4x8xf32>, %c: memref<8x8xf32>) {
  %x = block.load %a : memref<4x8xf32> -> tensor<4x8xf32>
  %y = block.load %b : memref<4x8xf32> -> tensor<4x8xf32>
  %acc = block.load %c : memref<8x8xf32> -> tensor<8x8xf32>
  %r = block.dot %x transposed, %y acc %acc : tensor<4x8xf32>, tensor<4x8xf32>, tensor<8x8xf32> -> tensor<8x8xf32>
  block.store %r, %c : tensor<8x8xf32>, memref<8x8xf32>
  return
}
func.func @ta(%a: memref<12x8xf32>, %b: memref<12x8xf32>, %c: memref<8x8xf32>) {
  grid.call @ta_kernel grid [3] ins(%a, %b : memref<12x8xf32>, memref<12x8xf32>) outs(%c : memref<8x8xf32>)
      in_specs [#grid.block<[4, 8], (k) -> (k, 0)>, #grid.block<[4, 8], (k) -> (k, 0)>]
      out_specs [#grid.block<[8, 8], (k) -> (0, 0)>]
  return
}

// Attention's scores: 32-row blocks of q against 32-row blocks of k
// (f32 16x16 tiles, one per wavefront: matrix cores on CDNA).
func.func @scores_kernel(%q: memref<32x16xf32>, %k: memref<32x16xf32>, %s: memref<32x32xf32>) {
  %a = block.load %q : memref<32x16xf32> -> tensor<32x16xf32>
  %b = block.load %k : memref<32x16xf32> -> tensor<32x16xf32>
  %c = block.dot %a, %b transposed : tensor<32x16xf32>, tensor<32x16xf32> -> tensor<32x32xf32>
  block.store %c, %s : tensor<32x32xf32>, memref<32x32xf32>
  return
}
func.func @attention_scores(%q: memref<64x16xf32>, %k: memref<64x16xf32>, %s: memref<64x64xf32>) {
  grid.call @scores_kernel grid [2, 2] ins(%q, %k : memref<64x16xf32>, memref<64x16xf32>) outs(%s : memref<64x64xf32>)
      in_specs [#grid.block<[32, 16], (i, j) -> (i, 0)>, #grid.block<[32, 16], (i, j) -> (j, 0)>]
      out_specs [#grid.block<[32, 32], (i, j) -> (i, j)>]
  return
}
