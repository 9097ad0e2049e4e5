// int8 matmul with int32 accumulation (quantized inference), 1024x1024x1024,
// Pallas style: 128x128 blocks, K on an arbitrary grid axis, the int32
// output block accumulated in place across it. On AMD GPUs it runs on the
// matrix cores of all three chips (MFMA on gfx90a/gfx942, WMMA on gfx1100):
// integer sums are exact in any order.
//   tessel run examples/matmul_i8.mlir --entry matmul_i8 --arg 0=random:1 --arg 1=random:2 --bench
func.func @matmul_i8_kernel(%x: memref<128x128xi8>, %y: memref<128x128xi8>, %z: memref<128x128xi32>) {
  %k = grid.program_id 2
  %c0 = arith.constant 0 : index
  %first = arith.cmpi eq, %k, %c0 : index
  scf.if %first {
    %zeros = arith.constant dense<0> : tensor<128x128xi32>
    block.store %zeros, %z : tensor<128x128xi32>, memref<128x128xi32>
  }
  %a = block.load %x : memref<128x128xi8> -> tensor<128x128xi8>
  %b = block.load %y : memref<128x128xi8> -> tensor<128x128xi8>
  %acc = block.load %z : memref<128x128xi32> -> tensor<128x128xi32>
  %c = block.dot %a, %b acc %acc : tensor<128x128xi8>, tensor<128x128xi8>, tensor<128x128xi32> -> tensor<128x128xi32>
  block.store %c, %z : tensor<128x128xi32>, memref<128x128xi32>
  return
}

func.func @matmul_i8(%x: memref<1024x1024xi8>, %y: memref<1024x1024xi8>, %z: memref<1024x1024xi32>) {
  grid.call @matmul_i8_kernel grid [8, 8, 8]
      ins(%x, %y : memref<1024x1024xi8>, memref<1024x1024xi8>) outs(%z : memref<1024x1024xi32>)
      in_specs [#grid.block<[128, 128], (i, j, k) -> (i, k)>, #grid.block<[128, 128], (i, j, k) -> (k, j)>]
      out_specs [#grid.block<[128, 128], (i, j, k) -> (i, j)>]
  return
}
