// Semaphores and DMAs: block.semaphore_signal/wait/read and block.dma_start
// (whole refs and windows, squeezed unit dims, add), signals to another
// core, concurrent ops, and grid.call's semaphore and shared scratch and
// core meshes, print as they parse.
// RUN: tessel-opt %s | FileCheck %s
// RUN: tessel-opt %s > %t.1 && tessel-opt %t.1 > %t.2 && diff %t.1 %t.2

// CHECK-LABEL: func.func @kernel
func.func @kernel(%pages: memref<16x128xf32>, %o: memref<2x128xf32>, %buf: memref<2x1x128xf32>,
                  %sems: memref<2xi32>, %flag: memref<i32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1 : i32
  // CHECK: block.dma_start %{{.*}}[%{{.*}}, %{{.*}}] [1, 128], %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}] [1, 1, 128], %{{.*}}[%{{.*}}] : memref<16x128xf32>, memref<2x1x128xf32>, memref<2xi32>
  block.dma_start %pages[%c1, %c0] [1, 128], %buf[%c0, %c0, %c0] [1, 1, 128], %sems[%c0]
      : memref<16x128xf32>, memref<2x1x128xf32>, memref<2xi32>
  // CHECK: block.dma_start %{{.*}}, %{{.*}}, %{{.*}}[%{{.*}}] add : memref<2x128xf32>, memref<2x128xf32>, memref<2xi32>
  block.dma_start %o, %o, %sems[%c1] add : memref<2x128xf32>, memref<2x128xf32>, memref<2xi32>
  // CHECK: block.semaphore_signal %{{.*}}, %{{.*}} : memref<i32>
  block.semaphore_signal %flag, %one : memref<i32>
  // CHECK: block.semaphore_signal %{{.*}}[%{{.*}}], %{{.*}} core %{{.*}} : memref<2xi32>
  block.semaphore_signal %sems[%c0], %one core %c1 : memref<2xi32>
  // CHECK: %{{.*}} = block.semaphore_read %{{.*}}[%{{.*}}] : memref<2xi32>
  %n = block.semaphore_read %sems[%c0] : memref<2xi32>
  // CHECK: block.semaphore_wait %{{.*}}[%{{.*}}], %{{.*}} : memref<2xi32>
  block.semaphore_wait %sems[%c0], %n : memref<2xi32>
  return
}

// CHECK-LABEL: func.func @call
// CHECK: scratch(memref<2x1x128xf32>, semaphore memref<2xi32>, semaphore memref<i32>)
func.func @call(%pages: memref<16x128xf32>, %o: memref<2x128xf32>) {
  grid.call @kernel grid [] ins(%pages : memref<16x128xf32>) outs(%o : memref<2x128xf32>)
      scratch(memref<2x1x128xf32>, semaphore memref<2xi32>, semaphore memref<i32>)
      in_specs [#grid.block<full>] out_specs [#grid.block<full>]
  return
}

// CHECK-LABEL: func.func @concurrent
// CHECK: block.semaphore_signal %{{.*}}[%{{.*}}, %{{.*}}], %{{.*}} concurrent : memref<2x2xi32>
// CHECK: block.semaphore_wait %{{.*}}[%{{.*}}, %{{.*}}], %{{.*}} concurrent : memref<2x2xi32>
// CHECK: block.semaphore_read %{{.*}}[%{{.*}}, %{{.*}}] concurrent : memref<2x2xi32>
// CHECK: block.dma_start %{{.*}}, %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}] add concurrent : memref<2x128xf32>, memref<2x128xf32>, memref<2x2xi32>
func.func @concurrent(%o: memref<2x128xf32>, %sems: memref<2x2xi32>) {
  %c0 = arith.constant 0 : index
  %one = arith.constant 1 : i32
  block.semaphore_signal %sems[%c0, %c0], %one concurrent : memref<2x2xi32>
  block.semaphore_wait %sems[%c0, %c0], %one concurrent : memref<2x2xi32>
  %n = block.semaphore_read %sems[%c0, %c0] concurrent : memref<2x2xi32>
  block.dma_start %o, %o, %sems[%c0, %c0] add concurrent : memref<2x128xf32>, memref<2x128xf32>, memref<2x2xi32>
  return
}

// CHECK-LABEL: func.func @cores
// CHECK: grid.call @mesh_kernel grid [4, 2] cores ins() outs(%{{.*}} : memref<8x128xf32>) scratch(semaphore memref<i32>, shared memref<4x128xf32>, memref<128xf32>)
func.func @mesh_kernel(%o: memref<8x128xf32>, %s: memref<i32>, %shared: memref<4x128xf32>, %own: memref<128xf32>) {
  return
}
func.func @cores(%o: memref<8x128xf32>) {
  grid.call @mesh_kernel grid [4, 2] cores ins() outs(%o : memref<8x128xf32>)
      scratch(semaphore memref<i32>, shared memref<4x128xf32>, memref<128xf32>)
      in_specs [] out_specs [#grid.block<full>]
  return
}
