// The sum of 64M f32 elements: two parallel halves (one per core), each
// accumulated over an arbitrary axis into its own output element.
//   tessel run examples/sum_64m.mlir --entry sum_64m --arg 0=random:1 --bench
func.func @sum_kernel(%x: memref<65536xf32>, %o: memref<1xf32>) {
  %k = grid.program_id 1
  %c0 = arith.constant 0 : index
  %first = arith.cmpi eq, %k, %c0 : index
  scf.if %first {
    %zero = arith.constant dense<0.0> : tensor<1xf32>
    block.store %zero, %o : tensor<1xf32>, memref<1xf32>
  }
  %v = block.load %x : memref<65536xf32> -> tensor<65536xf32>
  %s = block.reduce sum %v dims [0] : tensor<65536xf32> -> tensor<f32>
  %s1 = block.broadcast %s dims [0] : tensor<f32> -> tensor<1xf32>
  %acc = block.load %o : memref<1xf32> -> tensor<1xf32>
  %t = arith.addf %acc, %s1 : tensor<1xf32>
  block.store %t, %o : tensor<1xf32>, memref<1xf32>
  return
}

func.func @sum_64m(%x: memref<67108864xf32>, %o: memref<2xf32>) {
  grid.call @sum_kernel grid [2, 512] ins(%x : memref<67108864xf32>) outs(%o : memref<2xf32>)
      in_specs [#grid.block<[65536], (c, i) -> (c * 512 + i)>] out_specs [#grid.block<[1], (c, i) -> (c)>]
  return
}
