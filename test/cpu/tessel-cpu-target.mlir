// RUN: tessel-opt %s --split-input-file --convert-scf-to-openmp --tessel-cpu-target | FileCheck %s
// RUN: tessel-opt %s --split-input-file --convert-scf-to-openmp --tessel-cpu-target \
// RUN:   --convert-scf-to-cf --convert-arith-to-llvm --convert-func-to-llvm --convert-openmp-to-llvm --reconcile-unrealized-casts \
// RUN:   | FileCheck %s --check-prefix=LLVM

// tessel.num_threads: every OpenMP region gets that thread count;
// tessel.vector_bits: every function the LLVM attributes that make the
// vectorizers and the x86 backend use vectors of that width (carried to
// llvm.func).
// CHECK-LABEL: func.func @knobs
// CHECK-SAME: passthrough = {{\[\[}}"prefer-vector-width", "256"], ["min-legal-vector-width", "0"]]
// CHECK: %[[N:.*]] = arith.constant 3 : i32
// CHECK: omp.parallel num_threads(%[[N]] : i32) {
// LLVM: llvm.func @knobs
// LLVM-SAME: passthrough = {{\[\[}}"prefer-vector-width", "256"], ["min-legal-vector-width", "0"]]
module attributes {tessel.num_threads = 3 : i64, tessel.vector_bits = 256 : i64} {
  func.func @knobs(%m: memref<64xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c64 = arith.constant 64 : index
    %x = arith.constant 1.0 : f32
    scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
      memref.store %x, %m[%i] : memref<64xf32>
      scf.reduce
    }
    return
  }
}

// -----

// Without the knobs nothing changes: OpenMP picks the thread count, the
// host's widest vectors are used.
// CHECK-LABEL: func.func @defaults
// CHECK-NOT: passthrough
// CHECK: omp.parallel {
func.func @defaults(%m: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %x = arith.constant 1.0 : f32
  scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
    memref.store %x, %m[%i] : memref<64xf32>
    scf.reduce
  }
  return
}
