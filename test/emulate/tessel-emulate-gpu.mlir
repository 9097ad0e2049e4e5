// RUN: tessel-opt %s --split-input-file --tessel-emulate-gpu | FileCheck %s
// RUN: tessel-opt %s --split-input-file --tessel-emulate-gpu --canonicalize | FileCheck %s --check-prefix=CANON

// Workgroups run as an scf.forall, each with its LDS buffer; the kernel is
// split at the barrier: every work-item writes LDS, then every work-item
// reads its neighbour's value.
// CHECK-LABEL: func.func @reverse
// CHECK: scf.forall (%[[B:.*]], %{{.*}}, %{{.*}}) in (%{{.*}}, %{{.*}}, %{{.*}}) {
// CHECK: %[[LDS:.*]] = memref.alloc() {alignment = 64 : i64} : memref<256xi8>
// CHECK: %[[VIEW:.*]] = memref.view %[[LDS]][%{{.*}}][] : memref<256xi8> to memref<64xf32>
// CHECK: scf.for %[[T1:.*]] = %{{.*}} to %c64 step
// CHECK: memref.store %{{.*}}, %[[VIEW]][%[[T1]]]
// CHECK-NOT: gpu.barrier
// CHECK: scf.for %[[T2:.*]] = %{{.*}} to %c64 step
// CHECK: %[[R:.*]] = arith.subi %{{.*}}, %[[T2]]
// CHECK: memref.load %[[VIEW]][%[[R]]]
// CHECK: memref.dealloc %[[LDS]]
func.func @reverse(%in: memref<128xf32>, %out: memref<128xf32>) {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c63 = arith.constant 63 : index
  %c64 = arith.constant 64 : index
  %c0 = arith.constant 0 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c2, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1)
             workgroup(%lds : memref<256xi8, #gpu.address_space<workgroup>>) {
    %view = memref.view %lds[%c0][] : memref<256xi8, #gpu.address_space<workgroup>> to memref<64xf32, #gpu.address_space<workgroup>>
    %shared = memref.memory_space_cast %view : memref<64xf32, #gpu.address_space<workgroup>> to memref<64xf32>
    %base = arith.muli %bx, %c64 : index
    %i = arith.addi %base, %tx : index
    %v = memref.load %in[%i] : memref<128xf32>
    memref.store %v, %shared[%tx] : memref<64xf32>
    gpu.barrier
    %r = arith.subi %c63, %tx : index
    %w = memref.load %shared[%r] : memref<64xf32>
    memref.store %w, %out[%i] : memref<128xf32>
    gpu.terminator
  }
  return
}

// -----

// A work-item's value loaded before a barrier and stored after it (a
// register across the barrier): kept in a buffer with a slot per item.
// CANON-LABEL: func.func @value_across_barrier
// CANON: scf.forall
// CANON: %[[SLOTS:.*]] = memref.alloc() : memref<64xf32>
// CANON: scf.for %[[T1:.*]] = %{{.*}} to %c64 step
// CANON: %[[V:.*]] = memref.load %{{.*}}[%[[T1]]]
// CANON: memref.store %[[V]], %[[SLOTS]][%[[T1]]]
// CANON: scf.for %[[T2:.*]] = %{{.*}} to %c64 step
// CANON: %[[W:.*]] = memref.load %[[SLOTS]][%[[T2]]]
// CANON: memref.store %[[W]], %{{.*}}[%{{.*}}]
// CANON: memref.dealloc %[[SLOTS]]
func.func @value_across_barrier(%out: memref<64xf32>) {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c2, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    %v = memref.load %out[%tx] : memref<64xf32>
    gpu.barrier
    %r = arith.subi %c64, %tx : index
    %r1 = arith.subi %r, %c1 : index
    memref.store %v, %out[%r1] : memref<64xf32>
    gpu.terminator
  }
  return
}

// -----

// A per-item value a barrier-holding loop carries (an accumulator): its
// slot holds it between iterations and phases; the loop itself carries
// nothing, so its control stays uniform.
// CANON-LABEL: func.func @carried
// CANON: scf.forall
// CANON-DAG: %[[NEXT:.*]] = memref.alloc() : memref<64xf32>
// CANON-DAG: %[[ACC:.*]] = memref.alloc() : memref<64xf32>
// CANON: scf.for %[[T0:.*]] = %{{.*}} to %c64 step
// CANON: memref.store %{{.*}}, %[[ACC]][%[[T0]]]
// CANON: scf.for %{{.*}} = %{{.*}} to %c4 step %{{.*}} {
// CANON: scf.for %[[T1:.*]] = %{{.*}} to %c64 step
// CANON: %[[A1:.*]] = memref.load %[[ACC]][%[[T1]]]
// CANON: memref.store %[[A1]], %{{.*}}[%[[T1]]]
// CANON: scf.for %[[T2:.*]] = %{{.*}} to %c64 step
// CANON: %[[A2:.*]] = memref.load %[[ACC]][%[[T2]]]
// CANON: %[[SUM:.*]] = arith.addf %[[A2]], %{{.*}}
// CANON: memref.store %[[SUM]], %[[NEXT]][%[[T2]]]
// CANON: scf.for %[[T3:.*]] = %{{.*}} to %c64 step
// CANON: %[[N:.*]] = memref.load %[[NEXT]][%[[T3]]]
// CANON: memref.store %[[N]], %[[ACC]][%[[T3]]]
// CANON: }
// CANON: scf.for %[[T4:.*]] = %{{.*}} to %c64 step
// CANON: %[[R:.*]] = memref.load %[[ACC]][%[[T4]]]
// CANON: memref.store %[[R]], %{{.*}}[%[[T4]]]
func.func @carried(%in: memref<64xf32>, %out: memref<64xf32>, %lds: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c64 = arith.constant 64 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c2, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    %init = memref.load %in[%tx] : memref<64xf32>
    %sum = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %init) -> (f32) {
      memref.store %acc, %lds[%tx] : memref<64xf32>
      gpu.barrier
      %r = arith.subi %c64, %tx : index
      %r1 = arith.subi %r, %c1 : index
      %w = memref.load %lds[%r1] : memref<64xf32>
      %next = arith.addf %acc, %w : f32
      gpu.barrier
      scf.yield %next : f32
    }
    memref.store %sum, %out[%tx] : memref<64xf32>
    gpu.terminator
  }
  return
}
