// The show_program_ids calls of the Pallas grid/BlockSpec docs (JAX docs),
// one per variant, verified over the whole grid with inferred semantics.
// Their outputs are checked end to end once the CPU pipeline runs them.
// RUN: tessel-opt %s --grid-verify-specs | FileCheck %s
// RUN: tessel-opt %s > %t.1 && tessel-opt %t.1 > %t.2 && diff %t.1 %t.2

// o_ref[...] = 10 * program_id(0) + program_id(1)
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
// 100 * program_id(0) + 10 * program_id(1) + program_id(2)
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
// The squeezed example: o_ref has shape (2,).
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

// CHECK-LABEL: func.func @variants
func.func @variants(%a: memref<8x6xi32>, %b: memref<7x5xi32>, %c: memref<1x2xi32>, %d: memref<3x4xi32>,
                    %e: memref<4x4xi32>, %f: memref<7x7xi32>) {
  // x_shape=(8, 6), block_shape=(2, 3), grid=(4, 2)
  // CHECK: grid.call @ids_2d grid [4, 2] {{.*}} semantics [parallel, parallel]
  grid.call @ids_2d grid [4, 2] ins() outs(%a : memref<8x6xi32>) in_specs [] out_specs [#grid.block<[2, 3], (i, j) -> (i, j)>]
  // Out of bounds: x_shape=(7, 5)
  // CHECK: grid.call @ids_2d grid [4, 2] {{.*}} semantics [parallel, parallel]
  grid.call @ids_2d grid [4, 2] ins() outs(%b : memref<7x5xi32>) in_specs [] out_specs [#grid.block<[2, 3], (i, j) -> (i, j)>]
  // The array is smaller than the block: x_shape=(1, 2)
  // CHECK: grid.call @ids_2d grid [1, 1] {{.*}} semantics [parallel, parallel]
  grid.call @ids_2d grid [1, 1] ins() outs(%c : memref<1x2xi32>) in_specs [] out_specs [#grid.block<[2, 3], (i, j) -> (i, j)>]
  // A 3-D grid revisiting each output block 10 times.
  // CHECK: grid.call @ids_3d grid [4, 2, 10] {{.*}} semantics [parallel, parallel, arbitrary]
  grid.call @ids_3d grid [4, 2, 10] ins() outs(%a : memref<8x6xi32>) in_specs [] out_specs [#grid.block<[2, 3], (i, j, k) -> (i, j)>]
  // block_shape=(None, 2)
  // CHECK: grid.call @ids_squeezed grid [3, 2] {{.*}} semantics [parallel, parallel]
  grid.call @ids_squeezed grid [3, 2] ins() outs(%d : memref<3x4xi32>) in_specs [] out_specs [#grid.block<[squeezed, 2], (i, j) -> (i, j)>]
  // block_shape=None, index_map=None; and block_shape=(4, 4), index_map=None
  // CHECK: grid.call @ids_whole grid [2, 3] {{.*}} semantics [arbitrary, arbitrary]
  grid.call @ids_whole grid [2, 3] ins() outs(%e : memref<4x4xi32>) in_specs [] out_specs [#grid.block<full>]
  // CHECK: grid.call @ids_whole grid [2, 3] {{.*}} semantics [arbitrary, arbitrary]
  grid.call @ids_whole grid [2, 3] ins() outs(%e : memref<4x4xi32>) in_specs [] out_specs [#grid.block<[4, 4]>]
  // Unblocked without padding, then with 1 row and 2 columns of padding.
  // CHECK: grid.call @ids_2d grid [4, 2] {{.*}} semantics [parallel, parallel]
  grid.call @ids_2d grid [4, 2] ins() outs(%a : memref<8x6xi32>) in_specs []
      out_specs [#grid.block<[2, 3], (i, j) -> (2 * i, 3 * j), unblocked>]
  // CHECK: grid.call @ids_2d grid [4, 3] {{.*}} semantics [parallel, parallel]
  grid.call @ids_2d grid [4, 3] ins() outs(%f : memref<7x7xi32>) in_specs []
      out_specs [#grid.block<[2, 3], (i, j) -> (2 * i, 3 * j), unblocked pad [[1, 0], [2, 0]]>]
  return
}
