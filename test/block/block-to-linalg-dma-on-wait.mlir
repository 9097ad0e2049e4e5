// block-to-linalg with DMAs that copy on waits (tessel.dma_mode = 1,
// on_wait): a DMA's start queues its copy (unranked views of its windows
// and of its semaphore, its byte count, element code and add flag) through
// the JIT's start function for its element type; every wait, a DMA's or a
// plain one, calls the JIT's wait, which runs the copies queued on the
// semaphore, and records its site in the wait-fault global on failure
// (negated for a timeout). Signals and reads stay inline.
// RUN: tessel-opt %s --block-to-linalg | FileCheck %s

// CHECK-DAG: func.func private @__tessel_dma_start_f32(memref<*xf32>, memref<*xf32>, memref<*xi32>, i64, i32, i1)
// CHECK-DAG: func.func private @__tessel_dma_start_i32(memref<*xi32>, memref<*xi32>, memref<*xi32>, i64, i32, i1)
// CHECK-DAG: func.func private @__tessel_dma_wait(memref<*xi32>, i32, i1) -> i32
// CHECK-LABEL: func.func @kernel
// CHECK: %[[SRC:.*]] = memref.subview %{{.*}}[%{{.*}}, %{{.*}}] [1, 128] [1, 1] : memref<16x128xf32> to memref<128xf32, strided<[1], offset: ?>>
// CHECK: %[[DST:.*]] = memref.subview %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}] [1, 1, 128] [1, 1, 1] : memref<2x1x128xf32> to memref<128xf32, strided<[1], offset: ?>>
// CHECK: %[[SEM_VIEW:.*]] = memref.subview %{{.*}}[%{{.*}}] [1] [1] : memref<2xi32> to memref<1xi32, strided<[1], offset: ?>>
// CHECK: %[[SEM:.*]] = memref.cast %[[SEM_VIEW]] : memref<1xi32, strided<[1], offset: ?>> to memref<*xi32>
// CHECK: %[[SRC_ANY:.*]] = memref.cast %[[SRC]] : {{.*}} to memref<*xf32>
// CHECK: %[[DST_ANY:.*]] = memref.cast %[[DST]] : {{.*}} to memref<*xf32>
// CHECK: %[[BYTES:.*]] = arith.constant 512 : i64
// CHECK: %[[ELEMENT:.*]] = arith.constant 2 : i32
// CHECK: %[[ADD:.*]] = arith.constant false
// CHECK: call @__tessel_dma_start_f32(%[[SRC_ANY]], %[[DST_ANY]], %[[SEM]], %[[BYTES]], %[[ELEMENT]], %[[ADD]])
// CHECK: %[[ADDS:.*]] = arith.constant true
// CHECK: call @__tessel_dma_start_i32(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[ADDS]])
// CHECK: %[[WAITED:.*]] = memref.cast %{{.*}} : memref<1xi32, strided<[1], offset: ?>> to memref<*xi32>
// CHECK: %[[CONCURRENT:.*]] = arith.constant false
// CHECK: %[[STATUS:.*]] = {{(func\.)?}}call @__tessel_dma_wait(%[[WAITED]], %{{.*}}, %[[CONCURRENT]]) : (memref<*xi32>, i32, i1) -> i32
// CHECK: scf.if
// CHECK: memref.get_global @__tessel_wait_fault
// CHECK: memref.atomic_rmw addi
// CHECK: %[[ON:.*]] = arith.constant true
// CHECK: call @__tessel_dma_wait(%{{.*}}, %{{.*}}, %[[ON]])
module attributes {tessel.dma_mode = 1 : i64} {
  func.func @kernel(%pages: memref<16x128xf32>, %buf: memref<2x1x128xf32>, %sems: memref<2xi32>,
                    %counts: memref<4xi32>, %flag: memref<i32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %bytes = arith.constant 512 : i32
    %one = arith.constant 1 : i32
    block.dma_start %pages[%c1, %c0] [1, 128], %buf[%c0, %c0, %c0] [1, 1, 128], %sems[%c0]
        : memref<16x128xf32>, memref<2x1x128xf32>, memref<2xi32>
    block.dma_start %counts, %counts, %flag add : memref<4xi32>, memref<4xi32>, memref<i32>
    block.semaphore_wait %sems[%c0], %bytes : memref<2xi32>
    block.semaphore_signal %flag, %one concurrent : memref<i32>
    block.semaphore_wait %flag, %one concurrent : memref<i32>
    return
  }
}
