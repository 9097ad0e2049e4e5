// RUN: tessel-opt %s --tessel-elide-barriers | FileCheck %s

// Copies into two LDS slots need no barrier between them; reading them
// does; a barrier that ends a loop body (next iteration) or follows a
// global write read afterwards stays, as does one around unknown memory.
// CHECK-LABEL: func.func @phases
// CHECK: scf.for
// CHECK: memref.store %{{.*}}, %[[A:.*]][%{{.*}}] : memref<64xf32>
// CHECK-NEXT: memref.store %{{.*}}, %[[B:.*]][%{{.*}}] : memref<64xf32>
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: memref.load %[[A]]
// CHECK-NEXT: memref.load %[[B]]
// CHECK: memref.store %{{.*}}, %arg1
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: }
// CHECK: memref.load %arg1
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: call @opaque
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: memref.store
func.func private @opaque(memref<64xf32>)
func.func @phases(%in: memref<64xf32>, %out: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c256 = arith.constant 256 : index
  %c64 = arith.constant 64 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1)
             workgroup(%lds : memref<512xi8, #gpu.address_space<workgroup>>) {
    %va = memref.view %lds[%c0][] : memref<512xi8, #gpu.address_space<workgroup>> to memref<64xf32, #gpu.address_space<workgroup>>
    %a = memref.memory_space_cast %va : memref<64xf32, #gpu.address_space<workgroup>> to memref<64xf32>
    %vb = memref.view %lds[%c256][] : memref<512xi8, #gpu.address_space<workgroup>> to memref<64xf32, #gpu.address_space<workgroup>>
    %b = memref.memory_space_cast %vb : memref<64xf32, #gpu.address_space<workgroup>> to memref<64xf32>
    scf.for %k = %c0 to %c4 step %c1 {
      %x = memref.load %in[%tx] : memref<64xf32>
      memref.store %x, %a[%tx] : memref<64xf32>
      gpu.barrier
      memref.store %x, %b[%tx] : memref<64xf32>
      gpu.barrier
      %p = memref.load %a[%tx] : memref<64xf32>
      %q = memref.load %b[%tx] : memref<64xf32>
      %s = arith.addf %p, %q : f32
      memref.store %s, %out[%tx] : memref<64xf32>
      gpu.barrier
    }
    %r = memref.load %out[%tx] : memref<64xf32>
    gpu.barrier
    func.call @opaque(%a) : (memref<64xf32>) -> ()
    gpu.barrier
    memref.store %r, %a[%tx] : memref<64xf32>
    gpu.terminator
  }
  return
}

// A barrier followed only by effect-free ops up to its block's end stays:
// it orders the branch's LDS writes against the reads after the scf.if
// (through the branch's result). Dropping it made a last-k-step epilogue
// computed into LDS read back unwritten elements on the emulated GPU
// (the differential's `relu(2 dot + bias) at the last k` cases).
// CHECK-LABEL: func.func @branch_result
// CHECK: scf.if
// CHECK: memref.store %{{.*}}, %[[LDS:.*]][%{{.*}}] : memref<64xf32>
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: memref.cast
// CHECK-NEXT: scf.yield
func.func @branch_result(%in: memref<64xf32>, %out: memref<64xf32>, %last: i1) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c63 = arith.constant 63 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1)
             workgroup(%lds : memref<256xi8, #gpu.address_space<workgroup>>) {
    %r = scf.if %last -> (memref<64xf32, strided<[?], offset: ?>>) {
      %v = memref.view %lds[%c0][] : memref<256xi8, #gpu.address_space<workgroup>> to memref<64xf32, #gpu.address_space<workgroup>>
      %a = memref.memory_space_cast %v : memref<64xf32, #gpu.address_space<workgroup>> to memref<64xf32>
      %x = memref.load %in[%tx] : memref<64xf32>
      memref.store %x, %a[%tx] : memref<64xf32>
      gpu.barrier
      %cast = memref.cast %a : memref<64xf32> to memref<64xf32, strided<[?], offset: ?>>
      scf.yield %cast : memref<64xf32, strided<[?], offset: ?>>
    } else {
      %cast = memref.cast %in : memref<64xf32> to memref<64xf32, strided<[?], offset: ?>>
      scf.yield %cast : memref<64xf32, strided<[?], offset: ?>>
    }
    // Another item's element.
    %other = arith.subi %c63, %tx : index
    %y = memref.load %r[%other] : memref<64xf32, strided<[?], offset: ?>>
    memref.store %y, %out[%tx] : memref<64xf32>
    gpu.terminator
  }
  return
}

// An item's private memory is its own: no barrier orders its accesses of
// it (grid-to-gpu's private buffers), while LDS accesses keep theirs.
// CHECK-LABEL: func.func @private_memory
// CHECK: memref.store %{{.*}}, %[[ROW:.*]][%{{.*}}] : memref<4xf32>
// CHECK-NOT: gpu.barrier
// CHECK: memref.load %[[ROW]]
// CHECK-NEXT: memref.store %{{.*}}, %[[SHARED:.*]][%{{.*}}] : memref<64xf32>
// CHECK-NEXT: gpu.barrier
// CHECK: memref.load %[[SHARED]]
func.func @private_memory(%in: memref<64xf32>, %out: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c63 = arith.constant 63 : index
  %c64 = arith.constant 64 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1)
             workgroup(%lds : memref<256xi8, #gpu.address_space<workgroup>>)
             private(%own : memref<4xf32, #gpu.address_space<private>>) {
    %row = memref.memory_space_cast %own : memref<4xf32, #gpu.address_space<private>> to memref<4xf32>
    %v = memref.view %lds[%c0][] : memref<256xi8, #gpu.address_space<workgroup>> to memref<64xf32, #gpu.address_space<workgroup>>
    %shared = memref.memory_space_cast %v : memref<64xf32, #gpu.address_space<workgroup>> to memref<64xf32>
    %x = memref.load %in[%tx] : memref<64xf32>
    memref.store %x, %row[%c0] : memref<4xf32>
    gpu.barrier
    %y = memref.load %row[%c0] : memref<4xf32>
    memref.store %y, %shared[%tx] : memref<64xf32>
    gpu.barrier
    %other = arith.subi %c63, %tx : index
    %z = memref.load %shared[%other] : memref<64xf32>
    memref.store %z, %out[%tx] : memref<64xf32>
    gpu.terminator
  }
  return
}

// The kernel's end orders nothing: the barrier before a launch's last
// phase goes when that phase conflicts with nothing before it (the
// one-row softmax's divide, after every item folded the sum into its
// private memory from LDS), and stays when it reads what an earlier
// phase wrote to LDS.
// CHECK-LABEL: func.func @kernel_end
// CHECK: memref.load %[[SHARED:.*]][%c0] : memref<64xf32>
// CHECK-NEXT: memref.store %{{.*}}, %[[OWN:.*]][%c0] : memref<1xf32>
// CHECK-NOT: gpu.barrier
// CHECK: memref.load %[[OWN]][%c0]
// CHECK-NEXT: memref.store %{{.*}}, %arg1[%{{.*}}]
// CHECK-LABEL: func.func @kernel_end_reads_shared
// CHECK: memref.store %{{.*}}, %[[SHARED2:.*]][%{{.*}}] : memref<64xf32>
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: arith.subi
// CHECK-NEXT: memref.load %[[SHARED2]]
func.func @kernel_end(%in: memref<64xf32>, %out: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1)
             workgroup(%lds : memref<256xi8, #gpu.address_space<workgroup>>)
             private(%p : memref<1xf32, #gpu.address_space<private>>) {
    %own = memref.memory_space_cast %p : memref<1xf32, #gpu.address_space<private>> to memref<1xf32>
    %v = memref.view %lds[%c0][] : memref<256xi8, #gpu.address_space<workgroup>> to memref<64xf32, #gpu.address_space<workgroup>>
    %shared = memref.memory_space_cast %v : memref<64xf32, #gpu.address_space<workgroup>> to memref<64xf32>
    %x = memref.load %in[%tx] : memref<64xf32>
    memref.store %x, %shared[%tx] : memref<64xf32>
    gpu.barrier
    %s = memref.load %shared[%c0] : memref<64xf32>
    memref.store %s, %own[%c0] : memref<1xf32>
    gpu.barrier
    %y = memref.load %own[%c0] : memref<1xf32>
    memref.store %y, %out[%tx] : memref<64xf32>
    gpu.terminator
  }
  return
}
func.func @kernel_end_reads_shared(%in: memref<64xf32>, %out: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c63 = arith.constant 63 : index
  %c64 = arith.constant 64 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1)
             workgroup(%lds : memref<256xi8, #gpu.address_space<workgroup>>) {
    %v = memref.view %lds[%c0][] : memref<256xi8, #gpu.address_space<workgroup>> to memref<64xf32, #gpu.address_space<workgroup>>
    %shared = memref.memory_space_cast %v : memref<64xf32, #gpu.address_space<workgroup>> to memref<64xf32>
    %x = memref.load %in[%tx] : memref<64xf32>
    memref.store %x, %shared[%tx] : memref<64xf32>
    gpu.barrier
    %other = arith.subi %c63, %tx : index
    %z = memref.load %shared[%other] : memref<64xf32>
    memref.store %z, %out[%tx] : memref<64xf32>
    gpu.terminator
  }
  return
}
