// An input that is also the call's output (Pallas' input_output_aliases):
// a TPU copies the program's input block to VMEM before the kernel runs,
// so reading the input after writing the output still gives the block as
// it was (the interpreter copies every block in too). The compiled kernel
// read the array itself and saw its own write: 4x instead of 3x. Whole
// blocks (views) and partial blocks (staged) are taken from a snapshot at
// the program's start. A `full` spec is the array itself (pl.ANY: HBM,
// which input and output share): there the second read sees the write.
// RUN: tessel run %s --entry whole --arg 0=random:1 --check | FileCheck %s
// RUN: tessel run %s --entry partial --arg 0=random:2 --check | FileCheck %s
// RUN: tessel run %s --entry full --arg 0=random:3 --check | FileCheck %s
// RUN: tessel run %s --entry whole --device rocm-emulated --arg 0=random:1 --check | FileCheck %s
// RUN: tessel run %s --entry partial --device rocm-emulated --arg 0=random:2 --check | FileCheck %s
// CHECK: check: compiled code matches the interpreter

func.func @kernel(%x: memref<8x128xf32>, %o: memref<8x128xf32>) {
  %v = block.load %x : memref<8x128xf32> -> tensor<8x128xf32>
  %two = arith.constant dense<2.0> : tensor<8x128xf32>
  %d = arith.mulf %v, %two : tensor<8x128xf32>
  block.store %d, %o : tensor<8x128xf32>, memref<8x128xf32>
  %again = block.load %x : memref<8x128xf32> -> tensor<8x128xf32>
  %s = arith.addf %again, %d : tensor<8x128xf32>
  block.store %s, %o : tensor<8x128xf32>, memref<8x128xf32>
  return
}

func.func @whole(%a: memref<32x128xf32>) {
  grid.call @kernel grid [4] ins(%a : memref<32x128xf32>) outs(%a : memref<32x128xf32>)
      in_specs [#grid.block<[8, 128], (i) -> (i, 0)>] out_specs [#grid.block<[8, 128], (i) -> (i, 0)>]
  return
}

func.func @partial(%a: memref<30x128xf32>) {
  grid.call @kernel grid [4] ins(%a : memref<30x128xf32>) outs(%a : memref<30x128xf32>)
      in_specs [#grid.block<[8, 128], (i) -> (i, 0)>] out_specs [#grid.block<[8, 128], (i) -> (i, 0)>]
  return
}

func.func @full(%a: memref<8x128xf32>) {
  grid.call @kernel grid [] ins(%a : memref<8x128xf32>) outs(%a : memref<8x128xf32>)
      in_specs [#grid.block<full>] out_specs [#grid.block<full>]
  return
}
