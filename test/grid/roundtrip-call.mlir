// grid.call forms: empty grid, scratch, written semantics, aliasing, extra
// attributes, 3-D grids, sizes given as values, scalar prefetch and index
// functions.
// RUN: tessel-opt %s | FileCheck %s
// RUN: tessel-opt %s > %t.1 && tessel-opt %t.1 > %t.2 && diff %t.1 %t.2

func.func @copy(%x: memref<8x128xf32>, %o: memref<8x128xf32>) {
  %v = block.load %x : memref<8x128xf32> -> tensor<8x128xf32>
  block.store %v, %o : tensor<8x128xf32>, memref<8x128xf32>
  return
}
func.func @with_scratch(%x: memref<8x128xf32>, %o: memref<8x128xf32>, %acc: memref<8x128xf32>, %n: memref<4xi32>) {
  return
}
func.func @one(%o: memref<2x3xi32>) { return }

// CHECK-LABEL: func.func @calls
func.func @calls(%x: memref<16x128xf32>, %y: memref<16x128xf32>, %z: memref<8x6xi32>) {
  // A grid of [] runs the kernel once.
  // CHECK: grid.call @copy grid [] ins(%{{.*}} : memref<16x128xf32>) outs(%{{.*}} : memref<16x128xf32>) in_specs [#grid.block<[8, 128], () -> (0, 0)>] out_specs [#grid.block<[8, 128]>]{{$}}
  grid.call @copy grid [] ins(%x : memref<16x128xf32>) outs(%y : memref<16x128xf32>)
      in_specs [#grid.block<[8, 128], () -> (0, 0)>] out_specs [#grid.block<[8, 128]>]
  // Scratch buffers follow the outputs in the kernel's signature.
  // CHECK: grid.call @with_scratch grid [2] ins(%{{.*}} : memref<16x128xf32>) outs(%{{.*}} : memref<16x128xf32>) scratch(memref<8x128xf32>, memref<4xi32>) in_specs
  grid.call @with_scratch grid [2] ins(%x : memref<16x128xf32>) outs(%y : memref<16x128xf32>)
      scratch(memref<8x128xf32>, memref<4xi32>)
      in_specs [#grid.block<[8, 128], (i) -> (i, 0)>] out_specs [#grid.block<[8, 128], (i) -> (i, 0)>]
  // Inputs and outputs may alias: an in-place update.
  // CHECK: grid.call @copy grid [2] ins(%[[X:.*]] : memref<16x128xf32>) outs(%[[X]] : memref<16x128xf32>)
  grid.call @copy grid [2] ins(%x : memref<16x128xf32>) outs(%x : memref<16x128xf32>)
      in_specs [#grid.block<[8, 128], (i) -> (i, 0)>] out_specs [#grid.block<[8, 128], (i) -> (i, 0)>]
  // Written semantics and extra attributes are kept.
  // CHECK: out_specs [#grid.block<[2, 3], (d0, d1, d2) -> (d0, d1)>] semantics [parallel, parallel, arbitrary] {note = "revisits"}
  grid.call @one grid [4, 2, 10] ins() outs(%z : memref<8x6xi32>)
      in_specs [] out_specs [#grid.block<[2, 3], (i, j, k) -> (i, j)>]
      semantics [parallel, parallel, arbitrary] {note = "revisits"}
  return
}

// Scalar prefetch: the scalar arrays come first (in the kernel's refs and
// as the index functions' trailing arguments); an index map may be a
// function.
func.func @row_of(%i: index, %table: memref<4xi32>) -> (index, index) {
  %c0 = arith.constant 0 : index
  %t = memref.load %table[%i] : memref<4xi32>
  %row = arith.index_cast %t : i32 to index
  return %row, %c0 : index, index
}
func.func @gather_rows(%table: memref<4xi32>, %x: memref<8x128xf32>, %o: memref<8x128xf32>) {
  return
}
// Grid sizes may be values.
// CHECK-LABEL: func.func @sized
// CHECK: grid.call @copy grid [%{{.*}}, 2] ins(
func.func @sized(%n: index, %x: memref<16x128xf32>, %y: memref<16x128xf32>) {
  grid.call @copy grid [%n, 2] ins(%x : memref<16x128xf32>) outs(%y : memref<16x128xf32>)
      in_specs [#grid.block<[8, 128], (i, j) -> (i, 0)>] out_specs [#grid.block<[8, 128], (i, j) -> (i, 0)>]
  return
}

// CHECK-LABEL: func.func @prefetched
// CHECK: grid.call @gather_rows grid [4] scalars(%{{.*}} : memref<4xi32>) ins(%{{.*}} : memref<64x128xf32>) outs(%{{.*}} : memref<32x128xf32>) in_specs [#grid.block<[8, 128], @row_of>] out_specs [#grid.block<[8, 128], (d0) -> (d0, 0)>]
func.func @prefetched(%table: memref<4xi32>, %x: memref<64x128xf32>, %o: memref<32x128xf32>) {
  grid.call @gather_rows grid [4] scalars(%table : memref<4xi32>) ins(%x : memref<64x128xf32>)
      outs(%o : memref<32x128xf32>)
      in_specs [#grid.block<[8, 128], @row_of>] out_specs [#grid.block<[8, 128], (i) -> (i, 0)>]
  return
}
