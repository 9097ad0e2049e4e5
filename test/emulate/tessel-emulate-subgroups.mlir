// RUN: tessel-opt %s --split-input-file --tessel-emulate-subgroups | FileCheck %s
// RUN: tessel-opt %s --split-input-file --tessel-emulate-subgroups --tessel-emulate-gpu --canonicalize | FileCheck %s --check-prefix=PHASES

// A cross-lane reduction through memory: every work-item stores its value
// in its slot of the workgroup's exchange buffer, a barrier, each folds
// its cluster's slots (clusters of 16 consecutive lanes) in lane order,
// a barrier before the buffer is used again.
// CHECK-LABEL: func.func @clusters
// CHECK: gpu.launch
// CHECK: %[[X:.*]] = memref.alloc(%{{.*}}) : memref<?xf32>
// CHECK: memref.store %{{.*}}, %[[X]][%[[T:.*]]] : memref<?xf32>
// CHECK-NEXT: gpu.barrier
// CHECK: %[[LANE:.*]] = arith.remui %[[T]], %[[C16:.*]] : index
// CHECK-NEXT: %[[BASE:.*]] = arith.subi %[[T]], %[[LANE]] : index
// CHECK-NEXT: %[[FIRST:.*]] = memref.load %[[X]][%[[BASE]]] : memref<?xf32>
// CHECK-NEXT: %[[W:.*]] = scf.for %{{.*}} = %{{.*}} to %[[C16]] step %{{.*}} iter_args(%[[ACC:.*]] = %[[FIRST]]) -> (f32) {
// CHECK: %[[E:.*]] = memref.load %[[X]]
// CHECK-NEXT: %[[N:.*]] = arith.maximumf %[[ACC]], %[[E]] : f32
// CHECK-NEXT: scf.yield %[[N]] : f32
// CHECK: gpu.barrier
// CHECK: memref.store %[[W]], %arg0
// CHECK: memref.dealloc %[[X]] : memref<?xf32>
// The phases between the barriers run as loops over the work-items:
// PHASES-LABEL: func.func @clusters
// PHASES-NOT: gpu.subgroup_reduce
// PHASES-NOT: gpu.barrier
// PHASES-COUNT-3: scf.for %{{.*}} = %c0 to %c64 step %c1 {
func.func @clusters(%a: memref<64xf32>) {
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    %v = memref.load %a[%tx] : memref<64xf32>
    %w = gpu.subgroup_reduce maximumf %v cluster(size = 16) : (f32) -> f32
    memref.store %w, %a[%tx] : memref<64xf32>
    gpu.terminator
  }
  return
}

// -----

// Without a cluster size the cluster is the module's wave (32 here); one
// exchange buffer per element type serves every reduction of the kernel.
// CHECK-LABEL: func.func @waves
// CHECK-COUNT-1: memref.alloc(%{{.*}}) : memref<?xi32>
// CHECK-NOT: memref.alloc
// CHECK: arith.constant 32 : index
// CHECK: arith.addi %{{.*}}, %{{.*}} : i32
// CHECK: arith.xori %{{.*}}, %{{.*}} : i32
module attributes {tessel.wave_size = 32 : i64} {
  func.func @waves(%a: memref<64xi32>) {
    %c1 = arith.constant 1 : index
    %c64 = arith.constant 64 : index
    gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
               threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
      %v = memref.load %a[%tx] : memref<64xi32>
      %s = gpu.subgroup_reduce add %v : (i32) -> i32
      %x = gpu.subgroup_reduce xor %s cluster(size = 4) : (i32) -> i32
      memref.store %x, %a[%tx] : memref<64xi32>
      gpu.terminator
    }
    return
  }
}
