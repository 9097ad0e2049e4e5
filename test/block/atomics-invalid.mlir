// What block.atomic_rmw and block.atomic_cas reject.
// RUN: tessel-opt %s --split-input-file --verify-diagnostics

func.func @f(%v: tensor<4xf32>, %r: memref<4xf32>) {
  // expected-error @+1 {{'block.atomic_rmw' op 'xor' needs integer elements, got 'f32'}}
  block.atomic_rmw xor %v, %r : tensor<4xf32>, memref<4xf32>
  return
}

// -----

func.func @f(%v: tensor<4xi32>, %r: memref<4xi32>) {
  // expected-error @+1 {{'block.atomic_rmw' op the old values' type 'tensor<4xi64>' must equal the value's 'tensor<4xi32>'}}
  %old = block.atomic_rmw add %v, %r : tensor<4xi32>, memref<4xi32> -> tensor<4xi64>
  return
}

// -----

func.func @f(%c: tensor<4xi32>, %v: tensor<4xi1>, %r: memref<4xi1>) {
  // expected-error @+1 {{'block.atomic_cas' op atomics need float or integer elements of at least 8 bits, got 'i1'}}
  %old = block.atomic_cas %v, %v, %r : tensor<4xi1>, memref<4xi1> -> tensor<4xi1>
  return
}

// -----

func.func @f(%v: tensor<4xf32>, %r: memref<4xf32>) {
  // expected-error @+1 {{'block.atomic_rmw' op 'umax' needs integer elements, got 'f32'}}
  block.atomic_rmw umax %v, %r : tensor<4xf32>, memref<4xf32>
  return
}
