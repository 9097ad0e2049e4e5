// block.atomic_rmw's kinds (add, max, min, xchg, and, or, xor, umax, umin), with and
// without the old values, and block.atomic_cas: round trip and verifier.
// RUN: tessel-opt %s --split-input-file | FileCheck %s
// RUN: tessel-opt %s --split-input-file > %t.1 && tessel-opt %t.1 --split-input-file > %t.2 && diff %t.1 %t.2

// CHECK-LABEL: func.func @kinds
// CHECK: block.atomic_rmw xchg %{{.*}}, %{{.*}} : tensor<4xf32>, memref<4xf32>
// CHECK: block.atomic_rmw and %{{.*}}, %{{.*}} : tensor<4xi32>, memref<4xi32> -> tensor<4xi32>
// CHECK: block.atomic_rmw or %{{.*}}, %{{.*}}[%{{.*}}] mask %{{.*}} : tensor<4xi32>, memref<8xi32> -> tensor<4xi32>
// CHECK: block.atomic_rmw xor %{{.*}}, %{{.*}} : tensor<4xi32>, memref<4xi32>
// CHECK: block.atomic_rmw add %{{.*}}, %{{.*}} : tensor<4xf32>, memref<4xf32> -> tensor<4xf32>
func.func @kinds(%f: tensor<4xf32>, %fr: memref<4xf32>, %i: tensor<4xi32>, %ir: memref<4xi32>,
                 %wide: memref<8xi32>, %o: index, %m: tensor<4xi1>) -> (tensor<4xi32>, tensor<4xi32>, tensor<4xf32>) {
  block.atomic_rmw xchg %f, %fr : tensor<4xf32>, memref<4xf32>
  %a = block.atomic_rmw and %i, %ir : tensor<4xi32>, memref<4xi32> -> tensor<4xi32>
  %b = block.atomic_rmw or %i, %wide[%o] mask %m : tensor<4xi32>, memref<8xi32> -> tensor<4xi32>
  block.atomic_rmw xor %i, %ir : tensor<4xi32>, memref<4xi32>
  %c = block.atomic_rmw add %f, %fr : tensor<4xf32>, memref<4xf32> -> tensor<4xf32>
  return %a, %b, %c : tensor<4xi32>, tensor<4xi32>, tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @cas
// CHECK: block.atomic_cas %{{.*}}, %{{.*}}, %{{.*}}[%{{.*}}] mask %{{.*}} : tensor<4xf32>, memref<8xf32> -> tensor<4xf32>
func.func @cas(%expected: tensor<4xf32>, %new: tensor<4xf32>, %r: memref<8xf32>, %o: index, %m: tensor<4xi1>) -> tensor<4xf32> {
  %old = block.atomic_cas %expected, %new, %r[%o] mask %m : tensor<4xf32>, memref<8xf32> -> tensor<4xf32>
  return %old : tensor<4xf32>
}

// -----

// Unsigned maximum and minimum of integers.
// CHECK-LABEL: func.func @unsigned_kinds
// CHECK: block.atomic_rmw umax %{{.*}}, %{{.*}} : tensor<4xi32>, memref<4xi32> -> tensor<4xi32>
// CHECK: block.atomic_rmw umin %{{.*}}, %{{.*}} : tensor<4xi32>, memref<4xi32>
func.func @unsigned_kinds(%i: tensor<4xi32>, %ir: memref<4xi32>) -> tensor<4xi32> {
  %a = block.atomic_rmw umax %i, %ir : tensor<4xi32>, memref<4xi32> -> tensor<4xi32>
  block.atomic_rmw umin %i, %ir : tensor<4xi32>, memref<4xi32>
  return %a : tensor<4xi32>
}
