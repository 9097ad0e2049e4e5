// A ref rewritten from its own block: its transpose stored back to it.
// eliminate-empty-tensors builds the transpose in the ref itself, through
// a new `restrict` tensor of it that one-shot analysis took for other
// memory, so the transpose read elements it had already overwritten
// (compiled code differed from element 8 on); tessel-share-ref-tensors
// makes it the block's tensor, and the analysis gives the transpose a
// buffer of its own.
// RUN: tessel run %s --entry transpose_in_place --arg 0=random:1 --check | FileCheck %s
// RUN: tessel run %s --entry transpose_in_place --device rocm-emulated --arg 0=random:1 --check | FileCheck %s
// CHECK: check: compiled code matches the interpreter

func.func @transpose_in_place_kernel(%x: memref<8x8xf32>, %o: memref<8x8xf32>) {
  %xv = block.load %x : memref<8x8xf32> -> tensor<8x8xf32>
  block.store %xv, %o : tensor<8x8xf32>, memref<8x8xf32>
  %acc = block.load %o : memref<8x8xf32> -> tensor<8x8xf32>
  %init = tensor.empty() : tensor<8x8xf32>
  %t = linalg.transpose ins(%acc : tensor<8x8xf32>) outs(%init : tensor<8x8xf32>) permutation = [1, 0]
  block.store %t, %o : tensor<8x8xf32>, memref<8x8xf32>
  return
}

func.func @transpose_in_place(%x: memref<8x8xf32>, %o: memref<8x8xf32>) {
  grid.call @transpose_in_place_kernel grid [] ins(%x : memref<8x8xf32>) outs(%o : memref<8x8xf32>)
      in_specs [#grid.block<full>] out_specs [#grid.block<full>]
  return
}
