// tessel-vectorize-copies: a linalg.copy between static windows of
// different buffers (one allocated here) with unit innermost strides is
// tiled into row pieces of at most 256 bytes, each one vector transfer;
// copies that may overlap, columns, dynamic shapes and copies under
// bounds checks stay linalg.copy (loops).
// RUN: tessel-opt %s --split-input-file --tessel-vectorize-copies | FileCheck %s

// tessel-tile's B panel, as tessel-hoist-packing leaves it: 16 floats of
// every 2048-float row into a slot of one byte buffer. One loop over the
// rows, a 16-lane read and write per row.
// CHECK-LABEL: func.func @packed_panel(
// CHECK: %[[SLOT:.*]] = memref.view
// CHECK: scf.for %[[ROW:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NOT: vector.transfer_read
// CHECK: %[[READ:.*]] = vector.transfer_read %{{.*}} {in_bounds = [true, true]} : memref<1x16xf32, strided<[2048, 1], offset: ?>>, vector<1x16xf32>
// CHECK-NOT: vector.transfer_read
// CHECK: vector.transfer_write %[[READ]], %{{.*}} {in_bounds = [true, true]} : vector<1x16xf32>, memref<1x16xf32, strided<[16, 1], offset: ?>>
// CHECK-NEXT: }
// CHECK-NOT: linalg.copy
// CHECK: return
func.func @packed_panel(%b: memref<2048x2048xf32>, %column: index, %byte: index) -> memref<1048576xi8> {
  %buffer = memref.alloc() {alignment = 64 : i64} : memref<1048576xi8>
  %slot = memref.view %buffer[%byte][] : memref<1048576xi8> to memref<2048x16xf32>
  %panel = memref.subview %b[0, %column] [2048, 16] [1, 1] : memref<2048x2048xf32> to memref<2048x16xf32, strided<[2048, 1], offset: ?>>
  linalg.copy {tessel.packing} ins(%panel : memref<2048x16xf32, strided<[2048, 1], offset: ?>>) outs(%slot : memref<2048x16xf32>)
  return %buffer : memref<1048576xi8>
}

// A row longer than 256 bytes is copied in 64-float pieces (a loop over
// rows, one over pieces); 8-bit rows in pieces of 256.
// CHECK-LABEL: func.func @long_rows(
// CHECK: scf.for
// CHECK: scf.for
// CHECK: vector.transfer_read {{.*}} vector<1x64xf32>
// CHECK: vector.transfer_write {{.*}} vector<1x64xf32>
// CHECK-NOT: linalg.copy
// CHECK: scf.for
// CHECK: scf.for
// CHECK: vector.transfer_read {{.*}} vector<1x256xi8>
// CHECK-NOT: linalg.copy
// CHECK: return
func.func @long_rows(%x: memref<64x1024xf32>, %y: memref<8x4096xi8>, %row: index) -> (memref<4x512xf32>, memref<2x1024xi8>) {
  %rows = memref.alloc() : memref<4x512xf32>
  %window = memref.subview %x[%row, 256] [4, 512] [1, 1] : memref<64x1024xf32> to memref<4x512xf32, strided<[1024, 1], offset: ?>>
  linalg.copy ins(%window : memref<4x512xf32, strided<[1024, 1], offset: ?>>) outs(%rows : memref<4x512xf32>)
  %bytes = memref.alloc() : memref<2x1024xi8>
  %narrow = memref.subview %y[%row, 0] [2, 1024] [1, 1] : memref<8x4096xi8> to memref<2x1024xi8, strided<[4096, 1], offset: ?>>
  linalg.copy ins(%narrow : memref<2x1024xi8, strided<[4096, 1], offset: ?>>) outs(%bytes : memref<2x1024xi8>)
  return %rows, %bytes : memref<4x512xf32>, memref<2x1024xi8>
}

// Rows of 12 floats: pieces of 12 (the largest divisor of the row up to
// 64), rank 3: loops over the two outer dimensions.
// CHECK-LABEL: func.func @rank3(
// CHECK: scf.for
// CHECK: scf.for
// CHECK: vector.transfer_read {{.*}} vector<1x1x12xf32>
// CHECK-NOT: linalg.copy
func.func @rank3(%x: memref<4x8x48xf32>) -> memref<2x8x12xf32> {
  %buffer = memref.alloc() : memref<2x8x12xf32>
  %window = memref.subview %x[1, 0, 12] [2, 8, 12] [1, 1, 1] : memref<4x8x48xf32> to memref<2x8x12xf32, strided<[384, 48, 1], offset: 396>>
  linalg.copy ins(%window : memref<2x8x12xf32, strided<[384, 48, 1], offset: 396>>) outs(%buffer : memref<2x8x12xf32>)
  return %buffer : memref<2x8x12xf32>
}

// A marked one-dimensional copy (contiguous, but tessel-contiguous-copies
// leaves marked copies alone): one piece, no loop, when it is at most
// 256 bytes; 64-float pieces in a loop when longer.
// CHECK-LABEL: func.func @one_dimension(
// CHECK-NOT: scf.for
// CHECK: vector.transfer_read %{{.*}} {in_bounds = [true]} : memref<64xf32>, vector<64xf32>
// CHECK: vector.transfer_write
// CHECK: scf.for
// CHECK: vector.transfer_read %{{.*}} {in_bounds = [true]} : memref<64xf32, strided<[1], offset: ?>>, vector<64xf32>
// CHECK-NOT: linalg.copy
// CHECK: return
func.func @one_dimension(%x: memref<64xf32>, %y: memref<256xf32>) -> (memref<64xf32>, memref<256xf32>) {
  %short = memref.alloc() : memref<64xf32>
  linalg.copy {tessel.packing} ins(%x : memref<64xf32>) outs(%short : memref<64xf32>)
  %long = memref.alloc() : memref<256xf32>
  linalg.copy {tessel.packing} ins(%y : memref<256xf32>) outs(%long : memref<256xf32>)
  return %short, %long : memref<64xf32>, memref<256xf32>
}

// Two windows of one buffer may overlap (the loops copy in order, a
// vector would not), two arguments may alias: loops.
// CHECK-LABEL: func.func @same_buffer(
// CHECK: linalg.copy
// CHECK-NOT: vector.transfer_read
// CHECK-LABEL: func.func @arguments(
// CHECK: linalg.copy
// CHECK-NOT: vector.transfer_read
func.func @same_buffer(%x: memref<16x64xf32>, %from: index, %to: index) {
  %a = memref.subview %x[%from, 0] [4, 32] [1, 1] : memref<16x64xf32> to memref<4x32xf32, strided<[64, 1], offset: ?>>
  %b = memref.subview %x[%to, 1] [4, 32] [1, 1] : memref<16x64xf32> to memref<4x32xf32, strided<[64, 1], offset: ?>>
  linalg.copy ins(%a : memref<4x32xf32, strided<[64, 1], offset: ?>>) outs(%b : memref<4x32xf32, strided<[64, 1], offset: ?>>)
  return
}
func.func @arguments(%x: memref<16x64xf32>, %y: memref<16x64xf32>, %row: index) {
  %a = memref.subview %x[%row, 0] [4, 32] [1, 1] : memref<16x64xf32> to memref<4x32xf32, strided<[64, 1], offset: ?>>
  %b = memref.subview %y[%row, 0] [4, 32] [1, 1] : memref<16x64xf32> to memref<4x32xf32, strided<[64, 1], offset: ?>>
  linalg.copy ins(%a : memref<4x32xf32, strided<[64, 1], offset: ?>>) outs(%b : memref<4x32xf32, strided<[64, 1], offset: ?>>)
  return
}

// A transposed window's rows are columns (stride 64), a dynamic window
// has no static pieces, one-element rows gain nothing, and a vector of i1
// is packed bits to LLVM where the buffer holds a byte per element: loops.
// CHECK-LABEL: func.func @not_rows(
// CHECK: linalg.copy
// CHECK: linalg.copy
// CHECK: linalg.copy
// CHECK: linalg.copy
// CHECK-NOT: vector.transfer_read
// CHECK: return
func.func @not_rows(%x: memref<16x64xf32>, %n: index, %m: memref<16x64xi1>) -> (memref<64x16xf32>, memref<?x64xf32>, memref<16x1xf32>, memref<4x32xi1>) {
  %columns = memref.alloc() : memref<64x16xf32>
  %transposed = memref.transpose %x (i, j) -> (j, i) : memref<16x64xf32> to memref<64x16xf32, strided<[1, 64]>>
  linalg.copy ins(%transposed : memref<64x16xf32, strided<[1, 64]>>) outs(%columns : memref<64x16xf32>)
  %dynamic = memref.alloc(%n) : memref<?x64xf32>
  %first = memref.subview %x[0, 0] [%n, 64] [1, 1] : memref<16x64xf32> to memref<?x64xf32, strided<[64, 1]>>
  linalg.copy ins(%first : memref<?x64xf32, strided<[64, 1]>>) outs(%dynamic : memref<?x64xf32>)
  %single = memref.alloc() : memref<16x1xf32>
  %column = memref.subview %x[0, 3] [16, 1] [1, 1] : memref<16x64xf32> to memref<16x1xf32, strided<[64, 1], offset: 3>>
  linalg.copy ins(%column : memref<16x1xf32, strided<[64, 1], offset: 3>>) outs(%single : memref<16x1xf32>)
  %masks = memref.alloc() : memref<4x32xi1>
  %mask_window = memref.subview %m[2, 8] [4, 32] [1, 1] : memref<16x64xi1> to memref<4x32xi1, strided<[64, 1], offset: 136>>
  linalg.copy ins(%mask_window : memref<4x32xi1, strided<[64, 1], offset: 136>>) outs(%masks : memref<4x32xi1>)
  return %columns, %dynamic, %single, %masks : memref<64x16xf32>, memref<?x64xf32>, memref<16x1xf32>, memref<4x32xi1>
}

// -----

// Under bounds checks every copy stays loops (tessel-check-bounds checks
// the loops' loads and stores).
// CHECK-LABEL: func.func @checked(
// CHECK: linalg.copy
// CHECK-NOT: vector.transfer_read
module attributes {tessel.bounds_checks} {
  func.func @checked(%b: memref<64x64xf32>) -> memref<64x16xf32> {
    %buffer = memref.alloc() : memref<64x16xf32>
    %panel = memref.subview %b[0, 16] [64, 16] [1, 1] : memref<64x64xf32> to memref<64x16xf32, strided<[64, 1], offset: 16>>
    linalg.copy ins(%panel : memref<64x16xf32, strided<[64, 1], offset: 16>>) outs(%buffer : memref<64x16xf32>)
    return %buffer : memref<64x16xf32>
  }
}
