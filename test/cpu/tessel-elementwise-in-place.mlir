// RUN: tessel-opt %s --split-input-file --tessel-elementwise-in-place | FileCheck %s
// RUN: tessel-opt %s --split-input-file --tessel-elementwise-in-place --one-shot-bufferize="bufferize-function-boundaries=1 function-boundary-type-conversion=identity-layout-map" --canonicalize | FileCheck %s --check-prefix=BUFFERS

#row = affine_map<(d0, d1) -> (d0, d1)>
#column = affine_map<(d0, d1) -> (d0)>

// A loop-carried accumulator scaled per row (attention's acc * alpha):
// the scaled value is computed into the accumulator itself (the operand
// of the result's type and map; the per-row scale has another map).
// CHECK-LABEL: func.func @scaled_accumulator
// CHECK: scf.for {{.*}} iter_args(%[[ACC:.*]] = %{{.*}})
// CHECK: linalg.generic {{.*}} ins(%[[ACC]], %{{.*}} : tensor<8x4xf32>, tensor<8xf32>) outs(%[[ACC]] : tensor<8x4xf32>)
// Bufferized, the loop then allocates nothing and copies nothing: it
// scales the accumulator's buffer in place.
// BUFFERS-LABEL: func.func @scaled_accumulator
// BUFFERS-NOT: memref.alloc
// BUFFERS-NOT: memref.copy
// BUFFERS: scf.for
// BUFFERS-NEXT: linalg.generic {{.*}} ins(%arg0, %arg1 : memref<8x4xf32>, memref<8xf32>) outs(%arg0 : memref<8x4xf32>)
// BUFFERS-NOT: memref.copy
// BUFFERS: return %arg0
func.func @scaled_accumulator(%init: tensor<8x4xf32>, %scale: tensor<8xf32>) -> tensor<8x4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %init) -> (tensor<8x4xf32>) {
    %empty = tensor.empty() : tensor<8x4xf32>
    %scaled = linalg.generic {indexing_maps = [#row, #column, #row], iterator_types = ["parallel", "parallel"]}
        ins(%acc, %scale : tensor<8x4xf32>, tensor<8xf32>) outs(%empty : tensor<8x4xf32>) {
    ^bb0(%a: f32, %s: f32, %out: f32):
      %m = arith.mulf %a, %s : f32
      linalg.yield %m : f32
    } -> tensor<8x4xf32>
    scf.yield %scaled : tensor<8x4xf32>
  }
  return %r : tensor<8x4xf32>
}

// -----

// Left alone: a body that reads its destination, a reduction, a result
// stored to a ref (empty-tensor elimination computes it in the ref), and
// an operand of another type.
// CHECK-LABEL: func.func @left_alone
// CHECK-COUNT-4: outs(%{{.*}} : tensor<
// CHECK-NOT: outs(%arg0
// CHECK: return
#identity = affine_map<(d0) -> (d0)>
#scalar = affine_map<(d0) -> ()>
func.func @left_alone(%x: tensor<8xf32>, %wide: tensor<8xf64>, %ref: memref<8xf32>) -> (tensor<8xf32>, tensor<f32>, tensor<8xf64>) {
  %empty = tensor.empty() : tensor<8xf32>
  %reads = linalg.generic {indexing_maps = [#identity, #identity], iterator_types = ["parallel"]}
      ins(%x : tensor<8xf32>) outs(%empty : tensor<8xf32>) {
  ^bb0(%a: f32, %out: f32):
    %s = arith.addf %a, %out : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  %scalar_empty = tensor.empty() : tensor<f32>
  %sum = linalg.generic {indexing_maps = [#identity, #scalar], iterator_types = ["reduction"]}
      ins(%x : tensor<8xf32>) outs(%scalar_empty : tensor<f32>) {
  ^bb0(%a: f32, %out: f32):
    linalg.yield %a : f32
  } -> tensor<f32>
  %stored_empty = tensor.empty() : tensor<8xf32>
  %stored = linalg.generic {indexing_maps = [#identity, #identity], iterator_types = ["parallel"]}
      ins(%x : tensor<8xf32>) outs(%stored_empty : tensor<8xf32>) {
  ^bb0(%a: f32, %out: f32):
    %s = arith.mulf %a, %a : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  bufferization.materialize_in_destination %stored in restrict writable %ref : (tensor<8xf32>, memref<8xf32>) -> ()
  %wide_empty = tensor.empty() : tensor<8xf64>
  %widened = linalg.generic {indexing_maps = [#identity, #identity], iterator_types = ["parallel"]}
      ins(%x : tensor<8xf32>) outs(%wide_empty : tensor<8xf64>) {
  ^bb0(%a: f32, %out: f64):
    %w = arith.extf %a : f32 to f64
    linalg.yield %w : f64
  } -> tensor<8xf64>
  return %reads, %sum, %widened : tensor<8xf32>, tensor<f32>, tensor<8xf64>
}
