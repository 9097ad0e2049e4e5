// Kernel features end to end, each compiled and checked against the
// reference interpreter: reductions and broadcasts (row softmax), iota,
// dynamic windows in an scf.for (fori_loop), atomics from parallel
// programs, aliased inputs and outputs, scratch buffers accumulating over
// an arbitrary axis, masked loads with `other`, and masked windows
// reaching past the end of their arrays.
// RUN: tessel run %s --entry softmax --arg 0=random:1 --check | FileCheck %s --check-prefix=CHECKED
// RUN: tessel run %s --entry windows --arg 0=random:2 --check | FileCheck %s --check-prefix=CHECKED
// RUN: tessel run %s --entry atomics --arg 0=random:3 --check | FileCheck %s --check-prefix=CHECKED
// RUN: tessel run %s --entry in_place --arg 0=random:4 --check | FileCheck %s --check-prefix=CHECKED
// RUN: tessel run %s --entry scratch_sum --arg 0=random:5 --check | FileCheck %s --check-prefix=CHECKED
// RUN: tessel run %s --entry masked_max --arg 0=random:6 --check | FileCheck %s --check-prefix=CHECKED
// RUN: tessel run %s --entry edge_windows --arg 0=random:7 --check | FileCheck %s --check-prefixes=CHECKED,EDGE
// EDGE: arg1: memref<50xf32>
// EDGE-NEXT: [-0.87873054  0.22834516 -0.42943132  1.1700687   0.08998913  2.8045254
// RUN: tessel run %s --entry edge_once --arg 0=random:7 --check | FileCheck %s --check-prefixes=CHECKED,EDGE
// RUN: tessel compile %s --target rocm -o %t.hsaco
// RUN: tessel run %s --entry iota_rows | FileCheck %s --check-prefix=IOTA --match-full-lines --strict-whitespace
// CHECKED: check: compiled code matches the interpreter

// Row softmax over 4x16 blocks of a 10x16 array (a partial last block).
func.func @softmax_kernel(%x: memref<4x16xf32>, %o: memref<4x16xf32>) {
  %v = block.load %x : memref<4x16xf32> -> tensor<4x16xf32>
  %m = block.reduce max %v dims [1] : tensor<4x16xf32> -> tensor<4xf32>
  %mb = block.broadcast %m dims [1] : tensor<4xf32> -> tensor<4x16xf32>
  %d = arith.subf %v, %mb : tensor<4x16xf32>
  %e = math.exp %d : tensor<4x16xf32>
  %s = block.reduce sum %e dims [1] : tensor<4x16xf32> -> tensor<4xf32>
  %sb = block.broadcast %s dims [1] : tensor<4xf32> -> tensor<4x16xf32>
  %r = arith.divf %e, %sb : tensor<4x16xf32>
  block.store %r, %o : tensor<4x16xf32>, memref<4x16xf32>
  return
}
func.func @softmax(%x: memref<10x16xf32>, %o: memref<10x16xf32>) {
  grid.call @softmax_kernel grid [3] ins(%x : memref<10x16xf32>) outs(%o : memref<10x16xf32>)
      in_specs [#grid.block<[4, 16], (i) -> (i, 0)>] out_specs [#grid.block<[4, 16], (i) -> (i, 0)>]
  return
}

// fori_loop over 8-wide windows of a 32-element block: o = 2 * x.
func.func @windows_kernel(%x: memref<32xf32>, %o: memref<32xf32>) {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  scf.for %i = %c0 to %c32 step %c8 {
    %w = block.load %x[%i] [8] : memref<32xf32> -> tensor<8xf32>
    %d = arith.addf %w, %w : tensor<8xf32>
    block.store %d, %o[%i] : tensor<8xf32>, memref<32xf32>
  }
  return
}
func.func @windows(%x: memref<96xf32>, %o: memref<96xf32>) {
  grid.call @windows_kernel grid [3] ins(%x : memref<96xf32>) outs(%o : memref<96xf32>)
      in_specs [#grid.block<[32], (i) -> (i)>] out_specs [#grid.block<[32], (i) -> (i)>]
  return
}

// Parallel programs atomically add their blocks' sums into one cell.
func.func @atomics_kernel(%x: memref<8xi32>, %o: memref<1xi32>) {
  %v = block.load %x : memref<8xi32> -> tensor<8xi32>
  %s = block.reduce sum %v dims [0] : tensor<8xi32> -> tensor<i32>
  %one = block.broadcast %s dims [0] : tensor<i32> -> tensor<1xi32>
  block.atomic_rmw add %one, %o : tensor<1xi32>, memref<1xi32>
  return
}
func.func @atomics(%x: memref<64xi32>, %o: memref<1xi32>) {
  grid.call @atomics_kernel grid [8] ins(%x : memref<64xi32>) outs(%o : memref<1xi32>)
      in_specs [#grid.block<[8], (i) -> (i)>] out_specs [#grid.block<full>] semantics [parallel]
  return
}

// The same buffer in and out: x = x * x, in place.
func.func @square_kernel(%x: memref<4x4xf32>, %o: memref<4x4xf32>) {
  %v = block.load %x : memref<4x4xf32> -> tensor<4x4xf32>
  %s = arith.mulf %v, %v : tensor<4x4xf32>
  block.store %s, %o : tensor<4x4xf32>, memref<4x4xf32>
  return
}
func.func @in_place(%x: memref<8x8xf32>) {
  grid.call @square_kernel grid [2, 2] ins(%x : memref<8x8xf32>) outs(%x : memref<8x8xf32>)
      in_specs [#grid.block<[4, 4], (i, j) -> (i, j)>] out_specs [#grid.block<[4, 4], (i, j) -> (i, j)>]
  return
}

// A scratch accumulator carried across the arbitrary axis: column sums of
// 4-row blocks, written on the last step.
func.func @scratch_kernel(%x: memref<4x8xf32>, %o: memref<1x8xf32>, %acc: memref<1x8xf32>) {
  %k = grid.program_id 1
  %n = grid.num_programs 1
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %first = arith.cmpi eq, %k, %c0 : index
  scf.if %first {
    %z = arith.constant dense<0.0> : tensor<1x8xf32>
    block.store %z, %acc : tensor<1x8xf32>, memref<1x8xf32>
  }
  %v = block.load %x : memref<4x8xf32> -> tensor<4x8xf32>
  %s = block.reduce sum %v dims [0] : tensor<4x8xf32> -> tensor<8xf32>
  %s2 = block.broadcast %s dims [0] : tensor<8xf32> -> tensor<1x8xf32>
  %a = block.load %acc : memref<1x8xf32> -> tensor<1x8xf32>
  %t = arith.addf %a, %s2 : tensor<1x8xf32>
  block.store %t, %acc : tensor<1x8xf32>, memref<1x8xf32>
  %last_index = arith.subi %n, %c1 : index
  %last = arith.cmpi eq, %k, %last_index : index
  scf.if %last {
    block.store %t, %o : tensor<1x8xf32>, memref<1x8xf32>
  }
  return
}
func.func @scratch_sum(%x: memref<16x16xf32>, %o: memref<1x16xf32>) {
  grid.call @scratch_kernel grid [2, 4] ins(%x : memref<16x16xf32>) outs(%o : memref<1x16xf32>) scratch(memref<1x8xf32>)
      in_specs [#grid.block<[4, 8], (j, k) -> (k, j)>] out_specs [#grid.block<[1, 8], (j, k) -> (0, j)>]
  return
}

// Masked loads with `other`: the maximum over the first 5 columns of each
// row (other = -inf elsewhere).
func.func @masked_kernel(%x: memref<2x8xf32>, %o: memref<2xf32>) {
  %col = block.iota dim 1 : tensor<2x8xi32>
  %five = arith.constant dense<5> : tensor<2x8xi32>
  %m = arith.cmpi slt, %col, %five : tensor<2x8xi32>
  %ninf = arith.constant 0xFF800000 : f32
  %v = block.load %x mask %m other %ninf : memref<2x8xf32> -> tensor<2x8xf32>
  %r = block.reduce max %v dims [1] : tensor<2x8xf32> -> tensor<2xf32>
  block.store %r, %o : tensor<2xf32>, memref<2xf32>
  return
}
func.func @masked_max(%x: memref<6x8xf32>, %o: memref<6xf32>) {
  grid.call @masked_kernel grid [3] ins(%x : memref<6x8xf32>) outs(%o : memref<6xf32>)
      in_specs [#grid.block<[2, 8], (i) -> (i, 0)>] out_specs [#grid.block<[2], (i) -> (i)>]
  return
}

// IOTA:arg0: memref<3x4xi32>
// IOTA-NEXT:{{\[\[}}0 1 2 3]
// IOTA-NEXT: [0 1 2 3]
// IOTA-NEXT: [0 1 2 3]]
func.func @iota_kernel(%o: memref<1x4xi32>) {
  %i = block.iota dim 1 : tensor<1x4xi32>
  block.store %i, %o : tensor<1x4xi32>, memref<1x4xi32>
  return
}
func.func @iota_rows(%o: memref<3x4xi32>) {
  grid.call @iota_kernel grid [3] ins() outs(%o : memref<3x4xi32>) in_specs [] out_specs [#grid.block<[1, 4], (i) -> (i, 0)>]
  return
}

// Triton-style edge handling: the whole 50-element arrays are the refs and
// each program takes a 16-element window (pl.ds) at 16 * i; the last
// window reaches 14 elements past the end, and the mask keeps its loads
// and stores inside (predicated: nothing past the end is read or
// written).
func.func @edge_kernel(%x: memref<50xf32>, %o: memref<50xf32>) {
  %i = grid.program_id 0
  %c16 = arith.constant 16 : index
  %start = arith.muli %i, %c16 : index
  %start32 = arith.index_cast %start : index to i32
  %starts = tensor.splat %start32 : tensor<16xi32>
  %iota = block.iota dim 0 : tensor<16xi32>
  %at = arith.addi %starts, %iota : tensor<16xi32>
  %n = arith.constant dense<50> : tensor<16xi32>
  %in = arith.cmpi slt, %at, %n : tensor<16xi32>
  %v = block.load %x[%start] [16] mask %in : memref<50xf32> -> tensor<16xf32>
  %two = arith.constant dense<2.0> : tensor<16xf32>
  %one = arith.constant dense<1.0> : tensor<16xf32>
  %t = arith.mulf %v, %two : tensor<16xf32>
  %r = arith.addf %t, %one : tensor<16xf32>
  block.store %r, %o[%start] mask %in : tensor<16xf32>, memref<50xf32>
  return
}

func.func @edge_windows(%x: memref<50xf32>, %o: memref<50xf32>) {
  grid.call @edge_kernel grid [4] ins(%x : memref<50xf32>) outs(%o : memref<50xf32>)
      in_specs [#grid.block<full>] out_specs [#grid.block<full>]
  return
}

// The same windows, from a single program (`grid []`, a loop over the
// windows in the kernel).
func.func @edge_once_kernel(%x: memref<50xf32>, %o: memref<50xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c16 = arith.constant 16 : index
  scf.for %i = %c0 to %c4 step %c1 {
    %start = arith.muli %i, %c16 : index
    %start32 = arith.index_cast %start : index to i32
    %starts = tensor.splat %start32 : tensor<16xi32>
    %iota = block.iota dim 0 : tensor<16xi32>
    %at = arith.addi %starts, %iota : tensor<16xi32>
    %n = arith.constant dense<50> : tensor<16xi32>
    %in = arith.cmpi slt, %at, %n : tensor<16xi32>
    %zero = arith.constant 0.0 : f32
    %v = block.load %x[%start] [16] mask %in other %zero : memref<50xf32> -> tensor<16xf32>
    %two = arith.constant dense<2.0> : tensor<16xf32>
    %one = arith.constant dense<1.0> : tensor<16xf32>
    %t = arith.mulf %v, %two : tensor<16xf32>
    %r = arith.addf %t, %one : tensor<16xf32>
    block.store %r, %o[%start] mask %in : tensor<16xf32>, memref<50xf32>
  }
  return
}

func.func @edge_once(%x: memref<50xf32>, %o: memref<50xf32>) {
  grid.call @edge_once_kernel grid [] ins(%x : memref<50xf32>) outs(%o : memref<50xf32>)
      in_specs [#grid.block<full>] out_specs [#grid.block<full>]
  return
}
