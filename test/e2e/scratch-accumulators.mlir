// The accumulator idiom of JAX's TPU matmul (`ops/tpu/matmul.py`): a
// scratch block zeroed at the first k step, `acc += a @ b` at every step,
// copied to the output block at each. Compiling it once crashed
// tessel-grid-verify-specs, which read the scratch types through a
// reference into a dropped context handle (the crash depended on stack
// reuse; `support::handles` now rejects the pattern in any source).
// The products sum in an order that depends on the register tile and the
// vector width: digits are kept out of the snapshot.
// SNAPSHOT-FILTER: \s*-?[0-9]+\.[0-9]+(e[-+]?[0-9]+)?\s* =>  <float>
// RUN: tessel run %s --entry matmul --arg 0=random:1 --arg 1=random:2 --check | FileCheck %s
// CHECK: arg2: memref<64x64xf32>
// CHECK: check: compiled code matches the interpreter

func.func @matmul_kernel(%x: memref<32x32xf32>, %y: memref<32x32xf32>, %z: memref<32x32xf32>, %acc: memref<32x32xf32>) {
  %k = grid.program_id 2
  %c0 = arith.constant 0 : index
  %first = arith.cmpi eq, %k, %c0 : index
  scf.if %first {
    %zero = arith.constant 0.0 : f32
    %zeros = tensor.splat %zero : tensor<32x32xf32>
    block.store %zeros, %acc : tensor<32x32xf32>, memref<32x32xf32>
  }
  %sum = block.load %acc : memref<32x32xf32> -> tensor<32x32xf32>
  %a = block.load %x : memref<32x32xf32> -> tensor<32x32xf32>
  %b = block.load %y : memref<32x32xf32> -> tensor<32x32xf32>
  %product = block.dot %a, %b : tensor<32x32xf32>, tensor<32x32xf32> -> tensor<32x32xf32>
  %next = arith.addf %sum, %product : tensor<32x32xf32>
  block.store %next, %acc : tensor<32x32xf32>, memref<32x32xf32>
  %out = block.load %acc : memref<32x32xf32> -> tensor<32x32xf32>
  block.store %out, %z : tensor<32x32xf32>, memref<32x32xf32>
  return
}

func.func @matmul(%x: memref<64x64xf32>, %y: memref<64x64xf32>, %z: memref<64x64xf32>) {
  grid.call @matmul_kernel grid [2, 2, 2]
      ins(%x, %y : memref<64x64xf32>, memref<64x64xf32>)
      outs(%z : memref<64x64xf32>) scratch(memref<32x32xf32>)
      in_specs [#grid.block<[32, 32], (i, j, k) -> (i, k)>, #grid.block<[32, 32], (i, j, k) -> (k, j)>]
      out_specs [#grid.block<[32, 32], (i, j, k) -> (i, j)>]
  return
}
