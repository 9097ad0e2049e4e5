// tessel-copies-to-linalg: memref.copy with a strided side becomes
// linalg.copy (loops LLVM vectorizes rather than the runtime's element-wise
// memrefCopy); contiguous copies stay memref.copy (a memcpy).
// RUN: tessel-opt %s --tessel-copies-to-linalg | FileCheck %s

// CHECK-LABEL: func.func @strided(
// CHECK-SAME: %[[SRC:.*]]: memref<4x8xf32, strided<[16, 1], offset: ?>>, %[[DST:.*]]: memref<4x8xf32>
// CHECK-NEXT: linalg.copy ins(%[[SRC]] : memref<4x8xf32, strided<[16, 1], offset: ?>>) outs(%[[DST]] : memref<4x8xf32>)
// CHECK-NOT: memref.copy
func.func @strided(%src: memref<4x8xf32, strided<[16, 1], offset: ?>>, %dst: memref<4x8xf32>) {
  memref.copy %src, %dst : memref<4x8xf32, strided<[16, 1], offset: ?>> to memref<4x8xf32>
  return
}

// CHECK-LABEL: func.func @into_strided(
// CHECK-NEXT: linalg.copy ins(%{{.*}} : memref<4x8xi16>) outs(%{{.*}} : memref<4x8xi16, strided<[16, 1]>>)
func.func @into_strided(%src: memref<4x8xi16>, %dst: memref<4x8xi16, strided<[16, 1]>>) {
  memref.copy %src, %dst : memref<4x8xi16> to memref<4x8xi16, strided<[16, 1]>>
  return
}

// CHECK-LABEL: func.func @contiguous(
// CHECK-NEXT: memref.copy %{{.*}}, %{{.*}} : memref<4x8xf32> to memref<4x8xf32>
func.func @contiguous(%src: memref<4x8xf32>, %dst: memref<4x8xf32>) {
  memref.copy %src, %dst : memref<4x8xf32> to memref<4x8xf32>
  return
}

// Unranked memrefs are left to the runtime.
// CHECK-LABEL: func.func @unranked(
// CHECK-NEXT: memref.copy
func.func @unranked(%src: memref<*xf32>, %dst: memref<*xf32>) {
  memref.copy %src, %dst : memref<*xf32> to memref<*xf32>
  return
}
