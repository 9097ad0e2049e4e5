// tessel-group-reductions: the tuner's GROUP / GROUPTOP on CPUs.
// RUN: tessel-opt %s --split-input-file --tessel-group-reductions --canonicalize --cse | FileCheck %s

// GROUP 16 of 8 row sums over 4096 (the contiguous dimension): partial p
// sums elements p, p + 16, ...; one row at a time, the 16 partials are a
// vector read before the reduction loop, added to once per step (no
// horizontal reduction in the loop) and written after it; then the 16
// partials of each row are summed.
// CHECK-LABEL: func.func @rows
// CHECK: %[[X:.*]] = tensor.expand_shape %{{.*}} {{\[\[}}0], [1, 2]] output_shape [8, 256, 16]
// CHECK: scf.for %[[ROW:.*]] = %{{.*}} to %{{.*}} iter_args(%[[ALL:.*]] = %{{.*}}) -> (tensor<8x16xf32>)
// CHECK:   %[[INIT:.*]] = vector.transfer_read {{.*}} : tensor<1x16xf32>, vector<1x16xf32>
// CHECK:   %[[SUMS:.*]] = scf.for %[[STEP:.*]] = %{{.*}} to %{{.*}} iter_args(%[[ACC:.*]] = %[[INIT]]) -> (vector<1x16xf32>)
// CHECK:     tensor.extract_slice %[[X]][%[[ROW]], %[[STEP]], 0] [1, 1, 16]
// CHECK:     arith.addf %{{.*}} : vector<16xf32>
// CHECK-NOT:   vector.reduction
// CHECK:     scf.yield %{{.*}} : vector<1x16xf32>
// CHECK:   } {tessel.group_loop}
// CHECK:   vector.transfer_write %[[SUMS]]
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%{{.*}} : tensor<8x16xf32>) outs(%{{.*}} : tensor<8xf32>)
// CHECK: arith.addf {{.*}} fastmath<reassoc>
module attributes {tessel.group = 16 : i64} {
  func.func @rows(%x: tensor<8x4096xf32>) -> tensor<8xf32> {
    %zero = arith.constant 0.0 : f32
    %empty = tensor.empty() : tensor<8xf32>
    %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<8xf32>) -> tensor<8xf32>
    %r = linalg.reduce ins(%x : tensor<8x4096xf32>) outs(%init : tensor<8xf32>) dimensions = [1]
      (%in: f32, %acc: f32) {
        %s = arith.addf %in, %acc fastmath<reassoc> : f32
        linalg.yield %s : f32
      }
    return %r : tensor<8xf32>
  }
}

// -----

// GROUPTOP 4: partial p takes the p-th contiguous quarter (the split
// dimension outer, each quarter's loop innermost), for a max over rows
// and an integer sum over a leading dimension alike; P shrinks to a
// divisor of the extent (4 of 100 -> 4, 4 of 6 -> 3, two elements per
// partial at least). No vectorization: LLVM vectorizes each chunk.
// CHECK-LABEL: func.func @top
// CHECK: tensor.expand_shape %{{.*}} {{\[\[}}0], [1, 2]] output_shape [2, 4, 25] : tensor<2x100xf32>
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%{{.*}} : tensor<2x4x25xf32>) outs(%{{.*}} : tensor<2x4xf32>)
// CHECK: arith.maximumf
// CHECK: tensor.expand_shape %{{.*}} {{\[\[}}0, 1], [2]] output_shape [3, 2, 5] : tensor<6x5xi32>
// CHECK: iterator_types = ["parallel", "reduction", "parallel"]} ins(%{{.*}} : tensor<3x2x5xi32>) outs(%{{.*}} : tensor<3x5xi32>)
// CHECK-NOT: vector.
module attributes {tessel.group = 4 : i64, tessel.group_top = 1 : i64} {
  func.func @top(%x: tensor<2x100xf32>, %y: tensor<6x5xi32>) -> (tensor<2xf32>, tensor<5xi32>) {
    %lowest = arith.constant 0xFF800000 : f32
    %empty = tensor.empty() : tensor<2xf32>
    %init = linalg.fill ins(%lowest : f32) outs(%empty : tensor<2xf32>) -> tensor<2xf32>
    %m = linalg.reduce ins(%x : tensor<2x100xf32>) outs(%init : tensor<2xf32>) dimensions = [1]
      (%in: f32, %acc: f32) {
        %s = arith.maximumf %in, %acc fastmath<reassoc> : f32
        linalg.yield %s : f32
      }
    %zero = arith.constant 0 : i32
    %iempty = tensor.empty() : tensor<5xi32>
    %iinit = linalg.fill ins(%zero : i32) outs(%iempty : tensor<5xi32>) -> tensor<5xi32>
    %s = linalg.reduce ins(%y : tensor<6x5xi32>) outs(%iinit : tensor<5xi32>) dimensions = [0]
      (%in: i32, %acc: i32) {
        %t = arith.addi %in, %acc : i32
        linalg.yield %t : i32
      }
    return %m, %s : tensor<2xf32>, tensor<5xi32>
  }
}

// -----

// Unchanged: a float sum without reassoc (its order is fixed), a
// contraction (block.dot keeps its k order), and a reduction too short to
// split (two elements: one partial of two).
// CHECK-LABEL: func.func @kept
// CHECK-NOT: tensor.expand_shape
// CHECK: linalg.reduce ins(%{{.*}} : tensor<64xf32>)
// CHECK: linalg.generic {{.*}}tessel.contraction
// CHECK: linalg.reduce ins(%{{.*}} : tensor<2xi32>)
#lhs = affine_map<(i, j, k) -> (i, k)>
#rhs = affine_map<(i, j, k) -> (k, j)>
#out = affine_map<(i, j, k) -> (i, j)>
module attributes {tessel.group = 16 : i64} {
  func.func @kept(%x: tensor<64xf32>, %a: tensor<4x64xf32>, %b: tensor<64x4xf32>, %c: tensor<4x4xf32>, %y: tensor<2xi32>)
      -> (tensor<f32>, tensor<4x4xf32>, tensor<i32>) {
    %zero = arith.constant 0.0 : f32
    %empty = tensor.empty() : tensor<f32>
    %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<f32>) -> tensor<f32>
    %r = linalg.reduce ins(%x : tensor<64xf32>) outs(%init : tensor<f32>) dimensions = [0]
      (%in: f32, %acc: f32) {
        %s = arith.addf %in, %acc : f32
        linalg.yield %s : f32
      }
    %d = linalg.generic {indexing_maps = [#lhs, #rhs, #out], iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%a, %b : tensor<4x64xf32>, tensor<64x4xf32>) outs(%c : tensor<4x4xf32>) attrs = {tessel.contraction} {
      ^bb0(%l: f32, %rr: f32, %o: f32):
        %f = math.fma %l, %rr, %o : f32
        linalg.yield %f : f32
    } -> tensor<4x4xf32>
    %izero = arith.constant 0 : i32
    %iempty = tensor.empty() : tensor<i32>
    %iinit = linalg.fill ins(%izero : i32) outs(%iempty : tensor<i32>) -> tensor<i32>
    %t = linalg.reduce ins(%y : tensor<2xi32>) outs(%iinit : tensor<i32>) dimensions = [0]
      (%in: i32, %acc: i32) {
        %u = arith.addi %in, %acc : i32
        linalg.yield %u : i32
      }
    return %r, %d, %t : tensor<f32>, tensor<4x4xf32>, tensor<i32>
  }
}

// -----

// Without tessel.group the pass changes nothing.
// CHECK-LABEL: func.func @off
// CHECK-NOT: tensor.expand_shape
// CHECK: linalg.reduce
func.func @off(%x: tensor<8x4096xf32>) -> tensor<8xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<8xf32>) -> tensor<8xf32>
  %r = linalg.reduce ins(%x : tensor<8x4096xf32>) outs(%init : tensor<8xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc fastmath<reassoc> : f32
      linalg.yield %s : f32
    }
  return %r : tensor<8xf32>
}
