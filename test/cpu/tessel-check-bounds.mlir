// RUN: tessel-opt %s --split-input-file --tessel-check-bounds | FileCheck %s

// Under tessel.bounds_checks (tessel run --bounds-checks) every load and
// store of CPU code is checked against the memory it addresses, as the
// emulated GPU's kernels are (test/emulate/tessel-emulate-bounds-checks.mlir).
// CHECK-LABEL: module attributes {tessel.bounds_checks, tessel.checked_accesses = ["memref.load of memref<10xf32> at
// CHECK: memref.global @__tessel_bounds_fault : memref<i64> = dense<0>
// CHECK-LABEL: func.func @shifted
// CHECK: %[[OK:.*]] = arith.andi %{{.*}}, %{{.*}} : i1
// CHECK-NEXT: %[[V:.*]] = scf.if %[[OK]] -> (f32) {
// CHECK-NEXT: memref.load %arg0[%{{.*}}] : memref<10xf32>
module attributes {tessel.bounds_checks} {
  func.func @shifted(%x: memref<10xf32>, %o: memref<10xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c10 = arith.constant 10 : index
    scf.for %i = %c0 to %c10 step %c1 {
      %next = arith.addi %i, %c1 : index
      %v = memref.load %x[%next] : memref<10xf32>
      memref.store %v, %o[%i] : memref<10xf32>
    }
    return
  }
}

// -----

// Without the attribute nothing changes.
// CHECK-LABEL: func.func @unchecked
// CHECK-NOT: scf.if
// CHECK-NOT: __tessel_bounds_fault
func.func @unchecked(%x: memref<10xf32>, %at: index) -> f32 {
  %v = memref.load %x[%at] : memref<10xf32>
  return %v : f32
}
