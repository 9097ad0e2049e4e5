// RUN: tessel-opt %s --split-input-file --tessel-merge-k-steps | FileCheck %s

// The Pallas idiom after grid-to-loops and bufferization: an arbitrary k
// axis of 8 steps zero-fills the output block at its first step and
// accumulates the contraction of the k-th column block of A and row block
// of B into it. It becomes the fill and one contraction over all 1024 k:
// A's [r, 0] and B's [0, c] views of the whole of k, no loop.
// CHECK-LABEL: func.func @k_on_the_grid
// CHECK: scf.forall (%[[I:.*]], %[[J:.*]]) in (8, 8) {
// CHECK-NOT: scf.for
// CHECK: %[[C:.*]] = memref.subview %arg2[%{{.*}}, %{{.*}}] [128, 128] [1, 1]
// CHECK: %[[A:.*]] = memref.subview %arg0[%{{.*}}, %{{.*}}] [128, 1024] [1, 1] : memref<1024x1024xi8> to memref<128x1024xi8, strided<[1024, 1], offset: ?>>
// CHECK: %[[B:.*]] = memref.subview %arg1[%{{.*}}, %{{.*}}] [1024, 128] [1, 1] : memref<1024x1024xi8> to memref<1024x128xi8, strided<[1024, 1], offset: ?>>
// CHECK: linalg.fill ins(%{{.*}} : i32) outs(%[[C]] :
// CHECK-NEXT: linalg.generic {{.*}} ins(%[[A]], %[[B]] : {{.*}}) outs(%[[C]] : {{.*}}) attrs = {tessel.contraction}
// CHECK-NOT: scf.for
// CHECK: return
#k_block = affine_map<(d0) -> (d0 * 128)>
#lhs = affine_map<(d0, d1, d2) -> (d0, d2)>
#rhs = affine_map<(d0, d1, d2) -> (d2, d1)>
#out = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @k_on_the_grid(%x: memref<1024x1024xi8>, %y: memref<1024x1024xi8>, %z: memref<1024x1024xi32>) {
  %zero = arith.constant 0 : i32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  scf.forall (%i, %j) in (8, 8) {
    scf.for %k = %c0 to %c8 step %c1 {
      %row = affine.apply #k_block(%i)
      %kk = affine.apply #k_block(%k)
      %col = affine.apply #k_block(%j)
      %a = memref.subview %x[%row, %kk] [128, 128] [1, 1] : memref<1024x1024xi8> to memref<128x128xi8, strided<[1024, 1], offset: ?>>
      %b = memref.subview %y[%kk, %col] [128, 128] [1, 1] : memref<1024x1024xi8> to memref<128x128xi8, strided<[1024, 1], offset: ?>>
      %c = memref.subview %z[%row, %col] [128, 128] [1, 1] : memref<1024x1024xi32> to memref<128x128xi32, strided<[1024, 1], offset: ?>>
      %first = arith.cmpi eq, %k, %c0 : index
      scf.if %first {
        linalg.fill ins(%zero : i32) outs(%c : memref<128x128xi32, strided<[1024, 1], offset: ?>>)
      }
      linalg.generic {indexing_maps = [#lhs, #rhs, #out], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %b : memref<128x128xi8, strided<[1024, 1], offset: ?>>, memref<128x128xi8, strided<[1024, 1], offset: ?>>) outs(%c : memref<128x128xi32, strided<[1024, 1], offset: ?>>) attrs = {tessel.contraction} {
      ^bb0(%p: i8, %q: i8, %acc: i32):
        %pw = arith.extsi %p : i8 to i32
        %qw = arith.extsi %q : i8 to i32
        %m = arith.muli %pw, %qw : i32
        %s = arith.addi %acc, %m : i32
        linalg.yield %s : i32
      }
    } {tessel.arbitrary_axis = 2 : i64}
  }
  return
}

// -----

// Without a fill (the output block accumulated into as it is): the same
// merge, the contraction alone.
// CHECK-LABEL: func.func @accumulate_into_output
// CHECK-NOT: scf.for
// CHECK-NOT: linalg.fill
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : memref<16x64xf32, strided<[64, 1], offset: ?>>, memref<64x16xf32, strided<[16, 1], offset: ?>>)
#k_block = affine_map<(d0) -> (d0 * 16)>
#lhs = affine_map<(d0, d1, d2) -> (d0, d2)>
#rhs = affine_map<(d0, d1, d2) -> (d2, d1)>
#out = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @accumulate_into_output(%x: memref<16x64xf32>, %y: memref<64x16xf32>, %z: memref<16x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %k = %c0 to %c4 step %c1 {
    %kk = affine.apply #k_block(%k)
    %a = memref.subview %x[%c0, %kk] [16, 16] [1, 1] : memref<16x64xf32> to memref<16x16xf32, strided<[64, 1], offset: ?>>
    %b = memref.subview %y[%kk, %c0] [16, 16] [1, 1] : memref<64x16xf32> to memref<16x16xf32, strided<[16, 1], offset: ?>>
    %c = memref.subview %z[%c0, %c0] [16, 16] [1, 1] : memref<16x16xf32> to memref<16x16xf32, strided<[16, 1], offset: ?>>
    linalg.generic {indexing_maps = [#lhs, #rhs, #out], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %b : memref<16x16xf32, strided<[64, 1], offset: ?>>, memref<16x16xf32, strided<[16, 1], offset: ?>>) outs(%c : memref<16x16xf32, strided<[16, 1], offset: ?>>) attrs = {tessel.contraction} {
    ^bb0(%p: f32, %q: f32, %acc: f32):
      %s = math.fma %p, %q, %acc : f32
      linalg.yield %s : f32
    }
  } {tessel.arbitrary_axis = 2 : i64}
  return
}

// -----

// Left alone: a loop whose body does more than accumulate (the output
// block is also scaled each step), a loop that is not an arbitrary grid
// axis, one whose B view does not move with k (the same block every
// step: not one contraction over more k), and one whose output is a block
// of the array A is read from (a later k block of A would be read before
// earlier steps wrote it), and one whose contraction body uses a value
// the loop computes.
// CHECK-LABEL: func.func @not_merged
// CHECK-COUNT-5: scf.for
#k_block = affine_map<(d0) -> (d0 * 16)>
#lhs = affine_map<(d0, d1, d2) -> (d0, d2)>
#rhs = affine_map<(d0, d1, d2) -> (d2, d1)>
#out = affine_map<(d0, d1, d2) -> (d0, d1)>
#scale = affine_map<(d0, d1) -> (d0, d1)>
func.func @not_merged(%x: memref<16x64xf32>, %y: memref<64x16xf32>, %z: memref<16x16xf32>, %w: memref<16x80xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c64 = arith.constant 64 : index
  scf.for %k = %c0 to %c4 step %c1 {
    %kk = affine.apply #k_block(%k)
    %a = memref.subview %x[%c0, %kk] [16, 16] [1, 1] : memref<16x64xf32> to memref<16x16xf32, strided<[64, 1], offset: ?>>
    %b = memref.subview %y[%kk, %c0] [16, 16] [1, 1] : memref<64x16xf32> to memref<16x16xf32, strided<[16, 1], offset: ?>>
    %c = memref.subview %z[%c0, %c0] [16, 16] [1, 1] : memref<16x16xf32> to memref<16x16xf32, strided<[16, 1], offset: ?>>
    linalg.generic {indexing_maps = [#lhs, #rhs, #out], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %b : memref<16x16xf32, strided<[64, 1], offset: ?>>, memref<16x16xf32, strided<[16, 1], offset: ?>>) outs(%c : memref<16x16xf32, strided<[16, 1], offset: ?>>) attrs = {tessel.contraction} {
    ^bb0(%p: f32, %q: f32, %acc: f32):
      %s = math.fma %p, %q, %acc : f32
      linalg.yield %s : f32
    }
    linalg.generic {indexing_maps = [#scale], iterator_types = ["parallel", "parallel"]} outs(%c : memref<16x16xf32, strided<[16, 1], offset: ?>>) {
    ^bb0(%v: f32):
      %d = arith.addf %v, %v : f32
      linalg.yield %d : f32
    }
  } {tessel.arbitrary_axis = 2 : i64}
  scf.for %k = %c0 to %c4 step %c1 {
    %kk = affine.apply #k_block(%k)
    %a = memref.subview %x[%c0, %kk] [16, 16] [1, 1] : memref<16x64xf32> to memref<16x16xf32, strided<[64, 1], offset: ?>>
    %b = memref.subview %y[%kk, %c0] [16, 16] [1, 1] : memref<64x16xf32> to memref<16x16xf32, strided<[16, 1], offset: ?>>
    %c = memref.subview %z[%c0, %c0] [16, 16] [1, 1] : memref<16x16xf32> to memref<16x16xf32, strided<[16, 1], offset: ?>>
    linalg.generic {indexing_maps = [#lhs, #rhs, #out], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %b : memref<16x16xf32, strided<[64, 1], offset: ?>>, memref<16x16xf32, strided<[16, 1], offset: ?>>) outs(%c : memref<16x16xf32, strided<[16, 1], offset: ?>>) attrs = {tessel.contraction} {
    ^bb0(%p: f32, %q: f32, %acc: f32):
      %s = math.fma %p, %q, %acc : f32
      linalg.yield %s : f32
    }
  }
  scf.for %k = %c0 to %c4 step %c1 {
    %kk = affine.apply #k_block(%k)
    %a = memref.subview %x[%c0, %kk] [16, 16] [1, 1] : memref<16x64xf32> to memref<16x16xf32, strided<[64, 1], offset: ?>>
    %b = memref.subview %y[%c0, %c0] [16, 16] [1, 1] : memref<64x16xf32> to memref<16x16xf32, strided<[16, 1], offset: ?>>
    %c = memref.subview %z[%c0, %c0] [16, 16] [1, 1] : memref<16x16xf32> to memref<16x16xf32, strided<[16, 1], offset: ?>>
    linalg.generic {indexing_maps = [#lhs, #rhs, #out], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %b : memref<16x16xf32, strided<[64, 1], offset: ?>>, memref<16x16xf32, strided<[16, 1], offset: ?>>) outs(%c : memref<16x16xf32, strided<[16, 1], offset: ?>>) attrs = {tessel.contraction} {
    ^bb0(%p: f32, %q: f32, %acc: f32):
      %s = math.fma %p, %q, %acc : f32
      linalg.yield %s : f32
    }
  } {tessel.arbitrary_axis = 2 : i64}
  scf.for %k = %c0 to %c4 step %c1 {
    %kk = affine.apply #k_block(%k)
    %a = memref.subview %w[%c0, %kk] [16, 16] [1, 1] : memref<16x80xf32> to memref<16x16xf32, strided<[80, 1], offset: ?>>
    %b = memref.subview %y[%kk, %c0] [16, 16] [1, 1] : memref<64x16xf32> to memref<16x16xf32, strided<[16, 1], offset: ?>>
    %c = memref.subview %w[%c0, %c64] [16, 16] [1, 1] : memref<16x80xf32> to memref<16x16xf32, strided<[80, 1], offset: ?>>
    linalg.generic {indexing_maps = [#lhs, #rhs, #out], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %b : memref<16x16xf32, strided<[80, 1], offset: ?>>, memref<16x16xf32, strided<[16, 1], offset: ?>>) outs(%c : memref<16x16xf32, strided<[80, 1], offset: ?>>) attrs = {tessel.contraction} {
    ^bb0(%p: f32, %q: f32, %acc: f32):
      %s = math.fma %p, %q, %acc : f32
      linalg.yield %s : f32
    }
  } {tessel.arbitrary_axis = 2 : i64}
  scf.for %k = %c0 to %c4 step %c1 {
    %kk = affine.apply #k_block(%k)
    %half = arith.constant 0.5 : f32
    %a = memref.subview %x[%c0, %kk] [16, 16] [1, 1] : memref<16x64xf32> to memref<16x16xf32, strided<[64, 1], offset: ?>>
    %b = memref.subview %y[%kk, %c0] [16, 16] [1, 1] : memref<64x16xf32> to memref<16x16xf32, strided<[16, 1], offset: ?>>
    %c = memref.subview %z[%c0, %c0] [16, 16] [1, 1] : memref<16x16xf32> to memref<16x16xf32, strided<[16, 1], offset: ?>>
    linalg.generic {indexing_maps = [#lhs, #rhs, #out], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %b : memref<16x16xf32, strided<[64, 1], offset: ?>>, memref<16x16xf32, strided<[16, 1], offset: ?>>) outs(%c : memref<16x16xf32, strided<[16, 1], offset: ?>>) attrs = {tessel.contraction} {
    ^bb0(%p: f32, %q: f32, %acc: f32):
      %ph = arith.mulf %p, %half : f32
      %s = math.fma %ph, %q, %acc : f32
      linalg.yield %s : f32
    }
  } {tessel.arbitrary_axis = 2 : i64}
  return
}

// -----

// A last-trip epilogue (`k == last ? relu(dot + bias) : dot`, bufferized:
// the branch computes into a buffer it yields, the else branch yields the
// output view, the result is copied to the output view): merged, it runs
// once after the contraction over all of k, its condition true.
// CHECK-LABEL: func.func @last_trip_epilogue
// CHECK-NOT: scf.for %
// CHECK: %[[C:.*]] = memref.subview %arg2
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[C]] :
// CHECK-NEXT: linalg.generic {{.*}} outs(%[[C]] : {{.*}}) attrs = {tessel.contraction}
// CHECK: %[[TRUE:.*]] = arith.constant true
// CHECK: %[[R:.*]] = scf.if %[[TRUE]]
// CHECK: arith.maximumf
// CHECK: } else {
// CHECK: memref.copy %[[R]], %[[C]]
// CHECK-NOT: scf.for %
// CHECK: return
#k_block = affine_map<(d0) -> (d0 * 16)>
#lhs = affine_map<(d0, d1, d2) -> (d0, d2)>
#rhs = affine_map<(d0, d1, d2) -> (d2, d1)>
#out = affine_map<(d0, d1, d2) -> (d0, d1)>
#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
func.func @last_trip_epilogue(%x: memref<16x64xf32>, %y: memref<64x32xf32>, %z: memref<16x32xf32>, %bias: memref<16xf32>) {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  scf.forall (%j) in (2) {
    scf.for %k = %c0 to %c4 step %c1 {
      %kk = affine.apply #k_block(%k)
      %col = affine.apply #k_block(%j)
      %a = memref.subview %x[%c0, %kk] [16, 16] [1, 1] : memref<16x64xf32> to memref<16x16xf32, strided<[64, 1], offset: ?>>
      %b = memref.subview %y[%kk, %col] [16, 16] [1, 1] : memref<64x32xf32> to memref<16x16xf32, strided<[32, 1], offset: ?>>
      %c = memref.subview %z[%c0, %col] [16, 16] [1, 1] : memref<16x32xf32> to memref<16x16xf32, strided<[32, 1], offset: ?>>
      %first = arith.cmpi eq, %k, %c0 : index
      scf.if %first {
        linalg.fill ins(%zero : f32) outs(%c : memref<16x16xf32, strided<[32, 1], offset: ?>>)
      }
      linalg.generic {indexing_maps = [#lhs, #rhs, #out], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %b : memref<16x16xf32, strided<[64, 1], offset: ?>>, memref<16x16xf32, strided<[32, 1], offset: ?>>) outs(%c : memref<16x16xf32, strided<[32, 1], offset: ?>>) attrs = {tessel.contraction} {
      ^bb0(%p: f32, %q: f32, %acc: f32):
        %s = math.fma %p, %q, %acc : f32
        linalg.yield %s : f32
      }
      %last = arith.cmpi eq, %k, %c3 : index
      %r = scf.if %last -> (memref<16x16xf32, strided<[?, ?], offset: ?>>) {
        %buffer = memref.alloc() : memref<16x16xf32>
        linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]} ins(%c, %bias : memref<16x16xf32, strided<[32, 1], offset: ?>>, memref<16xf32>) outs(%buffer : memref<16x16xf32>) {
        ^bb0(%v: f32, %w: f32, %o: f32):
          %sum = arith.addf %v, %w : f32
          %relu = arith.maximumf %sum, %zero : f32
          linalg.yield %relu : f32
        }
        %cast = memref.cast %buffer : memref<16x16xf32> to memref<16x16xf32, strided<[?, ?], offset: ?>>
        scf.yield %cast : memref<16x16xf32, strided<[?, ?], offset: ?>>
      } else {
        %cast = memref.cast %c : memref<16x16xf32, strided<[32, 1], offset: ?>> to memref<16x16xf32, strided<[?, ?], offset: ?>>
        scf.yield %cast : memref<16x16xf32, strided<[?, ?], offset: ?>>
      }
      memref.copy %r, %c : memref<16x16xf32, strided<[?, ?], offset: ?>> to memref<16x16xf32, strided<[32, 1], offset: ?>>
    } {tessel.arbitrary_axis = 2 : i64}
  }
  return
}

// -----

// The same epilogue as bufferization leaves it where it writes the output
// view in place (bias + relu of the sum): an `scf.if` without results or
// else branch. Merged, it runs once after the contraction over all of k.
// CHECK-LABEL: func.func @in_place_epilogue
// CHECK-NOT: scf.for %
// CHECK: %[[C:.*]] = memref.subview %arg2
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[C]] :
// CHECK-NEXT: linalg.generic {{.*}} outs(%[[C]] : {{.*}}) attrs = {tessel.contraction}
// CHECK: %[[TRUE:.*]] = arith.constant true
// CHECK: scf.if %[[TRUE]] {
// CHECK: arith.maximumf
// CHECK-NOT: scf.for %
// CHECK: return
#k_block = affine_map<(d0) -> (d0 * 16)>
#lhs = affine_map<(d0, d1, d2) -> (d0, d2)>
#rhs = affine_map<(d0, d1, d2) -> (d2, d1)>
#out = affine_map<(d0, d1, d2) -> (d0, d1)>
#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
func.func @in_place_epilogue(%x: memref<16x64xf32>, %y: memref<64x32xf32>, %z: memref<16x32xf32>, %bias: memref<16xf32>) {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  scf.forall (%j) in (2) {
    scf.for %k = %c0 to %c4 step %c1 {
      %kk = affine.apply #k_block(%k)
      %col = affine.apply #k_block(%j)
      %a = memref.subview %x[%c0, %kk] [16, 16] [1, 1] : memref<16x64xf32> to memref<16x16xf32, strided<[64, 1], offset: ?>>
      %b = memref.subview %y[%kk, %col] [16, 16] [1, 1] : memref<64x32xf32> to memref<16x16xf32, strided<[32, 1], offset: ?>>
      %c = memref.subview %z[%c0, %col] [16, 16] [1, 1] : memref<16x32xf32> to memref<16x16xf32, strided<[32, 1], offset: ?>>
      %first = arith.cmpi eq, %k, %c0 : index
      scf.if %first {
        linalg.fill ins(%zero : f32) outs(%c : memref<16x16xf32, strided<[32, 1], offset: ?>>)
      }
      linalg.generic {indexing_maps = [#lhs, #rhs, #out], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %b : memref<16x16xf32, strided<[64, 1], offset: ?>>, memref<16x16xf32, strided<[32, 1], offset: ?>>) outs(%c : memref<16x16xf32, strided<[32, 1], offset: ?>>) attrs = {tessel.contraction} {
      ^bb0(%p: f32, %q: f32, %acc: f32):
        %s = math.fma %p, %q, %acc : f32
        linalg.yield %s : f32
      }
      %last = arith.cmpi eq, %k, %c3 : index
      scf.if %last {
        linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]} ins(%c, %bias : memref<16x16xf32, strided<[32, 1], offset: ?>>, memref<16xf32>) outs(%c : memref<16x16xf32, strided<[32, 1], offset: ?>>) {
        ^bb0(%v: f32, %w: f32, %o: f32):
          %sum = arith.addf %v, %w : f32
          %relu = arith.maximumf %sum, %zero : f32
          linalg.yield %relu : f32
        }
      }
    } {tessel.arbitrary_axis = 2 : i64}
  }
  return
}

// -----

// An in-place epilogue with an else branch (it runs on the other trips
// too) is not merged.
// CHECK-LABEL: func.func @in_place_epilogue_with_else
// CHECK: scf.for %
// CHECK: arith.maximumf
// CHECK: } else {
// CHECK: } {tessel.arbitrary_axis
#k_block = affine_map<(d0) -> (d0 * 16)>
#lhs = affine_map<(d0, d1, d2) -> (d0, d2)>
#rhs = affine_map<(d0, d1, d2) -> (d2, d1)>
#out = affine_map<(d0, d1, d2) -> (d0, d1)>
#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
func.func @in_place_epilogue_with_else(%x: memref<16x64xf32>, %y: memref<64x32xf32>, %z: memref<16x32xf32>, %bias: memref<16xf32>) {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  scf.forall (%j) in (2) {
    scf.for %k = %c0 to %c4 step %c1 {
      %kk = affine.apply #k_block(%k)
      %col = affine.apply #k_block(%j)
      %a = memref.subview %x[%c0, %kk] [16, 16] [1, 1] : memref<16x64xf32> to memref<16x16xf32, strided<[64, 1], offset: ?>>
      %b = memref.subview %y[%kk, %col] [16, 16] [1, 1] : memref<64x32xf32> to memref<16x16xf32, strided<[32, 1], offset: ?>>
      %c = memref.subview %z[%c0, %col] [16, 16] [1, 1] : memref<16x32xf32> to memref<16x16xf32, strided<[32, 1], offset: ?>>
      %first = arith.cmpi eq, %k, %c0 : index
      scf.if %first {
        linalg.fill ins(%zero : f32) outs(%c : memref<16x16xf32, strided<[32, 1], offset: ?>>)
      }
      linalg.generic {indexing_maps = [#lhs, #rhs, #out], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %b : memref<16x16xf32, strided<[64, 1], offset: ?>>, memref<16x16xf32, strided<[32, 1], offset: ?>>) outs(%c : memref<16x16xf32, strided<[32, 1], offset: ?>>) attrs = {tessel.contraction} {
      ^bb0(%p: f32, %q: f32, %acc: f32):
        %s = math.fma %p, %q, %acc : f32
        linalg.yield %s : f32
      }
      %last = arith.cmpi eq, %k, %c3 : index
      scf.if %last {
        linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]} ins(%c, %bias : memref<16x16xf32, strided<[32, 1], offset: ?>>, memref<16xf32>) outs(%c : memref<16x16xf32, strided<[32, 1], offset: ?>>) {
        ^bb0(%v: f32, %w: f32, %o: f32):
          %sum = arith.addf %v, %w : f32
          %relu = arith.maximumf %sum, %zero : f32
          linalg.yield %relu : f32
        }
      } else {
        linalg.fill ins(%zero : f32) outs(%c : memref<16x16xf32, strided<[32, 1], offset: ?>>)
      }
    } {tessel.arbitrary_axis = 2 : i64}
  }
  return
}

// -----

// An epilogue on another trip than the last, or reading what varies with
// the trip (here A's k-th block), is not merged.
// CHECK-LABEL: func.func @epilogue_reads_the_trip
// CHECK: scf.for %
// CHECK: memref.copy
// CHECK-NEXT: } {tessel.arbitrary_axis
#k_block = affine_map<(d0) -> (d0 * 16)>
#lhs = affine_map<(d0, d1, d2) -> (d0, d2)>
#rhs = affine_map<(d0, d1, d2) -> (d2, d1)>
#out = affine_map<(d0, d1, d2) -> (d0, d1)>
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @epilogue_reads_the_trip(%x: memref<16x64xf32>, %y: memref<64x32xf32>, %z: memref<16x32xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  scf.forall (%j) in (2) {
    scf.for %k = %c0 to %c4 step %c1 {
      %kk = affine.apply #k_block(%k)
      %col = affine.apply #k_block(%j)
      %a = memref.subview %x[%c0, %kk] [16, 16] [1, 1] : memref<16x64xf32> to memref<16x16xf32, strided<[64, 1], offset: ?>>
      %b = memref.subview %y[%kk, %col] [16, 16] [1, 1] : memref<64x32xf32> to memref<16x16xf32, strided<[32, 1], offset: ?>>
      %c = memref.subview %z[%c0, %col] [16, 16] [1, 1] : memref<16x32xf32> to memref<16x16xf32, strided<[32, 1], offset: ?>>
      linalg.generic {indexing_maps = [#lhs, #rhs, #out], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %b : memref<16x16xf32, strided<[64, 1], offset: ?>>, memref<16x16xf32, strided<[32, 1], offset: ?>>) outs(%c : memref<16x16xf32, strided<[32, 1], offset: ?>>) attrs = {tessel.contraction} {
      ^bb0(%p: f32, %q: f32, %acc: f32):
        %s = math.fma %p, %q, %acc : f32
        linalg.yield %s : f32
      }
      %last = arith.cmpi eq, %k, %c3 : index
      %r = scf.if %last -> (memref<16x16xf32, strided<[?, ?], offset: ?>>) {
        %buffer = memref.alloc() : memref<16x16xf32>
        linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%c, %a : memref<16x16xf32, strided<[32, 1], offset: ?>>, memref<16x16xf32, strided<[64, 1], offset: ?>>) outs(%buffer : memref<16x16xf32>) {
        ^bb0(%v: f32, %w: f32, %o: f32):
          %sum = arith.addf %v, %w : f32
          linalg.yield %sum : f32
        }
        %cast = memref.cast %buffer : memref<16x16xf32> to memref<16x16xf32, strided<[?, ?], offset: ?>>
        scf.yield %cast : memref<16x16xf32, strided<[?, ?], offset: ?>>
      } else {
        %cast = memref.cast %c : memref<16x16xf32, strided<[32, 1], offset: ?>> to memref<16x16xf32, strided<[?, ?], offset: ?>>
        scf.yield %cast : memref<16x16xf32, strided<[?, ?], offset: ?>>
      }
      memref.copy %r, %c : memref<16x16xf32, strided<[?, ?], offset: ?>> to memref<16x16xf32, strided<[32, 1], offset: ?>>
    } {tessel.arbitrary_axis = 2 : i64}
  }
  return
}

// -----

// The same epilogue before the contraction (it would read the output
// before the last trip's sums): not merged.
// CHECK-LABEL: func.func @epilogue_before_the_dot
// CHECK: scf.for %
#k_block = affine_map<(d0) -> (d0 * 16)>
#lhs = affine_map<(d0, d1, d2) -> (d0, d2)>
#rhs = affine_map<(d0, d1, d2) -> (d2, d1)>
#out = affine_map<(d0, d1, d2) -> (d0, d1)>
#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
func.func @epilogue_before_the_dot(%x: memref<16x64xf32>, %y: memref<64x32xf32>, %z: memref<16x32xf32>, %bias: memref<16xf32>) {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  scf.forall (%j) in (2) {
    scf.for %k = %c0 to %c4 step %c1 {
      %kk = affine.apply #k_block(%k)
      %col = affine.apply #k_block(%j)
      %a = memref.subview %x[%c0, %kk] [16, 16] [1, 1] : memref<16x64xf32> to memref<16x16xf32, strided<[64, 1], offset: ?>>
      %b = memref.subview %y[%kk, %col] [16, 16] [1, 1] : memref<64x32xf32> to memref<16x16xf32, strided<[32, 1], offset: ?>>
      %c = memref.subview %z[%c0, %col] [16, 16] [1, 1] : memref<16x32xf32> to memref<16x16xf32, strided<[32, 1], offset: ?>>
      %first = arith.cmpi eq, %k, %c0 : index
      scf.if %first {
        linalg.fill ins(%zero : f32) outs(%c : memref<16x16xf32, strided<[32, 1], offset: ?>>)
      }
      %last = arith.cmpi eq, %k, %c3 : index
      %r = scf.if %last -> (memref<16x16xf32, strided<[?, ?], offset: ?>>) {
        %buffer = memref.alloc() : memref<16x16xf32>
        linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]} ins(%c, %bias : memref<16x16xf32, strided<[32, 1], offset: ?>>, memref<16xf32>) outs(%buffer : memref<16x16xf32>) {
        ^bb0(%v: f32, %w: f32, %o: f32):
          %sum = arith.addf %v, %w : f32
          %relu = arith.maximumf %sum, %zero : f32
          linalg.yield %relu : f32
        }
        %cast = memref.cast %buffer : memref<16x16xf32> to memref<16x16xf32, strided<[?, ?], offset: ?>>
        scf.yield %cast : memref<16x16xf32, strided<[?, ?], offset: ?>>
      } else {
        %cast = memref.cast %c : memref<16x16xf32, strided<[32, 1], offset: ?>> to memref<16x16xf32, strided<[?, ?], offset: ?>>
        scf.yield %cast : memref<16x16xf32, strided<[?, ?], offset: ?>>
      }
      memref.copy %r, %c : memref<16x16xf32, strided<[?, ?], offset: ?>> to memref<16x16xf32, strided<[32, 1], offset: ?>>
      linalg.generic {indexing_maps = [#lhs, #rhs, #out], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %b : memref<16x16xf32, strided<[64, 1], offset: ?>>, memref<16x16xf32, strided<[32, 1], offset: ?>>) outs(%c : memref<16x16xf32, strided<[32, 1], offset: ?>>) attrs = {tessel.contraction} {
      ^bb0(%p: f32, %q: f32, %acc: f32):
        %s = math.fma %p, %q, %acc : f32
        linalg.yield %s : f32
      }
    } {tessel.arbitrary_axis = 2 : i64}
  }
  return
}


// -----

// One column block: grid-to-loops' B view has a constant column offset
// (0), A's row offset varies. Merged the same way, B's view of all of k at
// column 0.
// CHECK-LABEL: func.func @one_column_block
// CHECK: scf.forall
// CHECK-NOT: scf.for
// CHECK: %[[C:.*]] = memref.subview %arg2[%{{.*}}, 0] [128, 128] [1, 1]
// CHECK: %[[A:.*]] = memref.subview %arg0[%{{.*}}, %{{.*}}] [128, 1024] [1, 1] : memref<1024x1024xf32> to memref<128x1024xf32, strided<[1024, 1], offset: ?>>
// CHECK: %[[B:.*]] = memref.subview %arg1[%{{.*}}, %{{.*}}] [1024, 128] [1, 1] : memref<1024x128xf32> to memref<1024x128xf32, strided<[128, 1], offset: ?>>
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[C]] :
// CHECK-NEXT: linalg.generic {{.*}} ins(%[[A]], %[[B]] : {{.*}}) outs(%[[C]] : {{.*}}) attrs = {tessel.contraction}
// CHECK-NOT: scf.for
// CHECK: return
#k_block = affine_map<(d0) -> (d0 * 128)>
#lhs = affine_map<(d0, d1, d2) -> (d0, d2)>
#rhs = affine_map<(d0, d1, d2) -> (d2, d1)>
#out = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @one_column_block(%x: memref<1024x1024xf32>, %y: memref<1024x128xf32>, %z: memref<1024x128xf32>) {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  scf.forall (%i) in (8) {
    scf.for %k = %c0 to %c8 step %c1 {
      %row = affine.apply #k_block(%i)
      %kk = affine.apply #k_block(%k)
      %a = memref.subview %x[%row, %kk] [128, 128] [1, 1] : memref<1024x1024xf32> to memref<128x128xf32, strided<[1024, 1], offset: ?>>
      %b = memref.subview %y[%kk, 0] [128, 128] [1, 1] : memref<1024x128xf32> to memref<128x128xf32, strided<[128, 1], offset: ?>>
      %c = memref.subview %z[%row, 0] [128, 128] [1, 1] : memref<1024x128xf32> to memref<128x128xf32, strided<[128, 1], offset: ?>>
      %first = arith.cmpi eq, %k, %c0 : index
      scf.if %first {
        linalg.fill ins(%zero : f32) outs(%c : memref<128x128xf32, strided<[128, 1], offset: ?>>)
      }
      linalg.generic {indexing_maps = [#lhs, #rhs, #out], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %b : memref<128x128xf32, strided<[1024, 1], offset: ?>>, memref<128x128xf32, strided<[128, 1], offset: ?>>) outs(%c : memref<128x128xf32, strided<[128, 1], offset: ?>>) attrs = {tessel.contraction} {
      ^bb0(%p: f32, %q: f32, %acc: f32):
        %m = arith.mulf %p, %q : f32
        %s = arith.addf %acc, %m : f32
        linalg.yield %s : f32
      }
    } {tessel.arbitrary_axis = 2 : i64}
  }
  return
}

// -----

// One row block and one column block: both constant offsets.
// CHECK-LABEL: func.func @one_block_each_way
// CHECK-NOT: scf.for
// CHECK: memref.subview %arg0[%{{.*}}, %{{.*}}] [64, 256] [1, 1] : memref<64x256xf32> to memref<64x256xf32, strided<[256, 1], offset: ?>>
// CHECK: memref.subview %arg1[%{{.*}}, %{{.*}}] [256, 64] [1, 1] : memref<256x64xf32> to memref<256x64xf32, strided<[64, 1], offset: ?>>
// CHECK: linalg.generic {{.*}}tessel.contraction
// CHECK-NOT: scf.for
// CHECK: return
#k_step = affine_map<(d0) -> (d0 * 64)>
#lhs = affine_map<(d0, d1, d2) -> (d0, d2)>
#rhs = affine_map<(d0, d1, d2) -> (d2, d1)>
#out = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @one_block_each_way(%x: memref<64x256xf32>, %y: memref<256x64xf32>, %z: memref<64x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %k = %c0 to %c4 step %c1 {
    %kk = affine.apply #k_step(%k)
    %a = memref.subview %x[0, %kk] [64, 64] [1, 1] : memref<64x256xf32> to memref<64x64xf32, strided<[256, 1], offset: ?>>
    %b = memref.subview %y[%kk, 0] [64, 64] [1, 1] : memref<256x64xf32> to memref<64x64xf32, strided<[64, 1], offset: ?>>
    %c = memref.subview %z[0, 0] [64, 64] [1, 1] : memref<64x64xf32> to memref<64x64xf32, strided<[64, 1]>>
    linalg.generic {indexing_maps = [#lhs, #rhs, #out], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %b : memref<64x64xf32, strided<[256, 1], offset: ?>>, memref<64x64xf32, strided<[64, 1], offset: ?>>) outs(%c : memref<64x64xf32, strided<[64, 1]>>) attrs = {tessel.contraction} {
    ^bb0(%p: f32, %q: f32, %acc: f32):
      %m = arith.mulf %p, %q : f32
      %s = arith.addf %acc, %m : f32
      linalg.yield %s : f32
    }
  } {tessel.arbitrary_axis = 2 : i64}
  return
}

// -----

// Before bufferization (the CPU pipeline): the views are read through
// to_tensor and the sum stored to the output view. Merged: tensors of the
// whole-k views, the output's tensor, its fill (a tensor fill, the
// contraction's init: register tiles start from it in registers), the
// contraction and one store.
// CHECK-LABEL: func.func @on_tensors(
// CHECK: scf.forall
// CHECK-NOT: scf.for
// CHECK: %[[C:.*]] = memref.subview %arg2
// CHECK: %[[A:.*]] = memref.subview %arg0[%{{.*}}, %{{.*}}] [64, 512] [1, 1] : memref<256x512xf32> to memref<64x512xf32, strided<[512, 1], offset: ?>>
// CHECK: %[[B:.*]] = memref.subview %arg1[%{{.*}}, %{{.*}}] [512, 64] [1, 1] : memref<512x256xf32> to memref<512x64xf32, strided<[256, 1], offset: ?>>
// CHECK: %[[TA:.*]] = bufferization.to_tensor %[[A]] restrict : memref<64x512xf32, strided<[512, 1], offset: ?>> to tensor<64x512xf32>
// CHECK: %[[TB:.*]] = bufferization.to_tensor %[[B]] restrict : memref<512x64xf32, strided<[256, 1], offset: ?>> to tensor<512x64xf32>
// CHECK-NOT: linalg.fill
// CHECK: %[[TC:.*]] = bufferization.to_tensor %[[C]] restrict writable
// CHECK-NEXT: %[[FILLED:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[TC]] : tensor<64x64xf32>) -> tensor<64x64xf32>
// CHECK-NEXT: %[[SUM:.*]] = linalg.generic {{.*}} ins(%[[TA]], %[[TB]] : tensor<64x512xf32>, tensor<512x64xf32>) outs(%[[FILLED]] : tensor<64x64xf32>) attrs = {tessel.contraction}
// CHECK: bufferization.materialize_in_destination %[[SUM]] in restrict writable %[[C]]
// CHECK-NOT: scf.for
// CHECK: return
#k_block = affine_map<(d0) -> (d0 * 64)>
#lhs = affine_map<(d0, d1, d2) -> (d0, d2)>
#rhs = affine_map<(d0, d1, d2) -> (d2, d1)>
#out = affine_map<(d0, d1, d2) -> (d0, d1)>
module attributes {tessel.vector_bits = 512 : i64} {
func.func @on_tensors(%x: memref<256x512xf32>, %y: memref<512x256xf32>, %z: memref<256x256xf32>) {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  scf.forall (%i, %j) in (4, 4) {
    scf.for %k = %c0 to %c8 step %c1 {
      %row = affine.apply #k_block(%i)
      %kk = affine.apply #k_block(%k)
      %col = affine.apply #k_block(%j)
      %a = memref.subview %x[%row, %kk] [64, 64] [1, 1] : memref<256x512xf32> to memref<64x64xf32, strided<[512, 1], offset: ?>>
      %b = memref.subview %y[%kk, %col] [64, 64] [1, 1] : memref<512x256xf32> to memref<64x64xf32, strided<[256, 1], offset: ?>>
      %c = memref.subview %z[%row, %col] [64, 64] [1, 1] : memref<256x256xf32> to memref<64x64xf32, strided<[256, 1], offset: ?>>
      %first = arith.cmpi eq, %k, %c0 : index
      scf.if %first {
        linalg.fill ins(%zero : f32) outs(%c : memref<64x64xf32, strided<[256, 1], offset: ?>>)
      }
      %ta = bufferization.to_tensor %a restrict : memref<64x64xf32, strided<[512, 1], offset: ?>> to tensor<64x64xf32>
      %tb = bufferization.to_tensor %b restrict : memref<64x64xf32, strided<[256, 1], offset: ?>> to tensor<64x64xf32>
      %tc = bufferization.to_tensor %c restrict writable : memref<64x64xf32, strided<[256, 1], offset: ?>> to tensor<64x64xf32>
      %sum = linalg.generic {indexing_maps = [#lhs, #rhs, #out], iterator_types = ["parallel", "parallel", "reduction"]} ins(%ta, %tb : tensor<64x64xf32>, tensor<64x64xf32>) outs(%tc : tensor<64x64xf32>) attrs = {tessel.contraction} {
      ^bb0(%p: f32, %q: f32, %acc: f32):
        %m = arith.mulf %p, %q : f32
        %s = arith.addf %acc, %m : f32
        linalg.yield %s : f32
      } -> tensor<64x64xf32>
      bufferization.materialize_in_destination %sum in restrict writable %c : (tensor<64x64xf32>, memref<64x64xf32, strided<[256, 1], offset: ?>>) -> ()
    } {tessel.arbitrary_axis = 2 : i64}
  }
  return
}
}

// -----

// The same for 256-bit CPU code: merged too (tessel-tile then splits k
// where the CPU's caches ask, cpu/caches.rs).
// CHECK-LABEL: func.func @on_tensors_avx2
// CHECK: scf.forall
// CHECK-NOT: scf.for
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<64x512xf32>, tensor<512x64xf32>) outs(%{{.*}} : tensor<64x64xf32>) attrs = {tessel.contraction}
// CHECK-NOT: scf.for
// CHECK: return
#k_block = affine_map<(d0) -> (d0 * 64)>
#lhs = affine_map<(d0, d1, d2) -> (d0, d2)>
#rhs = affine_map<(d0, d1, d2) -> (d2, d1)>
#out = affine_map<(d0, d1, d2) -> (d0, d1)>
module attributes {tessel.vector_bits = 256 : i64} {
func.func @on_tensors_avx2(%x: memref<256x512xf32>, %y: memref<512x256xf32>, %z: memref<256x256xf32>) {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  scf.forall (%i, %j) in (4, 4) {
    scf.for %k = %c0 to %c8 step %c1 {
      %row = affine.apply #k_block(%i)
      %kk = affine.apply #k_block(%k)
      %col = affine.apply #k_block(%j)
      %a = memref.subview %x[%row, %kk] [64, 64] [1, 1] : memref<256x512xf32> to memref<64x64xf32, strided<[512, 1], offset: ?>>
      %b = memref.subview %y[%kk, %col] [64, 64] [1, 1] : memref<512x256xf32> to memref<64x64xf32, strided<[256, 1], offset: ?>>
      %c = memref.subview %z[%row, %col] [64, 64] [1, 1] : memref<256x256xf32> to memref<64x64xf32, strided<[256, 1], offset: ?>>
      %first = arith.cmpi eq, %k, %c0 : index
      scf.if %first {
        linalg.fill ins(%zero : f32) outs(%c : memref<64x64xf32, strided<[256, 1], offset: ?>>)
      }
      %ta = bufferization.to_tensor %a restrict : memref<64x64xf32, strided<[512, 1], offset: ?>> to tensor<64x64xf32>
      %tb = bufferization.to_tensor %b restrict : memref<64x64xf32, strided<[256, 1], offset: ?>> to tensor<64x64xf32>
      %tc = bufferization.to_tensor %c restrict writable : memref<64x64xf32, strided<[256, 1], offset: ?>> to tensor<64x64xf32>
      %sum = linalg.generic {indexing_maps = [#lhs, #rhs, #out], iterator_types = ["parallel", "parallel", "reduction"]} ins(%ta, %tb : tensor<64x64xf32>, tensor<64x64xf32>) outs(%tc : tensor<64x64xf32>) attrs = {tessel.contraction} {
      ^bb0(%p: f32, %q: f32, %acc: f32):
        %m = arith.mulf %p, %q : f32
        %s = arith.addf %acc, %m : f32
        linalg.yield %s : f32
      } -> tensor<64x64xf32>
      bufferization.materialize_in_destination %sum in restrict writable %c : (tensor<64x64xf32>, memref<64x64xf32, strided<[256, 1], offset: ?>>) -> ()
    } {tessel.arbitrary_axis = 2 : i64}
  }
  return
}
}

// -----

// On tensors, a sum used by anything but its store (here a second store
// to another ref) is not merged.
// CHECK-LABEL: func.func @sum_used_twice
// CHECK: scf.for
// CHECK: tessel.contraction
// CHECK: } {tessel.arbitrary_axis = 2 : i64}
#k_block = affine_map<(d0) -> (d0 * 64)>
#lhs = affine_map<(d0, d1, d2) -> (d0, d2)>
#rhs = affine_map<(d0, d1, d2) -> (d2, d1)>
#out = affine_map<(d0, d1, d2) -> (d0, d1)>
module attributes {tessel.vector_bits = 512 : i64} {
func.func @sum_used_twice(%x: memref<64x512xf32>, %y: memref<512x64xf32>, %z: memref<64x64xf32>, %w: memref<64x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  scf.for %k = %c0 to %c8 step %c1 {
    %kk = affine.apply #k_block(%k)
    %a = memref.subview %x[0, %kk] [64, 64] [1, 1] : memref<64x512xf32> to memref<64x64xf32, strided<[512, 1], offset: ?>>
    %b = memref.subview %y[%kk, 0] [64, 64] [1, 1] : memref<512x64xf32> to memref<64x64xf32, strided<[64, 1], offset: ?>>
    %c = memref.subview %z[0, 0] [64, 64] [1, 1] : memref<64x64xf32> to memref<64x64xf32, strided<[64, 1]>>
    %ta = bufferization.to_tensor %a restrict : memref<64x64xf32, strided<[512, 1], offset: ?>> to tensor<64x64xf32>
    %tb = bufferization.to_tensor %b restrict : memref<64x64xf32, strided<[64, 1], offset: ?>> to tensor<64x64xf32>
    %tc = bufferization.to_tensor %c restrict writable : memref<64x64xf32, strided<[64, 1]>> to tensor<64x64xf32>
    %sum = linalg.generic {indexing_maps = [#lhs, #rhs, #out], iterator_types = ["parallel", "parallel", "reduction"]} ins(%ta, %tb : tensor<64x64xf32>, tensor<64x64xf32>) outs(%tc : tensor<64x64xf32>) attrs = {tessel.contraction} {
    ^bb0(%p: f32, %q: f32, %acc: f32):
      %m = arith.mulf %p, %q : f32
      %s = arith.addf %acc, %m : f32
      linalg.yield %s : f32
    } -> tensor<64x64xf32>
    bufferization.materialize_in_destination %sum in restrict writable %c : (tensor<64x64xf32>, memref<64x64xf32, strided<[64, 1]>>) -> ()
    bufferization.materialize_in_destination %sum in restrict writable %w : (tensor<64x64xf32>, memref<64x64xf32>) -> ()
  } {tessel.arbitrary_axis = 2 : i64}
  return
}
}

// -----

// On tensors with Pallas' last-k epilogue (`k == last ? relu(dot + bias)
// : dot`): the scf.if yields the epilogue's value on the last trip and the
// sum on the others, and that is stored. Merged: the contraction over all
// of k, then the epilogue on a condition that holds (what the last trip
// ran), its value stored once; the bias view, read only by the epilogue,
// moves out with it.
// CHECK-LABEL: func.func @epilogue_on_tensors
// CHECK: scf.forall
// CHECK-NOT: scf.for
// CHECK: %[[C:.*]] = memref.subview %arg2
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<64x512xf32>, tensor<512x64xf32>) outs(%{{.*}} : tensor<64x64xf32>) attrs = {tessel.contraction}
// CHECK: %[[BIAS:.*]] = memref.subview %arg3
// CHECK: %[[TRUE:.*]] = arith.constant true
// CHECK: %[[OUT:.*]] = scf.if %[[TRUE]] -> (tensor<64x64xf32>) {
// CHECK: bufferization.to_tensor %[[BIAS]]
// CHECK: arith.maximumf
// CHECK: } else {
// CHECK-NEXT: scf.yield %[[SUM]]
// CHECK: bufferization.materialize_in_destination %[[OUT]] in restrict writable %[[C]]
// CHECK-NOT: scf.for
// CHECK: return
#k_block = affine_map<(d0) -> (d0 * 64)>
#lhs = affine_map<(d0, d1, d2) -> (d0, d2)>
#rhs = affine_map<(d0, d1, d2) -> (d2, d1)>
#out = affine_map<(d0, d1, d2) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (0, d1)>
#same = affine_map<(d0, d1) -> (d0, d1)>
module attributes {tessel.vector_bits = 512 : i64} {
func.func @epilogue_on_tensors(%x: memref<256x512xf32>, %y: memref<512x256xf32>, %z: memref<256x256xf32>, %bias: memref<1x256xf32>) {
  %zero = arith.constant 0.0 : f32
  %zeros = arith.constant dense<0.0> : tensor<64x64xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c7 = arith.constant 7 : index
  %c8 = arith.constant 8 : index
  scf.forall (%i, %j) in (4, 4) {
    scf.for %k = %c0 to %c8 step %c1 {
      %row = affine.apply #k_block(%i)
      %kk = affine.apply #k_block(%k)
      %col = affine.apply #k_block(%j)
      %a = memref.subview %x[%row, %kk] [64, 64] [1, 1] : memref<256x512xf32> to memref<64x64xf32, strided<[512, 1], offset: ?>>
      %b = memref.subview %y[%kk, %col] [64, 64] [1, 1] : memref<512x256xf32> to memref<64x64xf32, strided<[256, 1], offset: ?>>
      %bv = memref.subview %bias[0, %col] [1, 64] [1, 1] : memref<1x256xf32> to memref<1x64xf32, strided<[256, 1], offset: ?>>
      %c = memref.subview %z[%row, %col] [64, 64] [1, 1] : memref<256x256xf32> to memref<64x64xf32, strided<[256, 1], offset: ?>>
      %first = arith.cmpi eq, %k, %c0 : index
      scf.if %first {
        linalg.fill ins(%zero : f32) outs(%c : memref<64x64xf32, strided<[256, 1], offset: ?>>)
      }
      %ta = bufferization.to_tensor %a restrict : memref<64x64xf32, strided<[512, 1], offset: ?>> to tensor<64x64xf32>
      %tb = bufferization.to_tensor %b restrict : memref<64x64xf32, strided<[256, 1], offset: ?>> to tensor<64x64xf32>
      %tc = bufferization.to_tensor %c restrict writable : memref<64x64xf32, strided<[256, 1], offset: ?>> to tensor<64x64xf32>
      %sum = linalg.generic {indexing_maps = [#lhs, #rhs, #out], iterator_types = ["parallel", "parallel", "reduction"]} ins(%ta, %tb : tensor<64x64xf32>, tensor<64x64xf32>) outs(%tc : tensor<64x64xf32>) attrs = {tessel.contraction} {
      ^bb0(%p: f32, %q: f32, %acc: f32):
        %m = arith.mulf %p, %q : f32
        %s = arith.addf %acc, %m : f32
        linalg.yield %s : f32
      } -> tensor<64x64xf32>
      %last = arith.cmpi eq, %k, %c7 : index
      %result = scf.if %last -> (tensor<64x64xf32>) {
        %tbias = bufferization.to_tensor %bv restrict : memref<1x64xf32, strided<[256, 1], offset: ?>> to tensor<1x64xf32>
        %empty = tensor.empty() : tensor<64x64xf32>
        %relu = linalg.generic {indexing_maps = [#same, #row, #same], iterator_types = ["parallel", "parallel"]} ins(%sum, %tbias : tensor<64x64xf32>, tensor<1x64xf32>) outs(%empty : tensor<64x64xf32>) {
        ^bb0(%s: f32, %t: f32, %o: f32):
          %added = arith.addf %s, %t : f32
          %r = arith.maximumf %added, %zero : f32
          linalg.yield %r : f32
        } -> tensor<64x64xf32>
        scf.yield %relu : tensor<64x64xf32>
      } else {
        scf.yield %sum : tensor<64x64xf32>
      }
      bufferization.materialize_in_destination %result in restrict writable %c : (tensor<64x64xf32>, memref<64x64xf32, strided<[256, 1], offset: ?>>) -> ()
    } {tessel.arbitrary_axis = 2 : i64}
  }
  return
}
}

// -----

// The same epilogue reading a bias block that moves with k: not merged
// (merged, only the last trip's block would be right, and it is the one
// the epilogue would have read, but what it reads must not vary at all).
// CHECK-LABEL: func.func @tensor_epilogue_reads_the_trip
// CHECK: scf.for
// CHECK: tessel.contraction
// CHECK: } {tessel.arbitrary_axis = 2 : i64}
#k_block = affine_map<(d0) -> (d0 * 64)>
#lhs = affine_map<(d0, d1, d2) -> (d0, d2)>
#rhs = affine_map<(d0, d1, d2) -> (d2, d1)>
#out = affine_map<(d0, d1, d2) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (0, d1)>
#same = affine_map<(d0, d1) -> (d0, d1)>
module attributes {tessel.vector_bits = 512 : i64} {
func.func @tensor_epilogue_reads_the_trip(%x: memref<64x512xf32>, %y: memref<512x64xf32>, %z: memref<64x64xf32>, %bias: memref<1x512xf32>) {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c7 = arith.constant 7 : index
  %c8 = arith.constant 8 : index
  scf.for %k = %c0 to %c8 step %c1 {
    %kk = affine.apply #k_block(%k)
    %a = memref.subview %x[0, %kk] [64, 64] [1, 1] : memref<64x512xf32> to memref<64x64xf32, strided<[512, 1], offset: ?>>
    %b = memref.subview %y[%kk, 0] [64, 64] [1, 1] : memref<512x64xf32> to memref<64x64xf32, strided<[64, 1], offset: ?>>
    %bv = memref.subview %bias[0, %kk] [1, 64] [1, 1] : memref<1x512xf32> to memref<1x64xf32, strided<[512, 1], offset: ?>>
    %c = memref.subview %z[0, 0] [64, 64] [1, 1] : memref<64x64xf32> to memref<64x64xf32, strided<[64, 1]>>
    %first = arith.cmpi eq, %k, %c0 : index
    scf.if %first {
      linalg.fill ins(%zero : f32) outs(%c : memref<64x64xf32, strided<[64, 1]>>)
    }
    %ta = bufferization.to_tensor %a restrict : memref<64x64xf32, strided<[512, 1], offset: ?>> to tensor<64x64xf32>
    %tb = bufferization.to_tensor %b restrict : memref<64x64xf32, strided<[64, 1], offset: ?>> to tensor<64x64xf32>
    %tc = bufferization.to_tensor %c restrict writable : memref<64x64xf32, strided<[64, 1]>> to tensor<64x64xf32>
    %sum = linalg.generic {indexing_maps = [#lhs, #rhs, #out], iterator_types = ["parallel", "parallel", "reduction"]} ins(%ta, %tb : tensor<64x64xf32>, tensor<64x64xf32>) outs(%tc : tensor<64x64xf32>) attrs = {tessel.contraction} {
    ^bb0(%p: f32, %q: f32, %acc: f32):
      %m = arith.mulf %p, %q : f32
      %s = arith.addf %acc, %m : f32
      linalg.yield %s : f32
    } -> tensor<64x64xf32>
    %last = arith.cmpi eq, %k, %c7 : index
    %result = scf.if %last -> (tensor<64x64xf32>) {
      %tbias = bufferization.to_tensor %bv restrict : memref<1x64xf32, strided<[512, 1], offset: ?>> to tensor<1x64xf32>
      %empty = tensor.empty() : tensor<64x64xf32>
      %relu = linalg.generic {indexing_maps = [#same, #row, #same], iterator_types = ["parallel", "parallel"]} ins(%sum, %tbias : tensor<64x64xf32>, tensor<1x64xf32>) outs(%empty : tensor<64x64xf32>) {
      ^bb0(%s: f32, %t: f32, %o: f32):
        %added = arith.addf %s, %t : f32
        %r = arith.maximumf %added, %zero : f32
        linalg.yield %r : f32
      } -> tensor<64x64xf32>
      scf.yield %relu : tensor<64x64xf32>
    } else {
      scf.yield %sum : tensor<64x64xf32>
    }
    bufferization.materialize_in_destination %result in restrict writable %c : (tensor<64x64xf32>, memref<64x64xf32, strided<[64, 1]>>) -> ()
  } {tessel.arbitrary_axis = 2 : i64}
  return
}
}

// -----

// The same with the bias read and broadcast before the branch (only the
// epilogue uses them): they move out with the epilogue.
// CHECK-LABEL: func.func @epilogue_operands_first
// CHECK: scf.forall
// CHECK-NOT: scf.for
// CHECK: %[[C:.*]] = memref.subview %arg2
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<64x512xf32>, tensor<512x64xf32>) outs(%{{.*}} : tensor<64x64xf32>) attrs = {tessel.contraction}
// CHECK: %[[BIAS:.*]] = memref.subview %arg3
// CHECK: %[[TBIAS:.*]] = bufferization.to_tensor %[[BIAS]]
// CHECK: %[[WIDE:.*]] = linalg.generic {{.*}} ins(%[[TBIAS]] : tensor<1x64xf32>)
// CHECK: %[[TRUE:.*]] = arith.constant true
// CHECK: %[[OUT:.*]] = scf.if %[[TRUE]] -> (tensor<64x64xf32>) {
// CHECK: ins(%[[SUM]], %[[WIDE]]
// CHECK: arith.maximumf
// CHECK: } else {
// CHECK-NEXT: scf.yield %[[SUM]]
// CHECK: bufferization.materialize_in_destination %[[OUT]] in restrict writable %[[C]]
// CHECK-NOT: scf.for
// CHECK: return
#k_block = affine_map<(d0) -> (d0 * 64)>
#lhs = affine_map<(d0, d1, d2) -> (d0, d2)>
#rhs = affine_map<(d0, d1, d2) -> (d2, d1)>
#out = affine_map<(d0, d1, d2) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (0, d1)>
#same = affine_map<(d0, d1) -> (d0, d1)>
module attributes {tessel.vector_bits = 512 : i64} {
func.func @epilogue_operands_first(%x: memref<256x512xf32>, %y: memref<512x256xf32>, %z: memref<256x256xf32>, %bias: memref<1x256xf32>) {
  %zero = arith.constant 0.0 : f32
  %zeros = arith.constant dense<0.0> : tensor<64x64xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c7 = arith.constant 7 : index
  %c8 = arith.constant 8 : index
  scf.forall (%i, %j) in (4, 4) {
    scf.for %k = %c0 to %c8 step %c1 {
      %row = affine.apply #k_block(%i)
      %kk = affine.apply #k_block(%k)
      %col = affine.apply #k_block(%j)
      %a = memref.subview %x[%row, %kk] [64, 64] [1, 1] : memref<256x512xf32> to memref<64x64xf32, strided<[512, 1], offset: ?>>
      %b = memref.subview %y[%kk, %col] [64, 64] [1, 1] : memref<512x256xf32> to memref<64x64xf32, strided<[256, 1], offset: ?>>
      %bv = memref.subview %bias[0, %col] [1, 64] [1, 1] : memref<1x256xf32> to memref<1x64xf32, strided<[256, 1], offset: ?>>
      %c = memref.subview %z[%row, %col] [64, 64] [1, 1] : memref<256x256xf32> to memref<64x64xf32, strided<[256, 1], offset: ?>>
      %first = arith.cmpi eq, %k, %c0 : index
      scf.if %first {
        linalg.fill ins(%zero : f32) outs(%c : memref<64x64xf32, strided<[256, 1], offset: ?>>)
      }
      %ta = bufferization.to_tensor %a restrict : memref<64x64xf32, strided<[512, 1], offset: ?>> to tensor<64x64xf32>
      %tb = bufferization.to_tensor %b restrict : memref<64x64xf32, strided<[256, 1], offset: ?>> to tensor<64x64xf32>
      %tc = bufferization.to_tensor %c restrict writable : memref<64x64xf32, strided<[256, 1], offset: ?>> to tensor<64x64xf32>
      %sum = linalg.generic {indexing_maps = [#lhs, #rhs, #out], iterator_types = ["parallel", "parallel", "reduction"]} ins(%ta, %tb : tensor<64x64xf32>, tensor<64x64xf32>) outs(%tc : tensor<64x64xf32>) attrs = {tessel.contraction} {
      ^bb0(%p: f32, %q: f32, %acc: f32):
        %m = arith.mulf %p, %q : f32
        %s = arith.addf %acc, %m : f32
        linalg.yield %s : f32
      } -> tensor<64x64xf32>
      %tbias = bufferization.to_tensor %bv restrict : memref<1x64xf32, strided<[256, 1], offset: ?>> to tensor<1x64xf32>
      %empty = tensor.empty() : tensor<64x64xf32>
      %wide = linalg.generic {indexing_maps = [#row, #same], iterator_types = ["parallel", "parallel"]} ins(%tbias : tensor<1x64xf32>) outs(%empty : tensor<64x64xf32>) {
      ^bb0(%t: f32, %o: f32):
        linalg.yield %t : f32
      } -> tensor<64x64xf32>
      %last = arith.cmpi eq, %k, %c7 : index
      %result = scf.if %last -> (tensor<64x64xf32>) {
        %relu = linalg.generic {indexing_maps = [#same, #same, #same], iterator_types = ["parallel", "parallel"]} ins(%sum, %wide : tensor<64x64xf32>, tensor<64x64xf32>) outs(%empty : tensor<64x64xf32>) {
        ^bb0(%s: f32, %t: f32, %o: f32):
          %added = arith.addf %s, %t : f32
          %r = arith.maximumf %added, %zero : f32
          linalg.yield %r : f32
        } -> tensor<64x64xf32>
        scf.yield %relu : tensor<64x64xf32>
      } else {
        scf.yield %sum : tensor<64x64xf32>
      }
      bufferization.materialize_in_destination %result in restrict writable %c : (tensor<64x64xf32>, memref<64x64xf32, strided<[256, 1], offset: ?>>) -> ()
    } {tessel.arbitrary_axis = 2 : i64}
  }
  return
}
}
