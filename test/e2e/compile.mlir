// tessel compile --target cpu: every artifact, and a shared library called
// from C through its documented C ABI.
// RUN: tessel compile %s --target cpu --emit mlir -o %t.mlir && FileCheck %s --check-prefix=MLIR --input-file=%t.mlir
// RUN: tessel compile %s --target cpu --emit llvm -o %t.ll && FileCheck %s --check-prefix=LLVM --input-file=%t.ll
// RUN: tessel compile %s --target cpu --emit asm -o %t.s && FileCheck %s --check-prefix=ASM --input-file=%t.s
// RUN: tessel compile %s --target cpu --emit obj -o %t.o && llvm-readelf-22 --symbols %t.o | FileCheck %s --check-prefix=OBJ
// RUN: tessel compile %s --target cpu --emit so -o %t.so && clang-22 test/e2e/Inputs/show_program_ids_caller.c %t.so -o %t.caller && %t.caller | FileCheck %s --check-prefix=CALLER
// RUN: tessel compile %s --target gpu -o %t.none 2>&1 | FileCheck %s --check-prefix=TARGET; test ${PIPESTATUS[0]} -eq 2
// Symbols' offsets and sizes depend on the CPU the code is generated for.
// SNAPSHOT-FILTER: (?m)^(\s+\d+: )[0-9a-f]{16}\s+\d+ => ${1}<value> <size>

// MLIR: omp.parallel
// MLIR: llvm.func @_mlir_ciface_show_program_ids(
// LLVM: define void @_mlir_ciface_show_program_ids(ptr
// LLVM: call void {{.*}}@__kmpc_fork_call
// ASM: _mlir_ciface_show_program_ids:
// OBJ: GLOBAL DEFAULT {{.*}} _mlir_ciface_show_program_ids
// CALLER: 0 0 0 1 1 1
// CALLER-NEXT: 0 0 0 1 1 1
// CALLER-NEXT: 10 10 10 11 11 11
// CALLER-NEXT: 10 10 10 11 11 11
// CALLER-NEXT: 20 20 20 21 21 21
// CALLER-NEXT: 20 20 20 21 21 21
// CALLER-NEXT: 30 30 30 31 31 31
// CALLER-NEXT: 30 30 30 31 31 31
// TARGET: error: invalid value 'gpu' for '--target <TARGET>'
func.func @program_ids_kernel(%o: memref<2x3xi32>) {
  %i = grid.program_id 0
  %j = grid.program_id 1
  %c10 = arith.constant 10 : index
  %t = arith.muli %i, %c10 : index
  %v = arith.addi %t, %j : index
  %v32 = arith.index_cast %v : index to i32
  %block = tensor.splat %v32 : tensor<2x3xi32>
  block.store %block, %o : tensor<2x3xi32>, memref<2x3xi32>
  return
}
func.func @show_program_ids(%o: memref<8x6xi32>) {
  grid.call @program_ids_kernel grid [4, 2] ins() outs(%o : memref<8x6xi32>)
      in_specs [] out_specs [#grid.block<[2, 3], (i, j) -> (i, j)>]
  return
}
