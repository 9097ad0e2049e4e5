// An output block revisited by consecutive programs keeps all of it from
// one visit to the next, the part past the array's end included, as a TPU
// keeps it in VMEM (Pallas): JAX's paged attention keeps its running row
// maximum and sum in 128-lane blocks of one-column arrays, and reads all
// 128 lanes back at the next key block. Partial blocks were staged afresh
// at every visit (padding, then the in-bounds part), so what the last
// visit left past the array's end was lost: the sums below came out 0
// (and in the interpreter, the padding's integer minimum).
// RUN: tessel run %s --entry lanes --check | FileCheck %s
// RUN: tessel run %s --entry lanes --check --poison | FileCheck %s
// RUN: tessel run %s --entry rows --check | FileCheck %s --check-prefix=ROWS
// RUN: tessel run %s --entry rows --check --poison | FileCheck %s --check-prefix=ROWS
// RUN: tessel run %s --device rocm-emulated --entry lanes --check | FileCheck %s
// RUN: tessel run %s --device rocm-emulated --entry rows --check | FileCheck %s --check-prefix=ROWS
// CHECK-COUNT-8: 8128]
// CHECK: check: compiled code matches the interpreter
// ROWS-COUNT-20: 28 28 28 28]
// ROWS: check: compiled code matches the interpreter

// Every block is partial (127 of its 128 lanes past the end): the first
// visit writes the lane numbers, the second sums them.
func.func @lanes_kernel(%o: memref<8x128xi32>) {
  %k = grid.program_id 0
  %c0 = arith.constant 0 : index
  %first = arith.cmpi eq, %k, %c0 : index
  scf.if %first {
    %iota = block.iota dim 1 : tensor<8x128xi32>
    block.store %iota, %o : tensor<8x128xi32>, memref<8x128xi32>
  } else {
    %v = block.load %o : memref<8x128xi32> -> tensor<8x128xi32>
    %s = block.reduce sum %v dims [1] : tensor<8x128xi32> -> tensor<8xi32>
    %b = block.broadcast %s dims [1] : tensor<8xi32> -> tensor<8x128xi32>
    block.store %b, %o : tensor<8x128xi32>, memref<8x128xi32>
  }
  return
}

func.func @lanes(%o: memref<8x1xi32>) {
  grid.call @lanes_kernel grid [2] ins() outs(%o : memref<8x1xi32>)
      in_specs [] out_specs [#grid.block<[8, 128], (k) -> (0, 0)>]
  return
}

// Whole blocks and a partial one (rows 16 to 23 of 20) on a parallel
// axis, revisited along an arbitrary one: the first visit writes the row
// numbers within the block, the second sums each column over them.
func.func @rows_kernel(%o: memref<8x4xi32>) {
  %k = grid.program_id 1
  %c0 = arith.constant 0 : index
  %first = arith.cmpi eq, %k, %c0 : index
  scf.if %first {
    %iota = block.iota dim 0 : tensor<8x4xi32>
    block.store %iota, %o : tensor<8x4xi32>, memref<8x4xi32>
  } else {
    %v = block.load %o : memref<8x4xi32> -> tensor<8x4xi32>
    %s = block.reduce sum %v dims [0] : tensor<8x4xi32> -> tensor<4xi32>
    %b = block.broadcast %s dims [0] : tensor<4xi32> -> tensor<8x4xi32>
    block.store %b, %o : tensor<8x4xi32>, memref<8x4xi32>
  }
  return
}

func.func @rows(%o: memref<20x4xi32>) {
  grid.call @rows_kernel grid [3, 2] ins() outs(%o : memref<20x4xi32>)
      in_specs [] out_specs [#grid.block<[8, 4], (i, k) -> (i, 0)>]
      semantics [parallel, arbitrary]
  return
}
