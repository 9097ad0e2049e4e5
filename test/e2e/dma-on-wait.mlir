// When DMAs copy (`--dma-mode`, JAX's InterpretParams.dma_execution_mode),
// compiled and interpreted, on kernels whose results tell the modes apart
// (each racy on a TPU): eager copies when a DMA starts; on_wait queues the
// copy on its semaphore and a wait runs the queued copies, the last
// started first, until the count suffices (JAX's interpreter's default).
// - late: the source changes after the start, before the wait: on_wait
//   copies the new data.
// - lifo: two copies of one size on one semaphore, then a wait for one
//   copy's bytes: on_wait has run only the second; the next wait runs the
//   first.
// - unwaited: a DMA never waited for never copies under on_wait.
// Race-free kernels give the same results in both modes (semaphores.mlir,
// core-mesh.mlir and python/tests/test_semaphores.py run them in both).
// RUN: tessel run --device cpu %s --entry late | FileCheck %s --check-prefix=LATE-EAGER
// RUN: tessel run --device cpu %s --entry late --interpret | FileCheck %s --check-prefix=LATE-EAGER
// RUN: tessel run --device cpu %s --entry late --dma-mode on_wait | FileCheck %s --check-prefix=LATE-ON-WAIT
// RUN: tessel run --device cpu %s --entry late --dma-mode on_wait --interpret | FileCheck %s --check-prefix=LATE-ON-WAIT
// RUN: tessel run --device cpu %s --entry lifo | FileCheck %s --check-prefix=LIFO-EAGER
// RUN: tessel run --device cpu %s --entry lifo --interpret | FileCheck %s --check-prefix=LIFO-EAGER
// RUN: tessel run --device cpu %s --entry lifo --dma-mode on_wait | FileCheck %s --check-prefix=LIFO-ON-WAIT
// RUN: tessel run --device cpu %s --entry lifo --dma-mode on_wait --interpret | FileCheck %s --check-prefix=LIFO-ON-WAIT
// RUN: tessel run --device cpu %s --entry unwaited | FileCheck %s --check-prefix=UNWAITED-EAGER
// RUN: tessel run --device cpu %s --entry unwaited --interpret | FileCheck %s --check-prefix=UNWAITED-EAGER
// RUN: tessel run --device cpu %s --entry unwaited --dma-mode on_wait | FileCheck %s --check-prefix=UNWAITED-ON-WAIT
// RUN: tessel run --device cpu %s --entry unwaited --dma-mode on_wait --interpret | FileCheck %s --check-prefix=UNWAITED-ON-WAIT
// LATE-EAGER: [1. 1. 1. 1.]
// LATE-ON-WAIT: [2. 2. 2. 2.]
// LIFO-EAGER: {{\[\[}}1. 1. 1. 1.]
// LIFO-EAGER-NEXT: [2. 2. 2. 2.]
// LIFO-EAGER-NEXT: [1. 1. 1. 1.]]
// LIFO-ON-WAIT: {{\[\[}}0. 0. 0. 0.]
// LIFO-ON-WAIT-NEXT: [2. 2. 2. 2.]
// LIFO-ON-WAIT-NEXT: [1. 1. 1. 1.]]
// UNWAITED-EAGER: [3. 3. 3. 3.]
// UNWAITED-ON-WAIT: [0. 0. 0. 0.]

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

func.func @lifo_kernel(%o: memref<3x4xf32>, %src: memref<2x4xf32>, %buf: memref<2x4xf32>, %sem: memref<i32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %two = arith.constant 2.0 : f32
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
  %first = block.load %buf : memref<2x4xf32> -> tensor<2x4xf32>
  block.store %first, %o[%c0, %c0] : tensor<2x4xf32>, memref<3x4xf32>
  block.semaphore_wait %sem, %bytes : memref<i32>
  %second = block.load %buf[%c0, %c0] [1, 4] : memref<2x4xf32> -> tensor<1x4xf32>
  block.store %second, %o[%c2, %c0] : tensor<1x4xf32>, memref<3x4xf32>
  return
}
func.func @lifo(%o: memref<3x4xf32>) {
  grid.call @lifo_kernel grid [] ins() outs(%o : memref<3x4xf32>)
      scratch(memref<2x4xf32>, memref<2x4xf32>, semaphore memref<i32>)
      in_specs [] out_specs [#grid.block<full>]
  return
}

func.func @unwaited_kernel(%o: memref<4xf32>, %src: memref<4xf32>, %sem: memref<i32>) {
  %three = arith.constant 3.0 : f32
  %threes = tensor.splat %three : tensor<4xf32>
  block.store %threes, %src : tensor<4xf32>, memref<4xf32>
  block.dma_start %src, %o, %sem : memref<4xf32>, memref<4xf32>, memref<i32>
  return
}
func.func @unwaited(%o: memref<4xf32>) {
  grid.call @unwaited_kernel grid [] ins() outs(%o : memref<4xf32>) scratch(memref<4xf32>, semaphore memref<i32>)
      in_specs [] out_specs [#grid.block<full>]
  return
}
