// Race detection (`--detect-races`, JAX's InterpretParams.detect_races)
// on compiled kernels, copying on starts and on waits: an access that
// overlaps a DMA still in flight, where either writes, is reported with
// both accesses' lines (on stderr; the run still succeeds, as JAX's
// interpreter reports races without raising). Race-free kernels report
// none and compute what they compute without the detector.
// - late: the kernel writes the DMA's source before the wait: a race in
//   both modes.
// - lifo: two copies of one size on one semaphore, one wait, then a read
//   of the first copy's destination: copying on starts the wait sees both
//   done; copying on waits it ran only the second, so the first is still
//   in flight (and the read sees the buffer's zeros).
// - waited: a DMA waited for, then its destination read: no race.
// - strided: the kernel reads columns beside a DMA's window in flight: no
//   race (overlap is exact to the byte).
// RUN: tessel run --device cpu %s --entry late --detect-races 2>&1 | FileCheck %s --check-prefix=LATE
// RUN: tessel run --device cpu %s --entry late --detect-races --dma-mode on_wait 2>&1 | FileCheck %s --check-prefix=LATE
// RUN: tessel run --device cpu %s --entry lifo --detect-races 2>&1 | FileCheck %s --check-prefix=LIFO-EAGER
// RUN: tessel run --device cpu %s --entry lifo --detect-races --dma-mode on_wait 2>&1 | FileCheck %s --check-prefix=LIFO-ON-WAIT
// RUN: tessel run --device cpu %s --entry waited --detect-races 2>&1 | FileCheck %s --check-prefix=WAITED
// RUN: tessel run --device cpu %s --entry waited --detect-races --dma-mode on_wait 2>&1 | FileCheck %s --check-prefix=WAITED
// RUN: tessel run --device cpu %s --entry strided --detect-races --dma-mode on_wait 2>&1 | FileCheck %s --check-prefix=STRIDED
// RUN: tessel run --device cpu %s --entry late --detect-races --interpret 2>&1 | FileCheck %s --check-prefix=USAGE; test ${PIPESTATUS[0]} -eq 2
// LATE: tessel: race detected: the store to memref<4xf32> at {{.*}}races.mlir:[[# @LINE + 24]]:3 writes bytes that the DMA started at {{.*}}races.mlir:[[# @LINE + 23]]:3 reads, before a wait on that DMA's semaphore saw it complete
// LIFO-EAGER: tessel: no race detected
// LIFO-EAGER: arg0: memref<2x4xf32>
// LIFO-EAGER-NEXT: {{\[\[}}1. 1. 1. 1.]
// LIFO-EAGER-NEXT: [2. 2. 2. 2.]]
// LIFO-ON-WAIT: tessel: race detected: the load from memref<2x4xf32> at {{.*}}races.mlir:[[# @LINE + 46]]:11 reads bytes that the DMA started at {{.*}}races.mlir:[[# @LINE + 42]]:3 writes
// LIFO-ON-WAIT: arg0: memref<2x4xf32>
// LIFO-ON-WAIT-NEXT: {{\[\[}}0. 0. 0. 0.]
// LIFO-ON-WAIT-NEXT: [2. 2. 2. 2.]]
// WAITED: tessel: no race detected
// WAITED: [7. 7. 7. 7.]
// STRIDED: tessel: no race detected
// STRIDED: arg0: memref<2x8xf32>
// STRIDED-NEXT: {{\[\[}}1. 1. 1. 1. 5. 5. 5. 5.]
// STRIDED-NEXT: [1. 1. 1. 1. 5. 5. 5. 5.]]
// USAGE: --detect-races instruments compiled code; the interpreter (--interpret) does not detect races

func.func @late_kernel(%o: memref<4xf32>, %src: memref<4xf32>, %sem: memref<i32>) {
  %one = arith.constant 1.0 : f32
  %two = arith.constant 2.0 : f32
  %ones = tensor.splat %one : tensor<4xf32>
  %twos = tensor.splat %two : tensor<4xf32>
  block.store %ones, %src : tensor<4xf32>, memref<4xf32>
  block.dma_start %src, %o, %sem : memref<4xf32>, memref<4xf32>, memref<i32>
  block.store %twos, %src : tensor<4xf32>, memref<4xf32>
  %bytes = arith.constant 16 : i32
  block.semaphore_wait %sem, %bytes : memref<i32>
  return
}
func.func @late(%o: memref<4xf32>) {
  grid.call @late_kernel grid [] ins() outs(%o : memref<4xf32>) scratch(memref<4xf32>, semaphore memref<i32>)
      in_specs [] out_specs [#grid.block<full>]
  return
}

func.func @lifo_kernel(%o: memref<2x4xf32>, %src: memref<2x4xf32>, %buf: memref<2x4xf32>, %sem: memref<i32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1.0 : f32
  %two = arith.constant 2.0 : f32
  %zero = arith.constant 0.0 : f32
  %zeros = tensor.splat %zero : tensor<2x4xf32>
  %ones = tensor.splat %one : tensor<1x4xf32>
  %twos = tensor.splat %two : tensor<1x4xf32>
  block.store %zeros, %buf : tensor<2x4xf32>, memref<2x4xf32>
  block.store %ones, %src[%c0, %c0] : tensor<1x4xf32>, memref<2x4xf32>
  block.store %twos, %src[%c1, %c0] : tensor<1x4xf32>, memref<2x4xf32>
  block.dma_start %src[%c0, %c0] [1, 4], %buf[%c0, %c0] [1, 4], %sem : memref<2x4xf32>, memref<2x4xf32>, memref<i32>
  block.dma_start %src[%c1, %c0] [1, 4], %buf[%c1, %c0] [1, 4], %sem : memref<2x4xf32>, memref<2x4xf32>, memref<i32>
  %bytes = arith.constant 16 : i32
  block.semaphore_wait %sem, %bytes : memref<i32>
  %both = block.load %buf : memref<2x4xf32> -> tensor<2x4xf32>
  block.semaphore_wait %sem, %bytes : memref<i32>
  block.store %both, %o : tensor<2x4xf32>, memref<2x4xf32>
  return
}
func.func @lifo(%o: memref<2x4xf32>) {
  grid.call @lifo_kernel grid [] ins() outs(%o : memref<2x4xf32>)
      scratch(memref<2x4xf32>, memref<2x4xf32>, semaphore memref<i32>) in_specs [] out_specs [#grid.block<full>]
  return
}

func.func @waited_kernel(%o: memref<4xf32>, %src: memref<4xf32>, %buf: memref<4xf32>, %sem: memref<i32>) {
  %seven = arith.constant 7.0 : f32
  %sevens = tensor.splat %seven : tensor<4xf32>
  block.store %sevens, %src : tensor<4xf32>, memref<4xf32>
  block.dma_start %src, %buf, %sem : memref<4xf32>, memref<4xf32>, memref<i32>
  %bytes = arith.constant 16 : i32
  block.semaphore_wait %sem, %bytes : memref<i32>
  %copied = block.load %buf : memref<4xf32> -> tensor<4xf32>
  block.store %copied, %o : tensor<4xf32>, memref<4xf32>
  return
}
func.func @waited(%o: memref<4xf32>) {
  grid.call @waited_kernel grid [] ins() outs(%o : memref<4xf32>)
      scratch(memref<4xf32>, memref<4xf32>, semaphore memref<i32>) in_specs [] out_specs [#grid.block<full>]
  return
}

func.func @strided_kernel(%o: memref<2x8xf32>, %src: memref<2x4xf32>, %buf: memref<2x8xf32>, %sem: memref<i32>) {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %one = arith.constant 1.0 : f32
  %five = arith.constant 5.0 : f32
  %ones = tensor.splat %one : tensor<2x4xf32>
  %fives = tensor.splat %five : tensor<2x4xf32>
  block.store %ones, %src : tensor<2x4xf32>, memref<2x4xf32>
  block.store %fives, %buf[%c0, %c4] : tensor<2x4xf32>, memref<2x8xf32>
  block.dma_start %src, %buf[%c0, %c0] [2, 4], %sem : memref<2x4xf32>, memref<2x8xf32>, memref<i32>
  %right = block.load %buf[%c0, %c4] [2, 4] : memref<2x8xf32> -> tensor<2x4xf32>
  block.store %right, %o[%c0, %c4] : tensor<2x4xf32>, memref<2x8xf32>
  %bytes = arith.constant 32 : i32
  block.semaphore_wait %sem, %bytes : memref<i32>
  %left = block.load %buf[%c0, %c0] [2, 4] : memref<2x8xf32> -> tensor<2x4xf32>
  block.store %left, %o[%c0, %c0] : tensor<2x4xf32>, memref<2x8xf32>
  return
}
func.func @strided(%o: memref<2x8xf32>) {
  grid.call @strided_kernel grid [] ins() outs(%o : memref<2x8xf32>)
      scratch(memref<2x4xf32>, memref<2x8xf32>, semaphore memref<i32>) in_specs [] out_specs [#grid.block<full>]
  return
}
