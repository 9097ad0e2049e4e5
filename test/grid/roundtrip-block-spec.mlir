// Every form of the #grid.block BlockSpec attribute round-trips.
// RUN: tessel-opt %s | FileCheck %s
// RUN: tessel-opt %s > %t.1 && tessel-opt %t.1 > %t.2 && diff %t.1 %t.2

func.func @k1(%o: memref<8x6xi32>) { return }
func.func @k2(%o: memref<2x3xi32>) { return }
func.func @k3(%o: memref<2xi32>) { return }
func.func @k4(%o: memref<i32>) { return }
func.func @k5(%i: memref<1x5xi32>) { return }
func.func @k6(%i: memref<2x5xi32>) { return }

// CHECK-LABEL: func.func @forms
func.func @forms(%a: memref<8x6xi32>, %b: memref<3x4xi32>, %c: memref<7x7xi32>, %d: memref<5x5xi32>) {
  // block_shape=None: the whole array.
  // CHECK: out_specs [#grid.block<full>]
  grid.call @k1 grid [2, 3] ins() outs(%a : memref<8x6xi32>) in_specs [] out_specs [#grid.block<full>]
  // Omitted map: all-zero block indices.
  // CHECK: out_specs [#grid.block<[2, 3]>]
  grid.call @k2 grid [2] ins() outs(%a : memref<8x6xi32>) in_specs [] out_specs [#grid.block<[2, 3]>]
  // A squeezed dimension (Pallas' None).
  // CHECK: out_specs [#grid.block<[squeezed, 2], (d0, d1) -> (d0, d1)>]
  grid.call @k3 grid [3, 2] ins() outs(%b : memref<3x4xi32>) in_specs [] out_specs [#grid.block<[squeezed, 2], (i, j) -> (i, j)>]
  // Every dimension squeezed: a scalar ref.
  // CHECK: out_specs [#grid.block<[squeezed, squeezed], (d0, d1) -> (d0, d1)>]
  grid.call @k4 grid [3, 4] ins() outs(%b : memref<3x4xi32>) in_specs [] out_specs [#grid.block<[squeezed, squeezed], (i, j) -> (i, j)>]
  // Unblocked: the map gives element offsets.
  // CHECK: out_specs [#grid.block<[2, 3], (d0, d1) -> (d0 * 2, d1 * 3), unblocked>]
  grid.call @k2 grid [4, 2] ins() outs(%a : memref<8x6xi32>) in_specs [] out_specs [#grid.block<[2, 3], (i, j) -> (2 * i, 3 * j), unblocked>]
  // Unblocked with virtual padding.
  // CHECK: out_specs [#grid.block<[2, 3], (d0, d1) -> (d0 * 2, d1 * 3), unblocked pad {{\[}}[1, 0], [2, 0]]>]
  grid.call @k2 grid [4, 3] ins() outs(%c : memref<7x7xi32>) in_specs [] out_specs [#grid.block<[2, 3], (i, j) -> (2 * i, 3 * j), unblocked pad [[1, 0], [2, 0]]>]
  // Non-affine-linear maps: mod, floordiv, ceildiv.
  // CHECK: #grid.block<[1, 5], (d0) -> (d0 mod 5, d0 floordiv 5)>
  grid.call @k5 grid [5] ins(%d : memref<5x5xi32>) outs() in_specs [#grid.block<[1, 5], (i) -> (i mod 5, i floordiv 5)>] out_specs []
  // CHECK: #grid.block<[2, 5], (d0) -> (d0 ceildiv 2, 0)>
  grid.call @k6 grid [5] ins(%d : memref<5x5xi32>) outs() in_specs [#grid.block<[2, 5], (i) -> (i ceildiv 2, 0)>] out_specs []
  return
}
