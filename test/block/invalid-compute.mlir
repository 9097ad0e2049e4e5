// Shape rules of dot, reduce, broadcast, iota and atomic_rmw.
// RUN: tessel-opt %s --split-input-file --verify-diagnostics

func.func @f(%a: tensor<32x16xf32>, %b: tensor<8x16xf32>) {
  // expected-error @+1 {{'block.dot' op contraction sizes differ: lhs has K = 16 but rhs has K = 8}}
  %c = block.dot %a, %b : tensor<32x16xf32>, tensor<8x16xf32> -> tensor<32x16xf32>
  return
}

// -----

func.func @f(%a: tensor<32x16xf32>, %b: tensor<16x8xf32>) {
  // expected-error @+1 {{'block.dot' op result shape 32x16 must be 32x8}}
  %c = block.dot %a, %b : tensor<32x16xf32>, tensor<16x8xf32> -> tensor<32x16xf32>
  return
}

// -----

func.func @f(%a: tensor<32x16xf32>, %b: tensor<16x8xf16>) {
  // expected-error @+1 {{'block.dot' op lhs and rhs element types differ: 'f32' vs 'f16'}}
  %c = block.dot %a, %b : tensor<32x16xf32>, tensor<16x8xf16> -> tensor<32x8xf32>
  return
}

// -----

func.func @f(%a: tensor<32x16xf32>, %b: tensor<16x8xf32>) {
  // expected-error @+1 {{'block.dot' op cannot accumulate 'f32' products into 'f16'}}
  %c = block.dot %a, %b : tensor<32x16xf32>, tensor<16x8xf32> -> tensor<32x8xf16>
  return
}

// -----

func.func @f(%a: tensor<32x16xbf16>, %b: tensor<16x8xbf16>, %acc: tensor<32x8xf16>) {
  // expected-error @+1 {{'block.dot' op accumulator type 'tensor<32x8xf16>' must equal the result type 'tensor<32x8xf32>'}}
  %c = block.dot %a, %b acc %acc : tensor<32x16xbf16>, tensor<16x8xbf16>, tensor<32x8xf16> -> tensor<32x8xf32>
  return
}

// -----

func.func @f(%a: tensor<16xf32>, %b: tensor<16xf32>) {
  // expected-error @+1 {{'block.dot' op operands must be matrices (rank 2) or batches of matrices (rank 3), got rank 1}}
  %c = block.dot %a, %b : tensor<16xf32>, tensor<16xf32> -> tensor<16xf32>
  return
}

// -----

func.func @f(%a: tensor<2x4x8xf32>, %b: tensor<3x8x4xf32>) {
  // expected-error @+1 {{'block.dot' op batch sizes differ: 2, 3 and 2}}
  %c = block.dot %a, %b : tensor<2x4x8xf32>, tensor<3x8x4xf32> -> tensor<2x4x4xf32>
  return
}

// -----

func.func @f(%v: tensor<4x128xf32>) {
  // expected-error @+1 {{'block.reduce' op result shape 128 must be 4 (the input without the reduced dims)}}
  %s = block.reduce sum %v dims [1] : tensor<4x128xf32> -> tensor<128xf32>
  return
}

// -----

func.func @f(%v: tensor<4x128xf32>) {
  // expected-error @+1 {{'block.reduce' op dimension 2 is out of range for rank 2}}
  %s = block.reduce sum %v dims [2] : tensor<4x128xf32> -> tensor<4xf32>
  return
}

// -----

func.func @f(%v: tensor<4x128xf32>) {
  // expected-error @+1 {{'block.reduce' op dimension 1 is listed twice}}
  %s = block.reduce max %v dims [1, 1] : tensor<4x128xf32> -> tensor<4xf32>
  return
}

// -----

func.func @f(%v: tensor<4x128xf32>) {
  // expected-error @+1 {{'block.reduce' op result element type 'f64' must equal the input's 'f32'}}
  %s = block.reduce sum %v dims [1] : tensor<4x128xf32> -> tensor<4xf64>
  return
}

// -----

func.func @f(%v: tensor<4x128xf32>) {
  // expected-error @+1 {{expected string or keyword containing one of the following enum values for attribute 'kind' [sum, max, min, prod, umax, umin]}}
  %s = block.reduce mean %v dims [1] : tensor<4x128xf32> -> tensor<4xf32>
  return
}

// -----

func.func @f(%s: tensor<4xf32>) {
  // expected-error @+1 {{'block.broadcast' op input dimension 0 of size 4 cannot broadcast to size 8 (result dim 0)}}
  %b = block.broadcast %s dims [1] : tensor<4xf32> -> tensor<8x128xf32>
  return
}

// -----

func.func @f(%s: tensor<4xf32>) {
  // expected-error @below {{'block.broadcast' op result rank 3 must be the input rank 1 plus 1 added dims}}
  %b = block.broadcast %s dims [1] : tensor<4xf32> -> tensor<4x128x2xf32>
  return
}

// -----

func.func @f() {
  %i = block.iota dim 2 : tensor<4x128xi32>
  // expected-error @above {{'block.iota' op dimension 2 is out of range for rank 2}}
  return
}

// -----

func.func @f() {
  // expected-error @+1 {{'block.iota' op result #0 must be ranked tensor of signless integer or index values}}
  %i = block.iota dim 0 : tensor<4xf32>
  return
}

// -----

func.func @f(%v: tensor<2xf32>, %o: memref<1xf32>) {
  // expected-error @+1 {{'block.atomic_rmw' op value shape 2 does not match the ref's 1 (use offsets for a window)}}
  block.atomic_rmw add %v, %o : tensor<2xf32>, memref<1xf32>
  return
}

// -----

func.func @f(%v: tensor<1xi1>, %o: memref<1xi1>) {
  // expected-error @+1 {{'block.atomic_rmw' op atomics need float or integer elements of at least 8 bits, got 'i1'}}
  block.atomic_rmw add %v, %o : tensor<1xi1>, memref<1xi1>
  return
}

// -----

func.func @f(%v: tensor<4x128xf32>) {
  // expected-error @+1 {{'block.reduce' op 'umax' needs integer elements, got 'f32'}}
  %s = block.reduce umax %v dims [1] : tensor<4x128xf32> -> tensor<4xf32>
  return
}
