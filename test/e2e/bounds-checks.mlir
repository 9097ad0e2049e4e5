// RUN: not tessel run %s --entry shifted --device cpu --bounds-checks 2>&1 | FileCheck %s --check-prefix=SHIFTED
// RUN: tessel run %s --entry main --arg 0=random:1 --bounds-checks --check | FileCheck %s --check-prefix=PASS
// RUN: tessel run examples/matmul.mlir --entry matmul --arg 0=random:1 --arg 1=random:2 --bounds-checks --check | FileCheck %s --check-prefix=PASS

// `tessel run --bounds-checks` checks every load and store of the CPU code
// against the memory it addresses: reading x[10] of a 10-element array
// fails the run, naming the access, instead of reading past the end.
// SHIFTED: compiled code accessed memory outside its buffer (a compiler bug; the access was skipped): memref.load of memref<10xf32> at loc("{{.*}}bounds-checks.mlir":[[@LINE+7]]:{{[0-9]+}})
func.func @shifted(%x: memref<10xf32>, %o: memref<10xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c10 = arith.constant 10 : index
  scf.for %i = %c0 to %c10 step %c1 {
    %next = arith.addi %i, %c1 : index
    %v = memref.load %x[%next] : memref<10xf32>
    memref.store %v, %o[%i] : memref<10xf32>
  }
  return
}

// Compiled kernels stay inside their arrays, partial blocks (7x10 in 3x4
// blocks, reduced along the rows) and the matmul's tiles included.
// PASS: check: compiled code matches the interpreter
func.func @kernel(%x: memref<3x4xf32>, %o: memref<3x4xf32>) {
  %v = block.load %x : memref<3x4xf32> -> tensor<3x4xf32>
  %m = block.reduce max %v dims [1] : tensor<3x4xf32> -> tensor<3xf32>
  %b = block.broadcast %m dims [1] : tensor<3xf32> -> tensor<3x4xf32>
  %s = arith.subf %v, %b : tensor<3x4xf32>
  block.store %s, %o : tensor<3x4xf32>, memref<3x4xf32>
  return
}

func.func @main(%x: memref<7x10xf32>, %o: memref<7x10xf32>) {
  grid.call @kernel grid [3, 3] ins(%x : memref<7x10xf32>) outs(%o : memref<7x10xf32>)
      in_specs [#grid.block<[3, 4], (i, j) -> (i, j)>]
      out_specs [#grid.block<[3, 4], (i, j) -> (i, j)>]
  return
}
