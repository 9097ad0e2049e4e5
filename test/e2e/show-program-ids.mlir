// End to end: every show_program_ids call of the Pallas grid/BlockSpec
// docs (JAX's Pallas guide, "Grids and BlockSpecs"), compiled for the CPU and run; the
// printed arrays are the docs' outputs, character for character.
// RUN: tessel run %s --entry blocks | FileCheck %s --check-prefix=BLOCKS --match-full-lines --strict-whitespace
// RUN: tessel run %s --entry out_of_bounds | FileCheck %s --check-prefix=OOB --match-full-lines --strict-whitespace
// RUN: tessel run %s --entry smaller_than_block | FileCheck %s --check-prefix=SMALL --match-full-lines --strict-whitespace
// RUN: tessel run %s --entry revisits | FileCheck %s --check-prefix=REVISIT --match-full-lines --strict-whitespace
// RUN: tessel run %s --entry whole | FileCheck %s --check-prefix=WHOLE --match-full-lines --strict-whitespace
// RUN: tessel run %s --entry unblocked | FileCheck %s --check-prefix=BLOCKS --match-full-lines --strict-whitespace
// RUN: tessel run %s --entry unblocked_padded | FileCheck %s --check-prefix=PADDED --match-full-lines --strict-whitespace

// o_ref[...] = 10 * program_id(0) + program_id(1), for 2-D grids.
func.func @ids_2d(%o: memref<2x3xi32>) {
  %i = grid.program_id 0
  %j = grid.program_id 1
  %c10 = arith.constant 10 : index
  %t = arith.muli %i, %c10 : index
  %v = arith.addi %t, %j : index
  %v32 = arith.index_cast %v : index to i32
  %b = tensor.splat %v32 : tensor<2x3xi32>
  block.store %b, %o : tensor<2x3xi32>, memref<2x3xi32>
  return
}

// BLOCKS:arg0: memref<8x6xi32>
// BLOCKS-NEXT:{{\[\[}} 0  0  0  1  1  1]
// BLOCKS-NEXT: [ 0  0  0  1  1  1]
// BLOCKS-NEXT: [10 10 10 11 11 11]
// BLOCKS-NEXT: [10 10 10 11 11 11]
// BLOCKS-NEXT: [20 20 20 21 21 21]
// BLOCKS-NEXT: [20 20 20 21 21 21]
// BLOCKS-NEXT: [30 30 30 31 31 31]
// BLOCKS-NEXT: [30 30 30 31 31 31]]
func.func @blocks(%o: memref<8x6xi32>) {
  grid.call @ids_2d grid [4, 2] ins() outs(%o : memref<8x6xi32>)
      in_specs [] out_specs [#grid.block<[2, 3], (i, j) -> (i, j)>]
  return
}

// OOB:arg0: memref<7x5xi32>
// OOB-NEXT:{{\[\[}} 0  0  0  1  1]
// OOB-NEXT: [ 0  0  0  1  1]
// OOB-NEXT: [10 10 10 11 11]
// OOB-NEXT: [10 10 10 11 11]
// OOB-NEXT: [20 20 20 21 21]
// OOB-NEXT: [20 20 20 21 21]
// OOB-NEXT: [30 30 30 31 31]]
func.func @out_of_bounds(%o: memref<7x5xi32>) {
  grid.call @ids_2d grid [4, 2] ins() outs(%o : memref<7x5xi32>)
      in_specs [] out_specs [#grid.block<[2, 3], (i, j) -> (i, j)>]
  return
}

// SMALL:arg0: memref<1x2xi32>
// SMALL-NEXT:{{\[\[}}0 0]]
func.func @smaller_than_block(%o: memref<1x2xi32>) {
  grid.call @ids_2d grid [1, 1] ins() outs(%o : memref<1x2xi32>)
      in_specs [] out_specs [#grid.block<[2, 3], (i, j) -> (i, j)>]
  return
}

// 100 * program_id(0) + 10 * program_id(1) + program_id(2): the last axis
// revisits each output block 10 times, in order.
func.func @ids_3d(%o: memref<2x3xi32>) {
  %i = grid.program_id 0
  %j = grid.program_id 1
  %k = grid.program_id 2
  %c10 = arith.constant 10 : index
  %c100 = arith.constant 100 : index
  %a = arith.muli %i, %c100 : index
  %b = arith.muli %j, %c10 : index
  %s = arith.addi %a, %b : index
  %v = arith.addi %s, %k : index
  %v32 = arith.index_cast %v : index to i32
  %t = tensor.splat %v32 : tensor<2x3xi32>
  block.store %t, %o : tensor<2x3xi32>, memref<2x3xi32>
  return
}
// REVISIT:arg0: memref<8x6xi32>
// REVISIT-NEXT:{{\[\[}}  9   9   9  19  19  19]
// REVISIT-NEXT: [  9   9   9  19  19  19]
// REVISIT-NEXT: [109 109 109 119 119 119]
// REVISIT-NEXT: [109 109 109 119 119 119]
// REVISIT-NEXT: [209 209 209 219 219 219]
// REVISIT-NEXT: [209 209 209 219 219 219]
// REVISIT-NEXT: [309 309 309 319 319 319]
// REVISIT-NEXT: [309 309 309 319 319 319]]
func.func @revisits(%o: memref<8x6xi32>) {
  grid.call @ids_3d grid [4, 2, 10] ins() outs(%o : memref<8x6xi32>)
      in_specs [] out_specs [#grid.block<[2, 3], (i, j, k) -> (i, j)>]
  return
}

// block_shape=None and block_shape=(4, 4) with index_map=None: every
// program writes the whole array; the last one, (1, 2), wins.
func.func @ids_whole(%o: memref<4x4xi32>) {
  %i = grid.program_id 0
  %j = grid.program_id 1
  %c10 = arith.constant 10 : index
  %t = arith.muli %i, %c10 : index
  %v = arith.addi %t, %j : index
  %v32 = arith.index_cast %v : index to i32
  %b = tensor.splat %v32 : tensor<4x4xi32>
  block.store %b, %o : tensor<4x4xi32>, memref<4x4xi32>
  return
}
// WHOLE:arg0: memref<4x4xi32>
// WHOLE-NEXT:{{\[\[}}12 12 12 12]
// WHOLE-NEXT: [12 12 12 12]
// WHOLE-NEXT: [12 12 12 12]
// WHOLE-NEXT: [12 12 12 12]]
// WHOLE-NEXT:arg1: memref<4x4xi32>
// WHOLE-NEXT:{{\[\[}}12 12 12 12]
// WHOLE-NEXT: [12 12 12 12]
// WHOLE-NEXT: [12 12 12 12]
// WHOLE-NEXT: [12 12 12 12]]
func.func @whole(%o: memref<4x4xi32>, %p: memref<4x4xi32>) {
  grid.call @ids_whole grid [2, 3] ins() outs(%o : memref<4x4xi32>) in_specs [] out_specs [#grid.block<full>]
  grid.call @ids_whole grid [2, 3] ins() outs(%p : memref<4x4xi32>) in_specs [] out_specs [#grid.block<[4, 4]>]
  return
}

// Unblocked: element offsets (2i, 3j) give the same picture as blocked.
func.func @unblocked(%o: memref<8x6xi32>) {
  grid.call @ids_2d grid [4, 2] ins() outs(%o : memref<8x6xi32>)
      in_specs [] out_specs [#grid.block<[2, 3], (i, j) -> (2 * i, 3 * j), unblocked>]
  return
}

// PADDED:arg0: memref<7x7xi32>
// PADDED-NEXT:{{\[\[}} 0  1  1  1  2  2  2]
// PADDED-NEXT: [10 11 11 11 12 12 12]
// PADDED-NEXT: [10 11 11 11 12 12 12]
// PADDED-NEXT: [20 21 21 21 22 22 22]
// PADDED-NEXT: [20 21 21 21 22 22 22]
// PADDED-NEXT: [30 31 31 31 32 32 32]
// PADDED-NEXT: [30 31 31 31 32 32 32]]
func.func @unblocked_padded(%o: memref<7x7xi32>) {
  grid.call @ids_2d grid [4, 3] ins() outs(%o : memref<7x7xi32>)
      in_specs [] out_specs [#grid.block<[2, 3], (i, j) -> (2 * i, 3 * j), unblocked pad [[1, 0], [2, 0]]>]
  return
}

// block_shape=(None, 2): the kernel's ref has shape (2,).
// RUN: tessel run %s --entry squeezed | FileCheck %s --check-prefix=SQUEEZED --match-full-lines --strict-whitespace
// SQUEEZED:arg0: memref<3x4xi32>
// SQUEEZED-NEXT:{{\[\[}} 0  0 10 10]
// SQUEEZED-NEXT: [ 1  1 11 11]
// SQUEEZED-NEXT: [ 2  2 12 12]]
func.func @ids_squeezed(%o: memref<2xi32>) {
  %i = grid.program_id 0
  %j = grid.program_id 1
  %c10 = arith.constant 10 : index
  %t = arith.muli %j, %c10 : index
  %v = arith.addi %t, %i : index
  %v32 = arith.index_cast %v : index to i32
  %b = tensor.splat %v32 : tensor<2xi32>
  block.store %b, %o : tensor<2xi32>, memref<2xi32>
  return
}
func.func @squeezed(%o: memref<3x4xi32>) {
  grid.call @ids_squeezed grid [3, 2] ins() outs(%o : memref<3x4xi32>)
      in_specs [] out_specs [#grid.block<[squeezed, 2], (i, j) -> (i, j)>]
  return
}

// The reference interpreter prints the same arrays, and --check confirms
// compiled code (with poison padding) agrees with it.
// RUN: tessel run %s --entry revisits --interpret | FileCheck %s --check-prefix=REVISIT --match-full-lines --strict-whitespace
// RUN: tessel run %s --entry unblocked_padded --interpret | FileCheck %s --check-prefix=PADDED --match-full-lines --strict-whitespace
// RUN: tessel run %s --entry out_of_bounds --check | FileCheck %s --check-prefix=CHECKED
// RUN: tessel run %s --entry squeezed --check | FileCheck %s --check-prefix=CHECKED
// CHECKED: check: compiled code matches the interpreter
