// End to end: the Pallas quickstart (JAX's Pallas guide) on the
// CPU. iota and add_vectors print the quickstart's arrays; matmul, the
// fused activation and the vmap-style batch (an extra grid axis) are
// compared with plain linalg on whole arrays (no grid, no blocks): a
// contraction of one fused multiply-add per k step in k order, the meaning
// of block.dot for floats, lowered as scalar loops.
// RUN: tessel run %s --entry iota | FileCheck %s --check-prefix=IOTA --match-full-lines --strict-whitespace
// RUN: tessel run %s --entry add_vectors | FileCheck %s --check-prefix=ADD --match-full-lines --strict-whitespace
// RUN: rm -rf %t.mm && tessel run %s --entry matmul --arg 0=random:1 --arg 1=random:2 --dump %t.mm > /dev/null && cmp %t.mm/arg2.npy %t.mm/arg3.npy
// RUN: rm -rf %t.relu && tessel run %s --entry matmul_relu --arg 0=random:3 --arg 1=random:4 --dump %t.relu > /dev/null && cmp %t.relu/arg2.npy %t.relu/arg3.npy
// RUN: rm -rf %t.batch && tessel run %s --entry batched --arg 0=random:5 --arg 1=random:6 --dump %t.batch > /dev/null && cmp %t.batch/arg2.npy %t.batch/arg3.npy

// o_ref[i] = i
func.func @iota_kernel(%o: memref<8xi32>) {
  %i = grid.program_id 0
  %v = arith.index_cast %i : index to i32
  %t = tensor.splat %v : tensor<1xi32>
  block.store %t, %o[%i] : tensor<1xi32>, memref<8xi32>
  return
}
// IOTA:arg0: memref<8xi32>
// IOTA-NEXT:[0 1 2 3 4 5 6 7]
func.func @iota(%o: memref<8xi32>) {
  grid.call @iota_kernel grid [8] ins() outs(%o : memref<8xi32>) in_specs [] out_specs [#grid.block<full>]
  return
}

// o_ref[...] = x_ref[...] + y_ref[...], on jnp.arange(8) twice.
func.func @add_vectors_kernel(%x: memref<8xi32>, %y: memref<8xi32>, %o: memref<8xi32>) {
  %a = block.load %x : memref<8xi32> -> tensor<8xi32>
  %b = block.load %y : memref<8xi32> -> tensor<8xi32>
  %s = arith.addi %a, %b : tensor<8xi32>
  block.store %s, %o : tensor<8xi32>, memref<8xi32>
  return
}
// ADD:arg2: memref<8xi32>
// ADD-NEXT:[ 0  2  4  6  8 10 12 14]
func.func @add_vectors(%x: memref<8xi32>, %y: memref<8xi32>, %o: memref<8xi32>) {
  grid.call @iota_kernel grid [8] ins() outs(%x : memref<8xi32>) in_specs [] out_specs [#grid.block<full>]
  grid.call @iota_kernel grid [8] ins() outs(%y : memref<8xi32>) in_specs [] out_specs [#grid.block<full>]
  grid.call @add_vectors_kernel grid [] ins(%x, %y : memref<8xi32>, memref<8xi32>) outs(%o : memref<8xi32>)
      in_specs [#grid.block<full>, #grid.block<full>] out_specs [#grid.block<full>]
  return
}

// z_ref[...] = x_ref[...] @ y_ref[...] on a (2, 2) grid of row/column blocks.
func.func @matmul_kernel(%x: memref<32x64xf32>, %y: memref<64x32xf32>, %z: memref<32x32xf32>) {
  %a = block.load %x : memref<32x64xf32> -> tensor<32x64xf32>
  %b = block.load %y : memref<64x32xf32> -> tensor<64x32xf32>
  %c = block.dot %a, %b : tensor<32x64xf32>, tensor<64x32xf32> -> tensor<32x32xf32>
  block.store %c, %z : tensor<32x32xf32>, memref<32x32xf32>
  return
}
func.func @matmul(%x: memref<64x64xf32>, %y: memref<64x64xf32>, %z: memref<64x64xf32>, %reference: memref<64x64xf32>) {
  grid.call @matmul_kernel grid [2, 2] ins(%x, %y : memref<64x64xf32>, memref<64x64xf32>) outs(%z : memref<64x64xf32>)
      in_specs [#grid.block<[32, 64], (i, j) -> (i, 0)>, #grid.block<[64, 32], (i, j) -> (0, j)>]
      out_specs [#grid.block<[32, 32], (i, j) -> (i, j)>]
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%reference : memref<64x64xf32>)
  linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (k, j)>, affine_map<(i, j, k) -> (i, j)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %y : memref<64x64xf32>, memref<64x64xf32>) outs(%reference : memref<64x64xf32>) {
  ^bb0(%a: f32, %b: f32, %sum: f32):
    %s = math.fma %a, %b, %sum : f32
    linalg.yield %s : f32
  }
  return
}

// The fused activation: relu(x @ y).
func.func @matmul_relu_kernel(%x: memref<32x64xf32>, %y: memref<64x32xf32>, %z: memref<32x32xf32>) {
  %a = block.load %x : memref<32x64xf32> -> tensor<32x64xf32>
  %b = block.load %y : memref<64x32xf32> -> tensor<64x32xf32>
  %c = block.dot %a, %b : tensor<32x64xf32>, tensor<64x32xf32> -> tensor<32x32xf32>
  %zero = arith.constant 0.0 : f32
  %zeros = tensor.splat %zero : tensor<32x32xf32>
  %r = arith.maximumf %c, %zeros : tensor<32x32xf32>
  block.store %r, %z : tensor<32x32xf32>, memref<32x32xf32>
  return
}
func.func @matmul_relu(%x: memref<64x64xf32>, %y: memref<64x64xf32>, %z: memref<64x64xf32>, %reference: memref<64x64xf32>) {
  grid.call @matmul_relu_kernel grid [2, 2] ins(%x, %y : memref<64x64xf32>, memref<64x64xf32>) outs(%z : memref<64x64xf32>)
      in_specs [#grid.block<[32, 64], (i, j) -> (i, 0)>, #grid.block<[64, 32], (i, j) -> (0, j)>]
      out_specs [#grid.block<[32, 32], (i, j) -> (i, j)>]
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%reference : memref<64x64xf32>)
  linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (k, j)>, affine_map<(i, j, k) -> (i, j)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %y : memref<64x64xf32>, memref<64x64xf32>) outs(%reference : memref<64x64xf32>) {
  ^bb0(%a: f32, %b: f32, %sum: f32):
    %s = math.fma %a, %b, %sum : f32
    linalg.yield %s : f32
  }
  linalg.map ins(%reference : memref<64x64xf32>) outs(%reference : memref<64x64xf32>)
    (%v: f32, %unused: f32) {
      %r = arith.maximumf %v, %zero : f32
      linalg.yield %r : f32
    }
  return
}

// jax.vmap as an extra (leading) grid axis with a squeezed batch dimension.
func.func @batched(%x: memref<4x64x64xf32>, %y: memref<4x64x64xf32>, %z: memref<4x64x64xf32>, %reference: memref<4x64x64xf32>) {
  grid.call @matmul_relu_kernel grid [4, 2, 2] ins(%x, %y : memref<4x64x64xf32>, memref<4x64x64xf32>) outs(%z : memref<4x64x64xf32>)
      in_specs [#grid.block<[squeezed, 32, 64], (b, i, j) -> (b, i, 0)>, #grid.block<[squeezed, 64, 32], (b, i, j) -> (b, 0, j)>]
      out_specs [#grid.block<[squeezed, 32, 32], (b, i, j) -> (b, i, j)>]
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%reference : memref<4x64x64xf32>)
  linalg.generic {indexing_maps = [affine_map<(b, i, j, k) -> (b, i, k)>, affine_map<(b, i, j, k) -> (b, k, j)>, affine_map<(b, i, j, k) -> (b, i, j)>],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %y : memref<4x64x64xf32>, memref<4x64x64xf32>) outs(%reference : memref<4x64x64xf32>) {
  ^bb0(%a: f32, %b: f32, %sum: f32):
    %s = math.fma %a, %b, %sum : f32
    linalg.yield %s : f32
  }
  linalg.map ins(%reference : memref<4x64x64xf32>) outs(%reference : memref<4x64x64xf32>)
    (%v: f32, %unused: f32) {
      %r = arith.maximumf %v, %zero : f32
      linalg.yield %r : f32
    }
  return
}
