// Semaphores and DMAs end to end: a double-buffered DMA pipeline over an
// ordered grid (each program starts the next page's copy into the other
// slot, waits for its own page's bytes, and computes), signals and reads,
// compiled and interpreted; a wait that can never be satisfied is a
// located error on both paths, not a hang. AMD GPUs refuse them (located):
// the CPU's runs say `--device cpu`, so the emulated GPU does not rerun them.
// RUN: tessel run --device cpu %s --entry pipeline --arg 0=random:1 --check | FileCheck %s --check-prefix=PIPELINE
// RUN: tessel run --device cpu %s --entry pipeline --arg 0=random:1 --check --dma-mode on_wait | FileCheck %s --check-prefix=PIPELINE
// RUN: tessel run --device cpu %s --entry counts | FileCheck %s --check-prefix=COUNTS
// RUN: tessel run --device cpu %s --entry counts --interpret | FileCheck %s --check-prefix=COUNTS
// RUN: tessel run --device cpu %s --entry never 2>&1 | FileCheck %s --check-prefix=NEVER; test ${PIPESTATUS[0]} -eq 1
// RUN: tessel run --device cpu %s --entry never --interpret 2>&1 | FileCheck %s --check-prefix=NEVER-INTERPRETED; test ${PIPESTATUS[0]} -eq 1
// RUN: tessel run --device cpu %s --entry never --dma-mode on_wait 2>&1 | FileCheck %s --check-prefix=NEVER; test ${PIPESTATUS[0]} -eq 1
// RUN: tessel compile %s --target rocm --chip gfx942 -o %t.hsaco 2>&1 | FileCheck %s --check-prefix=GPU; test ${PIPESTATUS[0]} -eq 1
// PIPELINE: check: compiled code matches the interpreter
// COUNTS: arg0: memref<4xi32>
// COUNTS-NEXT: [3 1 0 4]
// NEVER: error: a semaphore wait can never be satisfied (its count is short and nothing else signals it): block.semaphore_wait at {{.*}}semaphores.mlir:[[@LINE+71]]:3, called from {{.*}}semaphores.mlir:[[@LINE+75]]:3
// NEVER-INTERPRETED: error: {{.*}}a semaphore wait can never be satisfied (it needs 512, the count is 0, and nothing else signals it): block.semaphore_wait at {{.*}}semaphores.mlir:[[@LINE+70]]:3
// GPU: semaphores and DMAs run on the CPU only, not on AMD GPUs yet

func.func @pipeline_kernel(%pages: memref<4x8x128xf32>, %o: memref<8x128xf32>, %buf: memref<2x8x128xf32>,
                           %sems: memref<2xi32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %i = grid.program_id 0
  %first = arith.cmpi eq, %i, %c0 : index
  scf.if %first {
    block.dma_start %pages[%c0, %c0, %c0] [1, 8, 128], %buf[%c0, %c0, %c0] [1, 8, 128], %sems[%c0]
        : memref<4x8x128xf32>, memref<2x8x128xf32>, memref<2xi32>
  }
  %next = arith.addi %i, %c1 : index
  %more = arith.cmpi slt, %next, %c4 : index
  scf.if %more {
    %slot = arith.remui %next, %c2 : index
    block.dma_start %pages[%next, %c0, %c0] [1, 8, 128], %buf[%slot, %c0, %c0] [1, 8, 128], %sems[%slot]
        : memref<4x8x128xf32>, memref<2x8x128xf32>, memref<2xi32>
  }
  %slot = arith.remui %i, %c2 : index
  %bytes = arith.constant 4096 : i32
  block.semaphore_wait %sems[%slot], %bytes : memref<2xi32>
  %page = block.load %buf[%slot, %c0, %c0] [1, 8, 128] : memref<2x8x128xf32> -> tensor<1x8x128xf32>
  %rows = tensor.collapse_shape %page [[0, 1], [2]] : tensor<1x8x128xf32> into tensor<8x128xf32>
  %doubled = arith.addf %rows, %rows : tensor<8x128xf32>
  block.store %doubled, %o : tensor<8x128xf32>, memref<8x128xf32>
  return
}
func.func @pipeline(%pages: memref<4x8x128xf32>, %o: memref<32x128xf32>) {
  grid.call @pipeline_kernel grid [4] ins(%pages : memref<4x8x128xf32>) outs(%o : memref<32x128xf32>)
      scratch(memref<2x8x128xf32>, semaphore memref<2xi32>)
      in_specs [#grid.block<full>] out_specs [#grid.block<[8, 128], (i) -> (i, 0)>]
      semantics [arbitrary]
  return
}

// Signal 3, read; wait 2, read; a fresh semaphore reads 0; the DMA of a
// 4-byte element counts 4.
func.func @counts_kernel(%o: memref<4xi32>, %s: memref<2xi32>, %one: memref<1xi32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %three = arith.constant 3 : i32
  %two = arith.constant 2 : i32
  block.semaphore_signal %s[%c0], %three : memref<2xi32>
  %a = block.semaphore_read %s[%c0] : memref<2xi32>
  block.semaphore_wait %s[%c0], %two : memref<2xi32>
  %b = block.semaphore_read %s[%c0] : memref<2xi32>
  %c = block.semaphore_read %s[%c1] : memref<2xi32>
  block.dma_start %one, %one, %s[%c1] add : memref<1xi32>, memref<1xi32>, memref<2xi32>
  %d = block.semaphore_read %s[%c1] : memref<2xi32>
  memref.store %a, %o[%c0] : memref<4xi32>
  memref.store %b, %o[%c1] : memref<4xi32>
  memref.store %c, %o[%c2] : memref<4xi32>
  memref.store %d, %o[%c3] : memref<4xi32>
  return
}
func.func @counts(%o: memref<4xi32>) {
  grid.call @counts_kernel grid [] ins() outs(%o : memref<4xi32>)
      scratch(semaphore memref<2xi32>, memref<1xi32>) in_specs [] out_specs [#grid.block<full>]
  return
}

// A wait for a copy nobody started.
func.func @never_kernel(%o: memref<128xf32>, %s: memref<i32>) {
  %bytes = arith.constant 512 : i32
  block.semaphore_wait %s, %bytes : memref<i32>
  return
}
func.func @never(%o: memref<128xf32>) {
  grid.call @never_kernel grid [] ins() outs(%o : memref<128xf32>) scratch(semaphore memref<i32>)
      in_specs [] out_specs [#grid.block<full>]
  return
}
