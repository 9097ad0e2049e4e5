// Panels packed once per call (tessel-hoist-packing) give the bits of
// panels packed by every program: a Pallas matmul whose B blocks come back
// for each of three row blocks, with the default tile, narrow panels, k in
// chunks, a fused epilogue and a batch; each checked against the
// interpreter and byte-compared with a schedule whose panels do not repeat
// (one row block: nothing to hoist).
// RUN: rm -rf %t && mkdir -p %t
// RUN: tessel-opt %s --tessel-to-cpu --mlir-print-ir-after-all 2>&1 >/dev/null | FileCheck %s --check-prefix=HOISTED
// RUN: tessel run %s --entry matmul --arg 0=random:1 --arg 1=random:2 --check | FileCheck %s
// RUN: tessel run %s --entry matmul --arg 0=random:1 --arg 1=random:2 --register-tile 2x8 --check | FileCheck %s
// RUN: tessel run %s --entry matmul --arg 0=random:1 --arg 1=random:2 --k-chunk 8 --check | FileCheck %s
// RUN: tessel run %s --entry matmul --arg 0=random:1 --arg 1=random:2 --register-tile 2x8 --dump %t/hoisted > /dev/null
// RUN: tessel run %s --entry matmul_one_row_block --arg 0=random:1 --arg 1=random:2 --register-tile 2x8 --dump %t/repacked > /dev/null
// RUN: cmp %t/hoisted/arg2.npy %t/repacked/arg2.npy
// RUN: tessel run %s --entry bias_relu --arg 0=random:3 --arg 1=random:4 --arg 2=random:5 --check | FileCheck %s
// RUN: tessel run %s --entry batched --arg 0=random:6 --arg 1=random:7 --check | FileCheck %s
// CHECK: check: compiled code matches the interpreter
// The IR dumps' register tiles and vectors are the host's.
// SNAPSHOT-FILTER: (?s)// -----// IR Dump After .* => <the IR after every pass (host-dependent tiles)>

// The pass hoists the matmul's packing: one buffer of B's 64 KiB, packed
// by a nest of its own before the programs.
// HOISTED: IR Dump After TesselHoistPacking
// HOISTED: func.func @matmul(
// HOISTED: memref.alloc() {alignment = 64 : i64} : memref<65536xi8>
// HOISTED: linalg.copy {tessel.packing}
// HOISTED: memref.view

func.func @matmul_kernel(%x: memref<16x32xf32>, %y: memref<32x64xf32>, %z: memref<16x64xf32>) {
  %k = grid.program_id 2
  %c0 = arith.constant 0 : index
  %first = arith.cmpi eq, %k, %c0 : index
  scf.if %first {
    %zeros = arith.constant dense<0.0> : tensor<16x64xf32>
    block.store %zeros, %z : tensor<16x64xf32>, memref<16x64xf32>
  }
  %a = block.load %x : memref<16x32xf32> -> tensor<16x32xf32>
  %b = block.load %y : memref<32x64xf32> -> tensor<32x64xf32>
  %acc = block.load %z : memref<16x64xf32> -> tensor<16x64xf32>
  %c = block.dot %a, %b acc %acc : tensor<16x32xf32>, tensor<32x64xf32>, tensor<16x64xf32> -> tensor<16x64xf32>
  block.store %c, %z : tensor<16x64xf32>, memref<16x64xf32>
  return
}

func.func @matmul(%x: memref<48x128xf32>, %y: memref<128x128xf32>, %z: memref<48x128xf32>) {
  grid.call @matmul_kernel grid [3, 2, 4] ins(%x, %y : memref<48x128xf32>, memref<128x128xf32>) outs(%z : memref<48x128xf32>)
      in_specs [#grid.block<[16, 32], (i, j, k) -> (i, k)>, #grid.block<[32, 64], (i, j, k) -> (k, j)>]
      out_specs [#grid.block<[16, 64], (i, j, k) -> (i, j)>]
  return
}

// The same product with all 48 rows in one row block: every panel is
// packed by the one program that reads it.
func.func @matmul_one_row_block_kernel(%x: memref<48x32xf32>, %y: memref<32x64xf32>, %z: memref<48x64xf32>) {
  %k = grid.program_id 2
  %c0 = arith.constant 0 : index
  %first = arith.cmpi eq, %k, %c0 : index
  scf.if %first {
    %zeros = arith.constant dense<0.0> : tensor<48x64xf32>
    block.store %zeros, %z : tensor<48x64xf32>, memref<48x64xf32>
  }
  %a = block.load %x : memref<48x32xf32> -> tensor<48x32xf32>
  %b = block.load %y : memref<32x64xf32> -> tensor<32x64xf32>
  %acc = block.load %z : memref<48x64xf32> -> tensor<48x64xf32>
  %c = block.dot %a, %b acc %acc : tensor<48x32xf32>, tensor<32x64xf32>, tensor<48x64xf32> -> tensor<48x64xf32>
  block.store %c, %z : tensor<48x64xf32>, memref<48x64xf32>
  return
}

func.func @matmul_one_row_block(%x: memref<48x128xf32>, %y: memref<128x128xf32>, %z: memref<48x128xf32>) {
  grid.call @matmul_one_row_block_kernel grid [1, 2, 4] ins(%x, %y : memref<48x128xf32>, memref<128x128xf32>) outs(%z : memref<48x128xf32>)
      in_specs [#grid.block<[48, 32], (i, j, k) -> (i, k)>, #grid.block<[32, 64], (i, j, k) -> (k, j)>]
      out_specs [#grid.block<[48, 64], (i, j, k) -> (i, j)>]
  return
}

// Whole-K blocks with bias and relu fused into the contraction's tiles
// (contraction_epilogue.rs): B's column panels repeat for each row block.
func.func @bias_relu_kernel(%x: memref<8x64xf32>, %y: memref<64x32xf32>, %bias: memref<1x32xf32>, %z: memref<8x32xf32>) {
  %a = block.load %x : memref<8x64xf32> -> tensor<8x64xf32>
  %b = block.load %y : memref<64x32xf32> -> tensor<64x32xf32>
  %c = block.dot %a, %b : tensor<8x64xf32>, tensor<64x32xf32> -> tensor<8x32xf32>
  %bv = block.load %bias : memref<1x32xf32> -> tensor<1x32xf32>
  %bb = block.broadcast %bv dims [] : tensor<1x32xf32> -> tensor<8x32xf32>
  %s = arith.addf %c, %bb : tensor<8x32xf32>
  %zero = arith.constant dense<0.0> : tensor<8x32xf32>
  %r = arith.maximumf %s, %zero : tensor<8x32xf32>
  block.store %r, %z : tensor<8x32xf32>, memref<8x32xf32>
  return
}

func.func @bias_relu(%x: memref<32x64xf32>, %y: memref<64x64xf32>, %bias: memref<1x64xf32>, %z: memref<32x64xf32>) {
  grid.call @bias_relu_kernel grid [4, 2] ins(%x, %y, %bias : memref<32x64xf32>, memref<64x64xf32>, memref<1x64xf32>) outs(%z : memref<32x64xf32>)
      in_specs [#grid.block<[8, 64], (i, j) -> (i, 0)>, #grid.block<[64, 32], (i, j) -> (0, j)>, #grid.block<[1, 32], (i, j) -> (0, j)>]
      out_specs [#grid.block<[8, 32], (i, j) -> (i, j)>]
  return
}

// A batch of products, each batch's B shared by its two row blocks.
func.func @batched_kernel(%x: memref<1x8x16xf32>, %y: memref<1x16x32xf32>, %z: memref<1x8x32xf32>) {
  %a = block.load %x : memref<1x8x16xf32> -> tensor<1x8x16xf32>
  %b = block.load %y : memref<1x16x32xf32> -> tensor<1x16x32xf32>
  %c = block.dot %a, %b : tensor<1x8x16xf32>, tensor<1x16x32xf32> -> tensor<1x8x32xf32>
  block.store %c, %z : tensor<1x8x32xf32>, memref<1x8x32xf32>
  return
}

func.func @batched(%x: memref<3x16x16xf32>, %y: memref<3x16x32xf32>, %z: memref<3x16x32xf32>) {
  grid.call @batched_kernel grid [3, 2] ins(%x, %y : memref<3x16x16xf32>, memref<3x16x32xf32>) outs(%z : memref<3x16x32xf32>)
      in_specs [#grid.block<[1, 8, 16], (b, i) -> (b, i, 0)>, #grid.block<[1, 16, 32], (b, i) -> (b, 0, 0)>]
      out_specs [#grid.block<[1, 8, 32], (b, i) -> (b, i, 0)>]
  return
}
