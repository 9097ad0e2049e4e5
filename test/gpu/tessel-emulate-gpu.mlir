// RUN: tessel-opt %s --split-input-file --tessel-emulate-gpu | FileCheck %s

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
