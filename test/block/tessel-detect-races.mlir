// RUN: tessel-opt %s --split-input-file --tessel-detect-races | FileCheck %s
// RUN: tessel-opt %s --split-input-file --grid-to-loops --tessel-detect-races | FileCheck %s --check-prefix=CORES

// Under tessel.detect_races (JAX's InterpretParams.detect_races), a
// kernel's DMAs, loads, stores and waits are reported to the runtime's race
// detector: before a DMA's start its two windows and its semaphore (one
// function per element type), before an access its window (one element
// for a memref.load/store, the window of a block.load/store, the whole ref
// without offsets) and whether it writes, after a wait its semaphore. Each
// site is listed, with its line, in tessel.race_sites. Outside a core
// mesh nothing is shared (the last argument of the access and DMA calls).
// CHECK-LABEL: module attributes
// CHECK-SAME: tessel.race_sites = ["the load from memref<5xi32> at {{.*}}:[[# @LINE + 27]]:{{.*}}", "the DMA started at {{.*}}:[[# @LINE + 29]]:{{.*}}", "the load from memref<8x128xf32> at {{.*}}", "the store to memref<8x128xf32> at {{.*}}"]
// CHECK-DAG: func.func private @__tessel_race_wait(memref<*xi32>)
// CHECK-DAG: func.func private @__tessel_race_dma_f32(memref<*xf32>, memref<*xf32>, memref<*xi32>, i64, i64, i1)
// CHECK-DAG: func.func private @__tessel_race_access_i32(memref<*xi32>, i64, i1, i64, i1)
// CHECK-DAG: func.func private @__tessel_race_access_f32(memref<*xf32>, i64, i1, i64, i1)
// CHECK-LABEL: func.func @kernel
// CHECK: %[[S:.*]] = memref.subview %arg0[%c1] [1] [1] : memref<5xi32> to memref<1xi32, strided<[1], offset: ?>>
// CHECK: %[[SA:.*]] = memref.cast %[[S]]
// CHECK: call @__tessel_race_access_i32(%[[SA]], %c4_i64, %false, %c1_i64, %false{{.*}})
// CHECK-NEXT: memref.load %arg0[%c1]
// CHECK: %[[SRC:.*]] = memref.subview %arg1[%{{.*}}, %c0] [8, 128] [1, 1] : memref<16x128xf32> to memref<8x128xf32, strided<[128, 1], offset: ?>>
// CHECK: %[[SEM:.*]] = memref.subview %arg4[%c1] [1] [1] : memref<2xi32>
// CHECK: call @__tessel_race_dma_f32(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %c2_i64, %false{{.*}})
// CHECK-NEXT: block.dma_start %arg1
// CHECK: block.semaphore_wait %arg4[%c1]
// CHECK-NEXT: memref.subview %arg4[%c1] [1] [1]
// CHECK-NEXT: memref.cast
// CHECK-NEXT: call @__tessel_race_wait
// CHECK: %[[WHOLE:.*]] = memref.cast %arg3 : memref<8x128xf32> to memref<*xf32>
// CHECK: call @__tessel_race_access_f32(%[[WHOLE]], %{{.*}}, %false{{.*}}, %c3_i64, %false{{.*}})
// CHECK-NEXT: block.load %arg3
// CHECK: call @__tessel_race_access_f32(%{{.*}}, %{{.*}}, %true, %c4_i64{{.*}}, %false{{.*}})
// CHECK-NEXT: block.store
module attributes {tessel.detect_races = 1 : i64} {
  func.func @kernel(%s: memref<5xi32>, %x: memref<16x128xf32>, %o: memref<8x128xf32>, %t: memref<8x128xf32>, %sem: memref<2xi32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %n32 = memref.load %s[%c1] : memref<5xi32>
    %n = arith.index_cast %n32 : i32 to index
    block.dma_start %x[%n, %c0] [8, 128], %t, %sem[%c1] : memref<16x128xf32>, memref<8x128xf32>, memref<2xi32>
    %bytes = arith.constant 4096 : i32
    block.semaphore_wait %sem[%c1], %bytes : memref<2xi32>
    %w = block.load %t : memref<8x128xf32> -> tensor<8x128xf32>
    block.store %w, %o[%c0, %c0] : tensor<8x128xf32>, memref<8x128xf32>
    return
  }
  func.func @entry(%s: memref<5xi32>, %x: memref<16x128xf32>, %o: memref<8x128xf32>) {
    grid.call @kernel grid [] ins(%s, %x : memref<5xi32>, memref<16x128xf32>) outs(%o : memref<8x128xf32>)
        scratch(memref<8x128xf32>, semaphore memref<2xi32>) in_specs [#grid.block<full>, #grid.block<full>] out_specs [#grid.block<full>]
    return
  }
}

// -----

// Without the knob, nothing changes: the kernel is the same code.
// CHECK-LABEL: module {
// CHECK-NOT: __tessel_race
// CHECK-LABEL: func.func @plain
// CHECK-NEXT: block.dma_start
// CHECK-NEXT: arith.constant
// CHECK-NEXT: block.semaphore_wait
// CHECK-NEXT: return
module {
  func.func @plain(%x: memref<8xf32>, %t: memref<8xf32>, %sem: memref<i32>) {
    block.dma_start %x, %t, %sem : memref<8xf32>, memref<8xf32>, memref<i32>
    %bytes = arith.constant 32 : i32
    block.semaphore_wait %sem, %bytes : memref<i32>
    return
  }
  func.func @entry(%x: memref<8xf32>) {
    grid.call @plain grid [] ins() outs(%x : memref<8xf32>) scratch(memref<8xf32>, semaphore memref<i32>)
        in_specs [] out_specs [#grid.block<full>]
    return
  }
}

// -----

// A core mesh's kernel (after grid-to-loops, called from the forall marked
// tessel.cores) reports its accesses as shared, a signal its semaphore
// before it (the peer core's counter: the core is the semaphore's first
// index) and a wait its own after it.
// CORES-LABEL: func.func private @pair_kernel__call0(
// CORES: memref.subview %{{.*}}[%[[PEER:.*]], %c0{{.*}}] [1, 1] [1, 1] : memref<2x3xi32>
// CORES: call @__tessel_race_signal(
// CORES-NEXT: block.semaphore_signal %{{.*}}[%[[PEER]], %c0{{.*}}], %{{.*}} concurrent : memref<2x3xi32>
// CORES: block.semaphore_wait
// CORES-NEXT: memref.subview
// CORES-NEXT: memref.cast
// CORES-NEXT: call @__tessel_race_wait(
// CORES: call @__tessel_race_dma_f32(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %true{{.*}})
// CORES-NEXT: block.dma_start
// CORES: call @__tessel_race_signal(
// CORES-NEXT: block.semaphore_signal
module attributes {tessel.detect_races = 1 : i64} {
  func.func @pair_kernel(%o: memref<8x128xf32>, %sems: memref<3xi32>, %shared: memref<8x128xf32>,
                         %own: memref<4x128xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %one = arith.constant 1 : i32
    %core = grid.program_id 0
    %peer = arith.subi %c1, %core : index
    block.semaphore_signal %sems[%c0], %one core %peer : memref<3xi32>
    block.semaphore_wait %sems[%c0], %one : memref<3xi32>
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
}
