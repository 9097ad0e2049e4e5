// block.dot with a transposed operand (Pallas' trans_a / trans_b, `q @ k.T`):
// the syntax round-trips, the verifier reads the swapped dimensions, and
// block-to-linalg transposes the operand back into a block of its own before
// the canonical contraction (which the register-tile passes recognise).
// RUN: tessel-opt %s --split-input-file | FileCheck %s
// RUN: tessel-opt %s --split-input-file > %t.1 && tessel-opt %t.1 --split-input-file > %t.2 && diff %t.1 %t.2
// RUN: tessel-opt %s --split-input-file --block-to-linalg | FileCheck %s --check-prefix=LINALG

// CHECK-LABEL: func.func @rhs
// CHECK: block.dot %{{.*}}, %{{.*}} transposed : tensor<64x32xf32>, tensor<128x32xf32> -> tensor<64x128xf32>
// LINALG-LABEL: func.func @rhs
// LINALG: %[[T:.*]] = linalg.transpose ins(%{{.*}} : tensor<128x32xf32>) outs(%{{.*}} : tensor<32x128xf32>) permutation = [1, 0]
// LINALG: linalg.generic {{.*}} ins(%{{.*}}, %[[T]] : tensor<64x32xf32>, tensor<32x128xf32>) {{.*}}tessel.contraction
func.func @rhs(%q: tensor<64x32xf32>, %k: tensor<128x32xf32>) -> tensor<64x128xf32> {
  %s = block.dot %q, %k transposed : tensor<64x32xf32>, tensor<128x32xf32> -> tensor<64x128xf32>
  return %s : tensor<64x128xf32>
}

// -----

// CHECK-LABEL: func.func @both_batched
// CHECK: block.dot %{{.*}} transposed, %{{.*}} transposed acc %{{.*}} : tensor<2x16x8xi8>, tensor<2x4x16xi8>, tensor<2x8x4xi32> -> tensor<2x8x4xi32>
// LINALG-LABEL: func.func @both_batched
// LINALG: linalg.transpose ins(%{{.*}} : tensor<2x16x8xi8>) outs(%{{.*}} : tensor<2x8x16xi8>) permutation = [0, 2, 1]
// LINALG: linalg.transpose ins(%{{.*}} : tensor<2x4x16xi8>) outs(%{{.*}} : tensor<2x16x4xi8>) permutation = [0, 2, 1]
// LINALG: linalg.generic
func.func @both_batched(%a: tensor<2x16x8xi8>, %b: tensor<2x4x16xi8>, %acc: tensor<2x8x4xi32>) -> tensor<2x8x4xi32> {
  %c = block.dot %a transposed, %b transposed acc %acc : tensor<2x16x8xi8>, tensor<2x4x16xi8>, tensor<2x8x4xi32> -> tensor<2x8x4xi32>
  return %c : tensor<2x8x4xi32>
}
