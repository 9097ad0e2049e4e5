// RUN: tessel-opt %s --split-input-file --tessel-emulate-buffers | FileCheck %s

// A buffer access checks each element against the buffer's size: those
// past the end read as zero and are not written. The emulator's form is a
// mask over the vector's elements (unsigned: an offset that wrapped below
// zero is past the end too).
// CHECK-LABEL: func.func @copy
// CHECK: %[[I:.*]] = arith.index_cast %{{.*}} : i32 to index
// CHECK-NEXT: %[[STEP:.*]] = vector.step : vector<4xindex>
// CHECK-NEXT: %[[START:.*]] = vector.broadcast %[[I]] : index to vector<4xindex>
// CHECK-NEXT: %[[EACH:.*]] = arith.addi %[[START]], %[[STEP]] : vector<4xindex>
// CHECK-NEXT: %[[SIZE:.*]] = arith.constant dense<10> : vector<4xindex>
// CHECK-NEXT: %[[MASK:.*]] = arith.cmpi ult, %[[EACH]], %[[SIZE]] : vector<4xindex>
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : vector<4xf32>
// CHECK-NEXT: %[[V:.*]] = vector.maskedload %arg0[%[[I]]], %[[MASK]], %[[ZERO]] : memref<10xf32>, vector<4xi1>, vector<4xf32> into vector<4xf32>
// CHECK: vector.maskedstore %arg1[%{{.*}}], %{{.*}}, %[[V]] : memref<10xf32>, vector<4xi1>, vector<4xf32>
// CHECK-NOT: amdgpu.raw_buffer
func.func @copy(%x: memref<10xf32>, %o: memref<10xf32>) {
  %at = arith.constant 4 : i32
  %v = amdgpu.raw_buffer_load %x[%at] : memref<10xf32>, i32 -> vector<4xf32>
  amdgpu.raw_buffer_store %v -> %o[%at] : vector<4xf32> -> memref<10xf32>, i32
  return
}

// -----

// Integers pad with integer zeros.
// CHECK-LABEL: func.func @bytes
// CHECK: arith.constant dense<0> : vector<16xi8>
// CHECK: vector.maskedload %arg0[%{{.*}}], %{{.*}}, %{{.*}} : memref<64xi8>, vector<16xi1>, vector<16xi8> into vector<16xi8>
func.func @bytes(%x: memref<64xi8>, %at: i32) -> vector<16xi8> {
  %v = amdgpu.raw_buffer_load %x[%at] : memref<64xi8>, i32 -> vector<16xi8>
  return %v : vector<16xi8>
}
