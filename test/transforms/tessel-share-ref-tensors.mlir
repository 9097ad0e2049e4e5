// RUN: tessel-opt %s --split-input-file --tessel-share-ref-tensors | FileCheck %s
// RUN: tessel-opt %s --split-input-file --pass-pipeline="builtin.module(tessel-share-ref-tensors,func.func(convert-elementwise-to-linalg),one-shot-bufferize{bufferize-function-boundaries=1 function-boundary-type-conversion=identity-layout-map})" | FileCheck %s --check-prefix=BUFFERS

// What eliminate-empty-tensors leaves: the block's tensor (%acc), and a
// second `restrict writable` tensor of the same ref built as the init of
// the stored value. The second becomes the first, so one-shot analysis
// sees the init's in-place writes alias `%acc`'s later read.
// CHECK-LABEL: func.func @one_ref_one_tensor
// CHECK: %[[ACC:.*]] = bufferization.to_tensor %arg0 restrict writable
// CHECK-NOT: bufferization.to_tensor
// CHECK: linalg.generic {{.*}} ins(%[[ACC]] : tensor<8xf32>) outs(%[[ACC]] : tensor<8xf32>)
// CHECK: arith.subf
// CHECK: bufferization.materialize_in_destination
// Bufferized, `acc + 1` goes to a buffer of its own (without this pass it
// was computed in the ref, and `t - acc` read t twice).
// BUFFERS-LABEL: func.func @one_ref_one_tensor
// BUFFERS: %[[T:.*]] = memref.alloc()
// BUFFERS: linalg.generic {{.*}} ins(%arg0 : memref<8xf32>) outs(%[[T]] : memref<8xf32>)
// BUFFERS: linalg.generic {{.*}} ins(%[[T]], %arg0 : memref<8xf32>, memref<8xf32>) outs(%[[T]] : memref<8xf32>)
// BUFFERS: memref.copy %[[T]], %arg0
#id = affine_map<(d0) -> (d0)>
func.func @one_ref_one_tensor(%ref: memref<8xf32>) {
  %one = arith.constant 1.0 : f32
  %acc = bufferization.to_tensor %ref restrict : memref<8xf32> to tensor<8xf32>
  %init = bufferization.to_tensor %ref restrict writable : memref<8xf32> to tensor<8xf32>
  %t = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%acc : tensor<8xf32>) outs(%init : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %in, %one : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  %d = arith.subf %t, %acc : tensor<8xf32>
  bufferization.materialize_in_destination %d in restrict writable %ref : (tensor<8xf32>, memref<8xf32>) -> ()
  return
}

// -----

// A store to the ref between the two: the second tensor reads what was
// stored, so it stays.
// CHECK-LABEL: func.func @store_between
// CHECK: bufferization.to_tensor %arg0 restrict
// CHECK: bufferization.materialize_in_destination
// CHECK: bufferization.to_tensor %arg0 restrict
func.func @store_between(%ref: memref<8xf32>, %other: memref<8xf32>) {
  %first = bufferization.to_tensor %ref restrict : memref<8xf32> to tensor<8xf32>
  %sum = arith.addf %first, %first : tensor<8xf32>
  bufferization.materialize_in_destination %sum in restrict writable %ref : (tensor<8xf32>, memref<8xf32>) -> ()
  %second = bufferization.to_tensor %ref restrict : memref<8xf32> to tensor<8xf32>
  bufferization.materialize_in_destination %second in restrict writable %other : (tensor<8xf32>, memref<8xf32>) -> ()
  return
}

// -----

// Tensors of the same ref in two branches: neither dominates the other.
// A tensor of another ref, or of another type, is never shared.
// CHECK-LABEL: func.func @apart
// CHECK-COUNT-2: bufferization.to_tensor %arg0 restrict
// CHECK: bufferization.to_tensor %arg1 restrict
func.func @apart(%ref: memref<8xf32>, %other: memref<8xf32>, %flag: i1) -> tensor<8xf32> {
  %r = scf.if %flag -> (tensor<8xf32>) {
    %a = bufferization.to_tensor %ref restrict : memref<8xf32> to tensor<8xf32>
    scf.yield %a : tensor<8xf32>
  } else {
    %b = bufferization.to_tensor %ref restrict : memref<8xf32> to tensor<8xf32>
    %c = bufferization.to_tensor %other restrict : memref<8xf32> to tensor<8xf32>
    %s = arith.addf %b, %c : tensor<8xf32>
    scf.yield %s : tensor<8xf32>
  }
  return %r : tensor<8xf32>
}

// -----

// A tensor of the ref inside a loop the first is outside of: each trip
// reads what the trip before stored after it, so it stays.
// CHECK-LABEL: func.func @in_a_loop
// CHECK: bufferization.to_tensor %arg0 restrict
// CHECK: scf.for
// CHECK: bufferization.to_tensor %arg0 restrict
func.func @in_a_loop(%ref: memref<8xf32>, %other: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %first = bufferization.to_tensor %ref restrict : memref<8xf32> to tensor<8xf32>
  bufferization.materialize_in_destination %first in restrict writable %other : (tensor<8xf32>, memref<8xf32>) -> ()
  scf.for %i = %c0 to %c4 step %c1 {
    %now = bufferization.to_tensor %ref restrict : memref<8xf32> to tensor<8xf32>
    %twice = arith.addf %now, %now : tensor<8xf32>
    bufferization.materialize_in_destination %twice in restrict writable %ref : (tensor<8xf32>, memref<8xf32>) -> ()
  }
  return
}
