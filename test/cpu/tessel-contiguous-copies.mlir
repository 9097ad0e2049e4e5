// tessel-contiguous-copies: a linalg.copy between contiguous windows of
// different buffers, one allocated here, becomes memref.copy (one memcpy);
// strided, overlapping, possibly aliased, converting and marked copies
// stay linalg.copy (loops).
// RUN: tessel-opt %s --tessel-contiguous-copies | FileCheck %s

// A TPU DMA's page: a 16x128 window of a page table (offset unknown,
// leading unit dims) into one slot of a scratch buffer.
// CHECK-LABEL: func.func @page_into_scratch(
// CHECK: memref.copy %{{.*}}, %{{.*}} : memref<1x1x16x128xf32, strided<[1572864, 2048, 128, 1], offset: ?>> to memref<1x1x16x128xf32, strided<[65536, 2048, 128, 1], offset: ?>>
// CHECK-NOT: linalg.copy
func.func @page_into_scratch(%pages: memref<1x768x16x128xf32>, %page: index, %slot: index) -> memref<2x32x16x128xf32> {
  %scratch = memref.alloc() : memref<2x32x16x128xf32>
  %source = memref.subview %pages[0, %page, 0, 0] [1, 1, 16, 128] [1, 1, 1, 1] : memref<1x768x16x128xf32> to memref<1x1x16x128xf32, strided<[1572864, 2048, 128, 1], offset: ?>>
  %target = memref.subview %scratch[%slot, 3, 0, 0] [1, 1, 16, 128] [1, 1, 1, 1] : memref<2x32x16x128xf32> to memref<1x1x16x128xf32, strided<[65536, 2048, 128, 1], offset: ?>>
  linalg.copy ins(%source : memref<1x1x16x128xf32, strided<[1572864, 2048, 128, 1], offset: ?>>) outs(%target : memref<1x1x16x128xf32, strided<[65536, 2048, 128, 1], offset: ?>>)
  return %scratch : memref<2x32x16x128xf32>
}

// Whole rows of a wider array are contiguous too; into a fresh buffer.
// CHECK-LABEL: func.func @rows(
// CHECK: memref.copy %{{.*}}, %{{.*}} : memref<4x64xf32, strided<[64, 1], offset: ?>> to memref<4x64xf32>
func.func @rows(%x: memref<16x64xf32>, %row: index) -> memref<4x64xf32> {
  %buffer = memref.alloca() : memref<4x64xf32>
  %rows = memref.subview %x[%row, 0] [4, 64] [1, 1] : memref<16x64xf32> to memref<4x64xf32, strided<[64, 1], offset: ?>>
  linalg.copy ins(%rows : memref<4x64xf32, strided<[64, 1], offset: ?>>) outs(%buffer : memref<4x64xf32>)
  return %buffer : memref<4x64xf32>
}

// A column window is strided: loops.
// CHECK-LABEL: func.func @columns(
// CHECK: linalg.copy
// CHECK-NOT: memref.copy
func.func @columns(%x: memref<16x64xf32>) -> memref<16x8xf32> {
  %buffer = memref.alloc() : memref<16x8xf32>
  %columns = memref.subview %x[0, 8] [16, 8] [1, 1] : memref<16x64xf32> to memref<16x8xf32, strided<[64, 1], offset: 8>>
  linalg.copy ins(%columns : memref<16x8xf32, strided<[64, 1], offset: 8>>) outs(%buffer : memref<16x8xf32>)
  return %buffer : memref<16x8xf32>
}

// Two windows of one buffer may overlap, and two arguments may alias
// (a Pallas input and the output aliased to it): loops, in order.
// CHECK-LABEL: func.func @same_buffer(
// CHECK: linalg.copy
// CHECK-NOT: memref.copy
func.func @same_buffer(%x: memref<16x64xf32>, %from: index, %to: index) {
  %a = memref.subview %x[%from, 0] [4, 64] [1, 1] : memref<16x64xf32> to memref<4x64xf32, strided<[64, 1], offset: ?>>
  %b = memref.subview %x[%to, 0] [4, 64] [1, 1] : memref<16x64xf32> to memref<4x64xf32, strided<[64, 1], offset: ?>>
  linalg.copy ins(%a : memref<4x64xf32, strided<[64, 1], offset: ?>>) outs(%b : memref<4x64xf32, strided<[64, 1], offset: ?>>)
  return
}

// CHECK-LABEL: func.func @arguments(
// CHECK: linalg.copy
// CHECK-NOT: memref.copy
func.func @arguments(%x: memref<16x64xf32>, %y: memref<16x64xf32>, %row: index) {
  %a = memref.subview %x[%row, 0] [4, 64] [1, 1] : memref<16x64xf32> to memref<4x64xf32, strided<[64, 1], offset: ?>>
  %b = memref.subview %y[%row, 0] [4, 64] [1, 1] : memref<16x64xf32> to memref<4x64xf32, strided<[64, 1], offset: ?>>
  linalg.copy ins(%a : memref<4x64xf32, strided<[64, 1], offset: ?>>) outs(%b : memref<4x64xf32, strided<[64, 1], offset: ?>>)
  return
}

// A packing copy keeps its mark and its loops.
// CHECK-LABEL: func.func @marked(
// CHECK: linalg.copy {{.*}}tessel.packing
func.func @marked(%x: memref<16x64xf32>) -> memref<16x64xf32> {
  %buffer = memref.alloc() : memref<16x64xf32>
  linalg.copy {tessel.packing} ins(%x : memref<16x64xf32>) outs(%buffer : memref<16x64xf32>)
  return %buffer : memref<16x64xf32>
}
