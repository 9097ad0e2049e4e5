// tessel-vectorize: a register tile tessel-tile marked (one k step of a
// 4 x 32 tile) becomes FMA outer products: per k, each row's A element is
// broadcast and fused-multiply-added with the B row into that row's
// accumulator vector; the accumulator is read before the k loop and
// written after it, so it lives in registers.
// RUN: tessel-opt %s --split-input-file --tessel-vectorize --canonicalize --cse | FileCheck %s

#lhs = affine_map<(i, j, k) -> (i, k)>
#rhs = affine_map<(i, j, k) -> (k, j)>
#out = affine_map<(i, j, k) -> (i, j)>
// CHECK-LABEL: func.func @tile(
// CHECK-SAME: %[[A:.*]]: tensor<4x16xf32>, %[[B:.*]]: tensor<16x32xf32>, %[[C:.*]]: tensor<4x32xf32>
// CHECK: %[[INIT:.*]] = vector.transfer_read %[[C]][%{{.*}}, %{{.*}}], %{{.*}} {in_bounds = [true, true]} : tensor<4x32xf32>, vector<4x32xf32>
// CHECK: %[[SUM:.*]] = scf.for %[[K:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %[[INIT]]) -> (vector<4x32xf32>) {
// CHECK:   %[[AS:.*]] = tensor.extract_slice %[[A]][0, %[[K]]] [4, 1] [1, 1]
// CHECK:   %[[BS:.*]] = tensor.extract_slice %[[B]][%[[K]], 0] [1, 32] [1, 1]
// CHECK:   %[[AK:.*]] = vector.transfer_read %[[AS]]{{.*}} : tensor<4x1xf32>, vector<4x1xf32>
// CHECK:   %[[BK:.*]] = vector.transfer_read %[[BS]]{{.*}} : tensor<1x32xf32>, vector<1x32xf32>
// CHECK:   %[[ROW:.*]] = vector.extract %[[BK]][0] : vector<32xf32> from vector<1x32xf32>
// CHECK:   %[[A0:.*]] = vector.extract %[[AK]][0, 0] : f32 from vector<4x1xf32>
// CHECK:   %[[A0S:.*]] = vector.broadcast %[[A0]] : f32 to vector<32xf32>
// CHECK:   %[[C0:.*]] = vector.extract %[[ACC]][0] : vector<32xf32> from vector<4x32xf32>
// CHECK:   math.fma %[[A0S]], %[[ROW]], %[[C0]] : vector<32xf32>
// CHECK-COUNT-3: math.fma %{{.*}}, %[[ROW]], %{{.*}} : vector<32xf32>
// CHECK-NOT: vector.fma
// CHECK:   scf.yield %{{.*}} : vector<4x32xf32>
// CHECK: }
// CHECK: %[[R:.*]] = vector.transfer_write %[[SUM]], %[[C]]
// CHECK: return %[[R]]
func.func @tile(%a: tensor<4x16xf32>, %b: tensor<16x32xf32>, %c: tensor<4x32xf32>) -> tensor<4x32xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %r = scf.for %k = %c0 to %c16 step %c1 iter_args(%acc = %c) -> (tensor<4x32xf32>) {
    %ak = tensor.extract_slice %a[0, %k] [4, 1] [1, 1] : tensor<4x16xf32> to tensor<4x1xf32>
    %bk = tensor.extract_slice %b[%k, 0] [1, 32] [1, 1] : tensor<16x32xf32> to tensor<1x32xf32>
    %step = linalg.generic {indexing_maps = [#lhs, #rhs, #out], iterator_types = ["parallel", "parallel", "reduction"], tessel.vectorize}
        ins(%ak, %bk : tensor<4x1xf32>, tensor<1x32xf32>) outs(%acc : tensor<4x32xf32>) {
    ^bb0(%x: f32, %y: f32, %s: f32):
      %p = arith.mulf %x, %y : f32
      %t = arith.addf %s, %p : f32
      linalg.yield %t : f32
    } -> tensor<4x32xf32>
    scf.yield %step : tensor<4x32xf32>
  } {tessel.reduction_loop}
  return %r : tensor<4x32xf32>
}

// -----

// Unmarked generics are not vectorized.
#lhs = affine_map<(i, j, k) -> (i, k)>
#rhs = affine_map<(i, j, k) -> (k, j)>
#out = affine_map<(i, j, k) -> (i, j)>
// CHECK-LABEL: func.func @unmarked(
// CHECK: linalg.generic
// CHECK-NOT: vector.
func.func @unmarked(%a: tensor<4x16xf32>, %b: tensor<16x32xf32>, %c: tensor<4x32xf32>) -> tensor<4x32xf32> {
  %r = linalg.generic {indexing_maps = [#lhs, #rhs, #out], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : tensor<4x16xf32>, tensor<16x32xf32>) outs(%c : tensor<4x32xf32>) {
  ^bb0(%x: f32, %y: f32, %s: f32):
    %p = arith.mulf %x, %y : f32
    %t = arith.addf %s, %p : f32
    linalg.yield %t : f32
  } -> tensor<4x32xf32>
  return %r : tensor<4x32xf32>
}

// -----

// A register tile in VNNI's form (tessel-vnni): per k/4 step, each row's
// four A bytes are broadcast to every 32-bit lane and each 16-lane piece
// of the row adds one vpdpbusd (the intrinsic called by its name) of them
// and the packed B piece; the accumulator tile stays in registers.
#lhs = affine_map<(i, j, q, r) -> (i, q, r)>
#rhs = affine_map<(i, j, q, r) -> (q, j, r)>
#out = affine_map<(i, j, q, r) -> (i, j)>
// CHECK: func.func private @llvm.x86.avx512.vpdpbusd.512(vector<16xi32>, vector<64xi8>, vector<64xi8>) -> vector<16xi32>
module attributes {tessel.vector_bits = 512 : i64} {
  // CHECK-LABEL: func.func @vnni(
  // CHECK-SAME: %[[A:.*]]: tensor<2x4x4xi8>, %[[B:.*]]: tensor<4x32x4xi8>, %[[C:.*]]: tensor<2x32xi32>
  // CHECK: %[[INIT:.*]] = vector.transfer_read %[[C]]{{.*}} : tensor<2x32xi32>, vector<2x32xi32>
  // CHECK: scf.for %[[Q:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %[[INIT]]) -> (vector<2x32xi32>) {
  // CHECK:   %[[BF:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0, 1, 2]] : tensor<1x32x4xi8> into tensor<128xi8>
  // CHECK:   %[[B0:.*]] = vector.transfer_read %[[BF]][%c0], {{.*}} : tensor<128xi8>, vector<64xi8>
  // CHECK:   %[[B1:.*]] = vector.transfer_read %[[BF]][%c64], {{.*}} : tensor<128xi8>, vector<64xi8>
  // CHECK:   %[[ROW0:.*]] = vector.extract %[[ACC]][0] : vector<32xi32> from vector<2x32xi32>
  // CHECK:   %[[A0:.*]] = vector.transfer_read %{{.*}}[%c0, %c0, %c0], {{.*}} : tensor<2x1x4xi8>, vector<4xi8>
  // CHECK:   %[[W0:.*]] = vector.bitcast %[[A0]] : vector<4xi8> to vector<1xi32>
  // CHECK:   %[[S0:.*]] = vector.extract %[[W0]][0] : i32 from vector<1xi32>
  // CHECK:   %[[L0:.*]] = vector.broadcast %[[S0]] : i32 to vector<16xi32>
  // CHECK:   %[[Y0:.*]] = vector.bitcast %[[L0]] : vector<16xi32> to vector<64xi8>
  // CHECK:   %[[P00:.*]] = vector.extract_strided_slice %[[ROW0]] {offsets = [0], sizes = [16], strides = [1]}
  // CHECK:   func.call @llvm.x86.avx512.vpdpbusd.512(%[[P00]], %[[Y0]], %[[B0]]) : (vector<16xi32>, vector<64xi8>, vector<64xi8>) -> vector<16xi32>
  // CHECK:   func.call @llvm.x86.avx512.vpdpbusd.512(%{{.*}}, %[[Y0]], %[[B1]])
  // CHECK-COUNT-2: func.call @llvm.x86.avx512.vpdpbusd.512(
  // CHECK:   scf.yield %{{.*}} : vector<2x32xi32>
  // CHECK: } {tessel.reduction_loop}
  // CHECK: vector.transfer_write %{{.*}}, %[[C]]
  func.func @vnni(%a: tensor<2x4x4xi8>, %b: tensor<4x32x4xi8>, %c: tensor<2x32xi32>) -> tensor<2x32xi32> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %r = scf.for %q = %c0 to %c4 step %c1 iter_args(%acc = %c) -> (tensor<2x32xi32>) {
      %aq = tensor.extract_slice %a[0, %q, 0] [2, 1, 4] [1, 1, 1] : tensor<2x4x4xi8> to tensor<2x1x4xi8>
      %bq = tensor.extract_slice %b[%q, 0, 0] [1, 32, 4] [1, 1, 1] : tensor<4x32x4xi8> to tensor<1x32x4xi8>
      %step = linalg.generic {indexing_maps = [#lhs, #rhs, #out], iterator_types = ["parallel", "parallel", "reduction", "reduction"], tessel.contraction, tessel.vnni, tessel.vectorize}
          ins(%aq, %bq : tensor<2x1x4xi8>, tensor<1x32x4xi8>) outs(%acc : tensor<2x32xi32>) {
      ^bb0(%x: i8, %y: i8, %s: i32):
        %xw = arith.extui %x : i8 to i32
        %yw = arith.extsi %y : i8 to i32
        %p = arith.muli %xw, %yw : i32
        %t = arith.addi %s, %p : i32
        linalg.yield %t : i32
      } -> tensor<2x32xi32>
      scf.yield %step : tensor<2x32xi32>
    } {tessel.reduction_loop}
    return %r : tensor<2x32xi32>
  }
}

// -----

// 256-bit code takes the 8-lane vpdpbusd; a tile whose columns are not a
// multiple of 4 adds the four k as outer products of zero-extended A and
// sign-extended B instead (no vpdpbusd fits it).
#lhs = affine_map<(i, j, q, r) -> (i, q, r)>
#rhs = affine_map<(i, j, q, r) -> (q, j, r)>
#out = affine_map<(i, j, q, r) -> (i, j)>
module attributes {tessel.vector_bits = 256 : i64} {
  // CHECK-LABEL: func.func @vnni_ymm(
  // CHECK-COUNT-2: {{(func\.)?}}call @llvm.x86.avx512.vpdpbusd.256({{.*}}) : (vector<8xi32>, vector<32xi8>, vector<32xi8>) -> vector<8xi32>
  // CHECK-NOT: vpdpbusd.512
  func.func @vnni_ymm(%a: tensor<1x1x4xi8>, %b: tensor<1x16x4xi8>, %c: tensor<1x16xi32>) -> tensor<1x16xi32> {
    %r = linalg.generic {indexing_maps = [#lhs, #rhs, #out], iterator_types = ["parallel", "parallel", "reduction", "reduction"], tessel.contraction, tessel.vnni, tessel.vectorize}
        ins(%a, %b : tensor<1x1x4xi8>, tensor<1x16x4xi8>) outs(%c : tensor<1x16xi32>) {
    ^bb0(%x: i8, %y: i8, %s: i32):
      %xw = arith.extui %x : i8 to i32
      %yw = arith.extsi %y : i8 to i32
      %p = arith.muli %xw, %yw : i32
      %t = arith.addi %s, %p : i32
      linalg.yield %t : i32
    } -> tensor<1x16xi32>
    return %r : tensor<1x16xi32>
  }
  // CHECK-LABEL: func.func @vnni_narrow(
  // CHECK-NOT: vpdpbusd
  // CHECK-COUNT-4: arith.extui %{{.*}} : vector<1xi8> to vector<1xi32>
  // CHECK-NOT: vpdpbusd
  func.func @vnni_narrow(%a: tensor<1x1x4xi8>, %b: tensor<1x6x4xi8>, %c: tensor<1x6xi32>) -> tensor<1x6xi32> {
    %r = linalg.generic {indexing_maps = [#lhs, #rhs, #out], iterator_types = ["parallel", "parallel", "reduction", "reduction"], tessel.contraction, tessel.vnni, tessel.vectorize}
        ins(%a, %b : tensor<1x1x4xi8>, tensor<1x6x4xi8>) outs(%c : tensor<1x6xi32>) {
    ^bb0(%x: i8, %y: i8, %s: i32):
      %xw = arith.extui %x : i8 to i32
      %yw = arith.extsi %y : i8 to i32
      %p = arith.muli %xw, %yw : i32
      %t = arith.addi %s, %p : i32
      linalg.yield %t : i32
    } -> tensor<1x6xi32>
    return %r : tensor<1x6xi32>
  }
}

// -----

// A register tile in vpmaddwd's form (tessel-vnni without VNNI): per k/2
// step, each row's two 16-bit A elements are broadcast as one 32-bit lane,
// and each 8-lane piece of the row adds vpmaddwd's pair sums of them and
// the packed B piece (vpmaddwd does not accumulate: an add follows); the
// 128-bit code takes SSE2's 4-lane form.
#lhs = affine_map<(i, j, q, r) -> (i, q, r)>
#rhs = affine_map<(i, j, q, r) -> (q, j, r)>
#out = affine_map<(i, j, q, r) -> (i, j)>
// CHECK: func.func private @llvm.x86.avx2.pmadd.wd(vector<16xi16>, vector<16xi16>) -> vector<8xi32>
module attributes {tessel.vector_bits = 256 : i64} {
  // CHECK-LABEL: func.func @pairs(
  // CHECK-SAME: %[[A:.*]]: tensor<1x1x2xi16>, %[[B:.*]]: tensor<1x16x2xi16>, %[[C:.*]]: tensor<1x16xi32>
  // CHECK: %[[BF:.*]] = tensor.collapse_shape %[[B]] {{\[\[}}0, 1, 2]] : tensor<1x16x2xi16> into tensor<32xi16>
  // CHECK: %[[B0:.*]] = vector.transfer_read %[[BF]][%c0], {{.*}} : tensor<32xi16>, vector<16xi16>
  // CHECK: %[[B1:.*]] = vector.transfer_read %[[BF]][%c16], {{.*}} : tensor<32xi16>, vector<16xi16>
  // CHECK: %[[A0:.*]] = vector.transfer_read %[[A]][%c0, %c0, %c0], {{.*}} : tensor<1x1x2xi16>, vector<2xi16>
  // CHECK: %[[W0:.*]] = vector.bitcast %[[A0]] : vector<2xi16> to vector<1xi32>
  // CHECK: %[[S0:.*]] = vector.extract %[[W0]][0] : i32 from vector<1xi32>
  // CHECK: %[[L0:.*]] = vector.broadcast %[[S0]] : i32 to vector<8xi32>
  // CHECK: %[[Y0:.*]] = vector.bitcast %[[L0]] : vector<8xi32> to vector<16xi16>
  // CHECK: %[[P0:.*]] = {{(func\.)?}}call @llvm.x86.avx2.pmadd.wd(%[[Y0]], %[[B0]]) : (vector<16xi16>, vector<16xi16>) -> vector<8xi32>
  // CHECK: arith.addi %{{.*}}, %[[P0]] : vector<8xi32>
  // CHECK: %[[P1:.*]] = {{(func\.)?}}call @llvm.x86.avx2.pmadd.wd(%[[Y0]], %[[B1]])
  // CHECK: arith.addi %{{.*}}, %[[P1]] : vector<8xi32>
  func.func @pairs(%a: tensor<1x1x2xi16>, %b: tensor<1x16x2xi16>, %c: tensor<1x16xi32>) -> tensor<1x16xi32> {
    %r = linalg.generic {indexing_maps = [#lhs, #rhs, #out], iterator_types = ["parallel", "parallel", "reduction", "reduction"], tessel.contraction, tessel.pmaddwd, tessel.vectorize}
        ins(%a, %b : tensor<1x1x2xi16>, tensor<1x16x2xi16>) outs(%c : tensor<1x16xi32>) {
    ^bb0(%x: i16, %y: i16, %s: i32):
      %xw = arith.extsi %x : i16 to i32
      %yw = arith.extsi %y : i16 to i32
      %p = arith.muli %xw, %yw : i32
      %t = arith.addi %s, %p : i32
      linalg.yield %t : i32
    } -> tensor<1x16xi32>
    return %r : tensor<1x16xi32>
  }
  // A tile of 6 columns: the two k as outer products of sign-extended A
  // and B.
  // CHECK-LABEL: func.func @pairs_narrow(
  // CHECK-NOT: pmadd
  // CHECK-COUNT-2: arith.extsi %{{.*}} : vector<1xi16> to vector<1xi32>
  // CHECK-NOT: pmadd
  func.func @pairs_narrow(%a: tensor<1x1x2xi16>, %b: tensor<1x6x2xi16>, %c: tensor<1x6xi32>) -> tensor<1x6xi32> {
    %r = linalg.generic {indexing_maps = [#lhs, #rhs, #out], iterator_types = ["parallel", "parallel", "reduction", "reduction"], tessel.contraction, tessel.pmaddwd, tessel.vectorize}
        ins(%a, %b : tensor<1x1x2xi16>, tensor<1x6x2xi16>) outs(%c : tensor<1x6xi32>) {
    ^bb0(%x: i16, %y: i16, %s: i32):
      %xw = arith.extsi %x : i16 to i32
      %yw = arith.extsi %y : i16 to i32
      %p = arith.muli %xw, %yw : i32
      %t = arith.addi %s, %p : i32
      linalg.yield %t : i32
    } -> tensor<1x6xi32>
    return %r : tensor<1x6xi32>
  }
}

// -----

#lhs = affine_map<(i, j, q, r) -> (i, q, r)>
#rhs = affine_map<(i, j, q, r) -> (q, j, r)>
#out = affine_map<(i, j, q, r) -> (i, j)>
// CHECK: func.func private @llvm.x86.sse2.pmadd.wd(vector<8xi16>, vector<8xi16>) -> vector<4xi32>
module attributes {tessel.vector_bits = 128 : i64} {
  // CHECK-LABEL: func.func @pairs_sse(
  // CHECK-COUNT-2: {{(func\.)?}}call @llvm.x86.sse2.pmadd.wd({{.*}}) : (vector<8xi16>, vector<8xi16>) -> vector<4xi32>
  func.func @pairs_sse(%a: tensor<1x1x2xi16>, %b: tensor<1x8x2xi16>, %c: tensor<1x8xi32>) -> tensor<1x8xi32> {
    %r = linalg.generic {indexing_maps = [#lhs, #rhs, #out], iterator_types = ["parallel", "parallel", "reduction", "reduction"], tessel.contraction, tessel.pmaddwd, tessel.vectorize}
        ins(%a, %b : tensor<1x1x2xi16>, tensor<1x8x2xi16>) outs(%c : tensor<1x8xi32>) {
    ^bb0(%x: i16, %y: i16, %s: i32):
      %xw = arith.extsi %x : i16 to i32
      %yw = arith.extsi %y : i16 to i32
      %p = arith.muli %xw, %yw : i32
      %t = arith.addi %s, %p : i32
      linalg.yield %t : i32
    } -> tensor<1x8xi32>
    return %r : tensor<1x8xi32>
  }
}

// -----

// A tile fused with its epilogue (tessel-tile: `acc + dot`): the fill of
// its init becomes zero accumulators in registers, and the epilogue adds
// the finished sums to the destination tile once, after the k loop.
// CHECK-LABEL: func.func @epilogue(
// CHECK-SAME: %[[A:.*]]: tensor<4x16xf32>, %[[B:.*]]: tensor<16x32xf32>, %[[ACC:.*]]: tensor<4x32xf32>
// CHECK: %[[ZEROS:.*]] = arith.constant dense<0.000000e+00> : vector<4x32xf32>
// CHECK-NOT: linalg.fill
// CHECK: %[[DOT:.*]] = scf.for {{.*}} iter_args(%{{.*}} = %[[ZEROS]]) -> (vector<4x32xf32>)
// CHECK: math.fma
// CHECK: } {tessel.reduction_loop}
// CHECK-NEXT: %[[OLD:.*]] = vector.transfer_read %[[ACC]]
// CHECK-NEXT: %[[SUM:.*]] = arith.addf %[[OLD]], %[[DOT]] : vector<4x32xf32>
// CHECK-NEXT: vector.transfer_write %[[SUM]], %[[ACC]]
// CHECK-NOT: linalg.generic
#lhs = affine_map<(i, j, k) -> (i, k)>
#rhs = affine_map<(i, j, k) -> (k, j)>
#out = affine_map<(i, j, k) -> (i, j)>
#id = affine_map<(i, j) -> (i, j)>
func.func @epilogue(%a: tensor<4x16xf32>, %b: tensor<16x32xf32>, %acc: tensor<4x32xf32>) -> tensor<4x32xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<4x32xf32>
  %init = linalg.fill {tessel.vectorize} ins(%zero : f32) outs(%empty : tensor<4x32xf32>) -> tensor<4x32xf32>
  %dot = scf.for %k = %c0 to %c16 step %c1 iter_args(%sum = %init) -> (tensor<4x32xf32>) {
    %x = tensor.extract_slice %a[0, %k] [4, 1] [1, 1] : tensor<4x16xf32> to tensor<4x1xf32>
    %y = tensor.extract_slice %b[%k, 0] [1, 32] [1, 1] : tensor<16x32xf32> to tensor<1x32xf32>
    %step = linalg.generic {indexing_maps = [#lhs, #rhs, #out], iterator_types = ["parallel", "parallel", "reduction"], tessel.contraction, tessel.vectorize}
        ins(%x, %y : tensor<4x1xf32>, tensor<1x32xf32>) outs(%sum : tensor<4x32xf32>) {
    ^bb0(%p: f32, %q: f32, %s: f32):
      %m = arith.mulf %p, %q : f32
      %t = arith.addf %s, %m : f32
      linalg.yield %t : f32
    } -> tensor<4x32xf32>
    scf.yield %step : tensor<4x32xf32>
  } {tessel.reduction_loop}
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"], tessel.epilogue_group = 0 : i64, tessel.vectorize}
      ins(%dot : tensor<4x32xf32>) outs(%acc : tensor<4x32xf32>) {
  ^bb0(%d: f32, %old: f32):
    %t = arith.addf %old, %d : f32
    linalg.yield %t : f32
  } -> tensor<4x32xf32>
  return %r : tensor<4x32xf32>
}

// -----

// A tile whose rows are not a power of two long (2 x 24 on 256-bit
// vectors): the k loop carries each row as three 8-lane pieces, never a
// vector<24xf32> (which LLVM would pass between blocks element by
// element); the tile is assembled and taken apart inside the loop body.
#lhs = affine_map<(i, j, k) -> (i, k)>
#rhs = affine_map<(i, j, k) -> (k, j)>
#out = affine_map<(i, j, k) -> (i, j)>
module attributes {tessel.vector_bits = 256 : i64} {
  // CHECK-LABEL: func.func @pieces(
  // CHECK-COUNT-6: vector.transfer_read %{{.*}} {in_bounds = [true]} : tensor<2x24xf32>, vector<8xf32>
  // CHECK: scf.for %{{.*}} iter_args({{.*}}) -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>) {
  // CHECK-COUNT-2: math.fma %{{.*}} : vector<24xf32>
  // CHECK: scf.yield %{{.*}} : vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>
  // CHECK: }
  // CHECK-COUNT-6: vector.transfer_write %{{.*}} {in_bounds = [true]} : vector<8xf32>, tensor<2x24xf32>
  // CHECK-NOT: vector.transfer_write
  // CHECK: return
  func.func @pieces(%a: tensor<2x16xf32>, %b: tensor<16x24xf32>, %c: tensor<2x24xf32>) -> tensor<2x24xf32> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c16 = arith.constant 16 : index
    %r = scf.for %k = %c0 to %c16 step %c1 iter_args(%acc = %c) -> (tensor<2x24xf32>) {
      %ak = tensor.extract_slice %a[0, %k] [2, 1] [1, 1] : tensor<2x16xf32> to tensor<2x1xf32>
      %bk = tensor.extract_slice %b[%k, 0] [1, 24] [1, 1] : tensor<16x24xf32> to tensor<1x24xf32>
      %step = linalg.generic {indexing_maps = [#lhs, #rhs, #out], iterator_types = ["parallel", "parallel", "reduction"], tessel.vectorize}
          ins(%ak, %bk : tensor<2x1xf32>, tensor<1x24xf32>) outs(%acc : tensor<2x24xf32>) {
      ^bb0(%x: f32, %y: f32, %s: f32):
        %p = arith.mulf %x, %y : f32
        %t = arith.addf %s, %p : f32
        linalg.yield %t : f32
      } -> tensor<2x24xf32>
      scf.yield %step : tensor<2x24xf32>
    } {tessel.reduction_loop}
    return %r : tensor<2x24xf32>
  }
}
