// Pallas' last-k epilogue on a K grid axis (`k == last ? f(dot) : dot`),
// as CPU code of 512-bit vectors, where tessel-merge-k-steps merges the k
// steps on tensors and runs the epilogue once after all of k: a bias +
// ReLU reading a bias block (merged), and an epilogue that also reads the
// accumulator block loaded at the last step (the sum of the steps before:
// not merged, since merged it would read the fill). Both must match the
// interpreter bit for bit.
// The last two read the accumulator in the epilogue and start the dot
// from a value computed from it (`acc + 1`; an 8-bit dot's VNNI form
// starts from `acc - 128 * colsum(B)`): bufferization computed that start
// in the output block for the else branch's store, and the then branch
// then read it as `acc` (the results were off by exactly the adjustment,
// on every path; tessel-share-ref-tensors).
// RUN: tessel run %s --entry bias_relu --arg 0=random:1 --arg 1=random:2 --arg 2=random:3 --check | FileCheck %s
// RUN: tessel run %s --entry reads_accumulator --arg 0=random:4 --arg 1=random:5 --check | FileCheck %s
// RUN: tessel run %s --entry adjusted_start --arg 0=random:6 --arg 1=random:7 --check | FileCheck %s
// RUN: tessel run %s --entry adjusted_start --device rocm-emulated --arg 0=random:6 --arg 1=random:7 --check | FileCheck %s
// RUN: tessel run %s --entry int8_reads_accumulator --arg 0=random:8 --arg 1=random:9 --check | FileCheck %s
// RUN: tessel run %s --entry int8_reads_accumulator --cpu x86-64-v3 --arg 0=random:8 --arg 1=random:9 --check | FileCheck %s

// CHECK: check: compiled code matches the interpreter

module attributes {tessel.vector_bits = 512 : i64} {
func.func @bias_relu_kernel(%x: memref<32x64xf32>, %y: memref<64x64xf32>, %bias: memref<1x64xf32>, %z: memref<32x64xf32>) {
  %k = grid.program_id 2
  %c0 = arith.constant 0 : index
  %first = arith.cmpi eq, %k, %c0 : index
  scf.if %first {
    %zeros = arith.constant dense<0.0> : tensor<32x64xf32>
    block.store %zeros, %z : tensor<32x64xf32>, memref<32x64xf32>
  }
  %a = block.load %x : memref<32x64xf32> -> tensor<32x64xf32>
  %b = block.load %y : memref<64x64xf32> -> tensor<64x64xf32>
  %acc = block.load %z : memref<32x64xf32> -> tensor<32x64xf32>
  %c = block.dot %a, %b acc %acc : tensor<32x64xf32>, tensor<64x64xf32>, tensor<32x64xf32> -> tensor<32x64xf32>
  %bv = block.load %bias : memref<1x64xf32> -> tensor<1x64xf32>
  %bb = block.broadcast %bv dims [] : tensor<1x64xf32> -> tensor<32x64xf32>
  %n = grid.num_programs 2
  %c1 = arith.constant 1 : index
  %last_k = arith.subi %n, %c1 : index
  %last = arith.cmpi eq, %k, %last_k : index
  %out = scf.if %last -> (tensor<32x64xf32>) {
    %s = arith.addf %c, %bb : tensor<32x64xf32>
    %zero = arith.constant dense<0.0> : tensor<32x64xf32>
    %r = arith.maximumf %s, %zero : tensor<32x64xf32>
    scf.yield %r : tensor<32x64xf32>
  } else {
    scf.yield %c : tensor<32x64xf32>
  }
  block.store %out, %z : tensor<32x64xf32>, memref<32x64xf32>
  return
}

func.func @bias_relu(%x: memref<64x256xf32>, %y: memref<256x128xf32>, %bias: memref<1x128xf32>, %z: memref<64x128xf32>) {
  grid.call @bias_relu_kernel grid [2, 2, 4]
      ins(%x, %y, %bias : memref<64x256xf32>, memref<256x128xf32>, memref<1x128xf32>) outs(%z : memref<64x128xf32>)
      in_specs [#grid.block<[32, 64], (i, j, k) -> (i, k)>, #grid.block<[64, 64], (i, j, k) -> (k, j)>, #grid.block<[1, 64], (i, j, k) -> (0, j)>]
      out_specs [#grid.block<[32, 64], (i, j, k) -> (i, j)>]
  return
}

func.func @reads_accumulator_kernel(%x: memref<16x16xf32>, %y: memref<16x32xf32>, %z: memref<16x32xf32>) {
  %k = grid.program_id 2
  %c0 = arith.constant 0 : index
  %first = arith.cmpi eq, %k, %c0 : index
  scf.if %first {
    %zeros = arith.constant dense<0.0> : tensor<16x32xf32>
    block.store %zeros, %z : tensor<16x32xf32>, memref<16x32xf32>
  }
  %a = block.load %x : memref<16x16xf32> -> tensor<16x16xf32>
  %b = block.load %y : memref<16x32xf32> -> tensor<16x32xf32>
  %acc = block.load %z : memref<16x32xf32> -> tensor<16x32xf32>
  %c = block.dot %a, %b acc %acc : tensor<16x16xf32>, tensor<16x32xf32>, tensor<16x32xf32> -> tensor<16x32xf32>
  %n = grid.num_programs 2
  %c1 = arith.constant 1 : index
  %last_k = arith.subi %n, %c1 : index
  %last = arith.cmpi eq, %k, %last_k : index
  %out = scf.if %last -> (tensor<16x32xf32>) {
    %s = arith.addf %c, %acc : tensor<16x32xf32>
    scf.yield %s : tensor<16x32xf32>
  } else {
    scf.yield %c : tensor<16x32xf32>
  }
  block.store %out, %z : tensor<16x32xf32>, memref<16x32xf32>
  return
}

func.func @reads_accumulator(%x: memref<32x64xf32>, %y: memref<64x64xf32>, %z: memref<32x64xf32>) {
  grid.call @reads_accumulator_kernel grid [2, 2, 4]
      ins(%x, %y : memref<32x64xf32>, memref<64x64xf32>) outs(%z : memref<32x64xf32>)
      in_specs [#grid.block<[16, 16], (i, j, k) -> (i, k)>, #grid.block<[16, 32], (i, j, k) -> (k, j)>]
      out_specs [#grid.block<[16, 32], (i, j, k) -> (i, j)>]
  return
}

func.func @adjusted_start_kernel(%x: memref<32x32xf32>, %y: memref<32x32xf32>, %o: memref<32x32xf32>) {
  %k = grid.program_id 2
  %c0 = arith.constant 0 : index
  %first = arith.cmpi eq, %k, %c0 : index
  scf.if %first {
    %z = arith.constant dense<0.0> : tensor<32x32xf32>
    block.store %z, %o : tensor<32x32xf32>, memref<32x32xf32>
  }
  %a = block.load %x : memref<32x32xf32> -> tensor<32x32xf32>
  %b = block.load %y : memref<32x32xf32> -> tensor<32x32xf32>
  %acc = block.load %o : memref<32x32xf32> -> tensor<32x32xf32>
  %one = arith.constant dense<1.0> : tensor<32x32xf32>
  %start = arith.addf %acc, %one : tensor<32x32xf32>
  %c = block.dot %a, %b acc %start : tensor<32x32xf32>, tensor<32x32xf32>, tensor<32x32xf32> -> tensor<32x32xf32>
  %n = grid.num_programs 2
  %c1 = arith.constant 1 : index
  %lastk = arith.subi %n, %c1 : index
  %last = arith.cmpi eq, %k, %lastk : index
  %out = scf.if %last -> (tensor<32x32xf32>) {
    %d = arith.subf %c, %acc : tensor<32x32xf32>
    scf.yield %d : tensor<32x32xf32>
  } else {
    scf.yield %c : tensor<32x32xf32>
  }
  block.store %out, %o : tensor<32x32xf32>, memref<32x32xf32>
  return
}

func.func @adjusted_start(%x: memref<64x96xf32>, %y: memref<96x64xf32>, %o: memref<64x64xf32>) {
  grid.call @adjusted_start_kernel grid [2, 2, 3]
      ins(%x, %y : memref<64x96xf32>, memref<96x64xf32>) outs(%o : memref<64x64xf32>)
      in_specs [#grid.block<[32, 32], (i, j, k) -> (i, k)>, #grid.block<[32, 32], (i, j, k) -> (k, j)>]
      out_specs [#grid.block<[32, 32], (i, j, k) -> (i, j)>]
  return
}

func.func @int8_reads_accumulator_kernel(%x: memref<64x64xi8>, %y: memref<64x64xi8>, %o: memref<64x64xi32>) {
  %k = grid.program_id 2
  %c0 = arith.constant 0 : index
  %first = arith.cmpi eq, %k, %c0 : index
  scf.if %first {
    %z = arith.constant dense<0> : tensor<64x64xi32>
    block.store %z, %o : tensor<64x64xi32>, memref<64x64xi32>
  }
  %a = block.load %x : memref<64x64xi8> -> tensor<64x64xi8>
  %b = block.load %y : memref<64x64xi8> -> tensor<64x64xi8>
  %acc = block.load %o : memref<64x64xi32> -> tensor<64x64xi32>
  %c = block.dot %a, %b acc %acc : tensor<64x64xi8>, tensor<64x64xi8>, tensor<64x64xi32> -> tensor<64x64xi32>
  %n = grid.num_programs 2
  %c1 = arith.constant 1 : index
  %lastk = arith.subi %n, %c1 : index
  %last = arith.cmpi eq, %k, %lastk : index
  %out = scf.if %last -> (tensor<64x64xi32>) {
    %d = arith.subi %c, %acc : tensor<64x64xi32>
    scf.yield %d : tensor<64x64xi32>
  } else {
    scf.yield %c : tensor<64x64xi32>
  }
  block.store %out, %o : tensor<64x64xi32>, memref<64x64xi32>
  return
}

func.func @int8_reads_accumulator(%x: memref<64x128xi8>, %y: memref<128x64xi8>, %o: memref<64x64xi32>) {
  grid.call @int8_reads_accumulator_kernel grid [1, 1, 2]
      ins(%x, %y : memref<64x128xi8>, memref<128x64xi8>) outs(%o : memref<64x64xi32>)
      in_specs [#grid.block<[64, 64], (i, j, k) -> (i, k)>, #grid.block<[64, 64], (i, j, k) -> (k, j)>]
      out_specs [#grid.block<[64, 64], (i, j, k) -> (i, j)>]
  return
}
}
