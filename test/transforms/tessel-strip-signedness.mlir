// An entry function's signed and unsigned arrays, the grid.call passing
// them, its scratch types and the kernel's scratch ref become signless.
// RUN: tessel-opt %s --tessel-strip-signedness | FileCheck %s

// CHECK-LABEL: func.func @kernel(%{{.*}}: memref<4xi8>, %{{.*}}: memref<4xi32>, %{{.*}}: memref<2xi16>)
func.func @kernel(%x: memref<4xi8>, %o: memref<4xi32>, %s: memref<2xui16>) {
  %v = block.load %x : memref<4xi8> -> tensor<4xi8>
  %w = arith.extui %v : tensor<4xi8> to tensor<4xi32>
  block.store %w, %o : tensor<4xi32>, memref<4xi32>
  return
}
// CHECK-LABEL: func.func @main(%{{.*}}: memref<8xi8>, %{{.*}}: memref<8xi32>)
// CHECK:      grid.call @kernel grid [2] ins(%{{.*}} : memref<8xi8>) outs(%{{.*}} : memref<8xi32>) scratch(memref<2xi16>)
// CHECK-NOT:  ui
func.func @main(%x: memref<8xui8>, %o: memref<8xsi32>) {
  grid.call @kernel grid [2] ins(%x : memref<8xui8>) outs(%o : memref<8xsi32>) scratch(memref<2xui16>)
      in_specs [#grid.block<[4], (i) -> (i)>] out_specs [#grid.block<[4], (i) -> (i)>]
  return
}
