// Every schedule computes the same bits: contractions run with the scalar
// register tile (1x1), odd tiles, wide tiles and the host default, the
// K loop software-pipelined (--num-stages), one thread, 256-bit vectors,
// padded partial tiles (--pad-tiles), tiles whose rows leave a remainder
// strip (5 rows of a 12-row block: 10 in whole strips, 2 in a strip of
// their own), AVX2 code, programs in column-major order, each checked
// against the interpreter (--check) and byte-compared with the others
// through --dump.
// RUN: rm -rf %t && mkdir -p %t
// RUN: tessel run %s --entry matmul --arg 0=random:1 --arg 1=random:2 --check | FileCheck %s
// RUN: tessel run %s --entry matmul --arg 0=random:1 --arg 1=random:2 --register-tile 1x1 --check | FileCheck %s
// RUN: tessel run %s --entry matmul --arg 0=random:1 --arg 1=random:2 --register-tile 3x5 --check | FileCheck %s
// RUN: tessel run %s --entry matmul --arg 0=random:1 --arg 1=random:2 --register-tile 16x64 --check | FileCheck %s
// RUN: tessel run %s --entry matmul --arg 0=random:1 --arg 1=random:2 --dump %t/default > /dev/null
// RUN: tessel run %s --entry matmul --arg 0=random:1 --arg 1=random:2 --register-tile 1x1 --dump %t/scalar > /dev/null
// RUN: tessel run %s --entry matmul --arg 0=random:1 --arg 1=random:2 --register-tile 2x7 --dump %t/odd > /dev/null
// RUN: tessel run %s --entry matmul --arg 0=random:1 --arg 1=random:2 --num-stages 3 --dump %t/pipelined > /dev/null
// RUN: tessel run %s --entry matmul --arg 0=random:1 --arg 1=random:2 --k-unroll 4 --k-chunk 8 --dump %t/unrolled > /dev/null
// RUN: cmp %t/default/arg2.npy %t/scalar/arg2.npy && cmp %t/default/arg2.npy %t/odd/arg2.npy && cmp %t/default/arg2.npy %t/pipelined/arg2.npy
// RUN: tessel run %s --entry matmul --arg 0=random:1 --arg 1=random:2 --num-threads 1 --vector-bits 256 --dump %t/narrow > /dev/null
// RUN: tessel run %s --entry matmul --arg 0=random:1 --arg 1=random:2 --register-tile 5x16 --pad-tiles --dump %t/padded > /dev/null
// RUN: cmp %t/default/arg2.npy %t/unrolled/arg2.npy && cmp %t/default/arg2.npy %t/narrow/arg2.npy
// RUN: tessel run %s --entry matmul --arg 0=random:1 --arg 1=random:2 --grid-order column-major --dump %t/columns > /dev/null
// RUN: cmp %t/default/arg2.npy %t/padded/arg2.npy && cmp %t/default/arg2.npy %t/columns/arg2.npy
// RUN: tessel run %s --entry matmul --arg 0=random:1 --arg 1=random:2 --register-tile 5x4 --check --dump %t/remainder | FileCheck %s
// RUN: tessel run %s --entry matmul --arg 0=random:1 --arg 1=random:2 --cpu x86-64-v3 --dump %t/avx2 > /dev/null
// RUN: cmp %t/default/arg2.npy %t/remainder/arg2.npy && cmp %t/default/arg2.npy %t/avx2/arg2.npy
// RUN: tessel run %s --entry mixed --arg 0=random:3 --arg 1=random:4 --arg 2=random:5 --arg 3=random:6 --register-tile 5x16 --pad-tiles --check | FileCheck %s
// RUN: tessel run %s --entry batched --arg 0=random:7 --arg 1=random:8 --register-tile 4x3 --pad-tiles --check | FileCheck %s
// RUN: tessel run %s --entry mixed --arg 0=random:3 --arg 1=random:4 --arg 2=random:5 --arg 3=random:6 --vector-bits 256 --num-threads 1 --check | FileCheck %s
// RUN: tessel run %s --entry matmul --vector-bits 384 2>&1 | FileCheck %s --check-prefix=BITS; test ${PIPESTATUS[0]} -eq 2
// RUN: tessel run %s --entry matmul --arg 0=random:1 --arg 1=random:2 --num-stages 2 --register-tile 2x4 --check | FileCheck %s
// RUN: tessel run %s --entry matmul --num-stages 0 2>&1 | FileCheck %s --check-prefix=STAGES; test ${PIPESTATUS[0]} -eq 2
// RUN: tessel run %s --entry mixed --arg 0=random:3 --arg 1=random:4 --arg 2=random:5 --arg 3=random:6 --check | FileCheck %s
// RUN: tessel run %s --entry mixed --arg 0=random:3 --arg 1=random:4 --arg 2=random:5 --arg 3=random:6 --register-tile 1x1 --check | FileCheck %s
// RUN: tessel run %s --entry mixed --arg 0=random:3 --arg 1=random:4 --arg 2=random:5 --arg 3=random:6 --register-tile 4x3 --check | FileCheck %s
// RUN: tessel run %s --entry batched --arg 0=random:7 --arg 1=random:8 --check | FileCheck %s
// RUN: tessel run %s --entry batched --arg 0=random:7 --arg 1=random:8 --register-tile 3x2 --check | FileCheck %s
// RUN: tessel run %s --entry batched --arg 0=random:7 --arg 1=random:8 --k-unroll 2 --check | FileCheck %s
// RUN: tessel run %s --entry half --arg 0=random:9 --arg 1=random:10 --check | FileCheck %s
// RUN: tessel run %s --entry half --arg 0=random:9 --arg 1=random:10 --register-tile 1x1 --check | FileCheck %s
// RUN: tessel run %s --entry matmul --register-tile 0x4 2>&1 | FileCheck %s --check-prefix=USAGE; test ${PIPESTATUS[0]} -eq 2
// RUN: tessel run %s --entry matmul --register-tile 4 2>&1 | FileCheck %s --check-prefix=USAGE; test ${PIPESTATUS[0]} -eq 2
// CHECK: check: compiled code matches the interpreter
// STAGES: error: invalid value '0' for '--num-stages <N>'
// BITS: error: invalid value '384' for '--vector-bits <128|256|512>'
// USAGE: error: invalid value '{{.*}}' for '--register-tile <ROWSxCOLUMNS>': expected ROWSxCOLUMNS with positive sizes

// Pallas-style matmul with K on an arbitrary axis, blocks that do not
// divide the arrays (partial blocks padded) and do not fill vectors.
func.func @matmul_kernel(%x: memref<12x8xf32>, %y: memref<8x20xf32>, %z: memref<12x20xf32>) {
  %k = grid.program_id 2
  %c0 = arith.constant 0 : index
  %first = arith.cmpi eq, %k, %c0 : index
  scf.if %first {
    %zeros = arith.constant dense<0.0> : tensor<12x20xf32>
    block.store %zeros, %z : tensor<12x20xf32>, memref<12x20xf32>
  }
  %a = block.load %x : memref<12x8xf32> -> tensor<12x8xf32>
  %b = block.load %y : memref<8x20xf32> -> tensor<8x20xf32>
  %acc = block.load %z : memref<12x20xf32> -> tensor<12x20xf32>
  %c = block.dot %a, %b acc %acc : tensor<12x8xf32>, tensor<8x20xf32>, tensor<12x20xf32> -> tensor<12x20xf32>
  block.store %c, %z : tensor<12x20xf32>, memref<12x20xf32>
  return
}
func.func @matmul(%x: memref<30x32xf32>, %y: memref<32x50xf32>, %z: memref<30x50xf32>) {
  grid.call @matmul_kernel grid [3, 3, 4] ins(%x, %y : memref<30x32xf32>, memref<32x50xf32>) outs(%z : memref<30x50xf32>)
      in_specs [#grid.block<[12, 8], (i, j, k) -> (i, k)>, #grid.block<[8, 20], (i, j, k) -> (k, j)>]
      out_specs [#grid.block<[12, 20], (i, j, k) -> (i, j)>]
  return
}

// Narrow operands widened into wide accumulators, two contractions in one
// kernel (different groups of tessel-tile).
func.func @mixed_kernel(%a: memref<6x12xbf16>, %b: memref<12x9xbf16>, %c: memref<6x12xi8>, %d: memref<12x9xi8>,
                        %o: memref<6x9xf32>, %p: memref<6x9xi32>) {
  %av = block.load %a : memref<6x12xbf16> -> tensor<6x12xbf16>
  %bv = block.load %b : memref<12x9xbf16> -> tensor<12x9xbf16>
  %f = block.dot %av, %bv : tensor<6x12xbf16>, tensor<12x9xbf16> -> tensor<6x9xf32>
  block.store %f, %o : tensor<6x9xf32>, memref<6x9xf32>
  %cv = block.load %c : memref<6x12xi8> -> tensor<6x12xi8>
  %dv = block.load %d : memref<12x9xi8> -> tensor<12x9xi8>
  %i = block.dot %cv, %dv : tensor<6x12xi8>, tensor<12x9xi8> -> tensor<6x9xi32>
  block.store %i, %p : tensor<6x9xi32>, memref<6x9xi32>
  return
}
func.func @mixed(%a: memref<12x12xbf16>, %b: memref<12x9xbf16>, %c: memref<12x12xi8>, %d: memref<12x9xi8>,
                 %o: memref<12x9xf32>, %p: memref<12x9xi32>) {
  grid.call @mixed_kernel grid [2] ins(%a, %b, %c, %d : memref<12x12xbf16>, memref<12x9xbf16>, memref<12x12xi8>, memref<12x9xi8>)
      outs(%o, %p : memref<12x9xf32>, memref<12x9xi32>)
      in_specs [#grid.block<[6, 12], (i) -> (i, 0)>, #grid.block<full>, #grid.block<[6, 12], (i) -> (i, 0)>, #grid.block<full>]
      out_specs [#grid.block<[6, 9], (i) -> (i, 0)>, #grid.block<[6, 9], (i) -> (i, 0)>]
  return
}

// A batched contraction (3-D blocks).
func.func @batched_kernel(%x: memref<2x6x5xf64>, %y: memref<2x5x4xf64>, %z: memref<2x6x4xf64>) {
  %a = block.load %x : memref<2x6x5xf64> -> tensor<2x6x5xf64>
  %b = block.load %y : memref<2x5x4xf64> -> tensor<2x5x4xf64>
  %c = block.dot %a, %b : tensor<2x6x5xf64>, tensor<2x5x4xf64> -> tensor<2x6x4xf64>
  block.store %c, %z : tensor<2x6x4xf64>, memref<2x6x4xf64>
  return
}
func.func @batched(%x: memref<4x6x5xf64>, %y: memref<4x5x4xf64>, %z: memref<4x6x4xf64>) {
  grid.call @batched_kernel grid [2] ins(%x, %y : memref<4x6x5xf64>, memref<4x5x4xf64>) outs(%z : memref<4x6x4xf64>)
      in_specs [#grid.block<[2, 6, 5], (b) -> (b, 0, 0)>, #grid.block<[2, 5, 4], (b) -> (b, 0, 0)>]
      out_specs [#grid.block<[2, 6, 4], (b) -> (b, 0, 0)>]
  return
}

// f16 operands into an f32 accumulator, odd widths (single-element vectors).
func.func @half_kernel(%a: memref<5x7xf16>, %b: memref<7x3xf16>, %o: memref<5x3xf32>) {
  %av = block.load %a : memref<5x7xf16> -> tensor<5x7xf16>
  %bv = block.load %b : memref<7x3xf16> -> tensor<7x3xf16>
  %f = block.dot %av, %bv : tensor<5x7xf16>, tensor<7x3xf16> -> tensor<5x3xf32>
  block.store %f, %o : tensor<5x3xf32>, memref<5x3xf32>
  return
}
func.func @half(%a: memref<10x7xf16>, %b: memref<7x3xf16>, %o: memref<10x3xf32>) {
  grid.call @half_kernel grid [2] ins(%a, %b : memref<10x7xf16>, memref<7x3xf16>) outs(%o : memref<10x3xf32>)
      in_specs [#grid.block<[5, 7], (i) -> (i, 0)>, #grid.block<full>] out_specs [#grid.block<[5, 3], (i) -> (i, 0)>]
  return
}
