// Unsigned element types: an entry function declares its arrays `ui8`..
// `ui64`, so `.npy` files of `u1`..`u8` are read and written and values
// print unsigned; kernels compute on the signless refs grid.call gives
// them, with arith's unsigned ops and the umax/umin reductions and atomics.
// On the CPU against the interpreter (--check); the harness reruns each
// `tessel run` on the emulated GPU; the ROCm path compiles for every chip.
// RUN: tessel run %s --entry bytes --arg 0=test/e2e/Inputs/bytes_u8.npy --check | FileCheck %s --check-prefix=BYTES
// RUN: tessel run %s --entry words --arg 0=test/e2e/Inputs/words_u32.npy --check | FileCheck %s --check-prefix=WORDS
// RUN: tessel run %s --entry words --arg 0=test/e2e/Inputs/words_u32.npy --interpret | FileCheck %s --check-prefix=WORDS
// RUN: tessel run %s --entry bytes --arg 0=random:5 --dump %t.out > /dev/null && FileCheck %s --check-prefix=NPY --input-file=%t.out/arg1.npy
// RUN: tessel run %s --entry words --arg 0=test/e2e/Inputs/bytes_u8.npy 2>&1 | FileCheck %s --check-prefix=MISMATCH; test ${PIPESTATUS[0]} -eq 1
// RUN: tessel compile %s --target rocm --chip gfx90a --emit llvm -o %t.gfx90a.ll && FileCheck %s --check-prefix=LLVM --input-file=%t.gfx90a.ll
// RUN: tessel compile %s --target rocm --chip gfx942 --emit hsaco -o %t.gfx942.hsaco
// RUN: tessel compile %s --target rocm --chip gfx1100 --emit hsaco -o %t.gfx1100.hsaco
// NPY: 'descr': '|u1'
// MISMATCH: error: {{.*}}bytes_u8.npy' holds |u1 [8] but the argument is <u4 [2, 4]
// LLVM: atomicrmw umax ptr addrspace(1)

// BYTES:      arg0: memref<8xui8>
// BYTES-NEXT: [  0   1 127 128 200 255  17   3]
// BYTES-NEXT: arg1: memref<8xui8>
// BYTES-NEXT: [  0   0  63  64 100 127   8   1]
// BYTES-NEXT: arg2: memref<8xui32>
// BYTES-NEXT: [  0   1 127 128 200 255  17   3]
// BYTES-NEXT: arg3: memref<8xi1>
// BYTES-NEXT: [False False False  True  True  True False False]
// BYTES-NEXT: arg4: memref<8xf32>
// BYTES-NEXT: [  0.   1. 127. 128. 200. 255.  17.   3.]
// BYTES-NEXT: arg5: memref<1xui8>
// BYTES-NEXT: [255]
// BYTES-NEXT: arg6: memref<1xui8>
// BYTES-NEXT: [0]
// BYTES: check: compiled code matches the interpreter
func.func @bytes_kernel(%x: memref<8xi8>, %half: memref<8xi8>, %wide: memref<8xi32>, %big: memref<8xi1>,
                        %f: memref<8xf32>, %top: memref<1xi8>, %low: memref<1xi8>) {
  %v = block.load %x : memref<8xi8> -> tensor<8xi8>
  %two = arith.constant dense<2> : tensor<8xi8>
  %h = arith.divui %v, %two : tensor<8xi8>
  block.store %h, %half : tensor<8xi8>, memref<8xi8>
  %w = arith.extui %v : tensor<8xi8> to tensor<8xi32>
  block.store %w, %wide : tensor<8xi32>, memref<8xi32>
  %c127 = arith.constant dense<127> : tensor<8xi8>
  %b = arith.cmpi ugt, %v, %c127 : tensor<8xi8>
  block.store %b, %big : tensor<8xi1>, memref<8xi1>
  %fv = arith.uitofp %v : tensor<8xi8> to tensor<8xf32>
  block.store %fv, %f : tensor<8xf32>, memref<8xf32>
  %m = block.reduce umax %v dims [0] : tensor<8xi8> -> tensor<i8>
  %m1 = tensor.expand_shape %m [] output_shape [1] : tensor<i8> into tensor<1xi8>
  block.store %m1, %top : tensor<1xi8>, memref<1xi8>
  %n = block.reduce umin %v dims [0] : tensor<8xi8> -> tensor<i8>
  %n1 = tensor.expand_shape %n [] output_shape [1] : tensor<i8> into tensor<1xi8>
  block.store %n1, %low : tensor<1xi8>, memref<1xi8>
  return
}
func.func @bytes(%x: memref<8xui8>, %half: memref<8xui8>, %wide: memref<8xui32>, %big: memref<8xi1>,
                 %f: memref<8xf32>, %top: memref<1xui8>, %low: memref<1xui8>) {
  grid.call @bytes_kernel grid [] ins(%x : memref<8xui8>)
      outs(%half, %wide, %big, %f, %top, %low : memref<8xui8>, memref<8xui32>, memref<8xi1>, memref<8xf32>, memref<1xui8>, memref<1xui8>)
      in_specs [#grid.block<full>]
      out_specs [#grid.block<full>, #grid.block<full>, #grid.block<full>, #grid.block<full>, #grid.block<full>, #grid.block<full>]
  return
}

// Two programs, one row each: remainders and halves of 32-bit words above
// 2^31, whether a word is below 2^31, and each column's unsigned maximum
// over the rows by atomic umax (old values deterministic up to order, so
// only the final maximum is printed).
// WORDS:      arg0: memref<2x4xui32>
// WORDS-NEXT: {{\[\[}}         0          1 2147483648 4000000000]
// WORDS-NEXT:  [         7 4294967295      65536          9]]
// WORDS-NEXT: arg1: memref<2x4xui32>
// WORDS-NEXT: {{\[\[}}0 1 8 0]
// WORDS-NEXT:  [7 5 6 9]]
// WORDS-NEXT: arg2: memref<2x4xui32>
// WORDS-NEXT: {{\[\[}}         0          0 1073741824 2000000000]
// WORDS-NEXT:  [         3 2147483647      32768          4]]
// WORDS-NEXT: arg3: memref<2x4xi1>
// WORDS-NEXT: {{\[\[}} True  True False False]
// WORDS-NEXT:  [ True False  True  True]]
// WORDS-NEXT: arg4: memref<4xui32>
// WORDS-NEXT: [         7 4294967295 2147483648 4000000000]
func.func @words_kernel(%x: memref<1x4xi32>, %rem: memref<1x4xi32>, %half: memref<1x4xi32>,
                        %small: memref<1x4xi1>, %top: memref<4xi32>) {
  %v = block.load %x : memref<1x4xi32> -> tensor<1x4xi32>
  %ten = arith.constant dense<10> : tensor<1x4xi32>
  %r = arith.remui %v, %ten : tensor<1x4xi32>
  block.store %r, %rem : tensor<1x4xi32>, memref<1x4xi32>
  %one = arith.constant dense<1> : tensor<1x4xi32>
  %h = arith.shrui %v, %one : tensor<1x4xi32>
  block.store %h, %half : tensor<1x4xi32>, memref<1x4xi32>
  %limit = arith.constant dense<-2147483648> : tensor<1x4xi32>
  %s = arith.cmpi ult, %v, %limit : tensor<1x4xi32>
  block.store %s, %small : tensor<1x4xi1>, memref<1x4xi1>
  %row = tensor.collapse_shape %v [[0, 1]] : tensor<1x4xi32> into tensor<4xi32>
  block.atomic_rmw umax %row, %top : tensor<4xi32>, memref<4xi32>
  return
}
func.func @words(%x: memref<2x4xui32>, %rem: memref<2x4xui32>, %half: memref<2x4xui32>,
                 %small: memref<2x4xi1>, %top: memref<4xui32>) {
  grid.call @words_kernel grid [2] ins(%x : memref<2x4xui32>)
      outs(%rem, %half, %small, %top : memref<2x4xui32>, memref<2x4xui32>, memref<2x4xi1>, memref<4xui32>)
      in_specs [#grid.block<[1, 4], (i) -> (i, 0)>]
      out_specs [#grid.block<[1, 4], (i) -> (i, 0)>, #grid.block<[1, 4], (i) -> (i, 0)>,
                 #grid.block<[1, 4], (i) -> (i, 0)>, #grid.block<[4], (i) -> (0)>] semantics [parallel]
  return
}
