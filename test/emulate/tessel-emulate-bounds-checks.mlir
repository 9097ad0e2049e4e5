// RUN: tessel-opt %s --split-input-file --tessel-emulate-bounds-checks | FileCheck %s

// A kernel's vector load of a row of a static array: the first byte is
// row * 64 + column * 4, the last row * 64 + column * 4 + 15, inside
// [0, 1024) of the argument. An access outside is not made: it records its
// site (counted from 1, listed on the module) in the fault global, and a
// load gives zeros.
// CHECK-LABEL: module attributes {tessel.checked_accesses = ["vector.load of memref<16x16xf32> at loc({{.*}}tessel-emulate-bounds-checks.mlir{{.*}}:38:10)", "memref.store of memref<16x16xf32> at loc({{.*}}:40:5)"]}
// CHECK: memref.global @__tessel_bounds_fault : memref<i64> = dense<0>
// CHECK-LABEL: func.func @row
// CHECK: gpu.launch
// CHECK: %[[OK:.*]] = arith.andi %{{.*}}, %{{.*}} : i1
// CHECK-NEXT: %[[V:.*]] = scf.if %[[OK]] -> (vector<4xf32>) {
// CHECK-NEXT: %[[LOADED:.*]] = vector.load %arg0[%{{.*}}, %{{.*}}] : memref<16x16xf32>, vector<4xf32>
// CHECK-NEXT: scf.yield %[[LOADED]] : vector<4xf32>
// CHECK-NEXT: } else {
// The first fault recorded is the one reported.
// CHECK-NEXT: %[[FLAG:.*]] = memref.get_global @__tessel_bounds_fault : memref<i64>
// CHECK-NEXT: %[[RECORDED:.*]] = memref.load %[[FLAG]][] : memref<i64>
// CHECK-NEXT: %[[NONE:.*]] = arith.constant 0 : i64
// CHECK-NEXT: %[[FIRST:.*]] = arith.cmpi eq, %[[RECORDED]], %[[NONE]] : i64
// CHECK-NEXT: scf.if %[[FIRST]] {
// CHECK-NEXT: %[[SITE:.*]] = arith.constant 1 : i64
// CHECK-NEXT: memref.store %[[SITE]], %[[FLAG]][] : memref<i64>
// CHECK-NEXT: }
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : vector<4xf32>
// CHECK-NEXT: scf.yield %[[ZERO]] : vector<4xf32>
// CHECK: vector.reduction <add>, %[[V]]
// The store of the scalar: one element, site 2, nothing yielded.
// CHECK: scf.if %{{.*}} {
// CHECK-NEXT: memref.store %{{.*}}, %arg0[%{{.*}}, %{{.*}}] : memref<16x16xf32>
// CHECK-NEXT: } else {
// CHECK-NEXT: memref.get_global @__tessel_bounds_fault
// CHECK: arith.constant 2 : i64
func.func @row(%x: memref<16x16xf32>, %row: index, %column: index) {
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%b0, %b1, %b2) in (%g0 = %c1, %g1 = %c1, %g2 = %c1) threads(%t0, %t1, %t2) in (%s0 = %c1, %s1 = %c1, %s2 = %c1) {
    %v = vector.load %x[%row, %column] : memref<16x16xf32>, vector<4xf32>
    %sum = vector.reduction <add>, %v : vector<4xf32> into f32
    memref.store %sum, %x[%row, %row] : memref<16x16xf32>
    gpu.terminator
  }
  return
}

// -----

// A view with a dynamic offset reads it from its descriptor; the bounds are
// the viewed argument's, not the view's. Workgroup memory reached through
// `memref.view` adds the view's byte shift and is bounded by the
// attribution's static size (read from its type: tessel-emulate-gpu
// expects attributions used through views and casts only).
// CHECK-LABEL: func.func @views
// CHECK: memref.extract_strided_metadata %{{.*}} : memref<4xf32, strided<[1], offset: ?>> -> memref<f32>, index, index, index
// CHECK: scf.if
// CHECK-NEXT: memref.load %{{.*}}[%{{.*}}] : memref<4xf32, strided<[1], offset: ?>>
// CHECK: arith.constant 64 : index
// CHECK: arith.cmpi sle, %{{.*}}, %{{.*}} : index
// CHECK: scf.if
// CHECK-NEXT: memref.store %{{.*}}, %{{.*}}[%{{.*}}] : memref<2xf32>
// CHECK-NOT: memref.extract_strided_metadata %arg
func.func @views(%x: memref<64xf32>, %at: index) {
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  gpu.launch blocks(%b0, %b1, %b2) in (%g0 = %c1, %g1 = %c1, %g2 = %c1) threads(%t0, %t1, %t2) in (%s0 = %c1, %s1 = %c1, %s2 = %c1) workgroup(%lds : memref<64xi8, #gpu.address_space<workgroup>>) {
    %window = memref.subview %x[%at] [4] [1] : memref<64xf32> to memref<4xf32, strided<[1], offset: ?>>
    %value = memref.load %window[%t0] : memref<4xf32, strided<[1], offset: ?>>
    %view = memref.view %lds[%c8][] : memref<64xi8, #gpu.address_space<workgroup>> to memref<2xf32, #gpu.address_space<workgroup>>
    %shared = memref.memory_space_cast %view : memref<2xf32, #gpu.address_space<workgroup>> to memref<2xf32>
    memref.store %value, %shared[%t0] : memref<2xf32>
    gpu.terminator
  }
  return
}

// -----

// A masked load checks the lanes its mask sets (a buffer access's lanes
// past the end are masked off and may lie anywhere).
// CHECK-LABEL: func.func @masked
// CHECK: %[[STEP:.*]] = vector.step : vector<4xindex>
// CHECK: %[[ACTIVE:.*]] = arith.xori %arg1, %{{.*}} : vector<4xi1>
// CHECK: %[[LANES:.*]] = arith.ori %{{.*}}, %[[ACTIVE]] : vector<4xi1>
// CHECK: %[[OK:.*]] = vector.reduction <and>, %[[LANES]] : vector<4xi1> into i1
// CHECK: scf.if %[[OK]] -> (vector<4xf32>)
// CHECK-NEXT: vector.maskedload %arg0[%{{.*}}], %arg1, %{{.*}}
func.func @masked(%x: memref<10xf32>, %mask: vector<4xi1>, %at: index) {
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%b0, %b1, %b2) in (%g0 = %c1, %g1 = %c1, %g2 = %c1) threads(%t0, %t1, %t2) in (%s0 = %c1, %s1 = %c1, %s2 = %c1) {
    %zero = arith.constant dense<0.0> : vector<4xf32>
    %v = vector.maskedload %x[%at], %mask, %zero : memref<10xf32>, vector<4xi1>, vector<4xf32> into vector<4xf32>
    vector.store %v, %x[%c1] : memref<10xf32>, vector<4xf32>
    gpu.terminator
  }
  return
}

// -----

// Host code is not checked: no global, no list.
// CHECK-LABEL: func.func @host
// CHECK-NOT: __tessel_bounds_fault
// CHECK: memref.load
// CHECK-NOT: scf.if
func.func @host(%x: memref<4xf32>, %at: index) -> f32 {
  %v = memref.load %x[%at] : memref<4xf32>
  return %v : f32
}

// -----

// Transfers reach their vector's shape along the dimensions their
// permutation map names (a broadcast dimension reads one element); one that
// may run out of bounds reaches as far as the view's size, min(4, 10 - at)
// elements, and checks nothing when that is none. A copy reaches both whole
// views.
// CHECK-LABEL: func.func @transfers
// CHECK: scf.if %{{.*}} -> (vector<4xf32>) {
// CHECK-NEXT: vector.transfer_read %arg0[%{{.*}}], %{{.*}} {in_bounds = [true], permutation_map = #map} : memref<10xf32>, vector<4xf32>
// CHECK: %[[LEFT:.*]] = arith.subi %{{.*}}, %arg1 : index
// CHECK: %[[MOST:.*]] = arith.minsi %[[LEFT]], %{{.*}} : index
// CHECK: %[[SOME:.*]] = arith.maxsi %[[MOST]], %{{.*}} : index
// CHECK: %[[NONE:.*]] = arith.cmpi sle, %[[SOME]], %{{.*}} : index
// CHECK-NEXT: %[[OK:.*]] = arith.ori %[[NONE]], %{{.*}} : i1
// CHECK-NEXT: scf.if %[[OK]] -> (vector<4xf32>) {
// CHECK-NEXT: vector.transfer_read %arg0[%arg1], %{{.*}} : memref<10xf32>, vector<4xf32>
// CHECK: vector.store
// CHECK: scf.if %{{.*}} {
// CHECK: scf.if %{{.*}} {
// CHECK-NEXT: memref.copy %arg0, %arg2 : memref<10xf32> to memref<10xf32>
func.func @transfers(%x: memref<10xf32>, %at: index, %o: memref<10xf32>) {
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%b0, %b1, %b2) in (%g0 = %c1, %g1 = %c1, %g2 = %c1) threads(%t0, %t1, %t2) in (%s0 = %c1, %s1 = %c1, %s2 = %c1) {
    %pad = arith.constant 0.0 : f32
    %splat = vector.transfer_read %x[%at], %pad {in_bounds = [true], permutation_map = affine_map<(d0) -> (0)>} : memref<10xf32>, vector<4xf32>
    %tail = vector.transfer_read %x[%at], %pad : memref<10xf32>, vector<4xf32>
    %sum = arith.addf %splat, %tail : vector<4xf32>
    vector.store %sum, %o[%t0] : memref<10xf32>, vector<4xf32>
    memref.copy %x, %o : memref<10xf32> to memref<10xf32>
    gpu.terminator
  }
  return
}
