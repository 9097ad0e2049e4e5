// RUN: tessel-opt %s --split-input-file --tessel-cross-lane-reductions | FileCheck %s

// A one-row reduction's first combine level (tessel-split-reductions):
// 256 partials, one per work-item (4 waves of 64), in clusters of 64
// consecutive lanes. Iteration i is work-item i; each cluster reduces
// across its lanes and its first lane folds the result into the output
// (which holds the fill).
// CHECK-LABEL: func.func @one_row
// CHECK-NOT: linalg.generic
// CHECK: scf.parallel (%[[I:.*]]) = (%{{.*}}) to (%[[N:.*]]) step (%{{.*}}) {
// CHECK: %[[D:.*]]:3 = affine.delinearize_index %[[I]] into (1, 4, 64) : index, index, index
// CHECK: %[[V:.*]] = memref.load %arg0[%[[D]]#0, %[[D]]#1, %[[D]]#2] : memref<1x4x64xf32>
// CHECK: %[[W:.*]] = gpu.subgroup_reduce maximumf %[[V]] cluster(size = 64) : (f32) -> f32
// CHECK: %[[FIRST:.*]] = arith.cmpi eq, %[[D]]#2, %{{.*}} : index
// CHECK: scf.if %[[FIRST]] {
// CHECK: %[[O:.*]] = memref.load %arg1[%[[D]]#0, %[[D]]#1] : memref<1x4xf32>
// CHECK: %[[R:.*]] = arith.maximumf %[[W]], %[[O]] : f32
// CHECK: memref.store %[[R]], %arg1[%[[D]]#0, %[[D]]#1] : memref<1x4xf32>
#in3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#out3 = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @one_row(%in: memref<1x4x64xf32>, %out: memref<1x4xf32>) {
  linalg.generic {indexing_maps = [#in3, #out3], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%in : memref<1x4x64xf32>) outs(%out : memref<1x4xf32>) attrs = {tessel.cross_lane} {
  ^bb0(%a: f32, %b: f32):
    %m = arith.maximumf %a, %b fastmath<reassoc> : f32
    linalg.yield %m : f32
  }
  return
}

// -----

// Eight rows on 2 waves of 32 lanes (RDNA): 64 partials, 8 per row, each
// row's in a cluster of 8 lanes; an integer sum.
// CHECK-LABEL: func.func @rows_on_wave32
// CHECK: affine.delinearize_index %{{.*}} into (8, 8) : index, index
// CHECK: gpu.subgroup_reduce add %{{.*}} cluster(size = 8) : (i32) -> i32
// CHECK: arith.addi
module attributes {tessel.wave_size = 32 : i64, tessel.num_warps = 2 : i64} {
  func.func @rows_on_wave32(%in: memref<8x8xi32>, %out: memref<8xi32>) {
    linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                    iterator_types = ["parallel", "reduction"]}
        ins(%in : memref<8x8xi32>) outs(%out : memref<8xi32>) attrs = {tessel.cross_lane} {
    ^bb0(%a: i32, %b: i32):
      %s = arith.addi %a, %b : i32
      linalg.yield %s : i32
    }
    return
  }
}

// -----

// Left as they are (still correct, serial reductions): iterations that are
// not the workgroup's work-items (128 of 256), a body that is more than
// the combiner, 64-bit elements (DPP moves 32-bit registers), clusters
// wider than a wave, and unmarked reductions.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: gpu.subgroup_reduce
// CHECK-COUNT-5: linalg.generic
// CHECK-NOT: gpu.subgroup_reduce
#in2 = affine_map<(d0, d1) -> (d0, d1)>
#out2 = affine_map<(d0, d1) -> (d0)>
func.func @left_alone(%half: memref<2x64xf32>, %out2: memref<2xf32>, %full: memref<4x64xf32>, %out4: memref<4xf32>,
                      %wide: memref<4x64xf64>, %out4d: memref<4xf64>, %one: memref<1x256xf32>, %out1: memref<1xf32>) {
  linalg.generic {indexing_maps = [#in2, #out2], iterator_types = ["parallel", "reduction"]}
      ins(%half : memref<2x64xf32>) outs(%out2 : memref<2xf32>) attrs = {tessel.cross_lane} {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#in2, #out2], iterator_types = ["parallel", "reduction"]}
      ins(%full : memref<4x64xf32>) outs(%out4 : memref<4xf32>) attrs = {tessel.cross_lane} {
  ^bb0(%a: f32, %b: f32):
    %e = math.exp %a : f32
    %s = arith.addf %e, %b : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#in2, #out2], iterator_types = ["parallel", "reduction"]}
      ins(%wide : memref<4x64xf64>) outs(%out4d : memref<4xf64>) attrs = {tessel.cross_lane} {
  ^bb0(%a: f64, %b: f64):
    %s = arith.addf %a, %b : f64
    linalg.yield %s : f64
  }
  linalg.generic {indexing_maps = [#in2, #out2], iterator_types = ["parallel", "reduction"]}
      ins(%one : memref<1x256xf32>) outs(%out1 : memref<1xf32>) attrs = {tessel.cross_lane} {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#in2, #out2], iterator_types = ["parallel", "reduction"]}
      ins(%full : memref<4x64xf32>) outs(%out4 : memref<4xf32>) {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// An output that is a program's own buffer only a fill with the combiner's
// identity initializes (split_reduction's partial buffer: -inf for a max)
// is overwritten: the first lanes store their results as they are and the
// fill goes (the workgroup no longer waits for it). A fill with another
// value (a sum from 1.0) stays and is folded in, and so does an identity
// fill whose buffer is read before the reduction.
// CHECK-LABEL: func.func @identity_fill
// CHECK: %[[BUF:.*]] = memref.alloc() : memref<1x4xf32>
// CHECK-NOT: linalg.fill
// CHECK: gpu.subgroup_reduce maximumf
// CHECK: scf.if
// CHECK-NEXT: memref.store %{{.*}}, %[[BUF]]
// CHECK-NEXT: }
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[OTHER:.*]] : memref<1x4xf32>)
// CHECK: gpu.subgroup_reduce add
// CHECK: scf.if
// CHECK-NEXT: memref.load %[[OTHER]]
// CHECK-NEXT: arith.addf
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[READ:.*]] : memref<1x4xf32>)
// CHECK-NEXT: memref.copy %[[READ]]
// CHECK: gpu.subgroup_reduce maximumf
// CHECK: scf.if
// CHECK-NEXT: memref.load %[[READ]]
// CHECK-NEXT: arith.maximumf
#in3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#out3 = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @identity_fill(%in: memref<1x4x64xf32>, %res: memref<1x4xf32>) {
  %ninf = arith.constant 0xFF800000 : f32
  %one = arith.constant 1.0 : f32
  %buf = memref.alloc() : memref<1x4xf32>
  linalg.fill ins(%ninf : f32) outs(%buf : memref<1x4xf32>)
  linalg.generic {indexing_maps = [#in3, #out3], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%in : memref<1x4x64xf32>) outs(%buf : memref<1x4xf32>) attrs = {tessel.cross_lane} {
  ^bb0(%a: f32, %b: f32):
    %m = arith.maximumf %a, %b fastmath<reassoc> : f32
    linalg.yield %m : f32
  }
  memref.copy %buf, %res : memref<1x4xf32> to memref<1x4xf32>
  %other = memref.alloc() : memref<1x4xf32>
  linalg.fill ins(%one : f32) outs(%other : memref<1x4xf32>)
  linalg.generic {indexing_maps = [#in3, #out3], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%in : memref<1x4x64xf32>) outs(%other : memref<1x4xf32>) attrs = {tessel.cross_lane} {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b fastmath<reassoc> : f32
    linalg.yield %s : f32
  }
  memref.copy %other, %res : memref<1x4xf32> to memref<1x4xf32>
  %read = memref.alloc() : memref<1x4xf32>
  linalg.fill ins(%ninf : f32) outs(%read : memref<1x4xf32>)
  memref.copy %read, %res : memref<1x4xf32> to memref<1x4xf32>
  linalg.generic {indexing_maps = [#in3, #out3], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%in : memref<1x4x64xf32>) outs(%read : memref<1x4xf32>) attrs = {tessel.cross_lane} {
  ^bb0(%a: f32, %b: f32):
    %m = arith.maximumf %a, %b fastmath<reassoc> : f32
    linalg.yield %m : f32
  }
  return
}
