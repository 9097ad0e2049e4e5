// Core meshes (`grid.call ... cores`, Pallas' pl.kernel / core_map over
// TensorCores): the cores run at once, a thread each whatever the thread
// count (`--num-threads 1` too), signal each other's semaphores
// (`block.semaphore_signal ... core`) and share `shared` scratch
// (pltpu.VMEM_SHARED), compiled and interpreted.
// - ring: each core writes its row to shared memory, signals the next
//   core and waits for the previous one's signal, then copies the
//   previous core's row out (a DMA). Each core waits for a core that
//   starts after it: run on fewer threads than cores, it would hang.
// - barrier: every core signals core 0, which waits for all four, sums
//   the rows and signals each core back; the others wait for it.
// - never: core 1 waits for a signal no core sends: a located error, on
//   the compiled path once the wait timeout passes, in the interpreter at
//   once (every core has ended or waits).
// AMD GPUs refuse semaphores (located): the runs say `--device cpu`.
// RUN: tessel run --device cpu %s --entry ring | FileCheck %s --check-prefix=RING
// RUN: tessel run --device cpu %s --entry ring --num-threads 1 | FileCheck %s --check-prefix=RING
// RUN: tessel run --device cpu %s --entry ring --interpret | FileCheck %s --check-prefix=RING
// RUN: tessel run --device cpu %s --entry ring --num-threads 1 --dma-mode on_wait | FileCheck %s --check-prefix=RING
// RUN: tessel run --device cpu %s --entry ring --interpret --dma-mode on_wait | FileCheck %s --check-prefix=RING
// RUN: tessel run --device cpu %s --entry barrier --check | FileCheck %s --check-prefix=BARRIER
// RUN: tessel run --device cpu %s --entry barrier --check --dma-mode on_wait | FileCheck %s --check-prefix=BARRIER
// RUN: tessel run --device cpu %s --entry barrier | FileCheck %s --check-prefix=BARRIER-VALUES
// RUN: env TESSEL_WAIT_TIMEOUT=0.2 tessel run --device cpu %s --entry never 2>&1 | FileCheck %s --check-prefix=NEVER; test ${PIPESTATUS[0]} -eq 1
// RUN: env TESSEL_WAIT_TIMEOUT=0.2 tessel run --device cpu %s --entry never --dma-mode on_wait 2>&1 | FileCheck %s --check-prefix=NEVER; test ${PIPESTATUS[0]} -eq 1
// RUN: tessel run --device cpu %s --entry never --interpret 2>&1 | FileCheck %s --check-prefix=NEVER-INTERPRETED; test ${PIPESTATUS[0]} -eq 1
// RING: arg0: memref<4x4xf32>
// RING-NEXT: {{\[\[}}4. 4. 4. 4.]
// RING-NEXT: [1. 1. 1. 1.]
// RING-NEXT: [2. 2. 2. 2.]
// RING-NEXT: [3. 3. 3. 3.]]
// BARRIER: check: compiled code matches the interpreter
// BARRIER-VALUES: arg0: memref<4x4xf32>
// BARRIER-VALUES-NEXT: {{\[\[}}10. 10. 10. 10.]
// BARRIER-VALUES-NEXT: [10. 10. 10. 10.]
// BARRIER-VALUES-NEXT: [10. 10. 10. 10.]
// BARRIER-VALUES-NEXT: [10. 10. 10. 10.]]
// NEVER: error: a semaphore wait timed out after 0.2 s (no core signalled it enough; TESSEL_WAIT_TIMEOUT sets the limit): block.semaphore_wait at {{.*}}core-mesh.mlir:[[@LINE+82]]:5
// NEVER-INTERPRETED: error: {{.*}}a semaphore wait can never be satisfied (it needs 1, and every core that could signal it has ended or waits too): block.semaphore_wait at {{.*}}core-mesh.mlir:[[@LINE+81]]:5

func.func @ring_kernel(%o: memref<4x4xf32>, %ready: memref<i32>, %copied: memref<i32>,
                       %shared: memref<4x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %one = arith.constant 1 : i32
  %core = grid.program_id 0
  %id = arith.index_cast %core : index to i32
  %idf = arith.sitofp %id : i32 to f32
  %onef = arith.constant 1.0 : f32
  %value = arith.addf %idf, %onef : f32
  %mine = tensor.splat %value : tensor<1x4xf32>
  block.store %mine, %shared[%core, %c0] : tensor<1x4xf32>, memref<4x4xf32>
  %after = arith.addi %core, %c1 : index
  %next = arith.remui %after, %c4 : index
  block.semaphore_signal %ready, %one core %next : memref<i32>
  block.semaphore_wait %ready, %one : memref<i32>
  %before = arith.addi %core, %c3 : index
  %previous = arith.remui %before, %c4 : index
  block.dma_start %shared[%previous, %c0] [1, 4], %o[%core, %c0] [1, 4], %copied
      : memref<4x4xf32>, memref<4x4xf32>, memref<i32>
  %bytes = arith.constant 16 : i32
  block.semaphore_wait %copied, %bytes : memref<i32>
  return
}
func.func @ring(%o: memref<4x4xf32>) {
  grid.call @ring_kernel grid [4] cores ins() outs(%o : memref<4x4xf32>)
      scratch(semaphore memref<i32>, semaphore memref<i32>, shared memref<4x4xf32>)
      in_specs [] out_specs [#grid.block<full>]
  return
}

func.func @barrier_kernel(%o: memref<4x4xf32>, %arrived: memref<i32>, %go: memref<i32>,
                          %shared: memref<4x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %one = arith.constant 1 : i32
  %four = arith.constant 4 : i32
  %core = grid.program_id 0
  %id = arith.index_cast %core : index to i32
  %idf = arith.sitofp %id : i32 to f32
  %onef = arith.constant 1.0 : f32
  %value = arith.addf %idf, %onef : f32
  %mine = tensor.splat %value : tensor<1x4xf32>
  block.store %mine, %shared[%core, %c0] : tensor<1x4xf32>, memref<4x4xf32>
  block.semaphore_signal %arrived, %one core %c0 : memref<i32>
  %first = arith.cmpi eq, %core, %c0 : index
  scf.if %first {
    block.semaphore_wait %arrived, %four : memref<i32>
    %rows = block.load %shared : memref<4x4xf32> -> tensor<4x4xf32>
    %sum = block.reduce sum %rows dims [0] : tensor<4x4xf32> -> tensor<4xf32>
    %row = tensor.expand_shape %sum [[0, 1]] output_shape [1, 4] : tensor<4xf32> into tensor<1x4xf32>
    block.store %row, %shared[%c0, %c0] : tensor<1x4xf32>, memref<4x4xf32>
    block.semaphore_signal %go, %one core %c1 : memref<i32>
    block.semaphore_signal %go, %one core %c2 : memref<i32>
    block.semaphore_signal %go, %one core %c3 : memref<i32>
  } else {
    block.semaphore_wait %go, %one : memref<i32>
  }
  %total = block.load %shared[%c0, %c0] [1, 4] : memref<4x4xf32> -> tensor<1x4xf32>
  block.store %total, %o[%core, %c0] : tensor<1x4xf32>, memref<4x4xf32>
  return
}
func.func @barrier(%o: memref<4x4xf32>) {
  grid.call @barrier_kernel grid [4] cores ins() outs(%o : memref<4x4xf32>)
      scratch(semaphore memref<i32>, semaphore memref<i32>, shared memref<4x4xf32>)
      in_specs [] out_specs [#grid.block<full>]
  return
}

func.func @never_kernel(%o: memref<2x4xf32>, %ready: memref<i32>) {
  %c1 = arith.constant 1 : index
  %one = arith.constant 1 : i32
  %core = grid.program_id 0
  %second = arith.cmpi eq, %core, %c1 : index
  scf.if %second {
    block.semaphore_wait %ready, %one : memref<i32>
  }
  return
}
func.func @never(%o: memref<2x4xf32>) {
  grid.call @never_kernel grid [2] cores ins() outs(%o : memref<2x4xf32>)
      scratch(semaphore memref<i32>)
      in_specs [] out_specs [#grid.block<full>]
  return
}
