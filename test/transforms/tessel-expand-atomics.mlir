// tessel-expand-atomics: each block.atomic_cas_element becomes a
// memref.generic_atomic_rmw keeping the element unless it equals the
// expected one; floats compare as integers of their width (bit for bit).
// RUN: tessel-opt %s --tessel-expand-atomics | FileCheck %s

// CHECK-LABEL: func.func @ints
// CHECK: %[[OLD:.*]] = memref.generic_atomic_rmw %{{.*}}[%{{.*}}, %{{.*}}] : memref<4x8xi32> {
// CHECK: ^bb0(%[[CUR:.*]]: i32):
// CHECK:   %[[EQ:.*]] = arith.cmpi eq, %[[CUR]], %{{.*}} : i32
// CHECK:   %[[NEW:.*]] = arith.select %[[EQ]], %{{.*}}, %[[CUR]] : i32
// CHECK:   memref.atomic_yield %[[NEW]] : i32
// CHECK: return %[[OLD]] : i32
// CHECK-NOT: block.atomic_cas_element
func.func @ints(%expected: i32, %new: i32, %buffer: memref<4x8xi32>, %i: index, %j: index) -> i32 {
  %old = block.atomic_cas_element %expected, %new, %buffer[%i, %j] : i32, memref<4x8xi32>
  return %old : i32
}

// CHECK-LABEL: func.func @floats
// CHECK: memref.generic_atomic_rmw %{{.*}}[%{{.*}}] : memref<16xf32, strided<[2], offset: ?>> {
// CHECK: arith.bitcast %{{.*}} : f32 to i32
// CHECK: arith.bitcast %{{.*}} : f32 to i32
// CHECK: arith.cmpi eq, %{{.*}}, %{{.*}} : i32
// CHECK: arith.select %{{.*}}, %{{.*}}, %{{.*}} : f32
func.func @floats(%expected: f32, %new: f32, %buffer: memref<16xf32, strided<[2], offset: ?>>, %i: index) -> f32 {
  %old = block.atomic_cas_element %expected, %new, %buffer[%i] : f32, memref<16xf32, strided<[2], offset: ?>>
  return %old : f32
}
