// Grid sizes that are values (`grid [%n, 2]`), here loaded from a scalar
// array: the programs run over the first %n rows of blocks, an ordered
// axis of %k steps accumulates, grid.num_programs reads the size, and the
// GPU launch counts its workgroups at run time. Expected values are
// numpy's. On the CPU against the interpreter (--check); the harness
// reruns each `tessel run` on the emulated GPU; the ROCm path compiles for
// every chip.
// RUN: tessel run %s --entry rows --arg 0=test/e2e/Inputs/count_3.npy --arg 1=test/e2e/Inputs/rows_8x4.npy --check | FileCheck %s --check-prefix=ROWS
// RUN: tessel run %s --entry sums --arg 0=test/e2e/Inputs/count_3.npy --arg 1=test/e2e/Inputs/rows_2x16.npy --check | FileCheck %s --check-prefix=SUMS
// RUN: tessel run %s --entry rows --arg 0=test/e2e/Inputs/count_negative.npy --interpret 2>&1 | FileCheck %s --check-prefix=NEGATIVE; test ${PIPESTATUS[0]} -eq 1
// RUN: tessel run %s --entry outer --arg 0=test/e2e/Inputs/count_3.npy --arg 1=test/e2e/Inputs/rows_3x8.npy --check | FileCheck %s --check-prefix=OUTER
// RUN: tessel compile %s --target rocm --chip gfx90a --emit hsaco -o %t.gfx90a.hsaco
// RUN: tessel compile %s --target rocm --chip gfx942 --emit hsaco -o %t.gfx942.hsaco
// RUN: tessel compile %s --target rocm --chip gfx1100 --emit hsaco -o %t.gfx1100.hsaco

// A negative size is an error (compiled code runs no program).
// NEGATIVE: error: interpreter: grid size -2 is negative

// 3 x 2 programs of 2x2 blocks: x * num_programs(0) + program_id(1); the
// last two rows are not visited.
// ROWS:      arg2: memref<8x4xf32>
// ROWS-NEXT: {{\[\[}} 0.  3.  7. 10.]
// ROWS-NEXT:  [12. 15. 19. 22.]
// ROWS-NEXT:  [24. 27. 31. 34.]
// ROWS-NEXT:  [36. 39. 43. 46.]
// ROWS-NEXT:  [48. 51. 55. 58.]
// ROWS-NEXT:  [60. 63. 67. 70.]
// ROWS-NEXT:  [ 0.  0.  0.  0.]
// ROWS-NEXT:  [ 0.  0.  0.  0.]]
// ROWS:      check: compiled code matches the interpreter
func.func @rows_kernel(%x: memref<2x2xf32>, %o: memref<2x2xf32>) {
  %n = grid.num_programs 0
  %j = grid.program_id 1
  %nf = arith.index_cast %n : index to i32
  %jf = arith.index_cast %j : index to i32
  %nv = arith.sitofp %nf : i32 to f32
  %jv = arith.sitofp %jf : i32 to f32
  %scale = tensor.splat %nv : tensor<2x2xf32>
  %shift = tensor.splat %jv : tensor<2x2xf32>
  %v = block.load %x : memref<2x2xf32> -> tensor<2x2xf32>
  %scaled = arith.mulf %v, %scale : tensor<2x2xf32>
  %r = arith.addf %scaled, %shift : tensor<2x2xf32>
  block.store %r, %o : tensor<2x2xf32>, memref<2x2xf32>
  return
}
func.func @rows(%count: memref<1xi32>, %x: memref<8x4xf32>, %o: memref<8x4xf32>) {
  %c0 = arith.constant 0 : index
  %n32 = memref.load %count[%c0] : memref<1xi32>
  %n = arith.index_cast %n32 : i32 to index
  grid.call @rows_kernel grid [%n, 2] ins(%x : memref<8x4xf32>) outs(%o : memref<8x4xf32>)
      in_specs [#grid.block<[2, 2], (i, j) -> (i, j)>] out_specs [#grid.block<[2, 2], (i, j) -> (i, j)>]
  return
}

// Each row sums its first %k = 3 column blocks of 4 (an ordered axis of
// dynamic length): y[:, :12].reshape(2, 3, 4).sum(1).
// SUMS:      arg2: memref<2x4xf32>
// SUMS-NEXT: {{\[\[}}12. 15. 18. 21.]
// SUMS-NEXT:  [60. 63. 66. 69.]]
// SUMS:      check: compiled code matches the interpreter
func.func @sums_kernel(%x: memref<1x4xf32>, %o: memref<1x4xf32>) {
  %j = grid.program_id 1
  %c0 = arith.constant 0 : index
  %first = arith.cmpi eq, %j, %c0 : index
  scf.if %first {
    %zero = arith.constant dense<0.0> : tensor<1x4xf32>
    block.store %zero, %o : tensor<1x4xf32>, memref<1x4xf32>
  }
  %v = block.load %x : memref<1x4xf32> -> tensor<1x4xf32>
  %acc = block.load %o : memref<1x4xf32> -> tensor<1x4xf32>
  %sum = arith.addf %acc, %v : tensor<1x4xf32>
  block.store %sum, %o : tensor<1x4xf32>, memref<1x4xf32>
  return
}
func.func @sums(%count: memref<1xi32>, %x: memref<2x16xf32>, %o: memref<2x4xf32>) {
  %c0 = arith.constant 0 : index
  %k32 = memref.load %count[%c0] : memref<1xi32>
  %k = arith.index_cast %k32 : i32 to index
  grid.call @sums_kernel grid [2, %k] ins(%x : memref<2x16xf32>) outs(%o : memref<2x4xf32>)
      in_specs [#grid.block<[1, 4], (i, j) -> (i, j)>] out_specs [#grid.block<[1, 4], (i, j) -> (i, 0)>]
  return
}

// The ordered axis outermost, of %k = 3 steps (a host loop around the
// launches on GPUs): the column blocks accumulate the first %k rows,
// x.sum(0).
// OUTER:      arg2: memref<1x8xf32>
// OUTER-NEXT: {{\[\[}}24. 27. 30. 33. 36. 39. 42. 45.]]
// OUTER:      check: compiled code matches the interpreter
func.func @outer_kernel(%x: memref<1x4xf32>, %o: memref<1x4xf32>) {
  %i = grid.program_id 0
  %c0 = arith.constant 0 : index
  %first = arith.cmpi eq, %i, %c0 : index
  scf.if %first {
    %zero = arith.constant dense<0.0> : tensor<1x4xf32>
    block.store %zero, %o : tensor<1x4xf32>, memref<1x4xf32>
  }
  %v = block.load %x : memref<1x4xf32> -> tensor<1x4xf32>
  %acc = block.load %o : memref<1x4xf32> -> tensor<1x4xf32>
  %sum = arith.addf %acc, %v : tensor<1x4xf32>
  block.store %sum, %o : tensor<1x4xf32>, memref<1x4xf32>
  return
}
func.func @outer(%count: memref<1xi32>, %x: memref<3x8xf32>, %o: memref<1x8xf32>) {
  %c0 = arith.constant 0 : index
  %k32 = memref.load %count[%c0] : memref<1xi32>
  %k = arith.index_cast %k32 : i32 to index
  grid.call @outer_kernel grid [%k, 2] ins(%x : memref<3x8xf32>) outs(%o : memref<1x8xf32>)
      in_specs [#grid.block<[1, 4], (i, j) -> (i, j)>] out_specs [#grid.block<[1, 4], (i, j) -> (0, j)>]
  return
}

