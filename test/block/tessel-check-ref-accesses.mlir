// RUN: tessel-opt %s --split-input-file --tessel-check-ref-accesses | FileCheck %s

// Under tessel.out_of_bounds_reads = raise (JAX's InterpretParams
// default), a kernel's accesses at offsets that may fall outside their ref
// are checked against its shape: a read or a store out of bounds is not
// made and records its site (the first one) in @__tessel_access_fault; a
// DMA window out of bounds records its site and copies at offset 0, so its
// wait still sees the bytes. Offsets known to be inside stay unchecked.
// CHECK-LABEL: module attributes
// CHECK-SAME: tessel.ref_accesses = ["Out-of-bounds read of a load from memref<5xi32> at {{.*}}: reading a (1) window but the ref has shape (5)", "Out-of-bounds read of a load from memref<10x128xf32> at {{.*}}: reading a (8, 128) window but the ref has shape (10, 128)", "Out-of-bounds swap of a store to memref<8x128xf32> at {{.*}}", "Out-of-bounds read of a DMA source memref<10x128xf32> at {{.*}}"]
// CHECK: memref.global @__tessel_access_fault : memref<i64> = dense<0>
// CHECK-LABEL: func.func @kernel
// The constant index is inside: unchecked.
// CHECK: %[[N:.*]] = memref.load %arg0[%c1] : memref<5xi32>
// CHECK: %[[OK:.*]] = arith.andi
// CHECK-NEXT: %[[V:.*]] = scf.if %[[OK]] -> (i32) {
// CHECK-NEXT: memref.load %arg0[%{{.*}}] : memref<5xi32>
// CHECK: } else {
// CHECK: %[[RECORDED:.*]] = memref.load %{{.*}}[] : memref<i64>
// CHECK: scf.if
// CHECK: arith.constant 1 : i64
// CHECK: scf.if %{{.*}} -> (tensor<8x128xf32>) {
// CHECK-NEXT: block.load %arg1[%{{.*}}, %c0] [8, 128]
// CHECK: arith.constant dense<0.000000e+00> : tensor<8x128xf32>
// CHECK: scf.if
// CHECK-NEXT: block.store
// The DMA's source offsets, in bounds or 0.
// CHECK: arith.xori
// CHECK: %[[FROM:.*]] = arith.select %{{.*}}, %{{.*}}, %{{.*}} : index
// CHECK: block.dma_start %arg1[%[[FROM]], %{{.*}}] [8, 128], %arg2, %arg3
module attributes {tessel.out_of_bounds_reads = 1 : i64} {
  func.func @kernel(%s: memref<5xi32>, %x: memref<10x128xf32>, %o: memref<8x128xf32>, %sem: memref<i32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %n32 = memref.load %s[%c1] : memref<5xi32>
    %n = arith.index_cast %n32 : i32 to index
    %v32 = memref.load %s[%n] : memref<5xi32>
    %v = arith.index_cast %v32 : i32 to index
    %w = block.load %x[%v, %c0] [8, 128] : memref<10x128xf32> -> tensor<8x128xf32>
    block.store %w, %o[%n, %c0] : tensor<8x128xf32>, memref<8x128xf32>
    block.dma_start %x[%v, %c0] [8, 128], %o, %sem : memref<10x128xf32>, memref<8x128xf32>, memref<i32>
    return
  }
  func.func @entry(%s: memref<5xi32>, %x: memref<10x128xf32>, %o: memref<8x128xf32>) {
    grid.call @kernel grid [] ins(%s, %x : memref<5xi32>, memref<10x128xf32>) outs(%o : memref<8x128xf32>)
        scratch(semaphore memref<i32>) in_specs [#grid.block<full>, #grid.block<full>] out_specs [#grid.block<full>]
    return
  }
}

// -----

// uninitialized: an out-of-bounds scalar read gives the fill (NaN, the
// integer maximum under uninitialized_memory = nan) and records nothing;
// a window's read is masked to its elements inside the ref. Stores and
// masked stores are still errors.
// CHECK-LABEL: module attributes
// CHECK-SAME: tessel.ref_accesses = ["Out-of-bounds masked swap of a store to memref<16xf32>
// CHECK-LABEL: func.func @kernel
// CHECK: scf.if %{{.*}} -> (i32) {
// CHECK: } else {
// CHECK-NEXT: %[[FILL:.*]] = arith.constant 2147483647 : i32
// CHECK-NEXT: scf.yield %[[FILL]] : i32
// CHECK: %[[MASK:.*]] = tensor.generate
// CHECK: arith.cmpi ult
// CHECK: tensor.yield
// CHECK: %[[NAN:.*]] = arith.constant 0x7FC00000 : f32
// CHECK: block.load %arg1[%{{.*}}] [8] mask %[[MASK]] other %[[NAN]]
// A masked store: the lanes it writes must be inside.
// CHECK: scf.for
// CHECK: tensor.extract
// CHECK: block.store %{{.*}}, %arg2[%{{.*}}] mask
module attributes {tessel.out_of_bounds_reads = 2 : i64, tessel.uninitialized_memory = 1 : i64} {
  func.func @kernel(%s: memref<4xi32>, %x: memref<16xf32>, %o: memref<16xf32>) {
    %c0 = arith.constant 0 : index
    %i32 = memref.load %s[%c0] : memref<4xi32>
    %i = arith.index_cast %i32 : i32 to index
    %j32 = memref.load %s[%i] : memref<4xi32>
    %j = arith.index_cast %j32 : i32 to index
    %w = block.load %x[%j] [8] : memref<16xf32> -> tensor<8xf32>
    %m = arith.constant dense<true> : tensor<8xi1>
    block.store %w, %o[%j] mask %m : tensor<8xf32>, memref<16xf32>
    return
  }
  func.func @entry(%s: memref<4xi32>, %x: memref<16xf32>, %o: memref<16xf32>) {
    grid.call @kernel grid [] ins(%s, %x : memref<4xi32>, memref<16xf32>) outs(%o : memref<16xf32>)
        in_specs [#grid.block<full>, #grid.block<full>] out_specs [#grid.block<full>]
    return
  }
}

// -----

// Without the knob nothing changes.
// CHECK-LABEL: func.func @unchecked
// CHECK-NOT: scf.if
// CHECK-NOT: __tessel_access_fault
func.func @unchecked(%x: memref<10xf32>, %at: index, %o: memref<f32>) {
  %v = memref.load %x[%at] : memref<10xf32>
  memref.store %v, %o[] : memref<f32>
  return
}
func.func @entry(%x: memref<10xf32>, %at: memref<i32>, %o: memref<f32>) {
  return
}
