// Malformed `dimensions` / `permutation` lists of linalg.reduce,
// linalg.broadcast and linalg.transpose are located errors: MLIR 22's own
// parsers of these ops crash on them (they store the null attribute a
// failed list parse returns), so tessel-opt checks the lists first.
// Well-formed ones, and the generic form, parse as before.
// RUN: tessel-opt %s --split-input-file --verify-diagnostics

func.func @f(%x: tensor<4x4xi32>, %i: tensor<4xi32>) -> tensor<4xi32> {
  // expected-error @+1 {{expected a list of integers in '[' and ']'}}
  %r = linalg.reduce ins(%x : tensor<4x4xi32>) outs(%i : tensor<4xi32>) dimensions = ]
    (%in: i32, %acc: i32) {
      linalg.yield %in : i32
    }
  return %r : tensor<4xi32>
}

// -----

func.func @f(%x: tensor<4xi32>, %o: tensor<4x4xi32>) -> tensor<4x4xi32> {
  // expected-error @+1 {{expected a list of integers in '[' and ']'}}
  %b = linalg.broadcast ins(%x : tensor<4xi32>) outs(%o : tensor<4x4xi32>) dimensions = [x]
  return %b : tensor<4x4xi32>
}

// -----

func.func @f(%x: tensor<2x4xi32>, %o: tensor<4x2xi32>) -> tensor<4x2xi32> {
  // expected-error @+1 {{expected a list of integers in '[' and ']'}}
  %t = linalg.transpose ins(%x : tensor<2x4xi32>) outs(%o : tensor<4x2xi32>) permutation = [1, 0
  return %t : tensor<4x2xi32>
}

// -----

func.func @f(%x: tensor<2x4xi32>, %o: tensor<4x2xi32>, %v: tensor<4xi32>, %w: tensor<4x4xi32>) -> (tensor<4x2xi32>, tensor<4x4xi32>) {
  %t = linalg.transpose ins(%x : tensor<2x4xi32>) outs(%o : tensor<4x2xi32>) permutation = [1, 0]
  %b = linalg.broadcast ins(%v : tensor<4xi32>) outs(%w : tensor<4x4xi32>) dimensions = [ 1 ]
  return %t, %b : tensor<4x2xi32>, tensor<4x4xi32>
}
