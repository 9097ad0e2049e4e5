// tessel-vnni: an i8 x i8 -> i32 contraction, on a CPU with VNNI
// (tessel.vnni = 1), becomes VNNI's form: A biased to unsigned bytes
// (xor 0x80) as [m, k/4, 4], B packed [k/4, n, 4], the bias's
// contribution (128 x B's column sums) subtracted from the accumulator
// first, and a contraction over (i, j, k/4, r) of zero-extended A and
// sign-extended B marked tessel.vnni. Sums wrap modulo 2^32 like the
// original's, so results keep their bits. Without VNNI on x86
// (tessel.pmaddwd = 1), or where k is even but not a multiple of 4, it
// becomes vpmaddwd's form: both operands sign-extended to i16, A as
// [m, k/2, 2], B packed [k/2, n, 2], a contraction over (i, j, k/2, r)
// marked tessel.pmaddwd, no bias. Other contractions, k fitting neither
// and CPUs with neither instruction are left alone.
// RUN: tessel-opt %s --split-input-file --tessel-vnni | FileCheck %s

// CHECK-DAG: #[[MA:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>
// CHECK-DAG: #[[MB:.*]] = affine_map<(d0, d1, d2, d3) -> (d2, d1, d3)>
// CHECK-DAG: #[[MC:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1)>
#lhs = affine_map<(i, j, k) -> (i, k)>
#rhs = affine_map<(i, j, k) -> (k, j)>
#out = affine_map<(i, j, k) -> (i, j)>
module attributes {tessel.vnni = 1 : i64} {
  // CHECK-LABEL: func.func @dot(
  // CHECK-SAME: %[[X:.*]]: tensor<8x16xi8>, %[[Y:.*]]: tensor<16x64xi8>, %[[Z:.*]]: tensor<8x64xi32>
  // CHECK: %[[BIASED:.*]] = linalg.generic {{.*}} ins(%[[X]] : tensor<8x16xi8>)
  // CHECK: arith.xori %{{.*}}, %c-128_i8 : i8
  // CHECK: %[[AQ:.*]] = tensor.expand_shape %[[BIASED]] {{\[\[}}0], [1, 2]] output_shape [8, 4, 4] : tensor<8x16xi8> into tensor<8x4x4xi8>
  // CHECK: %[[BQ:.*]] = tensor.expand_shape %[[Y]] {{\[\[}}0, 1], [2]] output_shape [4, 4, 64] : tensor<16x64xi8> into tensor<4x4x64xi8>
  // CHECK: %[[BP:.*]] = linalg.transpose ins(%[[BQ]] : tensor<4x4x64xi8>) outs(%{{.*}} : tensor<4x64x4xi8>) permutation = [0, 2, 1]
  // CHECK: %[[SUMS:.*]] = linalg.generic {{.*}} iterator_types = ["reduction", "parallel"]} ins(%[[Y]] : tensor<16x64xi8>) outs(%{{.*}} : tensor<64xi32>)
  // CHECK: arith.extsi %{{.*}} : i8 to i32
  // CHECK: %[[INIT:.*]] = linalg.generic {{.*}} ins(%[[Z]], %[[SUMS]] : tensor<8x64xi32>, tensor<64xi32>)
  // CHECK: %[[BIAS:.*]] = arith.shli %{{.*}}, %c7_i32 : i32
  // CHECK: arith.subi %{{.*}}, %[[BIAS]] : i32
  // CHECK: linalg.generic {indexing_maps = [#[[MA]], #[[MB]], #[[MC]]], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%[[AQ]], %[[BP]] : tensor<8x4x4xi8>, tensor<4x64x4xi8>) outs(%[[INIT]] : tensor<8x64xi32>) attrs = {tessel.contraction, tessel.vnni}
  // CHECK-NEXT: ^bb0(%[[U:.*]]: i8, %[[V:.*]]: i8, %[[S:.*]]: i32):
  // CHECK-NEXT: %[[UW:.*]] = arith.extui %[[U]] : i8 to i32
  // CHECK-NEXT: %[[VW:.*]] = arith.extsi %[[V]] : i8 to i32
  // CHECK-NEXT: %[[P:.*]] = arith.muli %[[UW]], %[[VW]] : i32
  // CHECK-NEXT: arith.addi %[[S]], %[[P]] : i32
  func.func @dot(%x: tensor<8x16xi8>, %y: tensor<16x64xi8>, %z: tensor<8x64xi32>) -> tensor<8x64xi32> {
    %r = linalg.generic {indexing_maps = [#lhs, #rhs, #out], iterator_types = ["parallel", "parallel", "reduction"], tessel.contraction}
        ins(%x, %y : tensor<8x16xi8>, tensor<16x64xi8>) outs(%z : tensor<8x64xi32>) {
    ^bb0(%u: i8, %v: i8, %s: i32):
      %uw = arith.extsi %u : i8 to i32
      %vw = arith.extsi %v : i8 to i32
      %p = arith.muli %uw, %vw : i32
      %t = arith.addi %s, %p : i32
      linalg.yield %t : i32
    } -> tensor<8x64xi32>
    return %r : tensor<8x64xi32>
  }
}

// -----

// A batched contraction keeps its batch loop first.
#lhs = affine_map<(b, i, j, k) -> (b, i, k)>
#rhs = affine_map<(b, i, j, k) -> (b, k, j)>
#out = affine_map<(b, i, j, k) -> (b, i, j)>
module attributes {tessel.vnni = 1 : i64} {
  // CHECK-LABEL: func.func @batched(
  // CHECK: tensor.expand_shape %{{.*}} {{\[\[}}0], [1], [2, 3]] output_shape [2, 4, 2, 4] : tensor<2x4x8xi8> into tensor<2x4x2x4xi8>
  // CHECK: tensor.expand_shape %{{.*}} {{\[\[}}0], [1, 2], [3]] output_shape [2, 2, 4, 16] : tensor<2x8x16xi8> into tensor<2x2x4x16xi8>
  // CHECK: linalg.transpose ins(%{{.*}} : tensor<2x2x4x16xi8>) outs(%{{.*}} : tensor<2x2x16x4xi8>) permutation = [0, 1, 3, 2]
  // CHECK: iterator_types = ["parallel", "reduction", "parallel"]} ins(%{{.*}} : tensor<2x8x16xi8>) outs(%{{.*}} : tensor<2x16xi32>)
  // CHECK: iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%{{.*}}, %{{.*}} : tensor<2x4x2x4xi8>, tensor<2x2x16x4xi8>) outs(%{{.*}} : tensor<2x4x16xi32>) attrs = {tessel.contraction, tessel.vnni}
  func.func @batched(%x: tensor<2x4x8xi8>, %y: tensor<2x8x16xi8>, %z: tensor<2x4x16xi32>) -> tensor<2x4x16xi32> {
    %r = linalg.generic {indexing_maps = [#lhs, #rhs, #out], iterator_types = ["parallel", "parallel", "parallel", "reduction"], tessel.contraction}
        ins(%x, %y : tensor<2x4x8xi8>, tensor<2x8x16xi8>) outs(%z : tensor<2x4x16xi32>) {
    ^bb0(%u: i8, %v: i8, %s: i32):
      %uw = arith.extsi %u : i8 to i32
      %vw = arith.extsi %v : i8 to i32
      %p = arith.muli %uw, %vw : i32
      %t = arith.addi %s, %p : i32
      linalg.yield %t : i32
    } -> tensor<2x4x16xi32>
    return %r : tensor<2x4x16xi32>
  }
}

// -----

// k = 6 is not a multiple of 4, and the CPU has no vpmaddwd: left alone.
#lhs = affine_map<(i, j, k) -> (i, k)>
#rhs = affine_map<(i, j, k) -> (k, j)>
#out = affine_map<(i, j, k) -> (i, j)>
module attributes {tessel.vnni = 1 : i64, tessel.pmaddwd = 0 : i64} {
  // CHECK-LABEL: func.func @odd_depth(
  // CHECK-NOT: tessel.contraction, tessel.vnni
  // CHECK: attrs = {tessel.contraction}
  // CHECK-NOT: tessel.contraction, tessel.vnni
  func.func @odd_depth(%x: tensor<8x6xi8>, %y: tensor<6x16xi8>, %z: tensor<8x16xi32>) -> tensor<8x16xi32> {
    %r = linalg.generic {indexing_maps = [#lhs, #rhs, #out], iterator_types = ["parallel", "parallel", "reduction"], tessel.contraction}
        ins(%x, %y : tensor<8x6xi8>, tensor<6x16xi8>) outs(%z : tensor<8x16xi32>) {
    ^bb0(%u: i8, %v: i8, %s: i32):
      %uw = arith.extsi %u : i8 to i32
      %vw = arith.extsi %v : i8 to i32
      %p = arith.muli %uw, %vw : i32
      %t = arith.addi %s, %p : i32
      linalg.yield %t : i32
    } -> tensor<8x16xi32>
    return %r : tensor<8x16xi32>
  }
}

// -----

// A CPU with neither VNNI nor vpmaddwd (AArch64): left alone
// (tessel-widen-operands widens it).
#lhs = affine_map<(i, j, k) -> (i, k)>
#rhs = affine_map<(i, j, k) -> (k, j)>
#out = affine_map<(i, j, k) -> (i, j)>
module attributes {tessel.vnni = 0 : i64, tessel.pmaddwd = 0 : i64} {
  // CHECK-LABEL: func.func @neither(
  // CHECK-NOT: tessel.contraction, tessel.vnni
  // CHECK-NOT: tessel.contraction, tessel.pmaddwd
  // CHECK: arith.extsi
  // CHECK-NEXT: arith.extsi
  // CHECK-NOT: tessel.contraction, tessel.vnni
  // CHECK-NOT: tessel.contraction, tessel.pmaddwd
  func.func @neither(%x: tensor<8x16xi8>, %y: tensor<16x64xi8>, %z: tensor<8x64xi32>) -> tensor<8x64xi32> {
    %r = linalg.generic {indexing_maps = [#lhs, #rhs, #out], iterator_types = ["parallel", "parallel", "reduction"], tessel.contraction}
        ins(%x, %y : tensor<8x16xi8>, tensor<16x64xi8>) outs(%z : tensor<8x64xi32>) {
    ^bb0(%u: i8, %v: i8, %s: i32):
      %uw = arith.extsi %u : i8 to i32
      %vw = arith.extsi %v : i8 to i32
      %p = arith.muli %uw, %vw : i32
      %t = arith.addi %s, %p : i32
      linalg.yield %t : i32
    } -> tensor<8x64xi32>
    return %r : tensor<8x64xi32>
  }
}

// -----

// 16-bit operands are not 8-bit contractions (their products do not fit
// vpmaddwd's sums of two): left alone.
#lhs = affine_map<(i, j, k) -> (i, k)>
#rhs = affine_map<(i, j, k) -> (k, j)>
#out = affine_map<(i, j, k) -> (i, j)>
module attributes {tessel.vnni = 1 : i64, tessel.pmaddwd = 1 : i64} {
  // CHECK-LABEL: func.func @words(
  // CHECK-NOT: tessel.contraction, tessel.vnni
  // CHECK-NOT: tessel.contraction, tessel.pmaddwd
  func.func @words(%x: tensor<8x16xi16>, %y: tensor<16x64xi16>, %z: tensor<8x64xi32>) -> tensor<8x64xi32> {
    %r = linalg.generic {indexing_maps = [#lhs, #rhs, #out], iterator_types = ["parallel", "parallel", "reduction"], tessel.contraction}
        ins(%x, %y : tensor<8x16xi16>, tensor<16x64xi16>) outs(%z : tensor<8x64xi32>) {
    ^bb0(%u: i16, %v: i16, %s: i32):
      %uw = arith.extsi %u : i16 to i32
      %vw = arith.extsi %v : i16 to i32
      %p = arith.muli %uw, %vw : i32
      %t = arith.addi %s, %p : i32
      linalg.yield %t : i32
    } -> tensor<8x64xi32>
    return %r : tensor<8x64xi32>
  }
}

// -----

// x86 without VNNI: vpmaddwd's form.
// CHECK-DAG: #[[PA:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>
// CHECK-DAG: #[[PB:.*]] = affine_map<(d0, d1, d2, d3) -> (d2, d1, d3)>
// CHECK-DAG: #[[PC:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1)>
#lhs = affine_map<(i, j, k) -> (i, k)>
#rhs = affine_map<(i, j, k) -> (k, j)>
#out = affine_map<(i, j, k) -> (i, j)>
module attributes {tessel.vnni = 0 : i64, tessel.pmaddwd = 1 : i64} {
  // CHECK-LABEL: func.func @pairs(
  // CHECK-SAME: %[[X:.*]]: tensor<8x16xi8>, %[[Y:.*]]: tensor<16x64xi8>, %[[Z:.*]]: tensor<8x64xi32>
  // CHECK: %[[XW:.*]] = linalg.generic {{.*}} ins(%[[X]] : tensor<8x16xi8>) outs(%{{.*}} : tensor<8x16xi16>)
  // CHECK: arith.extsi %{{.*}} : i8 to i16
  // CHECK: %[[YW:.*]] = linalg.generic {{.*}} ins(%[[Y]] : tensor<16x64xi8>) outs(%{{.*}} : tensor<16x64xi16>)
  // CHECK: arith.extsi %{{.*}} : i8 to i16
  // CHECK: %[[AP:.*]] = tensor.expand_shape %[[XW]] {{\[\[}}0], [1, 2]] output_shape [8, 8, 2] : tensor<8x16xi16> into tensor<8x8x2xi16>
  // CHECK: %[[BQ:.*]] = tensor.expand_shape %[[YW]] {{\[\[}}0, 1], [2]] output_shape [8, 2, 64] : tensor<16x64xi16> into tensor<8x2x64xi16>
  // CHECK: %[[BP:.*]] = linalg.transpose ins(%[[BQ]] : tensor<8x2x64xi16>) outs(%{{.*}} : tensor<8x64x2xi16>) permutation = [0, 2, 1]
  // No bias: the accumulator is the contraction's init as it was.
  // CHECK-NOT: arith.subi
  // CHECK: linalg.generic {indexing_maps = [#[[PA]], #[[PB]], #[[PC]]], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%[[AP]], %[[BP]] : tensor<8x8x2xi16>, tensor<8x64x2xi16>) outs(%[[Z]] : tensor<8x64xi32>) attrs = {tessel.contraction, tessel.pmaddwd}
  // CHECK-NEXT: ^bb0(%[[U:.*]]: i16, %[[V:.*]]: i16, %[[S:.*]]: i32):
  // CHECK-NEXT: %[[UW:.*]] = arith.extsi %[[U]] : i16 to i32
  // CHECK-NEXT: %[[VW:.*]] = arith.extsi %[[V]] : i16 to i32
  // CHECK-NEXT: %[[P:.*]] = arith.muli %[[UW]], %[[VW]] : i32
  // CHECK-NEXT: arith.addi %[[S]], %[[P]] : i32
  func.func @pairs(%x: tensor<8x16xi8>, %y: tensor<16x64xi8>, %z: tensor<8x64xi32>) -> tensor<8x64xi32> {
    %r = linalg.generic {indexing_maps = [#lhs, #rhs, #out], iterator_types = ["parallel", "parallel", "reduction"], tessel.contraction}
        ins(%x, %y : tensor<8x16xi8>, tensor<16x64xi8>) outs(%z : tensor<8x64xi32>) {
    ^bb0(%u: i8, %v: i8, %s: i32):
      %uw = arith.extsi %u : i8 to i32
      %vw = arith.extsi %v : i8 to i32
      %p = arith.muli %uw, %vw : i32
      %t = arith.addi %s, %p : i32
      linalg.yield %t : i32
    } -> tensor<8x64xi32>
    return %r : tensor<8x64xi32>
  }
}

// -----

// A batch in vpmaddwd's form keeps its batch loop first.
#lhs = affine_map<(b, i, j, k) -> (b, i, k)>
#rhs = affine_map<(b, i, j, k) -> (b, k, j)>
#out = affine_map<(b, i, j, k) -> (b, i, j)>
module attributes {tessel.vnni = 0 : i64, tessel.pmaddwd = 1 : i64} {
  // CHECK-LABEL: func.func @batched_pairs(
  // CHECK: tensor.expand_shape %{{.*}} {{\[\[}}0], [1], [2, 3]] output_shape [2, 4, 4, 2] : tensor<2x4x8xi16> into tensor<2x4x4x2xi16>
  // CHECK: tensor.expand_shape %{{.*}} {{\[\[}}0], [1, 2], [3]] output_shape [2, 4, 2, 16] : tensor<2x8x16xi16> into tensor<2x4x2x16xi16>
  // CHECK: linalg.transpose ins(%{{.*}} : tensor<2x4x2x16xi16>) outs(%{{.*}} : tensor<2x4x16x2xi16>) permutation = [0, 1, 3, 2]
  // CHECK: iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%{{.*}}, %{{.*}} : tensor<2x4x4x2xi16>, tensor<2x4x16x2xi16>) outs(%{{.*}} : tensor<2x4x16xi32>) attrs = {tessel.contraction, tessel.pmaddwd}
  func.func @batched_pairs(%x: tensor<2x4x8xi8>, %y: tensor<2x8x16xi8>, %z: tensor<2x4x16xi32>) -> tensor<2x4x16xi32> {
    %r = linalg.generic {indexing_maps = [#lhs, #rhs, #out], iterator_types = ["parallel", "parallel", "parallel", "reduction"], tessel.contraction}
        ins(%x, %y : tensor<2x4x8xi8>, tensor<2x8x16xi8>) outs(%z : tensor<2x4x16xi32>) {
    ^bb0(%u: i8, %v: i8, %s: i32):
      %uw = arith.extsi %u : i8 to i32
      %vw = arith.extsi %v : i8 to i32
      %p = arith.muli %uw, %vw : i32
      %t = arith.addi %s, %p : i32
      linalg.yield %t : i32
    } -> tensor<2x4x16xi32>
    return %r : tensor<2x4x16xi32>
  }
}

// -----

// With VNNI, k = 6 (even, not a multiple of 4) takes vpmaddwd's pairs.
#lhs = affine_map<(i, j, k) -> (i, k)>
#rhs = affine_map<(i, j, k) -> (k, j)>
#out = affine_map<(i, j, k) -> (i, j)>
module attributes {tessel.vnni = 1 : i64, tessel.pmaddwd = 1 : i64} {
  // CHECK-LABEL: func.func @even_depth(
  // CHECK-NOT: tessel.contraction, tessel.vnni
  // CHECK: ins(%{{.*}}, %{{.*}} : tensor<8x3x2xi16>, tensor<3x16x2xi16>) outs(%{{.*}} : tensor<8x16xi32>) attrs = {tessel.contraction, tessel.pmaddwd}
  func.func @even_depth(%x: tensor<8x6xi8>, %y: tensor<6x16xi8>, %z: tensor<8x16xi32>) -> tensor<8x16xi32> {
    %r = linalg.generic {indexing_maps = [#lhs, #rhs, #out], iterator_types = ["parallel", "parallel", "reduction"], tessel.contraction}
        ins(%x, %y : tensor<8x6xi8>, tensor<6x16xi8>) outs(%z : tensor<8x16xi32>) {
    ^bb0(%u: i8, %v: i8, %s: i32):
      %uw = arith.extsi %u : i8 to i32
      %vw = arith.extsi %v : i8 to i32
      %p = arith.muli %uw, %vw : i32
      %t = arith.addi %s, %p : i32
      linalg.yield %t : i32
    } -> tensor<8x16xi32>
    return %r : tensor<8x16xi32>
  }
}
