// RUN: tessel-opt %s --split-input-file --tessel-resident-accumulators --canonicalize | FileCheck %s

// The Pallas idiom after tessel-matrix-cores: an arbitrary k axis (from
// grid-to-loops) zero-fills the output block at its first step, and each
// lane loads its accumulators, updates them and stores them back. The
// address arithmetic moves out of the axis, the fill before it (it ran at
// the first step, before any load), the accumulators start as the fill
// value and ride the axis as iteration arguments: one store after it, no
// load of C at all.
// CHECK-LABEL: func.func @k_on_the_grid
// CHECK-DAG: %[[ZEROS:.*]] = arith.constant dense<0.000000e+00> : vector<4xf32>
// CHECK: scf.forall
// CHECK: %[[C:.*]] = memref.subview %arg2
// CHECK: gpu.thread_id x
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[C]] :
// CHECK-NOT: vector.load %[[C]]
// CHECK: %[[RES:.*]] = scf.for %[[K:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %[[ZEROS]]) -> (vector<4xf32>) {
// CHECK: %[[A:.*]] = vector.load %arg0[%{{.*}}, %[[K]]]
// CHECK: %[[NEW:.*]] = arith.addf %[[ACC]], %[[A]] : vector<4xf32>
// CHECK-NOT: vector.store
// CHECK: scf.yield %[[NEW]] : vector<4xf32>
// CHECK: } {tessel.arbitrary_axis = 1 : i64}
// CHECK: vector.store %[[RES]], %[[C]][%{{.*}}, %{{.*}}] : memref<16x16xf32, strided<[32, 1], offset: ?>>, vector<4xf32>
func.func @k_on_the_grid(%x: memref<32x64xf32>, %y: memref<64x32xf32>, %z: memref<32x32xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c16 = arith.constant 16 : index
  %zero = arith.constant 0.0 : f32
  scf.forall (%i) in (2) {
    scf.for %k = %c0 to %c4 step %c1 {
      %row = arith.muli %i, %c16 : index
      %cz = memref.subview %z[%row, 0] [16, 16] [1, 1] : memref<32x32xf32> to memref<16x16xf32, strided<[32, 1], offset: ?>>
      %first = arith.cmpi eq, %k, %c0 : index
      scf.if %first {
        linalg.fill ins(%zero : f32) outs(%cz : memref<16x16xf32, strided<[32, 1], offset: ?>>)
      }
      %tid = gpu.thread_id x
      %r = arith.remui %tid, %c16 : index
      %col = arith.divui %tid, %c16 : index
      %acc = vector.load %cz[%r, %col] : memref<16x16xf32, strided<[32, 1], offset: ?>>, vector<4xf32>
      %a = vector.load %x[%r, %k] : memref<32x64xf32>, vector<4xf32>
      %sum = arith.addf %acc, %a : vector<4xf32>
      vector.store %sum, %cz[%r, %col] : memref<16x16xf32, strided<[32, 1], offset: ?>>, vector<4xf32>
    } {tessel.arbitrary_axis = 1 : i64}
  }
  return
}

// -----

// Scalar accumulators (WMMA's, a register per row) ride the axis the same
// way; without a fill they are loaded once before it.
// CHECK-LABEL: func.func @scalars_without_a_fill
// CHECK: %[[V0:.*]] = memref.load %arg1[%{{.*}}, %{{.*}}] : memref<8x8xi32>
// CHECK: %[[V1:.*]] = memref.load %arg1[%{{.*}}, %{{.*}}] : memref<8x8xi32>
// CHECK: %[[RES:.*]]:2 = scf.for {{.*}} iter_args(%{{.*}} = %[[V0]], %{{.*}} = %[[V1]]) -> (i32, i32) {
// CHECK-NOT: memref.load %arg1
// CHECK-NOT: memref.store
// CHECK: } {tessel.arbitrary_axis = 1 : i64}
// CHECK: memref.store %[[RES]]#0, %arg1
// CHECK: memref.store %[[RES]]#1, %arg1
func.func @scalars_without_a_fill(%x: memref<8x8xi32>, %z: memref<8x8xi32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c8 = arith.constant 8 : index
  scf.forall (%i) in (1) {
    scf.for %k = %c0 to %c8 step %c1 {
      %tid = gpu.thread_id x
      %r0 = arith.remui %tid, %c8 : index
      %r1 = arith.addi %r0, %c1 : index
      %a0 = memref.load %z[%r0, %c0] : memref<8x8xi32>
      %a1 = memref.load %z[%r1, %c0] : memref<8x8xi32>
      %v = memref.load %x[%r0, %k] : memref<8x8xi32>
      %s0 = arith.addi %a0, %v : i32
      %s1 = arith.addi %a1, %v : i32
      memref.store %s0, %z[%r0, %c0] : memref<8x8xi32>
      memref.store %s1, %z[%r1, %c0] : memref<8x8xi32>
    } {tessel.arbitrary_axis = 1 : i64}
  }
  return
}

// -----

// Left alone: the axis reads the block elsewhere too (an epilogue at the
// last step), so its values must be in memory there.
// CHECK-LABEL: func.func @block_read_elsewhere
// CHECK: scf.for
// CHECK: scf.if
// CHECK: linalg.fill
// CHECK: vector.load
// CHECK: vector.store
// CHECK: memref.load %{{.*}} : memref<16x16xf32, strided<[32, 1], offset: ?>>
// CHECK: } {tessel.arbitrary_axis = 1 : i64}
func.func @block_read_elsewhere(%x: memref<32x64xf32>, %z: memref<32x32xf32>, %out: memref<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c16 = arith.constant 16 : index
  %zero = arith.constant 0.0 : f32
  scf.forall (%i) in (2) {
    scf.for %k = %c0 to %c4 step %c1 {
      %row = arith.muli %i, %c16 : index
      %cz = memref.subview %z[%row, 0] [16, 16] [1, 1] : memref<32x32xf32> to memref<16x16xf32, strided<[32, 1], offset: ?>>
      %first = arith.cmpi eq, %k, %c0 : index
      scf.if %first {
        linalg.fill ins(%zero : f32) outs(%cz : memref<16x16xf32, strided<[32, 1], offset: ?>>)
      }
      %tid = gpu.thread_id x
      %r = arith.remui %tid, %c16 : index
      %acc = vector.load %cz[%r, %c0] : memref<16x16xf32, strided<[32, 1], offset: ?>>, vector<4xf32>
      %a = vector.load %x[%r, %k] : memref<32x64xf32>, vector<4xf32>
      %sum = arith.addf %acc, %a : vector<4xf32>
      vector.store %sum, %cz[%r, %c0] : memref<16x16xf32, strided<[32, 1], offset: ?>>, vector<4xf32>
      %corner = memref.load %cz[%c0, %c0] : memref<16x16xf32, strided<[32, 1], offset: ?>>
      memref.store %corner, %out[] : memref<f32>
    } {tessel.arbitrary_axis = 1 : i64}
  }
  return
}

// -----

// Left alone: a fill at a later step than the first (it overwrites what
// the earlier steps accumulated), and an axis that is the program nest
// itself (all axes arbitrary: its thread ids may not leave it).
// CHECK-LABEL: func.func @fill_at_a_later_step
// CHECK: scf.for
// CHECK: scf.if
// CHECK: vector.load
// CHECK: vector.store
// CHECK: } {tessel.arbitrary_axis = 1 : i64}
// CHECK-LABEL: func.func @outermost_axis
// CHECK: scf.for
// CHECK: gpu.thread_id
// CHECK: vector.load
// CHECK: vector.store
// CHECK: } {tessel.arbitrary_axis = 0 : i64}
func.func @fill_at_a_later_step(%x: memref<32x64xf32>, %z: memref<16x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c16 = arith.constant 16 : index
  %zero = arith.constant 0.0 : f32
  scf.forall (%i) in (1) {
    scf.for %k = %c0 to %c4 step %c1 {
      %later = arith.cmpi eq, %k, %c1 : index
      scf.if %later {
        linalg.fill ins(%zero : f32) outs(%z : memref<16x16xf32>)
      }
      %tid = gpu.thread_id x
      %r = arith.remui %tid, %c16 : index
      %acc = vector.load %z[%r, %c0] : memref<16x16xf32>, vector<4xf32>
      %a = vector.load %x[%r, %k] : memref<32x64xf32>, vector<4xf32>
      %sum = arith.addf %acc, %a : vector<4xf32>
      vector.store %sum, %z[%r, %c0] : memref<16x16xf32>, vector<4xf32>
    } {tessel.arbitrary_axis = 1 : i64}
  }
  return
}

func.func @outermost_axis(%x: memref<32x64xf32>, %z: memref<16x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c16 = arith.constant 16 : index
  scf.for %k = %c0 to %c4 step %c1 {
    %tid = gpu.thread_id x
    %r = arith.remui %tid, %c16 : index
    %acc = vector.load %z[%r, %c0] : memref<16x16xf32>, vector<4xf32>
    %a = vector.load %x[%r, %k] : memref<32x64xf32>, vector<4xf32>
    %sum = arith.addf %acc, %a : vector<4xf32>
    vector.store %sum, %z[%r, %c0] : memref<16x16xf32>, vector<4xf32>
  } {tessel.arbitrary_axis = 0 : i64}
  return
}

// -----

// Without an axis: loads right after a fill of the block read the fill
// value (the whole-K contraction's accumulators); a load after another
// access to the block does not.
// CHECK-LABEL: func.func @fill_then_load
// CHECK-DAG: %[[SPLAT:.*]] = arith.constant dense<1.500000e+00> : vector<4xf32>
// CHECK: linalg.fill
// CHECK-NOT: vector.load %arg0
// CHECK: vector.store %[[SPLAT]], %arg1
// CHECK: memref.store
// CHECK: %[[AFTER:.*]] = vector.load %arg0
// CHECK: vector.store %[[AFTER]], %arg1
func.func @fill_then_load(%z: memref<16x16xf32>, %o: memref<2x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %v = arith.constant 1.5 : f32
  %w = arith.constant 2.5 : f32
  linalg.fill ins(%v : f32) outs(%z : memref<16x16xf32>)
  %acc = vector.load %z[%c0, %c0] : memref<16x16xf32>, vector<4xf32>
  vector.store %acc, %o[%c0, %c0] : memref<2x16xf32>, vector<4xf32>
  memref.store %w, %z[%c0, %c0] : memref<16x16xf32>
  %after = vector.load %z[%c0, %c0] : memref<16x16xf32>, vector<4xf32>
  vector.store %after, %o[%c1, %c0] : memref<2x16xf32>, vector<4xf32>
  return
}
