// RUN: tessel-opt %s --split-input-file --tessel-past-end-views | FileCheck %s

// tessel-past-end-views: a kernel grid-to-loops ran in two versions, whose
// partial blocks all lie past their arrays' ends (`tessel.past_end_views`),
// runs its whole blocks' version in every program when every global array
// that version touches is accessed only by vector accesses
// tessel-buffer-resources makes buffer accesses (past the end: zeros read,
// nothing written) and its byte size is a multiple of 16: the condition
// becomes true (canonicalization then drops the staged version).
// CHECK-LABEL: func.func @tail
// CHECK: %[[TRUE:.*]] = arith.constant true
// CHECK-NEXT: scf.if %[[TRUE]] {
// CHECK: } {tessel.past_end_views, tessel.staged_version}
func.func @tail(%x: memref<1000xf32>, %o: memref<1000xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c1000 = arith.constant 1000 : index
  %pad = ub.poison : f32
  scf.forall (%p) in (8) {
    %start = arith.muli %p, %c16 : index
    %end = arith.addi %start, %c16 : index
    %whole = arith.cmpi sle, %end, %c1000 : index
    scf.if %whole {
      %xv = memref.subview %x[%start] [16] [1] : memref<1000xf32> to memref<16xf32, strided<[1], offset: ?>>
      %ov = memref.subview %o[%start] [16] [1] : memref<1000xf32> to memref<16xf32, strided<[1], offset: ?>>
      scf.parallel (%i) = (%c0) to (%c16) step (%c16) {
        %v = vector.transfer_read %xv[%i], %pad {in_bounds = [true]} : memref<16xf32, strided<[1], offset: ?>>, vector<4xf32>
        vector.transfer_write %v, %ov[%i] {in_bounds = [true]} : vector<4xf32>, memref<16xf32, strided<[1], offset: ?>>
        scf.reduce
      }
    } else {
      %s = memref.load %x[%start] : memref<1000xf32>
      memref.store %s, %o[%start] : memref<1000xf32>
    } {tessel.staged_version, tessel.past_end_views}
  }
  return
}

// -----

// Not where the whole version reads an array element by element (a
// global load past the end would read whatever is there), nor where an
// array's byte size is no multiple of 16 (a vector could straddle its end),
// nor without `tessel.past_end_views` (partial inner dimensions: the
// clipped part is inside the array).
// CHECK-LABEL: func.func @scalar_access
// CHECK-NOT: arith.constant true
// CHECK: } {tessel.past_end_views, tessel.staged_version}
// CHECK-LABEL: func.func @straddling
// CHECK-NOT: arith.constant true
// CHECK: } {tessel.past_end_views, tessel.staged_version}
// CHECK-LABEL: func.func @unmarked
// CHECK-NOT: arith.constant true
// CHECK: } {tessel.staged_version}
func.func @scalar_access(%x: memref<1000xf32>, %o: memref<1000xf32>) {
  %c16 = arith.constant 16 : index
  %c1000 = arith.constant 1000 : index
  scf.forall (%p) in (8) {
    %start = arith.muli %p, %c16 : index
    %end = arith.addi %start, %c16 : index
    %whole = arith.cmpi sle, %end, %c1000 : index
    scf.if %whole {
      %xv = memref.subview %x[%start] [16] [1] : memref<1000xf32> to memref<16xf32, strided<[1], offset: ?>>
      %s = memref.load %xv[%p] : memref<16xf32, strided<[1], offset: ?>>
      memref.store %s, %o[%start] : memref<1000xf32>
    } else {
    } {tessel.staged_version, tessel.past_end_views}
  }
  return
}
func.func @straddling(%x: memref<1001xf32>) {
  %c16 = arith.constant 16 : index
  %c1001 = arith.constant 1001 : index
  %pad = ub.poison : f32
  scf.forall (%p) in (8) {
    %start = arith.muli %p, %c16 : index
    %end = arith.addi %start, %c16 : index
    %whole = arith.cmpi sle, %end, %c1001 : index
    scf.if %whole {
      %xv = memref.subview %x[%start] [16] [1] : memref<1001xf32> to memref<16xf32, strided<[1], offset: ?>>
      %v = vector.transfer_read %xv[%p], %pad {in_bounds = [true]} : memref<16xf32, strided<[1], offset: ?>>, vector<4xf32>
      vector.transfer_write %v, %xv[%p] {in_bounds = [true]} : vector<4xf32>, memref<16xf32, strided<[1], offset: ?>>
    } else {
    } {tessel.staged_version, tessel.past_end_views}
  }
  return
}
func.func @unmarked(%x: memref<1000xf32>) {
  %c16 = arith.constant 16 : index
  %c1000 = arith.constant 1000 : index
  %pad = ub.poison : f32
  scf.forall (%p) in (8) {
    %start = arith.muli %p, %c16 : index
    %end = arith.addi %start, %c16 : index
    %whole = arith.cmpi sle, %end, %c1000 : index
    scf.if %whole {
      %xv = memref.subview %x[%start] [16] [1] : memref<1000xf32> to memref<16xf32, strided<[1], offset: ?>>
      %v = vector.transfer_read %xv[%p], %pad {in_bounds = [true]} : memref<16xf32, strided<[1], offset: ?>>, vector<4xf32>
      vector.transfer_write %v, %xv[%p] {in_bounds = [true]} : vector<4xf32>, memref<16xf32, strided<[1], offset: ?>>
    } else {
    } {tessel.staged_version}
  }
  return
}
