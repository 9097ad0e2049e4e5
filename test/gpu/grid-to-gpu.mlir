// RUN: tessel-opt %s --split-input-file --grid-to-gpu | FileCheck %s
// RUN: tessel-opt %s --split-input-file --grid-to-gpu --tessel-emulate-gpu > /dev/null

// Programs -> workgroups (the grid folded into x and delinearized), block
// work -> a strided loop per work-item followed by a barrier, a scalar
// store on item 0 between barriers, local buffers in the LDS arena.
// CHECK-LABEL: func.func @programs
// CHECK: %[[N:.*]] = arith.constant 6 : index
// CHECK: %[[T:.*]] = arith.constant 256 : index
// CHECK: gpu.launch blocks(%[[BX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[N]], %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) threads(%[[TX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[T]], {{.*}}) workgroup(%[[LDS:.*]] : memref<64xi8, #gpu.address_space<workgroup>>)
// CHECK: %[[IDS:.*]]:2 = affine.delinearize_index %[[BX]] into (2, 3)
// CHECK: memref.view %[[LDS]][%{{.*}}][] : memref<64xi8, #gpu.address_space<workgroup>> to memref<4x4xf32, #gpu.address_space<workgroup>>
// CHECK: %[[LOCAL:.*]] = memref.memory_space_cast
// CHECK: scf.for %[[L:.*]] = %[[TX]] to %{{.*}} step %{{.*}} {
// CHECK: affine.delinearize_index %[[L]] into
// CHECK: memref.store %{{.*}}, %[[LOCAL]]
// CHECK: }
// CHECK-NEXT: gpu.barrier
// CHECK: %[[FIRST:.*]] = arith.cmpi eq, %[[TX]], %{{.*}} : index
// CHECK: scf.if %[[FIRST]] {
// CHECK-NEXT: memref.store
// CHECK-NEXT: }
// CHECK-NEXT: gpu.terminator
func.func @programs(%out: memref<8x12xf32>, %flags: memref<6xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %one = arith.constant 1.0 : f32
  scf.forall (%i, %j) in (2, 3) {
    %local = memref.alloc() {alignment = 64 : i64} : memref<4x4xf32>
    scf.parallel (%a, %b) = (%c0, %c0) to (%c4, %c4) step (%c1, %c1) {
      memref.store %one, %local[%a, %b] : memref<4x4xf32>
      scf.reduce
    }
    %k = arith.addi %i, %j : index
    memref.store %one, %flags[%k] : memref<6xf32>
  }
  return
}

// -----

// Buffers too large for LDS go to global scratch, a slice per workgroup;
// `tessel.num_warps` and `tessel.wave_size` size the workgroup.
// CHECK-LABEL: func.func @scratch
// CHECK: %[[SCRATCH:.*]] = gpu.alloc () : memref<262144xi8>
// CHECK: arith.constant 64 : index
// CHECK: gpu.launch
// CHECK-SAME: in (%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) threads
// CHECK: %[[SLICE:.*]] = arith.muli %{{.*}}, %{{.*}} : index
// CHECK: memref.view %[[SCRATCH]][%{{.*}}][] : memref<262144xi8> to memref<128x256xf32>
// CHECK: gpu.dealloc %[[SCRATCH]]
module attributes {tessel.num_warps = 2 : i64, tessel.wave_size = 32 : i64} {
  func.func @scratch(%out: memref<256x256xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c128 = arith.constant 128 : index
    %c256 = arith.constant 256 : index
    %one = arith.constant 1.0 : f32
    scf.forall (%i) in (2) {
      %big = memref.alloc() {alignment = 64 : i64} : memref<128x256xf32>
      scf.parallel (%a, %b) = (%c0, %c0) to (%c128, %c256) step (%c1, %c1) {
        memref.store %one, %big[%a, %b] : memref<128x256xf32>
        scf.reduce
      }
    }
    return
  }
}

// -----

// A buffer a loop carries to its next iteration alternates between two
// slots by the iteration's parity; an ordered grid (no parallel axis) is
// one workgroup.
// CHECK-LABEL: func.func @carried
// CHECK: gpu.launch
// CHECK-SAME: workgroup(%[[LDS:.*]] : memref<192xi8, #gpu.address_space<workgroup>>)
// CHECK: scf.for %[[K:.*]] = %{{.*}} to %{{.*}} step %[[STEP:.*]] iter_args
// CHECK: %[[FROM:.*]] = arith.subi %[[K]], %{{.*}} : index
// CHECK: arith.divui %[[FROM]], %[[STEP]]
// CHECK: arith.remui
// CHECK: memref.view %[[LDS]]
func.func @carried(%out: memref<16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c16 = arith.constant 16 : index
  %one = arith.constant 1.0 : f32
  scf.for %g = %c0 to %c4 step %c1 {
    %init = memref.alloc() {alignment = 64 : i64} : memref<16xf32>
    %last = scf.for %k = %c0 to %c4 step %c1 iter_args(%previous = %init) -> (memref<16xf32>) {
      %next = memref.alloc() {alignment = 64 : i64} : memref<16xf32>
      scf.parallel (%a) = (%c0) to (%c16) step (%c1) {
        %v = memref.load %previous[%a] : memref<16xf32>
        %w = arith.addf %v, %one : f32
        memref.store %w, %next[%a] : memref<16xf32>
        scf.reduce
      }
      scf.yield %next : memref<16xf32>
    }
    memref.copy %last, %out : memref<16xf32> to memref<16xf32>
  } {tessel.arbitrary_axis = 0 : i64}
  return
}

// -----

// Code on gpu.thread_id (per-lane code, as tessel-matrix-cores writes it)
// is SIMT code: the thread id becomes the work-item's id and every item
// runs it as it is (not as block work shared among items, nor on item 0
// only), after the block work before it and its barrier; a barrier
// follows it unless it ends the kernel. Block work of 128 iterations is
// a loop from the item's id (items past 127 skip it); of exactly one
// iteration per item (256), straight-line code on iteration = item id.
// CHECK-LABEL: func.func @per_lane
// CHECK: gpu.launch blocks(%[[W:.*]], %{{.*}}, %{{.*}}) in ({{.*}}) threads(%[[T:.*]], %{{.*}}, %{{.*}}) in
// CHECK: scf.for %{{.*}} = %[[T]] to %{{.*}} step %{{.*}} {
// CHECK: memref.store
// CHECK: gpu.barrier
// CHECK-NOT: gpu.thread_id
// CHECK-NOT: scf.if
// CHECK: %[[V:.*]] = memref.load %{{.*}}[%[[T]]]
// CHECK: %[[S:.*]] = arith.addf %[[V]], %{{.*}}
// CHECK: memref.store %[[S]], %{{.*}}[%[[T]]]
// CHECK: gpu.barrier
// CHECK-NOT: scf.for
// CHECK: %[[I:.*]] = arith.muli %[[T]], %{{.*}} : index
// CHECK: %[[J:.*]] = arith.addi %{{.*}}, %[[I]] : index
// CHECK: memref.load %{{.*}}[%[[J]]]
// CHECK-NOT: scf.for
// CHECK: gpu.terminator
func.func @per_lane(%x: memref<2x256xf32>, %y: memref<2x256xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c256 = arith.constant 256 : index
  %one = arith.constant 1.0 : f32
  scf.forall (%p) in (2) {
    %xr = memref.subview %x[%p, 0] [1, 256] [1, 1] : memref<2x256xf32> to memref<256xf32, strided<[1], offset: ?>>
    %yr = memref.subview %y[%p, 0] [1, 256] [1, 1] : memref<2x256xf32> to memref<256xf32, strided<[1], offset: ?>>
    scf.parallel (%i) = (%c0) to (%c256) step (%c2) {
      memref.store %one, %yr[%i] : memref<256xf32, strided<[1], offset: ?>>
      scf.reduce
    }
    %t = gpu.thread_id x
    %v = memref.load %xr[%t] : memref<256xf32, strided<[1], offset: ?>>
    %s = arith.addf %v, %one : f32
    memref.store %s, %yr[%t] : memref<256xf32, strided<[1], offset: ?>>
    scf.parallel (%i) = (%c0) to (%c256) step (%c1) {
      %w = memref.load %yr[%i] : memref<256xf32, strided<[1], offset: ?>>
      %d = arith.addf %w, %w : f32
      memref.store %d, %xr[%i] : memref<256xf32, strided<[1], offset: ?>>
      scf.reduce
    }
  }
  return
}

// -----

// A conditional that writes a local buffer and yields it (a one-element
// block under scf.if, its loops folded): the buffer's slot moves before
// it, its result becomes a select every item computes, and it runs on
// item 0 between barriers.
// CHECK-LABEL: func.func @conditional_buffer
// CHECK: gpu.launch
// CHECK: %[[SLOT:.*]] = memref.view
// CHECK: %[[PICK:.*]] = arith.select %{{.*}}, %{{.*}}, %{{.*}} : memref<1xi32>
// CHECK: gpu.barrier
// CHECK: scf.if
// CHECK: scf.if %{{.*}} -> (memref<1xi32>)
// CHECK: memref.store
// CHECK: gpu.barrier
// CHECK: memref.load %[[PICK]]
func.func @conditional_buffer(%x: memref<4xi32>, %o: memref<4xi32>) {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : i32
  scf.forall (%p) in (4) {
    %in = memref.subview %x[%p] [1] [1] : memref<4xi32> to memref<1xi32, strided<[1], offset: ?>>
    %out = memref.subview %o[%p] [1] [1] : memref<4xi32> to memref<1xi32, strided<[1], offset: ?>>
    %copy = memref.alloc() : memref<1xi32>
    %v = memref.load %in[%c0] : memref<1xi32, strided<[1], offset: ?>>
    memref.store %v, %copy[%c0] : memref<1xi32>
    %first = arith.cmpi eq, %p, %c0 : index
    %q = scf.if %first -> (memref<1xi32>) {
      %doubled = memref.alloc() : memref<1xi32>
      %w = memref.load %copy[%c0] : memref<1xi32>
      %d = arith.muli %w, %c2 : i32
      memref.store %d, %doubled[%c0] : memref<1xi32>
      scf.yield %doubled : memref<1xi32>
    } else {
      scf.yield %copy : memref<1xi32>
    }
    %r = memref.load %q[%c0] : memref<1xi32>
    memref.store %r, %out[%c0] : memref<1xi32, strided<[1], offset: ?>>
  } {mapping = [#gpu.block<x>]}
  return
}

// -----

// Programs counted at run time (a grid size given as a value): the launch
// multiplies the sizes and the ids are delinearized over the value.
// CHECK-LABEL: func.func @sized_programs
// CHECK-SAME: %[[N:[^:]*]]: index
// CHECK: %[[STATIC:.*]] = arith.constant 3 : index
// CHECK: %[[COUNT:.*]] = arith.muli %[[STATIC]], %[[N]] : index
// CHECK: gpu.launch blocks(%[[BX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[COUNT]],
// CHECK: affine.delinearize_index %[[BX]] into (%[[N]], 3)
func.func @sized_programs(%n: index, %o: memref<?x3xf32>) {
  %c0 = arith.constant 0 : index
  %one = arith.constant 1.0 : f32
  scf.forall (%i, %j) in (%n, 3) {
    memref.store %one, %o[%i, %j] : memref<?x3xf32>
  } {mapping = [#gpu.block<x>, #gpu.block<y>]}
  return
}

// -----

// A loop that writes a local buffer and carries it (a one-element block
// carried by scf.while, its loops folded): every item runs the loop (its
// condition is uniform), its writes go to item 0 between barriers inside,
// and every item gets the buffer it yields.
// CHECK-LABEL: func.func @carried_buffer
// CHECK: gpu.launch
// CHECK: %[[LOOP:.*]]:2 = scf.while
// CHECK: } do {
// CHECK: gpu.barrier
// CHECK: scf.if
// CHECK: memref.store
// CHECK: gpu.barrier
// CHECK: scf.yield
// CHECK: memref.load %[[LOOP]]#0
func.func @carried_buffer(%x: memref<4xi32>, %o: memref<4xi32>) {
  %c0 = arith.constant 0 : index
  %c3 = arith.constant 3 : i32
  %zero = arith.constant 0 : i32
  %one = arith.constant 1 : i32
  scf.forall (%p) in (4) {
    %in = memref.subview %x[%p] [1] [1] : memref<4xi32> to memref<1xi32, strided<[1], offset: ?>>
    %out = memref.subview %o[%p] [1] [1] : memref<4xi32> to memref<1xi32, strided<[1], offset: ?>>
    %copy = memref.alloc() : memref<1xi32>
    %v = memref.load %in[%c0] : memref<1xi32, strided<[1], offset: ?>>
    memref.store %v, %copy[%c0] : memref<1xi32>
    %r:2 = scf.while (%acc = %copy, %n = %zero) : (memref<1xi32>, i32) -> (memref<1xi32>, i32) {
      %go = arith.cmpi slt, %n, %c3 : i32
      %kept = memref.alloc() : memref<1xi32>
      memref.copy %acc, %kept : memref<1xi32> to memref<1xi32>
      scf.condition(%go) %kept, %n : memref<1xi32>, i32
    } do {
    ^bb0(%acc: memref<1xi32>, %n: i32):
      %next = memref.alloc() : memref<1xi32>
      %w = memref.load %acc[%c0] : memref<1xi32>
      %t = arith.muli %w, %c3 : i32
      memref.store %t, %next[%c0] : memref<1xi32>
      %n1 = arith.addi %n, %one : i32
      scf.yield %next, %n1 : memref<1xi32>, i32
    }
    %last = memref.load %r#0[%c0] : memref<1xi32>
    memref.store %last, %out[%c0] : memref<1xi32, strided<[1], offset: ?>>
  } {mapping = [#gpu.block<x>]}
  return
}

// -----

// Block work of a few iterations per work-item (1024 on 256 items: 4
// each) runs as a loop of a constant trip count, iteration k x 256 + item,
// which LLVM unrolls so an item's accesses issue together (more than 8 per
// item keep the strided loop: unrolled, they would keep too much live).
// CHECK-LABEL: func.func @constant_trips
// CHECK: %[[TRIPS:.*]] = arith.constant 4 : index
// CHECK: scf.for %[[K:.*]] = %{{.*}} to %[[TRIPS]] step %{{.*}} {
// CHECK-NEXT: %[[O:.*]] = arith.muli %[[K]], %{{.*}} : index
// CHECK-NEXT: arith.addi %[[O]], %{{.*}} : index
// CHECK: memref.store
func.func @constant_trips(%x: memref<2x1024xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c1024 = arith.constant 1024 : index
  %one = arith.constant 1.0 : f32
  scf.forall (%p) in (2) {
    %row = memref.subview %x[%p, 0] [1, 1024] [1, 1] : memref<2x1024xf32> to memref<1024xf32, strided<[1], offset: ?>>
    scf.parallel (%i) = (%c0) to (%c1024) step (%c1) {
      memref.store %one, %row[%i] : memref<1024xf32, strided<[1], offset: ?>>
      scf.reduce
    }
  }
  return
}

// -----

// The two versions of a kernel with partial blocks (grid-to-loops'
// `scf.if` marked `tessel.staged_version`) never run in the same program:
// their buffers share the arena from where the other buffers end (the
// common one at 0, each version's first at 64; 128 bytes in all). The
// common one, written outside block work, is too large for every item to
// keep a copy (replicated_buffers.rs).
// CHECK-LABEL: func.func @versions
// CHECK: workgroup(%[[LDS:.*]] : memref<128xi8, #gpu.address_space<workgroup>>)
// CHECK: %[[COMMON:.*]] = arith.constant 0 : index
// CHECK: %[[AT:.*]] = arith.addi %{{.*}}, %[[COMMON]] : index
// CHECK: memref.view %[[LDS]][%[[AT]]][] : memref<128xi8, #gpu.address_space<workgroup>> to memref<16xf32, #gpu.address_space<workgroup>>
// CHECK: scf.if
// CHECK: %[[WHOLE:.*]] = arith.constant 64 : index
// CHECK-NEXT: %[[WHOLE_AT:.*]] = arith.addi %[[WHOLE]], %{{.*}} : index
// CHECK-NEXT: memref.view %[[LDS]][%[[WHOLE_AT]]][] : memref<128xi8, #gpu.address_space<workgroup>> to memref<16xf32, #gpu.address_space<workgroup>>
// CHECK: } else {
// CHECK: %[[STAGED:.*]] = arith.constant 64 : index
// CHECK-NEXT: %[[STAGED_AT:.*]] = arith.addi %[[STAGED]], %{{.*}} : index
// CHECK-NEXT: memref.view %[[LDS]][%[[STAGED_AT]]][] : memref<128xi8, #gpu.address_space<workgroup>> to memref<8xf32, #gpu.address_space<workgroup>>
// CHECK: } {tessel.staged_version}
func.func @versions(%out: memref<4x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %one = arith.constant 1.0 : f32
  scf.forall (%i) in (4) {
    %common = memref.alloc() {alignment = 64 : i64} : memref<16xf32>
    memref.store %one, %common[%c0] : memref<16xf32>
    %whole = arith.cmpi ne, %i, %c3 : index
    scf.if %whole {
      %w = memref.alloc() {alignment = 64 : i64} : memref<16xf32>
      scf.parallel (%a) = (%c0) to (%c16) step (%c1) {
        memref.store %one, %w[%a] : memref<16xf32>
        scf.reduce
      }
    } else {
      %s = memref.alloc() {alignment = 64 : i64} : memref<8xf32>
      scf.parallel (%a) = (%c0) to (%c8) step (%c1) {
        memref.store %one, %s[%a] : memref<8xf32>
        scf.reduce
      }
    } {tessel.staged_version}
  }
  return
}

// -----

// A buffer only one item touches each element of (a one-row softmax's
// exp(x): written as vectors by 512 iterations, 2 per item, and read back
// by the sum's loops over [2, 256, 4]: element e is item (e div 4) mod 256's)
// lives in the items' private memory, 8 floats each, not in LDS; its index
// is affine in the item's trip and the loop counters (no item id), so it is
// constant once LLVM unrolls the loops. It is accessed through a cast to
// generic memory, as LDS is. The partials the items share stay in LDS.
// CHECK-LABEL: func.func @row_in_registers
// CHECK: gpu.launch
// CHECK-SAME: workgroup(%[[LDS:.*]] : memref<1024xi8, #gpu.address_space<workgroup>>) private(%[[PRIVATE:.*]] : memref<8xf32, #gpu.address_space<private>>)
// CHECK-NEXT: %[[ROW:.*]] = memref.memory_space_cast %[[PRIVATE]] : memref<8xf32, #gpu.address_space<private>> to memref<8xf32>
// CHECK: scf.for %[[K:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK: math.exp
// CHECK-NEXT: %[[FOUR:.*]] = arith.constant 4 : index
// CHECK-NEXT: %[[AT:.*]] = arith.muli %[[K]], %[[FOUR]] : index
// CHECK-NEXT: vector.store %{{.*}}, %[[ROW]][%[[AT]]] : memref<8xf32>, vector<4xf32>
// CHECK: scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT: scf.for %[[L:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT: arith.constant 4 : index
// CHECK-NEXT: %[[JL:.*]] = arith.muli %[[J]], %{{.*}} : index
// CHECK-NEXT: %[[SUM:.*]] = arith.addi %[[JL]], %[[L]] : index
// CHECK-NEXT: memref.load %[[ROW]][%[[SUM]]] : memref<8xf32>
// CHECK: vector.load %[[ROW]][%{{.*}}] : memref<8xf32>, vector<4xf32>
// CHECK-NOT: memref<1x2048xf32
// CHECK: gpu.terminator
func.func @row_in_registers(%x: memref<4x2048xf32>, %o: memref<4x2048xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c256 = arith.constant 256 : index
  %c512 = arith.constant 512 : index
  %zero = arith.constant 0.0 : f32
  %pad = ub.poison : f32
  scf.forall (%p) in (4) {
    %in = memref.subview %x[%p, 0] [1, 2048] [1, 1] : memref<4x2048xf32> to memref<1x2048xf32, strided<[2048, 1], offset: ?>>
    %out = memref.subview %o[%p, 0] [1, 2048] [1, 1] : memref<4x2048xf32> to memref<1x2048xf32, strided<[2048, 1], offset: ?>>
    %exp = memref.alloc() {alignment = 64 : i64} : memref<1x2048xf32>
    scf.parallel (%i) = (%c0) to (%c512) step (%c1) {
      %at = affine.apply affine_map<(d0) -> (d0 * 4)>(%i)
      %src = memref.subview %in[0, %at] [1, 4] [1, 1] : memref<1x2048xf32, strided<[2048, 1], offset: ?>> to memref<1x4xf32, strided<[2048, 1], offset: ?>>
      %dst = memref.subview %exp[0, %at] [1, 4] [1, 1] : memref<1x2048xf32> to memref<1x4xf32, strided<[2048, 1], offset: ?>>
      %v = vector.transfer_read %src[%c0, %c0], %pad {in_bounds = [true]} : memref<1x4xf32, strided<[2048, 1], offset: ?>>, vector<4xf32>
      %e = math.exp %v : vector<4xf32>
      vector.transfer_write %e, %dst[%c0, %c0] {in_bounds = [true]} : vector<4xf32>, memref<1x4xf32, strided<[2048, 1], offset: ?>>
      scf.reduce
    }
    %parts = memref.alloc() {alignment = 64 : i64} : memref<1x256xf32>
    %grouped = memref.expand_shape %exp [[0], [1, 2, 3]] output_shape [1, 2, 256, 4] : memref<1x2048xf32> into memref<1x2x256x4xf32>
    scf.parallel (%t) = (%c0) to (%c256) step (%c1) {
      memref.store %zero, %parts[%c0, %t] : memref<1x256xf32>
      scf.for %j = %c0 to %c2 step %c1 {
        scf.for %l = %c0 to %c4 step %c1 {
          %a = memref.load %grouped[%c0, %j, %t, %l] : memref<1x2x256x4xf32>
          %s = memref.load %parts[%c0, %t] : memref<1x256xf32>
          %n = arith.addf %a, %s : f32
          memref.store %n, %parts[%c0, %t] : memref<1x256xf32>
        }
      }
      scf.reduce
    }
    scf.parallel (%i) = (%c0) to (%c512) step (%c1) {
      %at = affine.apply affine_map<(d0) -> (d0 * 4)>(%i)
      %src = memref.subview %exp[0, %at] [1, 4] [1, 1] : memref<1x2048xf32> to memref<1x4xf32, strided<[2048, 1], offset: ?>>
      %dst = memref.subview %out[0, %at] [1, 4] [1, 1] : memref<1x2048xf32, strided<[2048, 1], offset: ?>> to memref<1x4xf32, strided<[2048, 1], offset: ?>>
      %row = affine.apply affine_map<(d0) -> (d0 floordiv 2)>(%i)
      %s = memref.load %parts[%c0, %row] : memref<1x256xf32>
      %v = vector.transfer_read %src[%c0, %c0], %pad {in_bounds = [true]} : memref<1x4xf32, strided<[2048, 1], offset: ?>>, vector<4xf32>
      %sv = vector.broadcast %s : f32 to vector<4xf32>
      %r = arith.divf %v, %sv : vector<4xf32>
      vector.transfer_write %r, %dst[%c0, %c0] {in_bounds = [true]} : vector<4xf32>, memref<1x4xf32, strided<[2048, 1], offset: ?>>
      scf.reduce
    }
  }
  return
}

// -----

// Elements read by another item than the one that wrote them (a transpose
// through the buffer) keep the buffer in the workgroup's LDS.
// CHECK-LABEL: func.func @shared_between_items
// CHECK: gpu.launch
// CHECK-SAME: workgroup(%{{.*}} : memref<4096xi8, #gpu.address_space<workgroup>>)
// CHECK-NOT: private(
// CHECK: gpu.terminator
func.func @shared_between_items(%x: memref<32x32xf32>, %o: memref<32x32xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  scf.forall (%p) in (1) {
    %t = memref.alloc() {alignment = 64 : i64} : memref<32x32xf32>
    scf.parallel (%i, %j) = (%c0, %c0) to (%c32, %c32) step (%c1, %c1) {
      %v = memref.load %x[%i, %j] : memref<32x32xf32>
      memref.store %v, %t[%i, %j] : memref<32x32xf32>
      scf.reduce
    }
    scf.parallel (%i, %j) = (%c0, %c0) to (%c32, %c32) step (%c1, %c1) {
      %v = memref.load %t[%j, %i] : memref<32x32xf32>
      memref.store %v, %o[%i, %j] : memref<32x32xf32>
      scf.reduce
    }
  }
  return
}

// -----

// Each item reads the element its neighbour wrote: every index is the same
// on all items (one element each), but the element belongs to another
// item, so the buffer stays in LDS.
// CHECK-LABEL: func.func @neighbour_reads
// CHECK: gpu.launch
// CHECK-SAME: workgroup(%{{.*}} : memref<1024xi8, #gpu.address_space<workgroup>>)
// CHECK-NOT: private(
// CHECK: gpu.terminator
func.func @neighbour_reads(%x: memref<256xf32>, %o: memref<256xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  scf.forall (%p) in (1) {
    %t = memref.alloc() {alignment = 64 : i64} : memref<256xf32>
    scf.parallel (%i) = (%c0) to (%c256) step (%c1) {
      %v = memref.load %x[%i] : memref<256xf32>
      memref.store %v, %t[%i] : memref<256xf32>
      scf.reduce
    }
    scf.parallel (%i) = (%c0) to (%c256) step (%c1) {
      %n = affine.apply affine_map<(d0) -> ((d0 + 1) mod 256)>(%i)
      %v = memref.load %t[%n] : memref<256xf32>
      memref.store %v, %o[%i] : memref<256xf32>
      scf.reduce
    }
  }
  return
}

// -----

// A block of an argument nothing writes, read by two block works with the
// same items per element (the row sum's loops over [2, 256, 4], then the
// normalization's 512 vectors): the first keeps each value it loads in
// the item's private memory, the second reads them there — the row comes
// from memory once.
// CHECK-LABEL: func.func @row_read_once
// CHECK: gpu.launch
// CHECK-SAME: private(%[[PRIVATE:.*]] : memref<8xf32, #gpu.address_space<private>>)
// CHECK-NEXT: %[[ROW:.*]] = memref.memory_space_cast %[[PRIVATE]]
// CHECK: scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT: scf.for %[[L:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK: %[[A:.*]] = memref.load %{{.*}} : memref<1x2x256x4xf32, strided<[2048, 1024, 4, 1], offset: ?>>
// CHECK-NEXT: memref.store %[[A]], %[[ROW]][%{{.*}}] : memref<8xf32>
// CHECK: %[[V:.*]] = vector.load %[[ROW]][%{{.*}}] : memref<8xf32>, vector<4xf32>
// CHECK-NEXT: vector.broadcast
// CHECK-NEXT: arith.divf %[[V]]
// CHECK: gpu.terminator
func.func @row_read_once(%x: memref<4x2048xf32>, %o: memref<4x2048xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c256 = arith.constant 256 : index
  %c512 = arith.constant 512 : index
  %zero = arith.constant 0.0 : f32
  %pad = ub.poison : f32
  scf.forall (%p) in (4) {
    %in = memref.subview %x[%p, 0] [1, 2048] [1, 1] : memref<4x2048xf32> to memref<1x2048xf32, strided<[2048, 1], offset: ?>>
    %out = memref.subview %o[%p, 0] [1, 2048] [1, 1] : memref<4x2048xf32> to memref<1x2048xf32, strided<[2048, 1], offset: ?>>
    %parts = memref.alloc() {alignment = 64 : i64} : memref<1x256xf32>
    %grouped = memref.expand_shape %in [[0], [1, 2, 3]] output_shape [1, 2, 256, 4] : memref<1x2048xf32, strided<[2048, 1], offset: ?>> into memref<1x2x256x4xf32, strided<[2048, 1024, 4, 1], offset: ?>>
    scf.parallel (%t) = (%c0) to (%c256) step (%c1) {
      memref.store %zero, %parts[%c0, %t] : memref<1x256xf32>
      scf.for %j = %c0 to %c2 step %c1 {
        scf.for %l = %c0 to %c4 step %c1 {
          %a = memref.load %grouped[%c0, %j, %t, %l] : memref<1x2x256x4xf32, strided<[2048, 1024, 4, 1], offset: ?>>
          %s = memref.load %parts[%c0, %t] : memref<1x256xf32>
          %n = arith.addf %a, %s : f32
          memref.store %n, %parts[%c0, %t] : memref<1x256xf32>
        }
      }
      scf.reduce
    }
    scf.parallel (%i) = (%c0) to (%c512) step (%c1) {
      %at = affine.apply affine_map<(d0) -> (d0 * 4)>(%i)
      %src = memref.subview %in[0, %at] [1, 4] [1, 1] : memref<1x2048xf32, strided<[2048, 1], offset: ?>> to memref<1x4xf32, strided<[2048, 1], offset: ?>>
      %dst = memref.subview %out[0, %at] [1, 4] [1, 1] : memref<1x2048xf32, strided<[2048, 1], offset: ?>> to memref<1x4xf32, strided<[2048, 1], offset: ?>>
      %row = affine.apply affine_map<(d0) -> (d0 floordiv 2)>(%i)
      %s = memref.load %parts[%c0, %row] : memref<1x256xf32>
      %v = vector.transfer_read %src[%c0, %c0], %pad {in_bounds = [true]} : memref<1x4xf32, strided<[2048, 1], offset: ?>>, vector<4xf32>
      %sv = vector.broadcast %s : f32 to vector<4xf32>
      %r = arith.divf %v, %sv : vector<4xf32>
      vector.transfer_write %r, %dst[%c0, %c0] {in_bounds = [true]} : vector<4xf32>, memref<1x4xf32, strided<[2048, 1], offset: ?>>
      scf.reduce
    }
  }
  return
}

// -----

// The same reads of a block the kernel then overwrites (its output is its
// input): both read memory.
// CHECK-LABEL: func.func @row_written
// CHECK-NOT: private(
// CHECK: gpu.terminator
func.func @row_written(%x: memref<4x2048xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c256 = arith.constant 256 : index
  %c512 = arith.constant 512 : index
  %zero = arith.constant 0.0 : f32
  %pad = ub.poison : f32
  scf.forall (%p) in (4) {
    %in = memref.subview %x[%p, 0] [1, 2048] [1, 1] : memref<4x2048xf32> to memref<1x2048xf32, strided<[2048, 1], offset: ?>>
    %parts = memref.alloc() {alignment = 64 : i64} : memref<1x256xf32>
    %grouped = memref.expand_shape %in [[0], [1, 2, 3]] output_shape [1, 2, 256, 4] : memref<1x2048xf32, strided<[2048, 1], offset: ?>> into memref<1x2x256x4xf32, strided<[2048, 1024, 4, 1], offset: ?>>
    scf.parallel (%t) = (%c0) to (%c256) step (%c1) {
      memref.store %zero, %parts[%c0, %t] : memref<1x256xf32>
      scf.for %j = %c0 to %c2 step %c1 {
        scf.for %l = %c0 to %c4 step %c1 {
          %a = memref.load %grouped[%c0, %j, %t, %l] : memref<1x2x256x4xf32, strided<[2048, 1024, 4, 1], offset: ?>>
          %s = memref.load %parts[%c0, %t] : memref<1x256xf32>
          %n = arith.addf %a, %s : f32
          memref.store %n, %parts[%c0, %t] : memref<1x256xf32>
        }
      }
      scf.reduce
    }
    scf.parallel (%i) = (%c0) to (%c512) step (%c1) {
      %at = affine.apply affine_map<(d0) -> (d0 * 4)>(%i)
      %src = memref.subview %in[0, %at] [1, 4] [1, 1] : memref<1x2048xf32, strided<[2048, 1], offset: ?>> to memref<1x4xf32, strided<[2048, 1], offset: ?>>
      %row = affine.apply affine_map<(d0) -> (d0 floordiv 2)>(%i)
      %s = memref.load %parts[%c0, %row] : memref<1x256xf32>
      %v = vector.transfer_read %src[%c0, %c0], %pad {in_bounds = [true]} : memref<1x4xf32, strided<[2048, 1], offset: ?>>, vector<4xf32>
      %sv = vector.broadcast %s : f32 to vector<4xf32>
      %r = arith.divf %v, %sv : vector<4xf32>
      vector.transfer_write %r, %src[%c0, %c0] {in_bounds = [true]} : vector<4xf32>, memref<1x4xf32, strided<[2048, 1], offset: ?>>
      scf.reduce
    }
  }
  return
}
