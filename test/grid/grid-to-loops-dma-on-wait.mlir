// grid-to-loops with DMAs that copy on waits (tessel.dma_mode = 1,
// on_wait): where a worker's semaphore scratch starts at zero, the copies
// still queued on semaphores at its addresses (a finished worker's, never
// waited for) are dropped through the JIT's forget function, declared in
// the module; a core mesh's call-wide semaphores likewise, once.
// RUN: tessel-opt %s --split-input-file --grid-verify-specs --grid-to-loops | FileCheck %s

// CHECK: func.func private @__tessel_dma_forget(memref<*xi32>)
// CHECK-LABEL: func.func @workers
// CHECK: scf.forall (%{{.*}}) in (4) {
// CHECK: %[[SEMS:.*]] = memref.alloc() : memref<2xi32>
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0 : i32
// CHECK-NEXT: linalg.fill ins(%[[ZERO]] : i32) outs(%[[SEMS]] : memref<2xi32>)
// CHECK-NEXT: %[[ANY:.*]] = memref.cast %[[SEMS]] : memref<2xi32> to memref<*xi32>
// CHECK-NEXT: {{(func\.)?}}call @__tessel_dma_forget(%[[ANY]]) : (memref<*xi32>) -> ()
module attributes {tessel.dma_mode = 1 : i64} {
  func.func @kernel(%o: memref<128xf32>, %sems: memref<2xi32>) {
    return
  }
  func.func @workers(%o: memref<512xf32>) {
    grid.call @kernel grid [4] ins() outs(%o : memref<512xf32>) scratch(semaphore memref<2xi32>)
        in_specs [] out_specs [#grid.block<[128], (i) -> (i)>] semantics [parallel]
    return
  }
}

// -----

// CHECK-LABEL: func.func @mesh
// CHECK: %[[ALL:.*]] = memref.alloc() : memref<2x3xi32>
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0 : i32
// CHECK-NEXT: linalg.fill ins(%[[ZERO]] : i32) outs(%[[ALL]] : memref<2x3xi32>)
// CHECK-NEXT: %[[ANY:.*]] = memref.cast %[[ALL]] : memref<2x3xi32> to memref<*xi32>
// CHECK-NEXT: {{(func\.)?}}call @__tessel_dma_forget(%[[ANY]]) : (memref<*xi32>) -> ()
// CHECK: scf.forall
module attributes {tessel.dma_mode = 1 : i64} {
  func.func @kernel(%o: memref<8x128xf32>, %sems: memref<3xi32>) {
    return
  }
  func.func @mesh(%o: memref<8x128xf32>) {
    grid.call @kernel grid [2] cores ins() outs(%o : memref<8x128xf32>) scratch(semaphore memref<3xi32>)
        in_specs [] out_specs [#grid.block<full>]
    return
  }
}
