// grid-to-loops: parallel axes become scf.forall, arbitrary axes ordered
// scf.for loops (in axis order); whole blocks are subviews, partial blocks
// padded local buffers (on GPUs, where those live in workgroup memory, a
// second version of the kernel runs the programs whose blocks are all
// whole on views); the kernel is specialized per call site (program ids as trailing
// index arguments) and the original kernel disappears.
// RUN: tessel-opt %s --split-input-file --grid-verify-specs --grid-to-loops | FileCheck %s
// RUN: tessel-opt %s --split-input-file --grid-verify-specs --grid-to-loops --inline --symbol-dce | FileCheck %s --check-prefix=INLINED

// CHECK-LABEL: func.func private @matmul_kernel__call0(
// CHECK-SAME: %{{.*}}: memref<128x256xf32, strided<[1024, 1], offset: ?>>, %{{.*}}: memref<256x128xf32, strided<[1024, 1], offset: ?>>, %{{.*}}: memref<128x128xf32, strided<[1024, 1], offset: ?>>, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index)
// Inputs nothing writes are marked for in-place reads; the accumulator,
// stored back once, for in-place updates (more cases: grid-to-loops-in-place).
// CHECK: block.load %{{.*}} {tessel.read_only} : memref<128x256xf32
// CHECK: block.load %{{.*}} {tessel.read_only} : memref<256x128xf32
// CHECK: block.load %{{.*}} {tessel.in_place} : memref<128x128xf32
// CHECK-NOT: func.func @matmul_kernel(
// CHECK-LABEL: func.func @matmul(
// CHECK: scf.forall (%[[I:.*]], %[[J:.*]]) in (8, 8) {
// CHECK:   scf.for %[[K:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:     %[[XI:.*]] = affine.apply #{{.*}}(%[[I]], %[[J]], %[[K]])
// CHECK:     %[[XK:.*]] = affine.apply #{{.*}}(%[[I]], %[[J]], %[[K]])
// CHECK:     %[[X:.*]] = memref.subview %arg0[%[[XI]], %[[XK]]] [128, 256] [1, 1] : memref<1024x1024xf32> to memref<128x256xf32, strided<[1024, 1], offset: ?>>
// CHECK:     memref.subview %arg2[%{{.*}}, %{{.*}}] [128, 128] [1, 1]
// CHECK:     func.call @matmul_kernel__call0(%[[X]], %{{.*}}, %{{.*}}, %[[I]], %[[J]], %[[K]])
// INLINED-LABEL: func.func @matmul(
// INLINED-NOT: func.call
// INLINED: block.dot
func.func @matmul_kernel(%x: memref<128x256xf32>, %y: memref<256x128xf32>, %z: memref<128x128xf32>) {
  %a = block.load %x : memref<128x256xf32> -> tensor<128x256xf32>
  %b = block.load %y : memref<256x128xf32> -> tensor<256x128xf32>
  %acc = block.load %z : memref<128x128xf32> -> tensor<128x128xf32>
  %c = block.dot %a, %b acc %acc : tensor<128x256xf32>, tensor<256x128xf32>, tensor<128x128xf32> -> tensor<128x128xf32>
  block.store %c, %z : tensor<128x128xf32>, memref<128x128xf32>
  return
}
func.func @matmul(%x: memref<1024x1024xf32>, %y: memref<1024x1024xf32>, %z: memref<1024x1024xf32>) {
  grid.call @matmul_kernel grid [8, 8, 4]
      ins(%x, %y : memref<1024x1024xf32>, memref<1024x1024xf32>) outs(%z : memref<1024x1024xf32>)
      in_specs [#grid.block<[128, 256], (i, j, k) -> (i, k)>, #grid.block<[256, 128], (i, j, k) -> (k, j)>]
      out_specs [#grid.block<[128, 128], (i, j, k) -> (i, j)>]
  return
}

// -----

// Partial blocks: a 7x5 array in 2x3 blocks. A whole block is a view of
// the array, as when blocks divide it; a partial one (the last row or
// column of blocks) a local buffer, padded with zeros, filled with the
// in-bounds part and written back. The kernel takes either as one type
// (the strides they share, the offset dynamic).
// CHECK-LABEL: func.func private @ids__call0(
// CHECK-SAME: %[[O:.*]]: memref<2x3xi32, strided<[?, 1], offset: ?>>, %[[P0:.*]]: index, %[[P1:.*]]: index)
// CHECK: %[[N:.*]] = arith.constant 2 : index
// CHECK: arith.addi %[[P0]], %[[N]]
// CHECK-LABEL: func.func @partial(
// CHECK: scf.forall
// CHECK: arith.maxsi %{{.*}}, %c0 : index
// CHECK: %[[ROWS:.*]] = arith.maxsi %{{.*}}, %c0 : index
// CHECK: arith.maxsi %{{.*}}, %c0 : index
// CHECK: %[[COLUMNS:.*]] = arith.maxsi %{{.*}}, %c0 : index
// CHECK: %[[WHOLE_ROWS:.*]] = arith.cmpi eq, %[[ROWS]], %c2 : index
// CHECK: %[[WHOLE_COLUMNS:.*]] = arith.cmpi eq, %[[COLUMNS]], %c3 : index
// CHECK: %[[WHOLE:.*]] = arith.andi %[[WHOLE_ROWS]], %[[WHOLE_COLUMNS]] : i1
// CHECK: %[[REF:.*]] = scf.if %[[WHOLE]] -> (memref<2x3xi32, strided<[?, 1], offset: ?>>) {
// CHECK:   %[[VIEW:.*]] = memref.subview %arg0[%{{.*}}, %{{.*}}] [2, 3] [1, 1] : memref<7x5xi32> to memref<2x3xi32, strided<[5, 1], offset: ?>>
// CHECK:   %[[VIEW_REF:.*]] = memref.cast %[[VIEW]]
// CHECK:   scf.yield %[[VIEW_REF]]
// CHECK: } else {
// CHECK:   %[[BUF:.*]] = memref.alloc() : memref<2x3xi32>
// CHECK:   linalg.fill ins(%{{.*}} : i32) outs(%[[BUF]] : memref<2x3xi32>)
// CHECK:   %[[SRC:.*]] = memref.subview %arg0[%{{.*}}, %{{.*}}] [%[[ROWS]], %[[COLUMNS]]] [1, 1] : memref<7x5xi32> to memref<?x?xi32, strided<[5, 1], offset: ?>>
// CHECK:   %[[DST:.*]] = memref.subview %[[BUF]][%{{.*}}, %{{.*}}] [%[[ROWS]], %[[COLUMNS]]] [1, 1] : memref<2x3xi32> to memref<?x?xi32, strided<[3, 1], offset: ?>>
// CHECK:   memref.copy %[[SRC]], %[[DST]]
// CHECK:   %[[BUF_REF:.*]] = memref.cast %[[BUF]]
// CHECK:   scf.yield %[[BUF_REF]]
// CHECK: }
// CHECK: func.call @ids__call0(%[[REF]], %{{.*}}, %{{.*}})
// CHECK: scf.if %[[WHOLE]] {
// CHECK-NEXT: } else {
// CHECK:   %[[BACK_SRC:.*]] = memref.subview %arg0[%{{.*}}, %{{.*}}] [%[[ROWS]], %[[COLUMNS]]] [1, 1]
// CHECK:   %[[BACK_DST:.*]] = memref.subview %[[REF]][%{{.*}}, %{{.*}}] [%[[ROWS]], %[[COLUMNS]]] [1, 1] : memref<2x3xi32, strided<[?, 1], offset: ?>> to memref<?x?xi32, strided<[?, 1], offset: ?>>
// CHECK:   memref.copy %[[BACK_DST]], %[[BACK_SRC]]
func.func @ids(%o: memref<2x3xi32>) {
  %i = grid.program_id 0
  %n = grid.num_programs 1
  %s = arith.addi %i, %n : index
  %v = arith.index_cast %s : index to i32
  %b = tensor.splat %v : tensor<2x3xi32>
  block.store %b, %o : tensor<2x3xi32>, memref<2x3xi32>
  return
}
func.func @partial(%o: memref<7x5xi32>) {
  grid.call @ids grid [4, 2] ins() outs(%o : memref<7x5xi32>) in_specs [] out_specs [#grid.block<[2, 3], (i, j) -> (i, j)>]
  return
}

// -----

// For a GPU (a module naming its chip), the local buffer lives in
// workgroup memory, which a view of the array cannot stand in for: the
// kernel runs in two versions, on a view where the blocks are all whole
// and on a staged copy where one is partial.
// CHECK-LABEL: func.func private @ids__call0_whole(
// CHECK-SAME: %{{.*}}: memref<2x3xi32, strided<[5, 1], offset: ?>>, %{{.*}}: index, %{{.*}}: index)
// CHECK-LABEL: func.func private @ids__call0(
// CHECK-SAME: %{{.*}}: memref<2x3xi32>, %{{.*}}: index, %{{.*}}: index)
// CHECK-LABEL: func.func @partial_on_gpu(
// CHECK: scf.forall
// CHECK: %[[WHOLE:.*]] = arith.andi
// CHECK-NEXT: scf.if %[[WHOLE]] {
// CHECK-NEXT: %[[VIEW:.*]] = memref.subview %arg0[%{{.*}}, %{{.*}}] [2, 3] [1, 1] : memref<7x5xi32> to memref<2x3xi32, strided<[5, 1], offset: ?>>
// CHECK-NEXT: func.call @ids__call0_whole(%[[VIEW]], %{{.*}}, %{{.*}}) : (memref<2x3xi32, strided<[5, 1], offset: ?>>, index, index) -> ()
// CHECK-NEXT: } else {
// CHECK-NEXT: %[[BUF:.*]] = memref.alloc() : memref<2x3xi32>
// CHECK: linalg.fill ins(%{{.*}} : i32) outs(%[[BUF]] : memref<2x3xi32>)
// CHECK: %[[SRC:.*]] = memref.subview %arg0[%{{.*}}, %{{.*}}] [%{{.*}}, %{{.*}}] [1, 1] : memref<7x5xi32> to memref<?x?xi32, strided<[5, 1], offset: ?>>
// CHECK: %[[DST:.*]] = memref.subview %[[BUF]][%{{.*}}, %{{.*}}] [%{{.*}}, %{{.*}}] [1, 1] : memref<2x3xi32> to memref<?x?xi32, strided<[3, 1], offset: ?>>
// CHECK: memref.copy %[[SRC]], %[[DST]]
// CHECK: func.call @ids__call0(%[[BUF]], %{{.*}}, %{{.*}})
// CHECK: memref.copy %[[DST]], %[[SRC]]
// CHECK-NEXT: } {tessel.staged_version}
module attributes {tessel.chip = "gfx942"} {
  func.func @ids(%o: memref<2x3xi32>) {
    %i = grid.program_id 0
    %n = grid.num_programs 1
    %s = arith.addi %i, %n : index
    %v = arith.index_cast %s : index to i32
    %b = tensor.splat %v : tensor<2x3xi32>
    block.store %b, %o : tensor<2x3xi32>, memref<2x3xi32>
    return
  }
  func.func @partial_on_gpu(%o: memref<7x5xi32>) {
    grid.call @ids grid [4, 2] ins() outs(%o : memref<7x5xi32>) in_specs [] out_specs [#grid.block<[2, 3], (i, j) -> (i, j)>]
    return
  }
}

// -----

// Squeezed dimensions give rank-reduced subviews; poison mode pads with the
// integer minimum; an arbitrary axis before a parallel one stays outermost.
// Scratch persists from program to program along ordered axes (a TPU
// core's VMEM): it is allocated outside every ordered loop, and a parallel
// axis after an ordered one runs in order too (its threads would share
// the scratch). Allocated inside the ordered loop, each step got a fresh
// buffer, and a kernel reading what the previous step left (JAX's paged
// attention prefetches the next pages into it) computed wrong numbers.
// CHECK-LABEL: func.func @squeezed(
// CHECK: memref.subview %arg0[%{{.*}}, %{{.*}}] [1, 2] [1, 1] : memref<3x4xi32> to memref<2xi32, strided<[1], offset: ?>>
func.func @k(%o: memref<2xi32>) { return }
func.func @squeezed(%o: memref<3x4xi32>) {
  grid.call @k grid [3, 2] ins() outs(%o : memref<3x4xi32>) in_specs [] out_specs [#grid.block<[squeezed, 2], (i, j) -> (i, j)>]
  return
}
// CHECK-LABEL: func.func @order(
// CHECK: memref.alloc() : memref<4xf32>
// CHECK-NEXT: scf.for %[[A:.*]] = %{{.*}} to %c2 step
// CHECK-NEXT: scf.for %[[B:.*]] = %{{.*}} to %c3 step
func.func @k2(%x: memref<2xf32>, %o: memref<2xf32>, %s: memref<4xf32>) { return }
func.func @order(%x: memref<4x6xf32>, %o: memref<6xf32>) {
  grid.call @k2 grid [2, 3] ins(%x : memref<4x6xf32>) outs(%o : memref<6xf32>) scratch(memref<4xf32>)
      in_specs [#grid.block<[squeezed, 2], (i, j) -> (i, j)>] out_specs [#grid.block<[2], (i, j) -> (j)>]
  return
}
// One scratch per point of the leading parallel axes, then the ordered
// nest, a single-program axis after it a loop of one trip.
// CHECK-LABEL: func.func @carried(
// CHECK: scf.forall (%{{.*}}) in (1) {
// CHECK-NEXT: memref.alloc() : memref<4xf32>
// CHECK-NEXT: scf.for %{{.*}} = %{{.*}} to %c2 step
// CHECK-NEXT: scf.for %{{.*}} = %{{.*}} to %c3 step
// CHECK-NEXT: scf.for %{{.*}} = %{{.*}} to %c1 step
func.func @k3(%x: memref<2xf32>, %o: memref<2xf32>, %s: memref<4xf32>) { return }
func.func @carried(%x: memref<4x6xf32>, %o: memref<4x6xf32>) {
  grid.call @k3 grid [1, 2, 3, 1] ins(%x : memref<4x6xf32>) outs(%o : memref<4x6xf32>) scratch(memref<4xf32>)
      in_specs [#grid.block<[squeezed, 2], (c, i, j, h) -> (c + i, j)>]
      out_specs [#grid.block<[squeezed, 2], (c, i, j, h) -> (c + i, j)>]
      semantics [parallel, arbitrary, parallel, arbitrary]
  return
}

// -----

// CHECK-LABEL: func.func @poisoned(
// CHECK: arith.constant -2147483648 : i32
// CHECK: linalg.fill
module attributes {tessel.poison} {
  func.func @k(%o: memref<2x3xi32>) { return }
  func.func @poisoned(%o: memref<3x3xi32>) {
    grid.call @k grid [2] ins() outs(%o : memref<3x3xi32>) in_specs [] out_specs [#grid.block<[2, 3], (i) -> (i, 0)>]
    return
  }
}

// -----

// An input that an output aliases is written during the call: each program
// reads a snapshot of its block taken when it starts (a TPU copies the
// input block in before the kernel runs), which nothing else writes, so
// its loads read it in place.
// CHECK-LABEL: func.func private @square__call0(
// CHECK-SAME: %{{.*}}: memref<4x4xf32>, %{{.*}}: memref<4x4xf32, strided<[8, 1], offset: ?>>
// CHECK: block.load %{{.*}} {tessel.read_only} : memref<4x4xf32> -> tensor<4x4xf32>
// CHECK-LABEL: func.func @in_place(
// CHECK: %[[VIEW:.*]] = memref.subview
// CHECK: %[[SNAPSHOT:.*]] = memref.alloc() : memref<4x4xf32>
// CHECK: memref.copy %[[VIEW]], %[[SNAPSHOT]]
// CHECK: func.call @square__call0(%[[SNAPSHOT]],
func.func @square(%x: memref<4x4xf32>, %o: memref<4x4xf32>) {
  %v = block.load %x : memref<4x4xf32> -> tensor<4x4xf32>
  %s = arith.mulf %v, %v : tensor<4x4xf32>
  block.store %s, %o : tensor<4x4xf32>, memref<4x4xf32>
  return
}
func.func @in_place(%x: memref<8x8xf32>) {
  grid.call @square grid [2, 2] ins(%x : memref<8x8xf32>) outs(%x : memref<8x8xf32>)
      in_specs [#grid.block<[4, 4], (i, j) -> (i, j)>] out_specs [#grid.block<[4, 4], (i, j) -> (i, j)>]
  return
}

// -----

// `grid []` runs the kernel once: a single-program forall (the GPU path
// makes it one workgroup), mapped so canonicalization keeps it.
// CHECK-LABEL: func.func private @once_kernel__call0
// CHECK-LABEL: func.func @once(
// CHECK: scf.forall (%{{.*}}) in (1) {
// CHECK-NEXT: func.call @once_kernel__call0(%arg0, %arg1)
// CHECK-NEXT: } {mapping = [#gpu.block<x>]}
func.func @once_kernel(%x: memref<4xf32>, %o: memref<4xf32>) {
  %v = block.load %x : memref<4xf32> -> tensor<4xf32>
  block.store %v, %o : tensor<4xf32>, memref<4xf32>
  return
}
func.func @once(%x: memref<4xf32>, %o: memref<4xf32>) {
  grid.call @once_kernel grid [] ins(%x : memref<4xf32>) outs(%o : memref<4xf32>)
      in_specs [#grid.block<full>] out_specs [#grid.block<full>]
  return
}

// -----

// tessel.grid_order = 1: the programs of consecutive parallel axes run in
// column-major order (the first axis fastest); the ids they get are the
// same.
// CHECK-LABEL: func.func private @pairs_kernel__call0
// CHECK-LABEL: func.func @pairs(
// CHECK: scf.forall (%[[J:.*]], %[[I:.*]]) in (3, 2) {
// CHECK: func.call @pairs_kernel__call0(%{{.*}}, %[[I]], %[[J]])
module attributes {tessel.grid_order = 1 : i64} {
  func.func @pairs_kernel(%o: memref<1x1xi32>) {
    %i = grid.program_id 0
    %v = arith.index_cast %i : index to i32
    %t = tensor.splat %v : tensor<1x1xi32>
    block.store %t, %o : tensor<1x1xi32>, memref<1x1xi32>
    return
  }
  func.func @pairs(%o: memref<2x3xi32>) {
    grid.call @pairs_kernel grid [2, 3] ins() outs(%o : memref<2x3xi32>)
        in_specs [] out_specs [#grid.block<[1, 1], (i, j) -> (i, j)>]
    return
  }
}

// -----

// Scalar prefetch and an index function: the offsets of the program's
// block come from a call of the function with the program ids and the
// scalar arrays (inlined afterwards), checked at run time; the kernel gets
// the scalar arrays first, whole.
// CHECK-LABEL: func.func private @pick(
// CHECK-LABEL: func.func private @gather_kernel__call0(%{{.*}}: memref<3xi32>, %{{.*}}: memref<1x4xf32, strided<[4, 1], offset: ?>>
// CHECK-LABEL: func.func @gather(
// CHECK: scf.forall (%[[G:.*]]) in (3)
// CHECK: %[[B:.*]]:2 = func.call @pick(%[[G]], %[[T:.*]]) : (index, memref<3xi32>) -> (index, index)
// CHECK: arith.muli %[[B]]#0
// CHECK: scf.if
// CHECK: func.call @gather_kernel__call0(%[[T]],
// INLINED-LABEL: func.func @gather(
// INLINED-NOT: func.call
// INLINED: memref.load %{{.*}} : memref<3xi32>
// INLINED-NOT: @pick
func.func @pick(%i: index, %table: memref<3xi32>) -> (index, index) {
  %c0 = arith.constant 0 : index
  %t = memref.load %table[%i] : memref<3xi32>
  %row = arith.index_cast %t : i32 to index
  return %row, %c0 : index, index
}
func.func @gather_kernel(%table: memref<3xi32>, %x: memref<1x4xf32>, %o: memref<1x4xf32>) {
  %v = block.load %x : memref<1x4xf32> -> tensor<1x4xf32>
  block.store %v, %o : tensor<1x4xf32>, memref<1x4xf32>
  return
}
func.func @gather(%table: memref<3xi32>, %x: memref<6x4xf32>, %o: memref<3x4xf32>) {
  grid.call @gather_kernel grid [3] scalars(%table : memref<3xi32>) ins(%x : memref<6x4xf32>)
      outs(%o : memref<3x4xf32>)
      in_specs [#grid.block<[1, 4], @pick>] out_specs [#grid.block<[1, 4], (i) -> (i, 0)>]
  return
}

// -----

// A grid size given as a value (clamped at 0) bounds the loop;
// grid.num_programs of that axis becomes a trailing argument of the
// kernel; the blocks' bounds are checked at run time; the nest is mapped
// so that it stays a launch when the size folds to 1.
// CHECK-LABEL: func.func private @sized_kernel__call0(
// CHECK-SAME: %{{.*}}: memref<2x4xf32, strided<[8, 1], offset: ?>>, %{{.*}}: index, %{{.*}}: index, %[[N:.*]]: index)
// CHECK: arith.index_cast %[[N]] : index to i32
// CHECK-LABEL: func.func @sized(
// CHECK-SAME: %[[VALUE:[^:]*]]: index
// CHECK: %[[SIZE:.*]] = arith.maxsi %[[VALUE]], %{{.*}} : index
// CHECK: scf.forall (%[[I:.*]], %[[J:.*]]) in (%[[SIZE]], 2) {
// CHECK: scf.if
// CHECK: func.call @sized_kernel__call0(%{{.*}}, %[[I]], %[[J]], %[[SIZE]])
// CHECK: } {mapping = [#gpu.block<x>, #gpu.block<y>]}
func.func @sized_kernel(%o: memref<2x4xf32>) {
  %n = grid.num_programs 0
  %n32 = arith.index_cast %n : index to i32
  %f = arith.sitofp %n32 : i32 to f32
  %t = tensor.splat %f : tensor<2x4xf32>
  block.store %t, %o : tensor<2x4xf32>, memref<2x4xf32>
  return
}
func.func @sized(%n: index, %o: memref<8x8xf32>) {
  grid.call @sized_kernel grid [%n, 2] ins() outs(%o : memref<8x8xf32>)
      in_specs [] out_specs [#grid.block<[2, 4], (i, j) -> (i, j)>]
  return
}

// -----

// JAX's TPU matmul: a scratch accumulator updated in place (its later
// load, the copy to the output, reads the updated block), and the output
// block, revisited along k and only stored, stored on k's last program.
// CHECK-LABEL: func.func private @tpu_kernel__call0(
// CHECK-SAME: %[[Z:[^:]*]]: memref<32x32xf32, strided<[64, 1], offset: ?>>, %[[ACC:[^:]*]]: memref<32x32xf32>, %{{.*}}: index, %{{.*}}: index, %[[K:[^:]*]]: index)
// CHECK: block.load %[[ACC]] {tessel.in_place}
// CHECK: block.store %{{.*}}, %[[ACC]]
// CHECK: %[[LAST:.*]] = arith.constant 1 : index
// CHECK: %[[AT:.*]] = arith.cmpi eq, %[[K]], %[[LAST]] : index
// CHECK: scf.if %[[AT]] {
// CHECK-NEXT: %[[COPY:.*]] = block.load %[[ACC]] : memref<32x32xf32>
// CHECK-NEXT: block.store %[[COPY]], %[[Z]]
// CHECK-NEXT: }
// CHECK-NEXT: return
func.func @tpu_kernel(%x: memref<32x32xf32>, %y: memref<32x32xf32>, %z: memref<32x32xf32>, %acc: memref<32x32xf32>) {
  %k = grid.program_id 2
  %c0 = arith.constant 0 : index
  %first = arith.cmpi eq, %k, %c0 : index
  scf.if %first {
    %zeros = arith.constant dense<0.0> : tensor<32x32xf32>
    block.store %zeros, %acc : tensor<32x32xf32>, memref<32x32xf32>
  }
  %sum = block.load %acc : memref<32x32xf32> -> tensor<32x32xf32>
  %a = block.load %x : memref<32x32xf32> -> tensor<32x32xf32>
  %b = block.load %y : memref<32x32xf32> -> tensor<32x32xf32>
  %product = block.dot %a, %b : tensor<32x32xf32>, tensor<32x32xf32> -> tensor<32x32xf32>
  %next = arith.addf %sum, %product : tensor<32x32xf32>
  block.store %next, %acc : tensor<32x32xf32>, memref<32x32xf32>
  %out = block.load %acc : memref<32x32xf32> -> tensor<32x32xf32>
  block.store %out, %z : tensor<32x32xf32>, memref<32x32xf32>
  return
}
func.func @tpu(%x: memref<64x64xf32>, %y: memref<64x64xf32>, %z: memref<64x64xf32>) {
  grid.call @tpu_kernel grid [2, 2, 2]
      ins(%x, %y : memref<64x64xf32>, memref<64x64xf32>)
      outs(%z : memref<64x64xf32>) scratch(memref<32x32xf32>)
      in_specs [#grid.block<[32, 32], (i, j, k) -> (i, k)>, #grid.block<[32, 32], (i, j, k) -> (k, j)>]
      out_specs [#grid.block<[32, 32], (i, j, k) -> (i, j)>]
  return
}

// -----

// Stores the last visit does not make redundant stay at every step: an
// output the kernel also reads, a masked (partial) store, and an output
// revisited along an axis followed by one it depends on.
// CHECK-LABEL: func.func private @kept_kernel__call0(
// CHECK-NOT: scf.if
// CHECK: return
// CHECK-LABEL: func.func private @outer_kernel__call1(
// CHECK-NOT: scf.if
// CHECK: return
func.func @kept_kernel(%x: memref<8xf32>, %o: memref<8xf32>, %p: memref<8xf32>) {
  %v = block.load %x : memref<8xf32> -> tensor<8xf32>
  %old = block.load %o : memref<8xf32> -> tensor<8xf32>
  %sum = arith.addf %old, %v : tensor<8xf32>
  block.store %sum, %o : tensor<8xf32>, memref<8xf32>
  %i = block.iota dim 0 : tensor<8xi32>
  %four = arith.constant dense<4> : tensor<8xi32>
  %m = arith.cmpi slt, %i, %four : tensor<8xi32>
  block.store %v, %p mask %m : tensor<8xf32>, memref<8xf32>
  return
}
func.func @kept(%x: memref<32xf32>, %o: memref<8xf32>, %p: memref<8xf32>) {
  grid.call @kept_kernel grid [4] ins(%x : memref<32xf32>) outs(%o, %p : memref<8xf32>, memref<8xf32>)
      in_specs [#grid.block<[8], (k) -> (k)>] out_specs [#grid.block<[8], (k) -> (0)>, #grid.block<[8], (k) -> (0)>]
  return
}
func.func @outer_kernel(%x: memref<8xf32>, %o: memref<8xf32>) {
  %v = block.load %x : memref<8xf32> -> tensor<8xf32>
  block.store %v, %o : tensor<8xf32>, memref<8xf32>
  return
}
func.func @outer(%x: memref<4x16xf32>, %o: memref<16xf32>) {
  grid.call @outer_kernel grid [4, 2] ins(%x : memref<4x16xf32>) outs(%o : memref<16xf32>)
      in_specs [#grid.block<[squeezed, 8], (k, j) -> (k, j)>] out_specs [#grid.block<[8], (k, j) -> (j)>]
  return
}

// -----

// On a GPU, where only the outermost dimension has partial blocks (their
// clipped part lies past the array's end), the versions are marked
// `tessel.past_end_views` for tessel-past-end-views; not with poison
// padding (@poisoned), nor where an inner dimension is partial
// (@partial_on_gpu above).
// CHECK-LABEL: func.func @outermost(
// CHECK: } {tessel.past_end_views, tessel.staged_version}
module attributes {tessel.chip = "gfx942"} {
  func.func @half(%x: memref<4x8xf32>, %o: memref<4x8xf32>) {
    %v = block.load %x : memref<4x8xf32> -> tensor<4x8xf32>
    block.store %v, %o : tensor<4x8xf32>, memref<4x8xf32>
    return
  }
  func.func @outermost(%x: memref<10x16xf32>, %o: memref<10x16xf32>) {
    grid.call @half grid [3, 2] ins(%x : memref<10x16xf32>) outs(%o : memref<10x16xf32>)
        in_specs [#grid.block<[4, 8], (i, j) -> (i, j)>] out_specs [#grid.block<[4, 8], (i, j) -> (i, j)>]
    return
  }
}

// -----

// CHECK-LABEL: func.func @poisoned(
// CHECK: } {tessel.staged_version}
module attributes {tessel.chip = "gfx942", tessel.poison} {
  func.func @copy(%x: memref<16xf32>, %o: memref<16xf32>) {
    %v = block.load %x : memref<16xf32> -> tensor<16xf32>
    block.store %v, %o : tensor<16xf32>, memref<16xf32>
    return
  }
  func.func @poisoned(%x: memref<100xf32>, %o: memref<100xf32>) {
    grid.call @copy grid [7] ins(%x : memref<100xf32>) outs(%o : memref<100xf32>)
        in_specs [#grid.block<[16], (i) -> (i)>] out_specs [#grid.block<[16], (i) -> (i)>]
    return
  }
}

// -----

// A partial output block revisited along the trailing arbitrary axis: one
// staged buffer outside the revisiting loop, padded and filled on the
// block's first visit only, so what a visit leaves past the array's end
// is there at the next (as in a TPU's VMEM).
// CHECK-LABEL: func.func @kept(
// CHECK: %[[KEPT:.*]] = memref.alloc() : memref<8x128xi32>
// CHECK-NEXT: scf.for %[[K:.*]] = %c0 to %c2 step %c1 {
// CHECK: %[[FIRST:.*]] = arith.cmpi eq, %[[K]], %c0 : index
// CHECK: } else {
// CHECK-NEXT: scf.if %[[FIRST]] {
// CHECK: linalg.fill ins(%{{.*}} : i32) outs(%[[KEPT]] : memref<8x128xi32>)
// CHECK: %[[DST:.*]] = memref.subview %[[KEPT]]
// CHECK-NEXT: memref.copy %{{.*}}, %[[DST]]
// CHECK-NEXT: }
// CHECK-NEXT: memref.cast %[[KEPT]]
func.func @kept_kernel(%o: memref<8x128xi32>) {
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

func.func @kept(%o: memref<8x1xi32>) {
  grid.call @kept_kernel grid [2] ins() outs(%o : memref<8x1xi32>)
      in_specs [] out_specs [#grid.block<[8, 128], (k) -> (0, 0)>]
  return
}

// -----

// Semaphore scratch starts at zero with each worker (here the one of an
// ordered grid), as a TPU core's semaphores do; other scratch is left
// uninitialized.
// CHECK-LABEL: func.func @semaphores
// CHECK: %[[DATA:.*]] = memref.alloc() : memref<128xf32>
// CHECK-NOT: linalg.fill {{.*}}%[[DATA]]
// CHECK: %[[SEMS:.*]] = memref.alloc() : memref<2xi32>
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0 : i32
// CHECK-NEXT: linalg.fill ins(%[[ZERO]] : i32) outs(%[[SEMS]] : memref<2xi32>)
// CHECK: scf.for
func.func @semaphores_kernel(%o: memref<128xf32>, %data: memref<128xf32>, %sems: memref<2xi32>) {
  %c0 = arith.constant 0 : index
  %n = block.semaphore_read %sems[%c0] : memref<2xi32>
  return
}

func.func @semaphores(%o: memref<512xf32>) {
  grid.call @semaphores_kernel grid [4] ins() outs(%o : memref<512xf32>)
      scratch(memref<128xf32>, semaphore memref<2xi32>)
      in_specs [] out_specs [#grid.block<[128], (i) -> (i)>] semantics [arbitrary]
  return
}

// -----

// With tessel.poison (interpret mode, --check), scratch starts poisoned
// (NaN, the integer minimum) where each worker's starts, as the
// interpreter's does: a kernel reading scratch it never wrote sees it.
// Semaphores still start at zero.
// CHECK-LABEL: func.func @poisoned_scratch
// CHECK: %[[F:.*]] = memref.alloc() : memref<8x128xf32>
// CHECK-NEXT: %[[NAN:.*]] = arith.constant 0x7FC00000 : f32
// CHECK-NEXT: linalg.fill ins(%[[NAN]] : f32) outs(%[[F]] : memref<8x128xf32>)
// CHECK-NEXT: %[[I:.*]] = memref.alloc() : memref<4xi32>
// CHECK-NEXT: %[[MIN:.*]] = arith.constant -2147483648 : i32
// CHECK-NEXT: linalg.fill ins(%[[MIN]] : i32) outs(%[[I]] : memref<4xi32>)
// CHECK-NEXT: %[[S:.*]] = memref.alloc() : memref<i32>
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0 : i32
// CHECK-NEXT: linalg.fill ins(%[[ZERO]] : i32) outs(%[[S]] : memref<i32>)
module attributes {tessel.poison} {
  func.func @poisoned_scratch_kernel(%o: memref<128xf32>, %f: memref<8x128xf32>, %i: memref<4xi32>, %s: memref<i32>) {
    return
  }
  func.func @poisoned_scratch(%o: memref<512xf32>) {
    grid.call @poisoned_scratch_kernel grid [4] ins() outs(%o : memref<512xf32>)
        scratch(memref<8x128xf32>, memref<4xi32>, semaphore memref<i32>)
        in_specs [] out_specs [#grid.block<[128], (i) -> (i)>] semantics [arbitrary]
    return
  }
}
