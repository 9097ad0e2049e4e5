// block-to-linalg: each block op as linalg / tensor / memref /
// bufferization ops; the result still verifies and bufferizes.
// RUN: tessel-opt %s --block-to-linalg | FileCheck %s
// RUN: tessel-opt %s --pass-pipeline='builtin.module(block-to-linalg,func.func(convert-elementwise-to-linalg),one-shot-bufferize{bufferize-function-boundaries=1})' > /dev/null
// RUN: tessel-opt %s --pass-pipeline='builtin.module(block-to-linalg,func.func(convert-elementwise-to-linalg),linalg-fuse-elementwise-ops)' | FileCheck %s --check-prefix=FUSED
// RUN: tessel-opt %s --block-to-linalg | FileCheck %s --check-prefix=WAITS
// RUN: tessel-opt %s --block-to-linalg | FileCheck %s --check-prefix=PRINTS
// RUN: tessel-opt %s --block-to-linalg | FileCheck %s --check-prefix=CONCURRENT

// CHECK-DAG: #[[LHS:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[RHS:.*]] = affine_map<(d0, d1, d2) -> (d2, d1)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG: #[[STRETCH:.*]] = affine_map<(d0, d1) -> (0, d1)>
// CHECK-DAG: #[[ADD:.*]] = affine_map<(d0, d1) -> (d0)>

// CHECK-LABEL: func.func @loads
func.func @loads(%x: memref<8x128xf32>, %w: memref<64xf32, strided<[2], offset: ?>>, %off: index,
                 %m: tensor<16xi1>, %ninf: f32, %v: memref<16xf32>) -> (tensor<8x128xf32>, tensor<16xf32>, tensor<16xf32>) {
  // A load copies the ref into a fresh buffer first.
  // CHECK: %[[BUF:.*]] = memref.alloc() : memref<8x128xf32>
  // CHECK: memref.copy %arg0, %[[BUF]] : memref<8x128xf32> to memref<8x128xf32>
  // CHECK: bufferization.to_tensor %[[BUF]] restrict writable : memref<8x128xf32> to tensor<8x128xf32>
  %a = block.load %x : memref<8x128xf32> -> tensor<8x128xf32>
  // A masked window (pl.ds: it may reach past the ref) is predicated:
  // each element is read from the ref (at the offset) only where the mask
  // holds, masked-off elements take `other`. The generic works on buffers,
  // so the reads happen at the load (fused into a consumer on tensors,
  // they could run after a later store to the ref).
  // CHECK: %[[MASKS:.*]] = bufferization.to_buffer %arg3 read_only : tensor<16xi1> to memref<16xi1>
  // CHECK: %[[READ:.*]] = memref.alloc() : memref<16xf32>
  // CHECK: linalg.generic {{.*}} ins(%[[MASKS]] : memref<16xi1>) outs(%[[READ]] : memref<16xf32>)
  // CHECK: ^bb0(%[[M:.*]]: i1, %{{.*}}: f32):
  // CHECK: %[[I:.*]] = linalg.index 0 : index
  // CHECK: %[[P:.*]] = arith.addi %arg2, %[[I]] : index
  // CHECK: scf.if %[[M]] -> (f32) {
  // CHECK: memref.load %arg1[%[[P]]] : memref<64xf32, strided<[2], offset: ?>>
  // CHECK: } else {
  // CHECK: scf.yield %arg4 : f32
  // CHECK: bufferization.to_tensor %[[READ]] restrict writable : memref<16xf32> to tensor<16xf32>
  %b = block.load %w[%off] [16] mask %m other %ninf : memref<64xf32, strided<[2], offset: ?>> -> tensor<16xf32>
  // A masked load of the whole ref (in bounds by construction) copies it
  // and selects.
  // CHECK: memref.copy %arg5, %{{.*}} : memref<16xf32> to memref<16xf32>
  // CHECK: %[[T:.*]] = bufferization.to_tensor
  // CHECK: %[[FILL:.*]] = tensor.splat %arg4 : tensor<16xf32>
  // CHECK: arith.select %arg3, %[[T]], %[[FILL]] : tensor<16xi1>, tensor<16xf32>
  %c = block.load %v mask %m other %ninf : memref<16xf32> -> tensor<16xf32>
  return %a, %b, %c : tensor<8x128xf32>, tensor<16xf32>, tensor<16xf32>
}

// A load marked read-only by grid-to-loops reads the ref in place.
// CHECK-LABEL: func.func @read_only
// CHECK-NOT: memref.alloc
// CHECK: bufferization.to_tensor %arg0 restrict : memref<8x128xf32, strided<[256, 1], offset: ?>> to tensor<8x128xf32>
func.func @read_only(%x: memref<8x128xf32, strided<[256, 1], offset: ?>>) -> tensor<8x128xf32> {
  %a = block.load %x {tessel.read_only} : memref<8x128xf32, strided<[256, 1], offset: ?>> -> tensor<8x128xf32>
  return %a : tensor<8x128xf32>
}

// An accumulator load marked in place by grid-to-loops is updated where it
// lives; a splat constant store is a fill.
// CHECK-LABEL: func.func @accumulate
// CHECK-NOT: memref.alloc
// CHECK: %[[ACC:.*]] = bufferization.to_tensor %arg0 restrict writable : memref<8x128xf32, strided<[256, 1], offset: ?>> to tensor<8x128xf32>
// CHECK: %[[SUM:.*]] = arith.addf %[[ACC]], %[[ACC]]
// CHECK: bufferization.materialize_in_destination %[[SUM]] in restrict writable %arg0
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: linalg.fill ins(%[[ZERO]] : f32) outs(%arg1 : memref<8x128xf32>)
// CHECK-NOT: materialize_in_destination
func.func @accumulate(%o: memref<8x128xf32, strided<[256, 1], offset: ?>>, %p: memref<8x128xf32>) {
  %acc = block.load %o {tessel.in_place} : memref<8x128xf32, strided<[256, 1], offset: ?>> -> tensor<8x128xf32>
  %sum = arith.addf %acc, %acc : tensor<8x128xf32>
  block.store %sum, %o : tensor<8x128xf32>, memref<8x128xf32, strided<[256, 1], offset: ?>>
  %zeros = arith.constant dense<0.0> : tensor<8x128xf32>
  block.store %zeros, %p : tensor<8x128xf32>, memref<8x128xf32>
  return
}

// CHECK-LABEL: func.func @stores
func.func @stores(%v: tensor<16xf32>, %o: memref<64xf32>, %off: index, %m: tensor<16xi1>, %w: memref<16xf32>) {
  // CHECK: %[[VIEW:.*]] = memref.subview %arg1[%arg2] [16] [1] : memref<64xf32> to memref<16xf32, strided<[1], offset: ?>>
  // CHECK: bufferization.materialize_in_destination %arg0 in restrict writable %[[VIEW]]
  block.store %v, %o[%off] : tensor<16xf32>, memref<64xf32>
  // A masked store to a window is predicated: each element written only
  // where the mask holds.
  // CHECK: linalg.generic {{.*}} ins(%arg0, %arg3 : tensor<16xf32>, tensor<16xi1>) outs(%{{.*}} : tensor<16xi1>)
  // CHECK: ^bb0(%[[X:.*]]: f32, %[[M:.*]]: i1, %{{.*}}: i1):
  // CHECK: %[[I:.*]] = linalg.index 0 : index
  // CHECK: %[[P:.*]] = arith.addi %arg2, %[[I]] : index
  // CHECK: scf.if %[[M]] {
  // CHECK-NEXT: memref.store %[[X]], %arg1[%[[P]]] : memref<64xf32>
  block.store %v, %o[%off] mask %m : tensor<16xf32>, memref<64xf32>
  // A masked store to the whole ref merges with its current contents
  // where they live: an element-wise select over the ref, no buffer.
  // CHECK: %[[VALUES:.*]] = bufferization.to_buffer %arg0 read_only : tensor<16xf32> to memref<16xf32>
  // CHECK: %[[MASKS:.*]] = bufferization.to_buffer %arg3 read_only : tensor<16xi1> to memref<16xi1>
  // CHECK: linalg.generic {{.*}} ins(%[[VALUES]], %[[MASKS]] : memref<16xf32>, memref<16xi1>) outs(%arg4 : memref<16xf32>)
  // CHECK: ^bb0(%[[X:.*]]: f32, %[[M:.*]]: i1, %[[OLD:.*]]: f32):
  // CHECK: arith.select %[[M]], %[[X]], %[[OLD]] : f32
  block.store %v, %w mask %m : tensor<16xf32>, memref<16xf32>
  return
}

// A masked window at constant offsets that lies inside the ref (a
// Triton-style power-of-two block that fits) cannot read or write outside
// it: no predication, the window is copied and the mask selects.
// CHECK-LABEL: func.func @windows_inside
// CHECK-NOT: scf.if
// CHECK: %[[VIEW:.*]] = memref.subview %arg0[%{{.*}}] [16] [1] : memref<64xf32> to memref<16xf32, strided<[1], offset: ?>>
// CHECK: memref.copy %[[VIEW]]
// CHECK: %[[T:.*]] = bufferization.to_tensor
// CHECK: arith.select %arg1, %[[T]], %{{.*}} : tensor<16xi1>, tensor<16xf32>
// CHECK: %[[VALUES:.*]] = bufferization.to_buffer %arg2 read_only
// CHECK: linalg.generic {{.*}} ins(%[[VALUES]], %{{.*}} : memref<16xf32>, memref<16xi1>) outs(%{{.*}} : memref<16xf32, strided<[1], offset: ?>>)
// CHECK: arith.select
// A window that may reach past the end stays predicated.
// CHECK: scf.if
// CHECK: scf.if
func.func @windows_inside(%o: memref<64xf32>, %m: tensor<16xi1>, %v: tensor<16xf32>, %ninf: f32) -> (tensor<16xf32>, tensor<16xf32>) {
  %c48 = arith.constant 48 : index
  %a = block.load %o[%c48] [16] mask %m other %ninf : memref<64xf32> -> tensor<16xf32>
  block.store %v, %o[%c48] mask %m : tensor<16xf32>, memref<64xf32>
  %c49 = arith.constant 49 : index
  %b = block.load %o[%c49] [16] mask %m other %ninf : memref<64xf32> -> tensor<16xf32>
  block.store %v, %o[%c49] mask %m : tensor<16xf32>, memref<64xf32>
  return %a, %b : tensor<16xf32>, tensor<16xf32>
}

// Accesses tessel-true-masks marked (masks true everywhere) are plain: no
// select, no read of the store's target.
// CHECK-LABEL: func.func @masks_marked_true
// CHECK-NOT: arith.select
// CHECK-NOT: scf.if
// CHECK: bufferization.materialize_in_destination %{{.*}} in restrict writable
func.func @masks_marked_true(%x: memref<16xf32>, %y: memref<16xf32>, %m: tensor<16xi1>, %ninf: f32) {
  %c0 = arith.constant 0 : index
  %v = block.load %x[%c0] [16] mask %m other %ninf {tessel.mask_true} : memref<16xf32> -> tensor<16xf32>
  block.store %v, %y mask %m {tessel.mask_true} : tensor<16xf32>, memref<16xf32>
  return
}

// CHECK-LABEL: func.func @compute
func.func @compute(%a: tensor<32x16xbf16>, %b: tensor<16x8xbf16>, %acc: tensor<32x8xf32>,
                   %v: tensor<4x128xf32>, %r: tensor<1x128xi32>) -> (tensor<32x8xf32>, tensor<32x8xf32>, tensor<4xf32>, tensor<4x128xi32>, tensor<4x128xi32>, tensor<4x3xi32>) {
  // A contraction with loops (i, j, k) marked for tessel-tile, operands
  // widened to f32 first.
  // CHECK: %[[Z:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<32x8xf32>)
  // CHECK: linalg.generic {indexing_maps = [#[[LHS]], #[[RHS]], #[[OUT]]], iterator_types = ["parallel", "parallel", "reduction"]} ins(%arg0, %arg1 : tensor<32x16xbf16>, tensor<16x8xbf16>) outs(%[[Z]] : tensor<32x8xf32>) attrs = {tessel.contraction}
  // CHECK-NEXT: ^bb0(%[[X:.*]]: bf16, %[[Y:.*]]: bf16, %[[SUM:.*]]: f32):
  // CHECK-NEXT: %[[XW:.*]] = arith.extf %[[X]] : bf16 to f32
  // CHECK-NEXT: %[[YW:.*]] = arith.extf %[[Y]] : bf16 to f32
  // CHECK-NEXT: %[[P:.*]] = arith.mulf %[[XW]], %[[YW]] : f32
  // CHECK-NEXT: %[[S:.*]] = arith.addf %[[SUM]], %[[P]] : f32
  // CHECK-NEXT: linalg.yield %[[S]] : f32
  %c = block.dot %a, %b : tensor<32x16xbf16>, tensor<16x8xbf16> -> tensor<32x8xf32>
  // CHECK: linalg.generic {{.*}} ins(%arg0, %arg1 : tensor<32x16xbf16>, tensor<16x8xbf16>) outs(%arg2 : tensor<32x8xf32>)
  %d = block.dot %a, %b acc %acc : tensor<32x16xbf16>, tensor<16x8xbf16>, tensor<32x8xf32> -> tensor<32x8xf32>
  // CHECK: %[[NINF:.*]] = arith.constant 0xFF800000 : f32
  // CHECK: %[[INIT:.*]] = linalg.fill ins(%[[NINF]] : f32)
  // CHECK: linalg.reduce ins(%arg3 : tensor<4x128xf32>) outs(%[[INIT]] : tensor<4xf32>) dimensions = [1]
  // Float reductions may be reassociated (their order is unspecified).
  // CHECK: arith.maximumf %{{.*}}, %{{.*}} fastmath<reassoc> : f32
  %s = block.reduce max %v dims [1] : tensor<4x128xf32> -> tensor<4xf32>
  // Size-1 dimensions stretch through a constant index.
  // CHECK: linalg.generic {indexing_maps = [#[[STRETCH]], #{{.*}}], iterator_types = ["parallel", "parallel"]} ins(%arg4 : tensor<1x128xi32>)
  %bc = block.broadcast %r dims [] : tensor<1x128xi32> -> tensor<4x128xi32>
  // CHECK: linalg.index 1 : index
  // CHECK: arith.index_cast
  %i = block.iota dim 1 : tensor<4x128xi32>
  // CHECK: linalg.generic {indexing_maps = [#[[ADD]], #{{.*}}]
  %e = block.reduce sum %bc dims [1] : tensor<4x128xi32> -> tensor<4xi32>
  %f = block.broadcast %e dims [1] : tensor<4xi32> -> tensor<4x3xi32>
  return %c, %d, %s, %bc, %i, %f : tensor<32x8xf32>, tensor<32x8xf32>, tensor<4xf32>, tensor<4x128xi32>, tensor<4x128xi32>, tensor<4x3xi32>
}

// CHECK-LABEL: func.func @atomics
func.func @atomics(%v: tensor<16xf32>, %o: memref<64xf32>, %off: index, %m: tensor<16xi1>) {
  // CHECK: %[[VALUES:.*]] = bufferization.to_buffer %arg0 read_only
  // CHECK: scf.for %[[I:.*]] =
  // CHECK: %[[J:.*]] = arith.addi %arg2, %[[I]] : index
  // CHECK: %[[X:.*]] = memref.load %[[VALUES]][%[[I]]]
  // CHECK: scf.if
  // CHECK: memref.atomic_rmw addf %[[X]], %arg1[%[[J]]] : (f32, memref<64xf32>) -> f32
  block.atomic_rmw add %v, %o[%off] mask %m : tensor<16xf32>, memref<64xf32>
  return
}


// Unsigned reductions start from 0 (umax) and all ones (umin); unsigned
// atomics are memref.atomic_rmw maxu / minu.
// CHECK-LABEL: func.func @unsigned_kinds
func.func @unsigned_kinds(%v: tensor<4x8xi8>, %w: tensor<4xi32>, %o: memref<4xi32>) -> (tensor<4xi8>, tensor<4xi8>) {
  // CHECK: %[[ZERO:.*]] = arith.constant 0 : i8
  // CHECK: linalg.fill ins(%[[ZERO]] : i8)
  // CHECK: arith.maxui %{{.*}}, %{{.*}} : i8
  %a = block.reduce umax %v dims [1] : tensor<4x8xi8> -> tensor<4xi8>
  // CHECK: %[[ONES:.*]] = arith.constant -1 : i8
  // CHECK: linalg.fill ins(%[[ONES]] : i8)
  // CHECK: arith.minui %{{.*}}, %{{.*}} : i8
  %b = block.reduce umin %v dims [1] : tensor<4x8xi8> -> tensor<4xi8>
  // CHECK: memref.atomic_rmw maxu
  block.atomic_rmw umax %w, %o : tensor<4xi32>, memref<4xi32>
  // CHECK: memref.atomic_rmw minu
  block.atomic_rmw umin %w, %o : tensor<4xi32>, memref<4xi32>
  return %a, %b : tensor<4xi8>, tensor<4xi8>
}

// A gather is a generic over the result reading the ref at the index
// tensor's entry (projected along the gathered dimension), clamped into
// the ref; a scatter writes only where the position is inside the ref and
// the mask holds.
// CHECK-LABEL: func.func @gather_scatter
func.func @gather_scatter(%x: memref<16x8xf32>, %t: tensor<4xi32>, %m: tensor<4x8xi1>) -> tensor<4x8xf32> {
  // CHECK: %[[INDICES:.*]] = bufferization.to_buffer %arg1 read_only : tensor<4xi32> to memref<4xi32>
  // CHECK: linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}], iterator_types = ["parallel", "parallel"]} ins(%[[INDICES]] : memref<4xi32>)
  // CHECK: ^bb0(%[[IN:.*]]: i32, %{{.*}}: f32):
  // CHECK: %[[ROW:.*]] = arith.index_cast %[[IN]] : i32 to index
  // CHECK: %[[COLUMN:.*]] = linalg.index 1 : index
  // CHECK: %[[LOW:.*]] = arith.maxsi %[[ROW]], %{{.*}} : index
  // CHECK: %[[CLAMPED:.*]] = arith.minsi %[[LOW]], %{{.*}} : index
  // CHECK: memref.load %arg0[%[[CLAMPED]], %[[COLUMN]]] : memref<16x8xf32>
  %g = block.load %x gather %t dim 0 : memref<16x8xf32>, tensor<4xi32> -> tensor<4x8xf32>
  // CHECK: linalg.generic {{.*}} ins(%{{.*}}, %arg1, %arg2 : tensor<4x8xf32>, tensor<4xi32>, tensor<4x8xi1>)
  // CHECK: %[[ABOVE:.*]] = arith.cmpi sge
  // CHECK: %[[BELOW:.*]] = arith.cmpi slt
  // CHECK: %[[INSIDE:.*]] = arith.andi %[[ABOVE]], %[[BELOW]] : i1
  // CHECK: %[[WRITE:.*]] = arith.andi %[[INSIDE]], %{{.*}} : i1
  // CHECK: scf.if %[[WRITE]] {
  // CHECK: memref.store
  block.store %g, %x scatter %t dim 0 mask %m : tensor<4x8xf32>, memref<16x8xf32>, tensor<4xi32>
  return %g : tensor<4x8xf32>
}

// A splat of a scalar is a fill; fusion folds the fill into the generic
// that reads it, which then uses the scalar itself (no row of copies).
// CHECK-LABEL: func.func @splats
// CHECK: %[[EMPTY:.*]] = tensor.empty() : tensor<4096xf32>
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[EMPTY]] : tensor<4096xf32>)
// CHECK-NOT: tensor.splat
// CHECK: tensor.splat %{{.*}}[%{{.*}}] : tensor<?xf32>
// FUSED-LABEL: func.func @splats
// FUSED-NOT: linalg.fill
// FUSED: linalg.generic
// FUSED-NEXT: ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
// FUSED-NEXT: arith.subf %[[IN]], %arg1 : f32
func.func @splats(%x: tensor<4096xf32>, %max: f32, %n: index) -> (tensor<4096xf32>, tensor<?xf32>) {
  %row = tensor.splat %max : tensor<4096xf32>
  %shifted = arith.subf %x, %row : tensor<4096xf32>
  // A dynamically shaped splat stays a splat.
  %dynamic = tensor.splat %max[%n] : tensor<?xf32>
  return %shifted, %dynamic : tensor<4096xf32>, tensor<?xf32>
}

// A whole-ref load stored to another ref right away (JAX's `o_ref[...] =
// acc_ref[...]`) is one copy between the refs: no snapshot buffer. A load
// with a store to its ref in between keeps its snapshot.
// CHECK-LABEL: func.func @copy_out
// CHECK-SAME: %[[ACC:.*]]: memref<4x8xf32>, %[[OUT:.*]]: memref<4x8xf32, strided<[16, 1], offset: ?>>, %[[OTHER:.*]]: memref<4x8xf32>
// CHECK-NEXT: memref.copy %[[ACC]], %[[OUT]] : memref<4x8xf32> to memref<4x8xf32, strided<[16, 1], offset: ?>>
// CHECK-NEXT: %[[SNAPSHOT:.*]] = memref.alloc() : memref<4x8xf32>
// CHECK-NEXT: memref.copy %[[ACC]], %[[SNAPSHOT]]
// CHECK: linalg.fill
// CHECK: bufferization.materialize_in_destination %{{.*}} in restrict writable %[[OTHER]]
func.func @copy_out(%acc: memref<4x8xf32>, %out: memref<4x8xf32, strided<[16, 1], offset: ?>>, %other: memref<4x8xf32>) {
  %sum = block.load %acc : memref<4x8xf32> -> tensor<4x8xf32>
  block.store %sum, %out : tensor<4x8xf32>, memref<4x8xf32, strided<[16, 1], offset: ?>>
  %kept = block.load %acc : memref<4x8xf32> -> tensor<4x8xf32>
  %zeros = arith.constant dense<0.0> : tensor<4x8xf32>
  block.store %zeros, %acc : tensor<4x8xf32>, memref<4x8xf32>
  block.store %kept, %other : tensor<4x8xf32>, memref<4x8xf32>
  return
}

// Semaphores are i32 counters of the worker's semaphore scratch: a signal
// adds, a read loads, a wait subtracts when the count suffices and else
// records its site in the wait-fault global (nothing else could ever
// signal it); a DMA copies its window (unit dims dropped on both sides)
// and counts its bytes.
// WAITS: memref.global @__tessel_wait_fault : memref<i64> = dense<0>
// WAITS-LABEL: func.func @semaphores
// WAITS: %[[VIEW_SRC:.*]] = memref.subview %{{.*}}[%{{.*}}, %{{.*}}] [1, 128] [1, 1] : memref<16x128xf32> to memref<128xf32, strided<[1], offset: ?>>
// WAITS: %[[VIEW_DST:.*]] = memref.subview %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}] [1, 1, 128] [1, 1, 1] : memref<2x1x128xf32> to memref<128xf32, strided<[1], offset: ?>>
// WAITS: linalg.copy ins(%[[VIEW_SRC]] : {{.*}}) outs(%[[VIEW_DST]] : {{.*}})
// WAITS: %[[BYTES:.*]] = arith.constant 512 : i32
// WAITS: arith.addi %{{.*}}, %[[BYTES]] : i32
// WAITS: memref.store
// WAITS: %[[COUNT:.*]] = memref.load %{{.*}}[%{{.*}}] : memref<2xi32>
// WAITS: %[[ENOUGH:.*]] = arith.cmpi sge, %[[COUNT]], %{{.*}} : i32
// WAITS: scf.if %[[ENOUGH]] {
// WAITS:   arith.subi %[[COUNT]]
// WAITS: } else {
// WAITS:   %[[FAULT:.*]] = memref.get_global @__tessel_wait_fault : memref<i64>
// WAITS:   memref.store %{{.*}}, %[[FAULT]][] : memref<i64>
func.func @semaphores(%pages: memref<16x128xf32>, %buf: memref<2x1x128xf32>, %sems: memref<2xi32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %bytes = arith.constant 512 : i32
  block.dma_start %pages[%c1, %c0] [1, 128], %buf[%c0, %c0, %c0] [1, 1, 128], %sems[%c0]
      : memref<16x128xf32>, memref<2x1x128xf32>, memref<2xi32>
  block.semaphore_wait %sems[%c0], %bytes : memref<2xi32>
  return
}

// Concurrent semaphore ops (a core mesh's, whose cores signal each other):
// signals, reads and a DMA's count are atomic read-modify-writes; a wait
// looks at the count atomically, takes it with a compare-and-swap once it
// suffices, and pauses between looks until the wait functions' deadline
// passes, then records its site, negated, in the wait-fault global.
// CONCURRENT-DAG: func.func private @__tessel_wait_deadline() -> i64
// CONCURRENT-DAG: func.func private @__tessel_wait_pause(i64) -> i1
// CONCURRENT-LABEL: func.func @concurrent_semaphores
// CONCURRENT: memref.atomic_rmw addi %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}] : (i32, memref<2x2xi32>) -> i32
// CONCURRENT: %[[ZERO:.*]] = arith.constant 0 : i32
// CONCURRENT: memref.atomic_rmw addi %[[ZERO]], %{{.*}}[%{{.*}}, %{{.*}}] : (i32, memref<2x2xi32>) -> i32
// CONCURRENT: linalg.copy
// CONCURRENT: %[[BYTES:.*]] = arith.constant 512 : i32
// CONCURRENT: memref.atomic_rmw addi %[[BYTES]], %{{.*}}[%{{.*}}, %{{.*}}] : (i32, memref<2x2xi32>) -> i32
// CONCURRENT: %[[DEADLINE:.*]] = {{(func\.)?}}call @__tessel_wait_deadline() : () -> i64
// CONCURRENT: scf.while : () -> () {
// CONCURRENT: %[[COUNT:.*]] = memref.atomic_rmw addi %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}] : (i32, memref<2x2xi32>) -> i32
// CONCURRENT: %[[ENOUGH:.*]] = arith.cmpi sge, %[[COUNT]], %{{.*}} : i32
// CONCURRENT: %[[TAKEN:.*]] = scf.if %[[ENOUGH]] -> (i1) {
// CONCURRENT: %[[LEFT:.*]] = arith.subi %[[COUNT]], %{{.*}} : i32
// CONCURRENT: %[[OLD:.*]] = block.atomic_cas_element %[[COUNT]], %[[LEFT]], %{{.*}}[%{{.*}}, %{{.*}}] : i32, memref<2x2xi32>
// CONCURRENT: arith.cmpi eq, %[[OLD]], %[[COUNT]] : i32
// CONCURRENT: func.call @__tessel_wait_pause(%[[DEADLINE]]) : (i64) -> i1
// CONCURRENT: memref.get_global @__tessel_wait_fault : memref<i64>
// CONCURRENT: arith.constant -{{[0-9]+}} : i64
// CONCURRENT: scf.condition
func.func @concurrent_semaphores(%pages: memref<16x128xf32>, %buf: memref<1x128xf32>, %sems: memref<2x2xi32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1 : i32
  %bytes = arith.constant 512 : i32
  block.semaphore_signal %sems[%c1, %c0], %one concurrent : memref<2x2xi32>
  %n = block.semaphore_read %sems[%c0, %c0] concurrent : memref<2x2xi32>
  block.dma_start %pages[%c1, %c0] [1, 128], %buf, %sems[%c0, %c1] concurrent
      : memref<16x128xf32>, memref<1x128xf32>, memref<2x2xi32>
  block.semaphore_wait %sems[%c0, %c1], %bytes concurrent : memref<2x2xi32>
  return
}

// A print calls the JIT's print functions: begin with its site (its own
// `tessel.print_site`, else its place among the module's prints), one call
// per value widened to i64 / f32 / f64 (a tensor's elements by a loop
// nest, in row-major order), end; the module lists the sites' formats and
// value types.
// PRINTS: module attributes {tessel.print_formats = ["", "", "index {} of {}: {}", "done", "rows {}"]
// PRINTS-SAME: tessel.print_types = ["", "", "index;i16;bf16", "", "tensor<2x3xf16>"]
// PRINTS-DAG: func.func private @__tessel_print_begin(i64)
// PRINTS-DAG: func.func private @__tessel_print_i64(i64)
// PRINTS-DAG: func.func private @__tessel_print_f32(f32)
// PRINTS-LABEL: func.func @prints
// PRINTS: %[[SITE:.*]] = arith.constant 2 : i64
// PRINTS: call @__tessel_print_begin(%[[SITE]])
// PRINTS: %[[I:.*]] = arith.index_cast %{{.*}} : index to i64
// PRINTS: call @__tessel_print_i64(%[[I]])
// PRINTS: %[[N:.*]] = arith.extsi %{{.*}} : i16 to i64
// PRINTS: call @__tessel_print_i64(%[[N]])
// PRINTS: %[[H:.*]] = arith.extf %{{.*}} : bf16 to f32
// PRINTS: call @__tessel_print_f32(%[[H]])
// PRINTS: call @__tessel_print_end()
// PRINTS: arith.constant 3 : i64
// PRINTS: %[[ROWS:.*]] = arith.constant 4 : i64
// PRINTS: call @__tessel_print_begin(%[[ROWS]])
// PRINTS: %[[TWO:.*]] = arith.constant 2 : index
// PRINTS: scf.for %[[R:.*]] = %{{.*}} to %[[TWO]] step
// PRINTS: %[[THREE:.*]] = arith.constant 3 : index
// PRINTS: scf.for %[[C:.*]] = %{{.*}} to %[[THREE]] step
// PRINTS: %[[E:.*]] = tensor.extract %{{.*}}[%[[R]], %[[C]]] : tensor<2x3xf16>
// PRINTS: %[[W:.*]] = arith.extf %[[E]] : f16 to f32
// PRINTS: call @__tessel_print_f32(%[[W]])
// PRINTS: call @__tessel_print_end()
func.func @prints(%i: index, %n: i16, %h: bf16, %t: tensor<2x3xf16>) {
  block.print "index {} of {}: {}" %i, %n, %h : index, i16, bf16 {tessel.print_site = 2 : i64}
  block.print "done"
  block.print "rows {}" %t : tensor<2x3xf16>
  return
}
