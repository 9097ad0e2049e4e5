// The plugin brings Tessel's verifiers into mlir-opt-22, which checks them
// with its own --verify-diagnostics.
// RUN: mlir-opt --load-dialect-plugin=%plugin %s --split-input-file --verify-diagnostics

func.func @bad(%a: tensor<32x16xf32>, %b: tensor<8x16xf32>) {
  // expected-error @+1 {{'block.dot' op contraction sizes differ: lhs has K = 16 but rhs has K = 8}}
  %c = block.dot %a, %b : tensor<32x16xf32>, tensor<8x16xf32> -> tensor<32x16xf32>
  return
}

// -----

func.func @f(%o: memref<8x6xi32>) {
  // expected-error @+1 {{'grid.call' op unknown kernel @missing}}
  grid.call @missing grid [4, 2] ins() outs(%o : memref<8x6xi32>)
      in_specs [] out_specs [#grid.block<[2, 3], (i, j) -> (i, j)>]
  return
}

// -----

func.func @k(%o: memref<2x3xi32>) { return }
func.func @f(%o: memref<8x6xi32>) {
  // expected-error @+2 {{'pad' is only allowed on an unblocked BlockSpec}}
  grid.call @k grid [4, 2] ins() outs(%o : memref<8x6xi32>)
      in_specs [] out_specs [#grid.block<[2, 3], (i, j) -> (i, j), pad [[1, 0], [0, 0]]>]
  return
}
