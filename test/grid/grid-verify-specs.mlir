// grid-verify-specs infers the semantics of each grid axis: arbitrary when
// some output's block does not depend on it (the block is revisited), else
// parallel. Written semantics are kept, but for a parallel axis along which
// an output block is revisited, which runs in order (as on one TPU core).
// RUN: tessel-opt %s --grid-verify-specs | FileCheck %s
// RUN: tessel-opt %s --pass-pipeline='builtin.module(grid-verify-specs)' | FileCheck %s

func.func @matmul_kernel(%x: memref<128x256xf32>, %y: memref<256x128xf32>, %z: memref<128x128xf32>) { return }
func.func @ids(%o: memref<2x3xi32>) { return }
func.func @sum(%x: memref<8x128xf32>, %o: memref<1x128xf32>) { return }

// CHECK-LABEL: func.func @matmul
// CHECK: grid.call @matmul_kernel grid [8, 8] {{.*}} semantics [parallel, parallel]{{$}}
func.func @matmul(%x: memref<1024x256xf32>, %y: memref<256x1024xf32>, %z: memref<1024x1024xf32>) {
  grid.call @matmul_kernel grid [8, 8]
      ins(%x, %y : memref<1024x256xf32>, memref<256x1024xf32>)
      outs(%z : memref<1024x1024xf32>)
      in_specs [#grid.block<[128, 256], (i, j) -> (i, 0)>,
                #grid.block<[256, 128], (i, j) -> (0, j)>]
      out_specs [#grid.block<[128, 128], (i, j) -> (i, j)>]
  return
}

// The K axis of a Pallas-style matmul revisits the output block.
// CHECK-LABEL: func.func @matmul_k
// CHECK: grid.call @matmul_kernel grid [8, 8, 4] {{.*}} semantics [parallel, parallel, arbitrary]{{$}}
func.func @matmul_k(%x: memref<1024x1024xf32>, %y: memref<1024x1024xf32>, %z: memref<1024x1024xf32>) {
  grid.call @matmul_kernel grid [8, 8, 4]
      ins(%x, %y : memref<1024x1024xf32>, memref<1024x1024xf32>)
      outs(%z : memref<1024x1024xf32>)
      in_specs [#grid.block<[128, 256], (i, j, k) -> (i, k)>,
                #grid.block<[256, 128], (i, j, k) -> (k, j)>]
      out_specs [#grid.block<[128, 128], (i, j, k) -> (i, j)>]
  return
}

// A full output block and an omitted map make every axis arbitrary.
// CHECK-LABEL: func.func @whole
// CHECK: grid.call @ids grid [2, 3] {{.*}} semantics [arbitrary, arbitrary]{{$}}
// CHECK: grid.call @ids grid [2] {{.*}} semantics [arbitrary]{{$}}
func.func @whole(%o: memref<2x3xi32>) {
  grid.call @ids grid [2, 3] ins() outs(%o : memref<2x3xi32>) in_specs [] out_specs [#grid.block<full>]
  grid.call @ids grid [2] ins() outs(%o : memref<2x3xi32>) in_specs [] out_specs [#grid.block<[2, 3]>]
  return
}

// A reduction over the rows of x: axis 0 revisits the output.
// CHECK-LABEL: func.func @column_sums
// CHECK: grid.call @sum grid [4, 2] {{.*}} semantics [arbitrary, parallel]{{$}}
func.func @column_sums(%x: memref<32x256xf32>, %o: memref<1x256xf32>) {
  grid.call @sum grid [4, 2] ins(%x : memref<32x256xf32>) outs(%o : memref<1x256xf32>)
      in_specs [#grid.block<[8, 128], (i, j) -> (i, j)>]
      out_specs [#grid.block<[1, 128], (i, j) -> (0, j)>]
  return
}

// Written semantics stay as written.
// CHECK-LABEL: func.func @written
// CHECK: semantics [arbitrary, arbitrary]{{$}}
func.func @written(%o: memref<8x6xi32>) {
  grid.call @ids grid [4, 2] ins() outs(%o : memref<8x6xi32>)
      in_specs [] out_specs [#grid.block<[2, 3], (i, j) -> (i, j)>] semantics [arbitrary, arbitrary]
  return
}

// Splash attention's shape: running statistics kept in outputs whose block
// never changes, under a `parallel` head axis. The axis runs in order (the
// warning is checked in grid-verify-specs-invalid.mlir); an axis of one
// program stays parallel, an atomically updated output does not count.
// CHECK-LABEL: func.func @shared_statistics
// CHECK: grid.call @stats grid [2, 4, 3] {{.*}} semantics [arbitrary, arbitrary, arbitrary]{{$}}
// CHECK: grid.call @stats grid [1, 4, 3] {{.*}} semantics [parallel, arbitrary, arbitrary]{{$}}
// CHECK: grid.call @counts grid [4] {{.*}} semantics [parallel]{{$}}
func.func @stats(%q: memref<8x128xf32>, %m: memref<8x128xf32>, %o: memref<8x128xf32>) { return }
func.func @counts(%o: memref<8xi32>) {
  %ones = arith.constant dense<1> : tensor<8xi32>
  block.atomic_rmw add %ones, %o : tensor<8xi32>, memref<8xi32>
  return
}
func.func @shared_statistics(%q: memref<2x32x128xf32>, %m: memref<8x128xf32>, %o: memref<2x32x128xf32>,
                             %q1: memref<1x32x128xf32>, %o1: memref<1x32x128xf32>, %n: memref<8xi32>) {
  grid.call @stats grid [2, 4, 3] ins(%q : memref<2x32x128xf32>) outs(%m, %o : memref<8x128xf32>, memref<2x32x128xf32>)
      in_specs [#grid.block<[squeezed, 8, 128], (h, i, j) -> (h, i, 0)>]
      out_specs [#grid.block<[8, 128], (h, i, j) -> (0, 0)>, #grid.block<[squeezed, 8, 128], (h, i, j) -> (h, i, 0)>]
      semantics [parallel, arbitrary, arbitrary]
  grid.call @stats grid [1, 4, 3] ins(%q1 : memref<1x32x128xf32>) outs(%m, %o1 : memref<8x128xf32>, memref<1x32x128xf32>)
      in_specs [#grid.block<[squeezed, 8, 128], (h, i, j) -> (h, i, 0)>]
      out_specs [#grid.block<[8, 128], (h, i, j) -> (0, 0)>, #grid.block<[squeezed, 8, 128], (h, i, j) -> (h, i, 0)>]
      semantics [parallel, arbitrary, arbitrary]
  grid.call @counts grid [4] ins() outs(%n : memref<8xi32>) in_specs [] out_specs [#grid.block<[8], (i) -> (0)>]
      semantics [parallel]
  return
}

// A grid of [] has no axes; partial blocks in bounds pass (7x5 array, 2x3
// blocks, the Pallas out-of-bounds example).
// CHECK-LABEL: func.func @edge_cases
// CHECK: grid.call @ids grid [] {{.*}} semantics []{{$}}
// CHECK: grid.call @ids grid [4, 2] {{.*}} semantics [parallel, parallel]{{$}}
func.func @edge_cases(%o: memref<2x3xi32>, %p: memref<7x5xi32>) {
  grid.call @ids grid [] ins() outs(%o : memref<2x3xi32>) in_specs [] out_specs [#grid.block<[2, 3]>]
  grid.call @ids grid [4, 2] ins() outs(%p : memref<7x5xi32>) in_specs [] out_specs [#grid.block<[2, 3], (i, j) -> (i, j)>]
  return
}
