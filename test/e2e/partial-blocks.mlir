// Arrays whose blocks do not divide them, end to end against the reference
// interpreter. The programs with whole blocks work on views of the arrays
// and only the edge programs on padded copies (grid-to-loops), so each
// entry runs both kinds: element-wise over a 1-D array a block and three
// elements long; a matmul whose M and N blocks overhang (the output block
// accumulates in place across the arbitrary K axis, view or copy; K's
// blocks divide it, as padding is unspecified and the interpreter's NaN
// would reach every sum); a squeezed dimension beside a partial one; an
// array updated in place (input and output) in partial 2-D blocks.
// --poison pads the edge blocks with NaN, which must never reach a stored
// element. On the emulated GPU the staged copies live in workgroup memory
// and the kernel runs in two versions (views for the programs whose
// blocks are all whole, copies for the others).
// RUN: tessel run %s --entry elementwise --arg 0=random:1 --arg 1=random:2 --check | FileCheck %s
// RUN: tessel run %s --entry elementwise --arg 0=random:1 --arg 1=random:2 --check --poison | FileCheck %s
// RUN: tessel run %s --entry matmul --arg 0=random:3 --arg 1=random:4 --check | FileCheck %s
// RUN: tessel run %s --entry rows --arg 0=random:5 --check | FileCheck %s
// RUN: tessel run %s --entry in_place --arg 0=random:6 --check | FileCheck %s
// RUN: tessel run %s --entry in_place --arg 0=random:6 --check --poison | FileCheck %s
// RUN: tessel run %s --device rocm-emulated --entry matmul --arg 0=random:3 --arg 1=random:4 --check | FileCheck %s
// CHECK: check: compiled code matches the interpreter

func.func @axpy_kernel(%x: memref<64xf32>, %y: memref<64xf32>, %o: memref<64xf32>) {
  %a = block.load %x : memref<64xf32> -> tensor<64xf32>
  %b = block.load %y : memref<64xf32> -> tensor<64xf32>
  %two = arith.constant dense<2.0> : tensor<64xf32>
  %p = arith.mulf %a, %two : tensor<64xf32>
  %s = arith.addf %p, %b : tensor<64xf32>
  block.store %s, %o : tensor<64xf32>, memref<64xf32>
  return
}
func.func @elementwise(%x: memref<323xf32>, %y: memref<323xf32>, %o: memref<323xf32>) {
  grid.call @axpy_kernel grid [6] ins(%x, %y : memref<323xf32>, memref<323xf32>) outs(%o : memref<323xf32>)
      in_specs [#grid.block<[64], (i) -> (i)>, #grid.block<[64], (i) -> (i)>] out_specs [#grid.block<[64], (i) -> (i)>]
  return
}

func.func @matmul_kernel(%x: memref<16x32xf32>, %y: memref<32x32xf32>, %z: memref<16x32xf32>) {
  %k = grid.program_id 2
  %c0 = arith.constant 0 : index
  %first = arith.cmpi eq, %k, %c0 : index
  scf.if %first {
    %zeros = arith.constant dense<0.0> : tensor<16x32xf32>
    block.store %zeros, %z : tensor<16x32xf32>, memref<16x32xf32>
  }
  %a = block.load %x : memref<16x32xf32> -> tensor<16x32xf32>
  %b = block.load %y : memref<32x32xf32> -> tensor<32x32xf32>
  %acc = block.load %z : memref<16x32xf32> -> tensor<16x32xf32>
  %c = block.dot %a, %b acc %acc : tensor<16x32xf32>, tensor<32x32xf32>, tensor<16x32xf32> -> tensor<16x32xf32>
  block.store %c, %z : tensor<16x32xf32>, memref<16x32xf32>
  return
}
func.func @matmul(%x: memref<40x64xf32>, %y: memref<64x72xf32>, %z: memref<40x72xf32>) {
  grid.call @matmul_kernel grid [3, 3, 2] ins(%x, %y : memref<40x64xf32>, memref<64x72xf32>) outs(%z : memref<40x72xf32>)
      in_specs [#grid.block<[16, 32], (i, j, k) -> (i, k)>, #grid.block<[32, 32], (i, j, k) -> (k, j)>]
      out_specs [#grid.block<[16, 32], (i, j, k) -> (i, j)>]
  return
}

func.func @rows_kernel(%x: memref<8xf32>, %o: memref<8xf32>) {
  %v = block.load %x : memref<8xf32> -> tensor<8xf32>
  %three = arith.constant dense<3.0> : tensor<8xf32>
  %s = arith.subf %v, %three : tensor<8xf32>
  block.store %s, %o : tensor<8xf32>, memref<8xf32>
  return
}
func.func @rows(%x: memref<5x20xf32>, %o: memref<5x20xf32>) {
  grid.call @rows_kernel grid [5, 3] ins(%x : memref<5x20xf32>) outs(%o : memref<5x20xf32>)
      in_specs [#grid.block<[squeezed, 8], (i, j) -> (i, j)>] out_specs [#grid.block<[squeezed, 8], (i, j) -> (i, j)>]
  return
}

func.func @square_kernel(%x: memref<4x8xf32>, %o: memref<4x8xf32>) {
  %v = block.load %x : memref<4x8xf32> -> tensor<4x8xf32>
  %s = arith.mulf %v, %v : tensor<4x8xf32>
  block.store %s, %o : tensor<4x8xf32>, memref<4x8xf32>
  return
}
func.func @in_place(%x: memref<10x13xf32>) {
  grid.call @square_kernel grid [3, 2] ins(%x : memref<10x13xf32>) outs(%x : memref<10x13xf32>)
      in_specs [#grid.block<[4, 8], (i, j) -> (i, j)>] out_specs [#grid.block<[4, 8], (i, j) -> (i, j)>]
  return
}

// Every entry on the emulated GPU too (the matmul's run is above).
// RUN: tessel run %s --device rocm-emulated --entry elementwise --arg 0=random:1 --arg 1=random:2 --check | FileCheck %s
// RUN: tessel run %s --device rocm-emulated --entry elementwise --arg 0=random:1 --arg 1=random:2 --check --poison | FileCheck %s
// RUN: tessel run %s --device rocm-emulated --entry rows --arg 0=random:5 --check | FileCheck %s
// RUN: tessel run %s --device rocm-emulated --entry in_place --arg 0=random:6 --check --poison | FileCheck %s

// Partial blocks only along the outermost dimension, in arrays whose byte
// size is a multiple of 16: on a GPU their clipped part lies past the
// array's end, where buffer accesses read zeros and write nothing, so every
// program runs on views (tessel-past-end-views; --poison keeps the staged
// copies, whose padding is NaN).
// RUN: tessel run %s --entry tail --arg 0=random:7 --arg 1=random:8 --check | FileCheck %s
// RUN: tessel run %s --device rocm-emulated --entry tail --arg 0=random:7 --arg 1=random:8 --check | FileCheck %s
// RUN: tessel run %s --device rocm-emulated --entry tail --arg 0=random:7 --arg 1=random:8 --check --poison | FileCheck %s
// RUN: tessel run %s --entry row_tail --arg 0=random:9 --check | FileCheck %s
// RUN: tessel run %s --device rocm-emulated --entry row_tail --arg 0=random:9 --check | FileCheck %s
// No workgroup memory for them in the code object, where @elementwise
// (323 floats: 1292 bytes) keeps staging its edge block:
// RUN: tessel compile %s --target rocm --chip gfx942 -o %t.hsaco && llvm-readelf --notes %t.hsaco | FileCheck %s --check-prefix=NO-STAGING
// NO-STAGING: .group_segment_fixed_size: {{[1-9][0-9]*}}
// NO-STAGING-NOT: .group_segment_fixed_size
// NO-STAGING: .name: elementwise_kernel
// NO-STAGING: .group_segment_fixed_size: 0
// NO-STAGING-NOT: .group_segment_fixed_size
// NO-STAGING: .name: tail_kernel
// NO-STAGING: .group_segment_fixed_size: 0
// NO-STAGING-NOT: .group_segment_fixed_size
// NO-STAGING: .name: row_tail_kernel
func.func @tail(%x: memref<324xf32>, %y: memref<324xf32>, %o: memref<324xf32>) {
  grid.call @axpy_kernel grid [6] ins(%x, %y : memref<324xf32>, memref<324xf32>) outs(%o : memref<324xf32>)
      in_specs [#grid.block<[64], (i) -> (i)>, #grid.block<[64], (i) -> (i)>] out_specs [#grid.block<[64], (i) -> (i)>]
  return
}
func.func @row_tail_kernel(%x: memref<4x16xf32>, %o: memref<4x16xf32>) {
  %v = block.load %x : memref<4x16xf32> -> tensor<4x16xf32>
  %half = arith.constant dense<0.5> : tensor<4x16xf32>
  %s = arith.mulf %v, %half : tensor<4x16xf32>
  block.store %s, %o : tensor<4x16xf32>, memref<4x16xf32>
  return
}
func.func @row_tail(%x: memref<10x16xf32>, %o: memref<10x16xf32>) {
  grid.call @row_tail_kernel grid [3] ins(%x : memref<10x16xf32>) outs(%o : memref<10x16xf32>)
      in_specs [#grid.block<[4, 16], (i) -> (i, 0)>] out_specs [#grid.block<[4, 16], (i) -> (i, 0)>]
  return
}
