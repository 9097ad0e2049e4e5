// Kernels print tensors (block.print of pl.debug_print'ed arrays) as numpy
// prints arrays: integers, floats and booleans, per program, in program
// order, compiled (each element passed to the print functions in
// row-major order, regrouped by the site's types) and interpreted. An
// empty format prints an empty line (its empty strings once crashed the
// JIT's reading of the module's lists).
// RUN: tessel run %s --device cpu --entry main | FileCheck %s
// RUN: tessel run %s --interpret --entry main | FileCheck %s
// CHECK: program 0: ids = {{\[\[}}0 1 2]
// CHECK-NEXT:  [3 4 5]] halves = [0.  0.5 1.  1.5]
// CHECK-NEXT: above one [False False False  True] 0
// CHECK-NEXT: program 1: ids = {{\[\[}}1 2 3]
// CHECK-NEXT:  [4 5 6]] halves = [0.5 1.  1.5 2. ]
// CHECK-NEXT: above one [False False  True  True] 1
// CHECK-EMPTY:
// CHECK-NEXT: done

func.func @kernel(%o: memref<4xf32>) {
  %i = grid.program_id 0
  %id = arith.index_cast %i : index to i32
  %ids0 = arith.constant dense<[[0, 1, 2], [3, 4, 5]]> : tensor<2x3xi32>
  %shift = tensor.splat %id : tensor<2x3xi32>
  %ids = arith.addi %ids0, %shift : tensor<2x3xi32>
  %lane = block.iota dim 0 : tensor<4xi32>
  %shift4 = tensor.splat %id : tensor<4xi32>
  %lanes = arith.addi %lane, %shift4 : tensor<4xi32>
  %f = arith.sitofp %lanes : tensor<4xi32> to tensor<4xf32>
  %half = arith.constant dense<0.5> : tensor<4xf32>
  %halves = arith.mulf %f, %half : tensor<4xf32>
  block.print "program {}: ids = {} halves = {}" %i, %ids, %halves : index, tensor<2x3xi32>, tensor<4xf32>
  %one = arith.constant dense<1.0> : tensor<4xf32>
  %above = arith.cmpf ogt, %halves, %one : tensor<4xf32>
  block.print "above one" %above, %id : tensor<4xi1>, i32
  block.store %halves, %o : tensor<4xf32>, memref<4xf32>
  return
}

func.func @last(%o: memref<8xf32>) {
  block.print ""
  block.print "done"
  return
}

func.func @main(%o: memref<8xf32>) {
  grid.call @kernel grid [2] ins() outs(%o : memref<8xf32>)
      in_specs [] out_specs [#grid.block<[4], (i) -> (i)>]
  grid.call @last grid [] ins() outs(%o : memref<8xf32>) in_specs [] out_specs [#grid.block<full>]
  return
}
