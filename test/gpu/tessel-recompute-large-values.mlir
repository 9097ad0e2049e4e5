// RUN: tessel-opt %s --split-input-file --tessel-recompute-large-values | FileCheck %s
// RUN: tessel-opt %s --split-input-file --tessel-recompute-large-values --linalg-fuse-elementwise-ops | FileCheck %s --check-prefix=FUSED

// Eight 4096-wide rows (128 KiB, more than a workgroup's 64 KiB of LDS):
// e = exp(x - max) feeds the row sums and the division. The sums' reduce
// becomes a generic and the division gets its own copy of the subtraction
// and the exponential (and of the broadcast of the maxima), so after
// fusion no consumer reads e from a buffer: both recompute it from x.
// CHECK-LABEL: func.func @softmax_rows
// CHECK-COUNT-2: math.exp
// CHECK-NOT: linalg.reduce
// FUSED-LABEL: func.func @softmax_rows
// FUSED: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%arg0, %arg1 : tensor<8x4096xf32>, tensor<8xf32>) outs(%{{.*}} : tensor<8xf32>)
// FUSED: math.exp
// FUSED: arith.addf {{.*}} fastmath<reassoc>
// FUSED: linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]} ins(%arg0, %arg1, %{{.*}} : tensor<8x4096xf32>, tensor<8xf32>, tensor<8xf32>) outs(%{{.*}} : tensor<8x4096xf32>)
// FUSED: math.exp
// FUSED: arith.divf
// FUSED-NOT: linalg.generic
// FUSED: return
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @softmax_rows(%x: tensor<8x4096xf32>, %m: tensor<8xf32>) -> tensor<8x4096xf32> {
  %empty = tensor.empty() : tensor<8x4096xf32>
  %mb = linalg.generic {indexing_maps = [#row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%m : tensor<8xf32>) outs(%empty : tensor<8x4096xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<8x4096xf32>
  %e = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %mb : tensor<8x4096xf32>, tensor<8x4096xf32>) outs(%empty : tensor<8x4096xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %d = arith.subf %a, %b : f32
    %x2 = math.exp %d : f32
    linalg.yield %x2 : f32
  } -> tensor<8x4096xf32>
  %zero = arith.constant 0.0 : f32
  %rows = tensor.empty() : tensor<8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%rows : tensor<8xf32>) -> tensor<8xf32>
  %s = linalg.reduce ins(%e : tensor<8x4096xf32>) outs(%init : tensor<8xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %t = arith.addf %in, %acc fastmath<reassoc> : f32
      linalg.yield %t : f32
    }
  %r = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%e, %s : tensor<8x4096xf32>, tensor<8xf32>) outs(%empty : tensor<8x4096xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %q = arith.divf %a, %b : f32
    linalg.yield %q : f32
  } -> tensor<8x4096xf32>
  return %r : tensor<8x4096xf32>
}

// -----

// Left alone: a value that fits LDS (one 4096-wide row, 16 KiB: its
// reduction stays a linalg.reduce), and a large one whose other consumer
// is a contraction (recomputing it there would redo it for every output
// column): one exponential each.
// CHECK-LABEL: func.func @left_alone
// CHECK: math.exp
// CHECK: linalg.reduce ins(%{{.*}} : tensor<1x4096xf32>)
// CHECK: math.exp
// CHECK-NOT: math.exp
// CHECK: return
#id1 = affine_map<(d0, d1) -> (d0, d1)>
#a = affine_map<(i, j, k) -> (i, k)>
#b = affine_map<(i, j, k) -> (k, j)>
#c = affine_map<(i, j, k) -> (i, j)>
func.func @left_alone(%row: tensor<1x4096xf32>, %big: tensor<128x256xf32>, %v: tensor<256x64xf32>)
    -> (tensor<1xf32>, tensor<1x4096xf32>, tensor<128xf32>, tensor<128x64xf32>) {
  %e1 = tensor.empty() : tensor<1x4096xf32>
  %small = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel", "parallel"]}
      ins(%row : tensor<1x4096xf32>) outs(%e1 : tensor<1x4096xf32>) {
  ^bb0(%a: f32, %out: f32):
    %x = math.exp %a : f32
    linalg.yield %x : f32
  } -> tensor<1x4096xf32>
  %zero = arith.constant 0.0 : f32
  %r1 = tensor.empty() : tensor<1xf32>
  %i1 = linalg.fill ins(%zero : f32) outs(%r1 : tensor<1xf32>) -> tensor<1xf32>
  %s1 = linalg.reduce ins(%small : tensor<1x4096xf32>) outs(%i1 : tensor<1xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %t = arith.addf %in, %acc fastmath<reassoc> : f32
      linalg.yield %t : f32
    }
  %twice = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel", "parallel"]}
      ins(%small : tensor<1x4096xf32>) outs(%e1 : tensor<1x4096xf32>) {
  ^bb0(%a: f32, %out: f32):
    %y = arith.addf %a, %a : f32
    linalg.yield %y : f32
  } -> tensor<1x4096xf32>
  %e2 = tensor.empty() : tensor<128x256xf32>
  %p = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel", "parallel"]}
      ins(%big : tensor<128x256xf32>) outs(%e2 : tensor<128x256xf32>) {
  ^bb0(%a: f32, %out: f32):
    %x = math.exp %a : f32
    linalg.yield %x : f32
  } -> tensor<128x256xf32>
  %r2 = tensor.empty() : tensor<128xf32>
  %i2 = linalg.fill ins(%zero : f32) outs(%r2 : tensor<128xf32>) -> tensor<128xf32>
  %s2 = linalg.reduce ins(%p : tensor<128x256xf32>) outs(%i2 : tensor<128xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %t = arith.addf %in, %acc fastmath<reassoc> : f32
      linalg.yield %t : f32
    }
  %e3 = tensor.empty() : tensor<128x64xf32>
  %i3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<128x64xf32>) -> tensor<128x64xf32>
  %o = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%p, %v : tensor<128x256xf32>, tensor<256x64xf32>) outs(%i3 : tensor<128x64xf32>) attrs = {tessel.contraction} {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %f = math.fma %a, %b, %acc : f32
    linalg.yield %f : f32
  } -> tensor<128x64xf32>
  return %s1, %twice, %s2, %o : tensor<1xf32>, tensor<1x4096xf32>, tensor<128xf32>, tensor<128x64xf32>
}
