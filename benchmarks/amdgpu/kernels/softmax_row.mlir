// Row softmax of a 4096x4096 f32 array, one row per program.
func.func @softmax_kernel(%x: memref<1x4096xf32>, %o: memref<1x4096xf32>) {
  %v = block.load %x : memref<1x4096xf32> -> tensor<1x4096xf32>
  %m = block.reduce max %v dims [1] : tensor<1x4096xf32> -> tensor<1xf32>
  %mb = block.broadcast %m dims [1] : tensor<1xf32> -> tensor<1x4096xf32>
  %d = arith.subf %v, %mb : tensor<1x4096xf32>
  %e = math.exp %d : tensor<1x4096xf32>
  %s = block.reduce sum %e dims [1] : tensor<1x4096xf32> -> tensor<1xf32>
  %sb = block.broadcast %s dims [1] : tensor<1xf32> -> tensor<1x4096xf32>
  %r = arith.divf %e, %sb : tensor<1x4096xf32>
  block.store %r, %o : tensor<1x4096xf32>, memref<1x4096xf32>
  return
}

func.func @softmax(%x: memref<4096x4096xf32>, %o: memref<4096x4096xf32>) {
  grid.call @softmax_kernel grid [4096] ins(%x : memref<4096x4096xf32>) outs(%o : memref<4096x4096xf32>)
      in_specs [#grid.block<[1, 4096], (i) -> (i, 0)>] out_specs [#grid.block<[1, 4096], (i) -> (i, 0)>]
  return
}
