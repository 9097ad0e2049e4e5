// The verifier of a transposed block.dot reads K and N (or M) from the
// swapped dimensions.
// RUN: tessel-opt %s --split-input-file --verify-diagnostics

func.func @f(%q: tensor<64x32xf32>, %k: tensor<32x128xf32>) {
  // expected-error @+1 {{'block.dot' op contraction sizes differ: lhs has K = 32 but rhs has K = 128}}
  %s = block.dot %q, %k transposed : tensor<64x32xf32>, tensor<32x128xf32> -> tensor<64x32xf32>
  return
}

// -----

func.func @f(%a: tensor<16x8xf32>, %b: tensor<16x4xf32>) {
  // expected-error @+1 {{'block.dot' op result shape 16x4 must be 8x4}}
  %c = block.dot %a transposed, %b : tensor<16x8xf32>, tensor<16x4xf32> -> tensor<16x4xf32>
  return
}
