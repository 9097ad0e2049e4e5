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

// -----

// Ten 8-float results written by one loop: the private budget (288 bytes)
// holds nine, and the loop, writing the tenth, must run on item 0 — so
// none of them is replicated (a copy only item 0 wrote would be wrong on
// the others).
// CHECK-LABEL: func.func @over_budget
// CHECK-NOT: private(
// CHECK: scf.if
// CHECK-NEXT: scf.for
func.func @over_budget(%out: memref<2x256xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c256 = arith.constant 256 : index
  %zero = arith.constant 0.0 : f32
  scf.forall (%p) in (2) {
    %b0 = memref.alloc() : memref<8xf32>
    %b1 = memref.alloc() : memref<8xf32>
    %b2 = memref.alloc() : memref<8xf32>
    %b3 = memref.alloc() : memref<8xf32>
    %b4 = memref.alloc() : memref<8xf32>
    %b5 = memref.alloc() : memref<8xf32>
    %b6 = memref.alloc() : memref<8xf32>
    %b7 = memref.alloc() : memref<8xf32>
    %b8 = memref.alloc() : memref<8xf32>
    %b9 = memref.alloc() : memref<8xf32>
    scf.for %j = %c0 to %c8 step %c1 {
      memref.store %zero, %b0[%j] : memref<8xf32>
      memref.store %zero, %b1[%j] : memref<8xf32>
      memref.store %zero, %b2[%j] : memref<8xf32>
      memref.store %zero, %b3[%j] : memref<8xf32>
      memref.store %zero, %b4[%j] : memref<8xf32>
      memref.store %zero, %b5[%j] : memref<8xf32>
      memref.store %zero, %b6[%j] : memref<8xf32>
      memref.store %zero, %b7[%j] : memref<8xf32>
      memref.store %zero, %b8[%j] : memref<8xf32>
      memref.store %zero, %b9[%j] : memref<8xf32>
    }
    scf.parallel (%i) = (%c0) to (%c256) step (%c1) {
      %l0 = memref.load %b0[%c0] : memref<8xf32>
      %l1 = memref.load %b1[%c0] : memref<8xf32>
      %l2 = memref.load %b2[%c0] : memref<8xf32>
      %l3 = memref.load %b3[%c0] : memref<8xf32>
      %l4 = memref.load %b4[%c0] : memref<8xf32>
      %l5 = memref.load %b5[%c0] : memref<8xf32>
      %l6 = memref.load %b6[%c0] : memref<8xf32>
      %l7 = memref.load %b7[%c0] : memref<8xf32>
      %l8 = memref.load %b8[%c0] : memref<8xf32>
      %l9 = memref.load %b9[%c0] : memref<8xf32>
      %s0 = arith.addf %l0, %l0 : f32
      %s1 = arith.addf %s0, %l1 : f32
      %s2 = arith.addf %s1, %l2 : f32
      %s3 = arith.addf %s2, %l3 : f32
      %s4 = arith.addf %s3, %l4 : f32
      %s5 = arith.addf %s4, %l5 : f32
      %s6 = arith.addf %s5, %l6 : f32
      %s7 = arith.addf %s6, %l7 : f32
      %s8 = arith.addf %s7, %l8 : f32
      %s9 = arith.addf %s8, %l9 : f32
      memref.store %s9, %out[%p, %i] : memref<2x256xf32>
      scf.reduce
    }
  }
  return
}
