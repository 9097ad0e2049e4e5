// RUN: tessel-opt %s --split-input-file --tessel-emulate-matrix-cores | FileCheck %s
// RUN: tessel-opt %s --split-input-file --tessel-emulate-matrix-cores --tessel-emulate-gpu --canonicalize | FileCheck %s --check-prefix=PHASES

// Two independent MFMAs share one exchange: every work-item stores its A
// and B fragments of both (slots ((g * 2 + operand) * items + item) *
// elements), a barrier, then each computes its own 4 result registers: for
// register r of lane l, the row and column it sums over come from the
// placement table, and each k step reads the wave's fragments of the lanes
// holding A[i][k] and B[k][j] (another table) into one fused multiply-add,
// in k order. A barrier ends the exchange. The third MFMA uses the first's
// result: it gets an exchange of its own, after.
// CHECK-LABEL: func.func @mfma
// CHECK: gpu.launch
// CHECK: %[[X:.*]] = memref.alloc(%{{.*}}) : memref<?xf32>
// CHECK: arith.constant dense<{{.*}}> : vector<512xi32>
// A[i][k] is in lane i + 16 k:
// CHECK: arith.constant dense<[0, 16, 32, 48, 1, 17, 33, 49, {{.*}}]> : vector<64xi32>
// CHECK-COUNT-4: memref.store %{{.*}}, %[[X]][%{{.*}}] : memref<?xf32>
// CHECK: gpu.barrier
// CHECK: scf.for %{{.*}} = %c0 to %{{.*}} step %{{.*}} iter_args(%{{.*}} = %{{.*}}) -> (f32) {
// CHECK: vector.extract %{{.*}}[%{{.*}}] : i32 from vector<64xi32>
// CHECK: memref.load %[[X]]
// CHECK: memref.load %[[X]]
// CHECK: math.fma
// CHECK: vector.insert
// CHECK: gpu.barrier
// CHECK-COUNT-2: memref.store %{{.*}}, %[[X]][%{{.*}}] : memref<?xf32>
// CHECK: gpu.barrier
// CHECK: gpu.barrier
// CHECK: memref.dealloc %[[X]]
// CHECK-NOT: amdgpu.mfma
//
// Then the GPU emulator runs the phases; accumulators live in memory
// between them, one slot per work-item.
// PHASES-LABEL: func.func @mfma
// PHASES: scf.forall
// PHASES: memref.alloc() : memref<64xvector<4xf32>>
// PHASES-NOT: gpu.barrier
// PHASES-NOT: amdgpu.mfma
func.func @mfma(%a: memref<64xf32>, %b: memref<64xf32>, %out: memref<64xvector<4xf32>>) {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c2, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    %x = memref.load %a[%tx] : memref<64xf32>
    %y = memref.load %b[%tx] : memref<64xf32>
    %zero = arith.constant dense<0.0> : vector<4xf32>
    %d0 = amdgpu.mfma 16x16x4 %x * %y + %zero blgp = none : f32, f32, vector<4xf32>
    %d1 = amdgpu.mfma 16x16x4 %y * %x + %zero blgp = none : f32, f32, vector<4xf32>
    %d2 = amdgpu.mfma 16x16x4 %x * %x + %d0 blgp = none : f32, f32, vector<4xf32>
    %s = arith.addf %d1, %d2 : vector<4xf32>
    memref.store %s, %out[%tx] : memref<64xvector<4xf32>>
    gpu.terminator
  }
  return
}

// -----

// WMMA (wave32) on 8-bit integers: fragments of 16 elements, unsigned A
// zero-extended, signed B sign-extended, products summed in i32.
// CHECK-LABEL: func.func @wmma
// CHECK: memref.alloc(%{{.*}}) : memref<?xi8>
// CHECK: vector.store %{{.*}} : memref<?xi8>, vector<16xi8>
// CHECK: gpu.barrier
// CHECK: arith.extui %{{.*}} : i8 to i32
// CHECK: arith.extsi %{{.*}} : i8 to i32
// CHECK: arith.muli
// CHECK: arith.addi
// CHECK-NOT: amdgpu.wmma
func.func @wmma(%a: memref<32xvector<16xi8>>, %out: memref<32xvector<8xi32>>) {
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    %x = memref.load %a[%tx] : memref<32xvector<16xi8>>
    %zero = arith.constant dense<0> : vector<8xi32>
    %d = amdgpu.wmma 16x16x16 %x * %x + %zero {unsignedA} : vector<16xi8>, vector<16xi8>, vector<8xi32>
    memref.store %d, %out[%tx] : memref<32xvector<8xi32>>
    gpu.terminator
  }
  return
}
