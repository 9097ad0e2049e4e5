// RUN: tessel-opt %s --split-input-file --grid-to-gpu | FileCheck %s
// RUN: tessel-opt %s --split-input-file --grid-to-gpu --tessel-elide-barriers | FileCheck %s --check-prefix=BARRIERS

// A reduction's result (replicated_buffers.rs): its init and the serial
// fold of the waves' partials (from LDS) are the only writes of a
// one-float buffer, outside block work: every work-item runs them into
// its own private copy (no item-0 guard), and the block work after reads
// that copy. Only the barrier publishing the partials is left.
// CHECK-LABEL: func.func @result
// CHECK: workgroup(%{{.*}} : memref<1024xi8, #gpu.address_space<workgroup>>) private(%[[P:.*]] : memref<1xf32, #gpu.address_space<private>>)
// CHECK: %[[OWN:.*]] = memref.memory_space_cast %[[P]] : memref<1xf32, #gpu.address_space<private>> to memref<1xf32>
// CHECK-NOT: scf.if
// CHECK: memref.store %{{.*}}, %[[OWN]][%{{.*}}] : memref<1xf32>
// CHECK-NOT: scf.if
// CHECK: scf.for
// CHECK: memref.load %[[OWN]]
// CHECK: memref.store %{{.*}}, %[[OWN]]
// CHECK: %[[M:.*]] = memref.load %[[OWN]]
// CHECK: arith.subf %{{.*}}, %[[M]]
// BARRIERS-LABEL: func.func @result
// BARRIERS-COUNT-1: gpu.barrier
// BARRIERS-NOT: gpu.barrier
// BARRIERS: return
func.func @result(%in: memref<2x256xf32>, %out: memref<2x256xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c256 = arith.constant 256 : index
  %ninf = arith.constant 0xFF800000 : f32
  scf.forall (%p) in (2) {
    %part = memref.alloc() : memref<256xf32>
    %res = memref.alloc() : memref<1xf32>
    memref.store %ninf, %res[%c0] : memref<1xf32>
    scf.parallel (%i) = (%c0) to (%c256) step (%c1) {
      %x = memref.load %in[%p, %i] : memref<2x256xf32>
      memref.store %x, %part[%i] : memref<256xf32>
      scf.reduce
    }
    scf.for %j = %c0 to %c4 step %c1 {
      %a = memref.load %part[%j] : memref<256xf32>
      %b = memref.load %res[%c0] : memref<1xf32>
      %m = arith.maximumf %a, %b : f32
      memref.store %m, %res[%c0] : memref<1xf32>
    }
    scf.parallel (%i) = (%c0) to (%c256) step (%c1) {
      %x = memref.load %in[%p, %i] : memref<2x256xf32>
      %m = memref.load %res[%c0] : memref<1xf32>
      %d = arith.subf %x, %m : f32
      memref.store %d, %out[%p, %i] : memref<2x256xf32>
      scf.reduce
    }
  }
  return
}

// -----

// Left in LDS, written by item 0: a buffer too large for every item to
// keep (16 floats), and one whose writer also writes LDS another buffer
// (that write must stay on one item): both run on item 0, in one guard.
// CHECK-LABEL: func.func @not_replicated
// CHECK-NOT: private(
// CHECK: scf.if
// CHECK-NEXT: memref.store %{{.*}}, %{{.*}}[%{{.*}}] : memref<16xf32>
// CHECK-NEXT: scf.for
// CHECK-NOT: private(
func.func @not_replicated(%in: memref<2x256xf32>, %out: memref<2x256xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c256 = arith.constant 256 : index
  %zero = arith.constant 0.0 : f32
  scf.forall (%p) in (2) {
    %large = memref.alloc() : memref<16xf32>
    %small = memref.alloc() : memref<1xf32>
    %log = memref.alloc() : memref<256xf32>
    memref.store %zero, %large[%c0] : memref<16xf32>
    scf.for %j = %c0 to %c4 step %c1 {
      memref.store %zero, %small[%c0] : memref<1xf32>
      memref.store %zero, %log[%j] : memref<256xf32>
    }
    scf.parallel (%i) = (%c0) to (%c256) step (%c1) {
      %a = memref.load %large[%c0] : memref<16xf32>
      %b = memref.load %small[%c0] : memref<1xf32>
      %c = memref.load %log[%i] : memref<256xf32>
      %s = arith.addf %a, %b : f32
      %t = arith.addf %s, %c : f32
      memref.store %t, %out[%p, %i] : memref<2x256xf32>
      scf.reduce
    }
  }
  return
}
