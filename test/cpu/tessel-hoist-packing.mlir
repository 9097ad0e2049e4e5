// tessel-hoist-packing: a panel copy marked tessel.packing whose source, a
// view of a read-only argument, does not vary with some enclosing loop is
// made once per call: a parallel nest before the loops packs every panel
// into one buffer, slot (j, k, p) at ((j * Tk + k) * Tp + p) panels, and
// the program reads its slot instead of allocating and copying. Copies
// that vary with every loop, sit under a condition, read an argument
// something writes, or fill a buffer something else writes stay.
// RUN: tessel-opt %s --tessel-hoist-packing | FileCheck %s
// Same bits in the whole pipeline: test/e2e/hoisted-packing.mlir.

// A (i, j, k) matmul's B panels (16 columns of a 32 x 32 block) vary with
// j, k and the panel loop, not with i: 2 x 2 x 2 panels of 2 KiB, packed
// once for both row blocks.
// Slot offsets in bytes: (j * 4 + k * 2 + p) panels of 2048 bytes; the
// programs' panel index is p / 16.
// CHECK-DAG: #[[SLOTS:.*]] = affine_map<(d0, d1, d2) -> (d0 * 8192 + d1 * 4096 + d2 * 2048)>
// CHECK-DAG: #[[READ:.*]] = affine_map<(d0, d1, d2) -> (d0 * 8192 + d1 * 4096 + (d2 floordiv 16) * 2048)>
// CHECK-LABEL: func.func @matmul_panels(
// CHECK-SAME: %[[A:.*]]: memref<64x64xf32>, %[[B:.*]]: memref<64x64xf32>, %[[C:.*]]: memref<64x64xf32>)
// CHECK: %[[PACKED:.*]] = memref.alloc() {alignment = 64 : i64} : memref<16384xi8>
// Serial loops for 16 KiB of panels (no parallel region to start).
// CHECK: scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step
// CHECK-NEXT: scf.for %[[K:.*]] = %{{.*}} to %{{.*}} step
// CHECK-NEXT: scf.for %[[P:.*]] = %{{.*}} to %{{.*}} step
// CHECK: %[[COLUMN:.*]] = affine.apply #{{.*}}(%[[P]])
// CHECK: %[[SLOT:.*]] = affine.apply #[[SLOTS]](%[[J]], %[[K]], %[[P]])
// CHECK: %[[SLOT_VIEW:.*]] = memref.view %[[PACKED]][%[[SLOT]]][] : memref<16384xi8> to memref<32x16xf32>
// CHECK: %[[BLOCK:.*]] = memref.subview %[[B]]
// CHECK: %[[SOURCE:.*]] = memref.subview %[[BLOCK]][0, %[[COLUMN]]] [32, 16] [1, 1]
// CHECK: linalg.copy {tessel.packing} ins(%[[SOURCE]] : memref<32x16xf32, strided<[64, 1], offset: ?>>) outs(%[[SLOT_VIEW]] : memref<32x16xf32>)
// CHECK: }
// CHECK: }
// CHECK: }
// The programs: their slot, no allocation, no copy.
// CHECK: scf.forall (%[[I2:.*]], %[[J2:.*]]) in (2, 2) {
// CHECK: scf.for %[[K2:.*]] =
// CHECK: scf.for %[[P2:.*]] =
// CHECK-NOT: memref.alloc
// CHECK-NOT: linalg.copy
// CHECK: %[[OFFSET:.*]] = affine.apply #[[READ]](%[[J2]], %[[K2]], %[[P2]])
// CHECK: %[[PANEL:.*]] = memref.view %[[PACKED]][%[[OFFSET]]][] : memref<16384xi8> to memref<32x16xf32>
// CHECK: vector.transfer_read %[[PANEL]]
// CHECK-NOT: memref.dealloc
// CHECK: }
// CHECK: memref.dealloc %[[PACKED]] : memref<16384xi8>
// CHECK-NEXT: return
func.func @matmul_panels(%a: memref<64x64xf32>, %b: memref<64x64xf32>, %c: memref<64x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  %zero = arith.constant 0.0 : f32
  scf.forall (%i, %j) in (2, 2) {
    scf.for %k = %c0 to %c2 step %c1 {
      %row = affine.apply affine_map<(d) -> (d * 32)>(%k)
      %column = affine.apply affine_map<(d) -> (d * 32)>(%j)
      %out_row = affine.apply affine_map<(d) -> (d * 32)>(%i)
      %block = memref.subview %b[%row, %column] [32, 32] [1, 1] : memref<64x64xf32> to memref<32x32xf32, strided<[64, 1], offset: ?>>
      scf.for %p = %c0 to %c32 step %c16 {
        %source = memref.subview %block[0, %p] [32, 16] [1, 1] : memref<32x32xf32, strided<[64, 1], offset: ?>> to memref<32x16xf32, strided<[64, 1], offset: ?>>
        %panel = memref.alloc() {alignment = 64 : i64} : memref<32x16xf32>
        linalg.copy {tessel.packing} ins(%source : memref<32x16xf32, strided<[64, 1], offset: ?>>) outs(%panel : memref<32x16xf32>)
        %v = vector.transfer_read %panel[%c0, %c0], %zero {in_bounds = [true]} : memref<32x16xf32>, vector<16xf32>
        %out_column = arith.addi %column, %p : index
        vector.transfer_write %v, %c[%out_row, %out_column] {in_bounds = [true]} : vector<16xf32>, memref<64x64xf32>
        memref.dealloc %panel : memref<32x16xf32>
      }
    }
  }
  return
}

// From 1 MiB of panels (16 of 64 KiB) all threads pack.
// CHECK-LABEL: func.func @large_panels(
// CHECK: %[[PACKED:.*]] = memref.alloc() {alignment = 64 : i64} : memref<1048576xi8>
// CHECK: scf.forall ({{.*}}) in (2, 2, 4) {
// CHECK: linalg.copy {tessel.packing}
// CHECK: scf.forall ({{.*}}) in (2, 2) {
// CHECK: memref.view %[[PACKED]]
func.func @large_panels(%b: memref<512x512xf32>, %c: memref<512x512xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  %c256 = arith.constant 256 : index
  %zero = arith.constant 0.0 : f32
  scf.forall (%i, %j) in (2, 2) {
    scf.for %k = %c0 to %c2 step %c1 {
      %row = affine.apply affine_map<(d) -> (d * 256)>(%k)
      %column = affine.apply affine_map<(d) -> (d * 256)>(%j)
      %out_row = affine.apply affine_map<(d) -> (d * 256)>(%i)
      %block = memref.subview %b[%row, %column] [256, 256] [1, 1] : memref<512x512xf32> to memref<256x256xf32, strided<[512, 1], offset: ?>>
      scf.for %p = %c0 to %c256 step %c64 {
        %source = memref.subview %block[0, %p] [256, 64] [1, 1] : memref<256x256xf32, strided<[512, 1], offset: ?>> to memref<256x64xf32, strided<[512, 1], offset: ?>>
        %panel = memref.alloc() {alignment = 64 : i64} : memref<256x64xf32>
        linalg.copy {tessel.packing} ins(%source : memref<256x64xf32, strided<[512, 1], offset: ?>>) outs(%panel : memref<256x64xf32>)
        %v = vector.transfer_read %panel[%c0, %c0], %zero {in_bounds = [true]} : memref<256x64xf32>, vector<64xf32>
        %out_column = arith.addi %column, %p : index
        vector.transfer_write %v, %c[%out_row, %out_column] {in_bounds = [true]} : vector<64xf32>, memref<512x512xf32>
        memref.dealloc %panel : memref<256x64xf32>
      }
    }
  }
  return
}

// The panel varies with the only loop: nothing repeats.
// CHECK-LABEL: func.func @no_repeats(
// CHECK-NOT: memref.view
// CHECK: memref.alloc() {alignment = 64 : i64} : memref<32x16xf32>
// CHECK: linalg.copy {tessel.packing}
func.func @no_repeats(%b: memref<32x64xf32>, %c: memref<32x64xf32>) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  scf.forall (%j) in (4) {
    %column = affine.apply affine_map<(d) -> (d * 16)>(%j)
    %source = memref.subview %b[0, %column] [32, 16] [1, 1] : memref<32x64xf32> to memref<32x16xf32, strided<[64, 1], offset: ?>>
    %panel = memref.alloc() {alignment = 64 : i64} : memref<32x16xf32>
    linalg.copy {tessel.packing} ins(%source : memref<32x16xf32, strided<[64, 1], offset: ?>>) outs(%panel : memref<32x16xf32>)
    %v = vector.transfer_read %panel[%c0, %c0], %zero {in_bounds = [true]} : memref<32x16xf32>, vector<16xf32>
    vector.transfer_write %v, %c[%c0, %column] {in_bounds = [true]} : vector<16xf32>, memref<32x64xf32>
    memref.dealloc %panel : memref<32x16xf32>
  }
  return
}

// The source argument is written in the function (it may change between
// the programs that read it): each program copies what it sees.
// CHECK-LABEL: func.func @written_source(
// CHECK-NOT: memref.view
// CHECK: linalg.copy {tessel.packing}
func.func @written_source(%b: memref<32x64xf32>, %c: memref<32x64xf32>) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  scf.forall (%i, %j) in (2, 4) {
    %column = affine.apply affine_map<(d) -> (d * 16)>(%j)
    %source = memref.subview %b[0, %column] [32, 16] [1, 1] : memref<32x64xf32> to memref<32x16xf32, strided<[64, 1], offset: ?>>
    %panel = memref.alloc() {alignment = 64 : i64} : memref<32x16xf32>
    linalg.copy {tessel.packing} ins(%source : memref<32x16xf32, strided<[64, 1], offset: ?>>) outs(%panel : memref<32x16xf32>)
    %v = vector.transfer_read %panel[%c0, %c0], %zero {in_bounds = [true]} : memref<32x16xf32>, vector<16xf32>
    vector.transfer_write %v, %b[%i, %column] {in_bounds = [true]} : vector<16xf32>, memref<32x64xf32>
    memref.dealloc %panel : memref<32x16xf32>
  }
  return
}

// Under a condition: a slot packed ahead might be one no program reads
// (out of bounds, for a partial block's guard).
// CHECK-LABEL: func.func @conditional(
// CHECK-NOT: memref.view
// CHECK: scf.if
// CHECK: linalg.copy {tessel.packing}
func.func @conditional(%b: memref<32x64xf32>, %c: memref<32x64xf32>, %flag: i1) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  scf.forall (%i, %j) in (2, 4) {
    scf.if %flag {
      %column = affine.apply affine_map<(d) -> (d * 16)>(%j)
      %source = memref.subview %b[0, %column] [32, 16] [1, 1] : memref<32x64xf32> to memref<32x16xf32, strided<[64, 1], offset: ?>>
      %panel = memref.alloc() {alignment = 64 : i64} : memref<32x16xf32>
      linalg.copy {tessel.packing} ins(%source : memref<32x16xf32, strided<[64, 1], offset: ?>>) outs(%panel : memref<32x16xf32>)
      %v = vector.transfer_read %panel[%c0, %c0], %zero {in_bounds = [true]} : memref<32x16xf32>, vector<16xf32>
      vector.transfer_write %v, %c[%i, %column] {in_bounds = [true]} : vector<16xf32>, memref<32x64xf32>
      memref.dealloc %panel : memref<32x16xf32>
    }
  }
  return
}

// The panel buffer is written by more than the copy (a padded panel's
// zeros): it is not the argument's bytes alone.
// CHECK-LABEL: func.func @destination_written(
// CHECK-NOT: memref.view
// CHECK: linalg.fill
// CHECK: linalg.copy {tessel.packing}
func.func @destination_written(%b: memref<32x64xf32>, %c: memref<32x64xf32>) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  scf.forall (%i, %j) in (2, 4) {
    %column = affine.apply affine_map<(d) -> (d * 16)>(%j)
    %source = memref.subview %b[0, %column] [32, 16] [1, 1] : memref<32x64xf32> to memref<32x16xf32, strided<[64, 1], offset: ?>>
    %panel = memref.alloc() {alignment = 64 : i64} : memref<32x16xf32>
    linalg.fill ins(%zero : f32) outs(%panel : memref<32x16xf32>)
    linalg.copy {tessel.packing} ins(%source : memref<32x16xf32, strided<[64, 1], offset: ?>>) outs(%panel : memref<32x16xf32>)
    %v = vector.transfer_read %panel[%c0, %c0], %zero {in_bounds = [true]} : memref<32x16xf32>, vector<16xf32>
    vector.transfer_write %v, %c[%i, %column] {in_bounds = [true]} : vector<16xf32>, memref<32x64xf32>
    memref.dealloc %panel : memref<32x16xf32>
  }
  return
}

// Copies tessel-tile did not mark are someone else's.
// CHECK-LABEL: func.func @unmarked(
// CHECK-NOT: memref.view
// CHECK: linalg.copy ins
func.func @unmarked(%b: memref<32x64xf32>, %c: memref<32x64xf32>) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  scf.forall (%i, %j) in (2, 4) {
    %column = affine.apply affine_map<(d) -> (d * 16)>(%j)
    %source = memref.subview %b[0, %column] [32, 16] [1, 1] : memref<32x64xf32> to memref<32x16xf32, strided<[64, 1], offset: ?>>
    %panel = memref.alloc() {alignment = 64 : i64} : memref<32x16xf32>
    linalg.copy ins(%source : memref<32x16xf32, strided<[64, 1], offset: ?>>) outs(%panel : memref<32x16xf32>)
    %v = vector.transfer_read %panel[%c0, %c0], %zero {in_bounds = [true]} : memref<32x16xf32>, vector<16xf32>
    vector.transfer_write %v, %c[%i, %column] {in_bounds = [true]} : vector<16xf32>, memref<32x64xf32>
    memref.dealloc %panel : memref<32x16xf32>
  }
  return
}
