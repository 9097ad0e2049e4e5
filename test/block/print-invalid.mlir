// What block.print rejects.
// RUN: tessel-opt %s --split-input-file --verify-diagnostics

func.func @f(%x: f32) {
  // expected-error @+1 {{'block.print' op the format has 2 placeholders for 1 values}}
  block.print "{} and {}" %x : f32
  return
}

// -----

func.func @f(%x: f32) {
  // expected-error @+1 {{'block.print' op format placeholders are `{}` alone, got 'x = {0}'}}
  block.print "x = {0}" %x : f32
  return
}

// -----

func.func @f(%x: f32) {
  // expected-error @+1 {{'block.print' op an unmatched '}' in the format 'x } {}'}}
  block.print "x } {}" %x : f32
  return
}

// -----

func.func @f(%t: tensor<?xf32>) {
  // expected-error @+1 {{'block.print' op printed tensors must be statically shaped, got 'tensor<?xf32>'}}
  block.print "t = {}" %t : tensor<?xf32>
  return
}

// -----

func.func @f(%t: memref<4xf32>) {
  // expected-error @+1 {{operand #0 must be variadic of}}
  block.print "t = {}" %t : memref<4xf32>
  return
}
