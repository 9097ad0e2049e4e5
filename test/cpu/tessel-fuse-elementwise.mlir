// tessel-fuse-elementwise: element-wise generics fused into one another
// (upstream's element-wise fusion), never into or out of a contraction:
// the chain after a dot becomes one consumer, the contraction keeps its
// body and its producers.
// RUN: tessel-opt %s --split-input-file --tessel-fuse-elementwise | FileCheck %s

#a = affine_map<(i, j, k) -> (i, k)>
#b = affine_map<(i, j, k) -> (k, j)>
#c = affine_map<(i, j, k) -> (i, j)>
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (0, j)>
// `relu(dot(x * 0.5, y) + broadcast(bias))`: the scale stays a producer of
// the contraction (its splat operand folded into its body); broadcast, add
// and max become one generic reading the dot and the bias row.
// CHECK-LABEL: func.func @chain
// CHECK: %[[SCALED:.*]] = linalg.generic {{.*}} ins(%arg0 : tensor<8x16xf32>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.mulf
// CHECK: %[[DOT:.*]] = linalg.generic {{.*}} ins(%[[SCALED]], %arg1 : tensor<8x16xf32>, tensor<16x32xf32>) outs(%arg2 : tensor<8x32xf32>) attrs = {tessel.contraction}
// CHECK-NEXT: ^bb0(%[[U:.*]]: f32, %[[V:.*]]: f32, %[[S:.*]]: f32):
// CHECK-NEXT: arith.mulf %[[U]], %[[V]] : f32
// CHECK-NEXT: arith.addf %[[S]], %{{.*}} : f32
// CHECK: %[[OUT:.*]] = linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}], iterator_types = ["parallel", "parallel"]} ins(%[[DOT]], %arg3 : tensor<8x32xf32>, tensor<1x32xf32>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.addf
// CHECK-NEXT: arith.maximumf
// CHECK-NEXT: linalg.yield
// CHECK-NOT: linalg.generic
// CHECK: return %[[OUT]]
func.func @chain(%x: tensor<8x16xf32>, %y: tensor<16x32xf32>, %z: tensor<8x32xf32>, %bias: tensor<1x32xf32>) -> tensor<8x32xf32> {
  %half = arith.constant dense<0.5> : tensor<8x16xf32>
  %ex = tensor.empty() : tensor<8x16xf32>
  %xs = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%x, %half : tensor<8x16xf32>, tensor<8x16xf32>) outs(%ex : tensor<8x16xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %m = arith.mulf %p, %q : f32
    linalg.yield %m : f32
  } -> tensor<8x16xf32>
  %dot = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"], tessel.contraction}
      ins(%xs, %y : tensor<8x16xf32>, tensor<16x32xf32>) outs(%z : tensor<8x32xf32>) {
  ^bb0(%u: f32, %v: f32, %s: f32):
    %p = arith.mulf %u, %v : f32
    %t = arith.addf %s, %p : f32
    linalg.yield %t : f32
  } -> tensor<8x32xf32>
  %e1 = tensor.empty() : tensor<8x32xf32>
  %bb = linalg.generic {indexing_maps = [#row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%bias : tensor<1x32xf32>) outs(%e1 : tensor<8x32xf32>) {
  ^bb0(%in: f32, %o: f32):
    linalg.yield %in : f32
  } -> tensor<8x32xf32>
  %e2 = tensor.empty() : tensor<8x32xf32>
  %sum = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%dot, %bb : tensor<8x32xf32>, tensor<8x32xf32>) outs(%e2 : tensor<8x32xf32>) {
  ^bb0(%d: f32, %b: f32, %o: f32):
    %s = arith.addf %d, %b : f32
    linalg.yield %s : f32
  } -> tensor<8x32xf32>
  %zero = arith.constant 0.0 : f32
  %e3 = tensor.empty() : tensor<8x32xf32>
  %relu = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%sum : tensor<8x32xf32>) outs(%e3 : tensor<8x32xf32>) {
  ^bb0(%s: f32, %o: f32):
    %m = arith.maximumf %s, %zero : f32
    linalg.yield %m : f32
  } -> tensor<8x32xf32>
  return %relu : tensor<8x32xf32>
}

// -----

#id = affine_map<(i, j) -> (i, j)>
// A producer read twice (by an element-wise op and by a reduction) is not
// fused: it would be computed twice. The reduction is not rewritten.
// CHECK-LABEL: func.func @shared
// CHECK: %[[EXP:.*]] = linalg.generic
// CHECK-NEXT: ^bb0
// CHECK-NEXT: math.exp
// CHECK: linalg.generic {{.*}} ins(%[[EXP]] :
// CHECK: linalg.reduce ins(%[[EXP]] :
func.func @shared(%x: tensor<8x32xf32>, %acc: tensor<8xf32>) -> (tensor<8x32xf32>, tensor<8xf32>) {
  %e1 = tensor.empty() : tensor<8x32xf32>
  %exp = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<8x32xf32>) outs(%e1 : tensor<8x32xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = math.exp %v : f32
    linalg.yield %r : f32
  } -> tensor<8x32xf32>
  %e2 = tensor.empty() : tensor<8x32xf32>
  %neg = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%exp : tensor<8x32xf32>) outs(%e2 : tensor<8x32xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.negf %v : f32
    linalg.yield %r : f32
  } -> tensor<8x32xf32>
  %sum = linalg.reduce ins(%exp : tensor<8x32xf32>) outs(%acc : tensor<8xf32>) dimensions = [1]
    (%v: f32, %s: f32) {
      %t = arith.addf %v, %s : f32
      linalg.yield %t : f32
    }
  return %neg, %sum : tensor<8x32xf32>, tensor<8xf32>
}
