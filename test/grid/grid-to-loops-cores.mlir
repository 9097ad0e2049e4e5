// grid-to-loops on a core mesh (`grid.call ... cores`): the core axis is
// an scf.forall of its own marked `tessel.cores` (for tessel-core-threads),
// the rest of the grid ordered loops inside it; each core's semaphores are
// a row of one zeroed call-wide buffer, allocated before the cores start,
// which the specialized kernel takes whole: its semaphore ops index it by
// the running core (the core axis' program id), a signal with `core` by
// that core, and all become `concurrent`. `shared` scratch is one buffer
// for the call; other scratch is each core's own.
// RUN: tessel-opt %s --grid-verify-specs --grid-to-loops | FileCheck %s

// CHECK-LABEL: func.func private @pair_kernel__call0(
// CHECK-SAME: %{{.*}}: memref<8x128xf32>, %[[SEMS:.*]]: memref<2x3xi32>, %{{.*}}: memref<8x128xf32>, %{{.*}}: memref<4x128xf32>, %[[CORE:.*]]: index, %{{.*}}: index)
// CHECK: block.semaphore_signal %[[SEMS]][%[[PEER:.*]], %{{.*}}], %{{.*}} concurrent : memref<2x3xi32>
// CHECK: block.semaphore_wait %[[SEMS]][%[[CORE]], %{{.*}}], %{{.*}} concurrent : memref<2x3xi32>
// CHECK: block.semaphore_read %[[SEMS]][%[[CORE]], %{{.*}}] concurrent : memref<2x3xi32>
// CHECK: block.dma_start %{{.*}}[%{{.*}}, %{{.*}}] [4, 128], %{{.*}}, %[[SEMS]][%[[CORE]], %{{.*}}] concurrent
// CHECK: block.semaphore_signal %[[SEMS]][%[[CORE]], %{{.*}}], %{{.*}} concurrent : memref<2x3xi32>
// CHECK-LABEL: func.func @pair(
// CHECK: %[[ALL:.*]] = memref.alloc() : memref<2x3xi32>
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0 : i32
// CHECK-NEXT: linalg.fill ins(%[[ZERO]] : i32) outs(%[[ALL]] : memref<2x3xi32>)
// CHECK-NEXT: %[[SHARED:.*]] = memref.alloc() : memref<8x128xf32>
// CHECK: scf.forall (%[[C:.*]]) in (2) {
// CHECK-NEXT: %[[OWN:.*]] = memref.alloc() : memref<4x128xf32>
// CHECK: scf.for %[[STEP:.*]] = %{{.*}} to %{{.*}} step
// CHECK: func.call @pair_kernel__call0(%{{.*}}, %[[ALL]], %[[SHARED]], %[[OWN]], %[[C]], %[[STEP]])
// CHECK: } {tessel.arbitrary_axis = 1 : i64}
// CHECK-NEXT: } {tessel.cores}
func.func @pair_kernel(%o: memref<8x128xf32>, %sems: memref<3xi32>, %shared: memref<8x128xf32>,
                       %own: memref<4x128xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1 : i32
  %core = grid.program_id 0
  %peer = arith.subi %c1, %core : index
  block.semaphore_signal %sems[%c0], %one core %peer : memref<3xi32>
  block.semaphore_wait %sems[%c0], %one : memref<3xi32>
  %n = block.semaphore_read %sems[%c1] : memref<3xi32>
  block.dma_start %shared[%c0, %c0] [4, 128], %own, %sems[%c1] : memref<8x128xf32>, memref<4x128xf32>, memref<3xi32>
  block.semaphore_signal %sems[%c1], %one : memref<3xi32>
  return
}

func.func @pair(%o: memref<8x128xf32>) {
  grid.call @pair_kernel grid [2, 3] cores ins() outs(%o : memref<8x128xf32>)
      scratch(semaphore memref<3xi32>, shared memref<8x128xf32>, memref<4x128xf32>)
      in_specs [] out_specs [#grid.block<full>]
  return
}
