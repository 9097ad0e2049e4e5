// Misused loads and stores are located diagnostics.
// RUN: tessel-opt %s --split-input-file --verify-diagnostics

func.func @f(%x: memref<8x128xf32>) {
  // expected-error @+1 {{'block.load' op result shape 4x128 does not match the ref's 8x128 (use offsets for a window)}}
  %v = block.load %x : memref<8x128xf32> -> tensor<4x128xf32>
  return
}

// -----

func.func @f(%x: memref<8x128xf32>) {
  // expected-error @+1 {{'block.load' op result element type 'f16' does not match the ref's 'f32'}}
  %v = block.load %x : memref<8x128xf32> -> tensor<8x128xf16>
  return
}

// -----

func.func @f(%x: memref<8x128xf32>, %i: index) {
  // expected-error @+1 {{'block.load' op expected 2 offsets (one per ref dimension), got 1}}
  %v = block.load %x[%i] [8] : memref<8x128xf32> -> tensor<8xf32>
  return
}

// -----

func.func @f(%x: memref<64xf32>, %i: index) {
  // expected-error @+1 {{'block.load' op window sizes 8 do not match the result shape 16}}
  %v = block.load %x[%i] [8] : memref<64xf32> -> tensor<16xf32>
  return
}

// -----

func.func @f(%x: memref<64xf32>, %i: index) {
  // expected-error @+1 {{'block.load' op window of size 128 exceeds the ref's size 64 in dimension 0}}
  %v = block.load %x[%i] [128] : memref<64xf32> -> tensor<128xf32>
  return
}

// -----

func.func @f(%x: memref<64xf32>, %m: tensor<64xi1>, %o: f32) {
  // expected-error @+1 {{'block.load' op 'other' requires a 'mask'}}
  %v = "block.load"(%x, %o) <{operandSegmentSizes = array<i32: 1, 0, 0, 1, 0>}> : (memref<64xf32>, f32) -> tensor<64xf32>
  return
}

// -----

func.func @f(%x: memref<64xf32>, %m: tensor<32xi1>) {
  // The mask must have the result's shape: only reachable in generic form.
  // expected-error @+1 {{'block.load' op failed to verify that mask has the result's shape with i1 elements}}
  %v = "block.load"(%x, %m) <{operandSegmentSizes = array<i32: 1, 0, 1, 0, 0>}> : (memref<64xf32>, tensor<32xi1>) -> tensor<64xf32>
  return
}

// -----

func.func @f(%x: memref<64xf32>, %m: tensor<64xi1>, %o: f16) {
  // expected-error @+1 {{'block.load' op failed to verify that other is a scalar of the result's element type}}
  %v = "block.load"(%x, %m, %o) <{operandSegmentSizes = array<i32: 1, 0, 1, 1, 0>}> : (memref<64xf32>, tensor<64xi1>, f16) -> tensor<64xf32>
  return
}

// -----

func.func @f(%x: memref<64xf32>, %m: tensor<64xi32>) {
  // expected-error @+1 {{'block.load' op operand #1 must be ranked tensor of 1-bit signless integer values, but got 'tensor<64xi32>'}}
  %v = "block.load"(%x, %m) <{operandSegmentSizes = array<i32: 1, 0, 1, 0, 0>}> : (memref<64xf32>, tensor<64xi32>) -> tensor<64xf32>
  return
}

// -----

func.func @f(%x: memref<?xf32>) {
  // expected-error @+1 {{'block.load' op operand #0 must be statically shaped memref of any type values}}
  %v = block.load %x : memref<?xf32> -> tensor<4xf32>
  return
}

// -----

func.func @f(%v: tensor<8x64xf32>, %o: memref<8x128xf32>) {
  // expected-error @+1 {{'block.store' op value shape 8x64 does not match the ref's 8x128 (use offsets for a window)}}
  block.store %v, %o : tensor<8x64xf32>, memref<8x128xf32>
  return
}

// -----

func.func @f(%v: tensor<8x128xi32>, %o: memref<8x128xf32>) {
  // expected-error @+1 {{'block.store' op value element type 'i32' does not match the ref's 'f32'}}
  block.store %v, %o : tensor<8x128xi32>, memref<8x128xf32>
  return
}

// -----

func.func @f(%v: tensor<16xf32>, %o: memref<8x64xf32>, %i: index) {
  // expected-error @+1 {{'block.store' op a window has the ref's rank 2, got value of rank 1}}
  block.store %v, %o[%i, %i] : tensor<16xf32>, memref<8x64xf32>
  return
}

// -----

func.func @f(%v: tensor<16xf32>, %o: memref<64xf32>, %i: index) {
  // expected-error @+1 {{expected '['}}
  %w = block.load %o[%i] : memref<64xf32> -> tensor<16xf32>
  return
}

// -----

func.func @f(%x: memref<16x8xf32>, %t: tensor<4xi32>) {
  // expected-error @+1 {{'block.load' op result shape 4x4 must be 4x8 (the ref's, with one element per index along dimension 0)}}
  %g = block.load %x gather %t dim 0 : memref<16x8xf32>, tensor<4xi32> -> tensor<4x4xf32>
  return
}

// -----

func.func @f(%x: memref<16x8xf32>, %t: tensor<2x2xi32>) {
  // expected-error @+1 {{'block.load' op the gather indices must be a 1-D tensor, got 'tensor<2x2xi32>'}}
  %g = block.load %x gather %t dim 0 : memref<16x8xf32>, tensor<2x2xi32> -> tensor<4x8xf32>
  return
}

// -----

func.func @f(%v: tensor<4x8xf32>, %x: memref<16x8xf32>, %t: tensor<4xi32>) {
  // expected-error @+1 {{'block.store' op the scatter dimension 2 is out of range for the ref's rank 2}}
  block.store %v, %x scatter %t dim 2 : tensor<4x8xf32>, memref<16x8xf32>, tensor<4xi32>
  return
}

// -----

func.func @f(%x: memref<16x8xf32>, %t: tensor<4xf32>) {
  // expected-error @+1 {{must be ranked tensor of signless integer or index values, but got 'tensor<4xf32>'}}
  %g = block.load %x gather %t dim 0 : memref<16x8xf32>, tensor<4xf32> -> tensor<4x8xf32>
  return
}
