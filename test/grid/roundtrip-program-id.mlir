// grid.program_id / grid.num_programs print back and are Pure: CSE merges
// duplicates.
// RUN: tessel-opt %s | FileCheck %s
// RUN: tessel-opt %s --cse | FileCheck %s --check-prefix=CSE
// RUN: tessel-opt %s > %t.1 && tessel-opt %t.1 > %t.2 && diff %t.1 %t.2

// CHECK-LABEL: func.func @ids
// CHECK: grid.program_id 0
// CHECK: grid.program_id 0
// CHECK: grid.num_programs 1
// CSE-LABEL: func.func @ids
// CSE: %[[P:.*]] = grid.program_id 0
// CSE-NOT: grid.program_id
// CSE: %[[N:.*]] = grid.num_programs 1
// CSE: arith.addi %[[P]], %[[P]]
func.func @ids(%o: memref<2x3xindex>) {
  %p = grid.program_id 0
  %q = grid.program_id 0
  %n = grid.num_programs 1
  %s = arith.addi %p, %q : index
  %t = arith.addi %s, %n : index
  %b = tensor.splat %t : tensor<2x3xindex>
  block.store %b, %o : tensor<2x3xindex>, memref<2x3xindex>
  return
}

func.func @launch(%o: memref<8x6xindex>) {
  grid.call @ids grid [4, 2] ins() outs(%o : memref<8x6xindex>)
      in_specs [] out_specs [#grid.block<[2, 3], (i, j) -> (i, j)>]
  return
}
