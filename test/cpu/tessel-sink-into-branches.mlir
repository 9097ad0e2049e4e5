// tessel-sink-into-branches: a contraction read only inside an scf.if is
// computed in the branches that read it, and an scf.if's result stored to
// a ref is stored by each branch (Pallas' last-k-step epilogue).
// RUN: tessel-opt %s --split-input-file --tessel-sink-into-branches | FileCheck %s
// RUN: tessel-opt %s --split-input-file --tessel-sink-into-branches --tessel-fuse-elementwise --tessel-tile --tessel-vectorize --canonicalize --cse | FileCheck %s --check-prefix=TILES

#a = affine_map<(i, j, k) -> (i, k)>
#b = affine_map<(i, j, k) -> (k, j)>
#c = affine_map<(i, j, k) -> (i, j)>
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (0, j)>
// `k == last ? relu(dot + bias) : dot`, stored: a copy of the dot in each
// branch, each branch storing what it yields (the yields stay for
// canonicalize to drop with the unused result).
// CHECK-LABEL: func.func @last_step_epilogue
// CHECK-SAME: %[[X:[^:]*]]: tensor<8x16xf32>, %[[Y:[^:]*]]: tensor<16x32xf32>, %[[Z:[^:]*]]: tensor<8x32xf32>, %[[BIAS:[^:]*]]: tensor<1x32xf32>, %[[LAST:[^:]*]]: i1, %[[OUT:[^:]*]]: memref<8x32xf32>
// CHECK-NOT: tessel.contraction
// CHECK: scf.if %[[LAST]]
// CHECK-NEXT: %[[DOT:.*]] = linalg.generic {{.*}} ins(%[[X]], %[[Y]] : {{.*}}) outs(%[[Z]] : tensor<8x32xf32>) attrs = {tessel.contraction}
// CHECK: %[[RELU:.*]] = linalg.generic {{.*}} ins(%[[DOT]], %[[BIAS]] :
// CHECK: bufferization.materialize_in_destination %[[RELU]] in restrict writable %[[OUT]]
// CHECK-NEXT: scf.yield %[[RELU]]
// CHECK: } else {
// CHECK-NEXT: %[[DOT2:.*]] = linalg.generic {{.*}} ins(%[[X]], %[[Y]] : {{.*}}) outs(%[[Z]] : tensor<8x32xf32>) attrs = {tessel.contraction}
// CHECK: bufferization.materialize_in_destination %[[DOT2]] in restrict writable %[[OUT]]
// CHECK-NEXT: scf.yield %[[DOT2]]
// CHECK-NOT: materialize_in_destination
// CHECK: return
// After the tiles: the last step's register tiles add the bias and take
// the max on their accumulators (one epilogue, no second pass over the
// block); the other steps' tiles store the dot.
// TILES-LABEL: func.func @last_step_epilogue
// TILES: scf.if
// TILES: scf.for {{.*}} -> (tensor<8x32xf32>)
// TILES: scf.for {{.*}} -> (vector<4x32xf32>)
// TILES: math.fma
// TILES: } {tessel.reduction_loop}
// TILES: arith.addf %{{.*}} : vector<4x32xf32>
// TILES-NEXT: arith.maximumf %{{.*}} : vector<4x32xf32>
// TILES-NEXT: vector.transfer_write
// TILES: materialize_in_destination
// TILES: } else {
// TILES-NOT: arith.maximumf
// TILES: } {tessel.reduction_loop}
// TILES-NOT: arith.maximumf
// TILES: return
module attributes {tessel.register_tile = array<i64: 4, 32>} {
func.func @last_step_epilogue(%x: tensor<8x16xf32>, %y: tensor<16x32xf32>, %z: tensor<8x32xf32>, %bias: tensor<1x32xf32>, %last: i1, %out: memref<8x32xf32>) {
  %dot = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"], tessel.contraction}
      ins(%x, %y : tensor<8x16xf32>, tensor<16x32xf32>) outs(%z : tensor<8x32xf32>) {
  ^bb0(%u: f32, %v: f32, %s: f32):
    %p = arith.mulf %u, %v : f32
    %t = arith.addf %s, %p : f32
    linalg.yield %t : f32
  } -> tensor<8x32xf32>
  %zero = arith.constant 0.0 : f32
  %result = scf.if %last -> (tensor<8x32xf32>) {
    %e = tensor.empty() : tensor<8x32xf32>
    %relu = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
        ins(%dot, %bias : tensor<8x32xf32>, tensor<1x32xf32>) outs(%e : tensor<8x32xf32>) {
    ^bb0(%d: f32, %b: f32, %o: f32):
      %sum = arith.addf %d, %b : f32
      %max = arith.maximumf %sum, %zero : f32
      linalg.yield %max : f32
    } -> tensor<8x32xf32>
    scf.yield %relu : tensor<8x32xf32>
  } else {
    scf.yield %dot : tensor<8x32xf32>
  }
  bufferization.materialize_in_destination %result in restrict writable %out : (tensor<8x32xf32>, memref<8x32xf32>) -> ()
  return
}
}

// -----

#a = affine_map<(i, j, k) -> (i, k)>
#b = affine_map<(i, j, k) -> (k, j)>
#c = affine_map<(i, j, k) -> (i, j)>
// Used by one branch only: only that branch computes it.
// CHECK-LABEL: func.func @one_branch
// CHECK: scf.if
// CHECK-NEXT: linalg.generic {{.*}}tessel.contraction
// CHECK: } else {
// CHECK-NOT: linalg.generic
// CHECK: return
// (The tiles the TILES run makes, fixed whatever the host.)
module attributes {tessel.register_tile = array<i64: 4, 32>} {
func.func @one_branch(%x: tensor<8x16xf32>, %y: tensor<16x32xf32>, %z: tensor<8x32xf32>, %last: i1) -> tensor<8x32xf32> {
  %dot = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"], tessel.contraction}
      ins(%x, %y : tensor<8x16xf32>, tensor<16x32xf32>) outs(%z : tensor<8x32xf32>) {
  ^bb0(%u: f32, %v: f32, %s: f32):
    %p = arith.mulf %u, %v : f32
    %t = arith.addf %s, %p : f32
    linalg.yield %t : f32
  } -> tensor<8x32xf32>
  %result = scf.if %last -> (tensor<8x32xf32>) {
    scf.yield %dot : tensor<8x32xf32>
  } else {
    scf.yield %z : tensor<8x32xf32>
  }
  return %result : tensor<8x32xf32>
}
}

// -----

#a = affine_map<(i, j, k) -> (i, k)>
#b = affine_map<(i, j, k) -> (k, j)>
#c = affine_map<(i, j, k) -> (i, j)>
// Left where it is: a use outside the scf.if; a store to memory between
// the contraction and the scf.if (the dot's operands may read it); a
// result stored twice; a store into a tensor (its result is read later).
// CHECK-LABEL: func.func @stays
// CHECK-NEXT: %[[DOT:.*]] = linalg.generic {{.*}}tessel.contraction
// CHECK: %[[R:.*]] = scf.if
// CHECK: return %[[DOT]]
// CHECK-LABEL: func.func @memory_between
// CHECK-NEXT: linalg.generic {{.*}}tessel.contraction
// CHECK: memref.store
// CHECK: scf.if
// CHECK-LABEL: func.func @stored_twice
// CHECK: %[[R2:.*]] = scf.if
// CHECK: materialize_in_destination %[[R2]]
// CHECK: materialize_in_destination %[[R2]]
// CHECK-LABEL: func.func @into_a_tensor
// CHECK: %[[R3:.*]] = scf.if
// CHECK: %[[M:.*]] = bufferization.materialize_in_destination %[[R3]] in %arg2
// CHECK: return %[[M]]
// (The tiles the TILES run makes, fixed whatever the host.)
module attributes {tessel.register_tile = array<i64: 4, 32>} {
func.func @stays(%x: tensor<8x16xf32>, %y: tensor<16x32xf32>, %z: tensor<8x32xf32>, %last: i1) -> tensor<8x32xf32> {
  %dot = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"], tessel.contraction}
      ins(%x, %y : tensor<8x16xf32>, tensor<16x32xf32>) outs(%z : tensor<8x32xf32>) {
  ^bb0(%u: f32, %v: f32, %s: f32):
    %p = arith.mulf %u, %v : f32
    %t = arith.addf %s, %p : f32
    linalg.yield %t : f32
  } -> tensor<8x32xf32>
  %result = scf.if %last -> (tensor<8x32xf32>) {
    scf.yield %dot : tensor<8x32xf32>
  } else {
    scf.yield %z : tensor<8x32xf32>
  }
  return %dot : tensor<8x32xf32>
}
func.func @memory_between(%x: tensor<8x16xf32>, %y: tensor<16x32xf32>, %z: tensor<8x32xf32>, %last: i1, %m: memref<4xf32>) -> tensor<8x32xf32> {
  %dot = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"], tessel.contraction}
      ins(%x, %y : tensor<8x16xf32>, tensor<16x32xf32>) outs(%z : tensor<8x32xf32>) {
  ^bb0(%u: f32, %v: f32, %s: f32):
    %p = arith.mulf %u, %v : f32
    %t = arith.addf %s, %p : f32
    linalg.yield %t : f32
  } -> tensor<8x32xf32>
  %c0 = arith.constant 0 : index
  %one = arith.constant 1.0 : f32
  memref.store %one, %m[%c0] : memref<4xf32>
  %result = scf.if %last -> (tensor<8x32xf32>) {
    scf.yield %dot : tensor<8x32xf32>
  } else {
    scf.yield %z : tensor<8x32xf32>
  }
  return %result : tensor<8x32xf32>
}
func.func @stored_twice(%z: tensor<8x32xf32>, %w: tensor<8x32xf32>, %last: i1, %out: memref<8x32xf32>, %out2: memref<8x32xf32>) {
  %result = scf.if %last -> (tensor<8x32xf32>) {
    scf.yield %z : tensor<8x32xf32>
  } else {
    scf.yield %w : tensor<8x32xf32>
  }
  bufferization.materialize_in_destination %result in restrict writable %out : (tensor<8x32xf32>, memref<8x32xf32>) -> ()
  bufferization.materialize_in_destination %result in restrict writable %out2 : (tensor<8x32xf32>, memref<8x32xf32>) -> ()
  return
}
func.func @into_a_tensor(%z: tensor<8x32xf32>, %w: tensor<8x32xf32>, %dest: tensor<8x32xf32>, %last: i1) -> tensor<8x32xf32> {
  %result = scf.if %last -> (tensor<8x32xf32>) {
    scf.yield %z : tensor<8x32xf32>
  } else {
    scf.yield %w : tensor<8x32xf32>
  }
  %m = bufferization.materialize_in_destination %result in %dest : (tensor<8x32xf32>, tensor<8x32xf32>) -> tensor<8x32xf32>
  return %m : tensor<8x32xf32>
}
}

// -----

#a = affine_map<(i, j, k) -> (i, k)>
#b = affine_map<(i, j, k) -> (k, j)>
#c = affine_map<(i, j, k) -> (i, j)>
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (0, j)>
// A linalg op on tensors between the dot and the scf.if (the bias
// broadcast, computed before the branch) touches no memory: the dot still
// moves into the branches, past it.
// CHECK-LABEL: func.func @tensor_op_between
// CHECK: %[[BROADCAST:.*]] = linalg.generic
// CHECK-NOT: tessel.contraction
// CHECK: scf.if
// CHECK-NEXT: linalg.generic {{.*}}tessel.contraction
// CHECK: } else {
// CHECK-NEXT: linalg.generic {{.*}}tessel.contraction
// CHECK: return
module attributes {tessel.register_tile = array<i64: 4, 32>} {
func.func @tensor_op_between(%x: tensor<8x16xf32>, %y: tensor<16x32xf32>, %z: tensor<8x32xf32>, %bias: tensor<1x32xf32>, %last: i1, %out: memref<8x32xf32>) {
  %dot = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"], tessel.contraction}
      ins(%x, %y : tensor<8x16xf32>, tensor<16x32xf32>) outs(%z : tensor<8x32xf32>) {
  ^bb0(%u: f32, %v: f32, %s: f32):
    %p = arith.mulf %u, %v : f32
    %t = arith.addf %s, %p : f32
    linalg.yield %t : f32
  } -> tensor<8x32xf32>
  %e = tensor.empty() : tensor<8x32xf32>
  %broadcast = linalg.generic {indexing_maps = [#row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%bias : tensor<1x32xf32>) outs(%e : tensor<8x32xf32>) {
  ^bb0(%b: f32, %o: f32):
    linalg.yield %b : f32
  } -> tensor<8x32xf32>
  %result = scf.if %last -> (tensor<8x32xf32>) {
    %e2 = tensor.empty() : tensor<8x32xf32>
    %sum = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%dot, %broadcast : tensor<8x32xf32>, tensor<8x32xf32>) outs(%e2 : tensor<8x32xf32>) {
    ^bb0(%d: f32, %b: f32, %o: f32):
      %s = arith.addf %d, %b : f32
      linalg.yield %s : f32
    } -> tensor<8x32xf32>
    scf.yield %sum : tensor<8x32xf32>
  } else {
    scf.yield %dot : tensor<8x32xf32>
  }
  bufferization.materialize_in_destination %result in restrict writable %out : (tensor<8x32xf32>, memref<8x32xf32>) -> ()
  return
}
}
