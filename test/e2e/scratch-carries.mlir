// Scratch persists from program to program along ordered axes, as a TPU
// core's VMEM does: each program adds its block to a running sum kept in
// scratch and writes the sum so far (a prefix sum over the blocks). The
// grid's last axis has one program, which Tessel runs as a parallel axis;
// the scratch was allocated inside it, fresh at every step of the ordered
// loop around it, and the sums came out as single blocks (the shape of
// JAX's paged attention: grid (cores, batch, heads) with one head).
// RUN: tessel run %s --entry carried --arg 0=random:3 --check | FileCheck %s
// CHECK: check: compiled code matches the interpreter
func.func @carried_kernel(%x: memref<8xf32>, %o: memref<8xf32>, %carry: memref<8xf32>) {
  %b = grid.program_id 1
  %c0 = arith.constant 0 : index
  %first = arith.cmpi eq, %b, %c0 : index
  scf.if %first {
    %zeros = arith.constant dense<0.0> : tensor<8xf32>
    block.store %zeros, %carry : tensor<8xf32>, memref<8xf32>
  }
  %sum = block.load %carry : memref<8xf32> -> tensor<8xf32>
  %block = block.load %x : memref<8xf32> -> tensor<8xf32>
  %next = arith.addf %sum, %block : tensor<8xf32>
  block.store %next, %carry : tensor<8xf32>, memref<8xf32>
  block.store %next, %o : tensor<8xf32>, memref<8xf32>
  return
}

func.func @carried(%x: memref<48xf32>, %o: memref<48xf32>) {
  grid.call @carried_kernel grid [1, 6, 1]
      ins(%x : memref<48xf32>) outs(%o : memref<48xf32>) scratch(memref<8xf32>)
      in_specs [#grid.block<[8], (c, b, h) -> (b)>]
      out_specs [#grid.block<[8], (c, b, h) -> (b)>]
      semantics [parallel, arbitrary, arbitrary]
  return
}
