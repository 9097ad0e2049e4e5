// tessel-core-threads: a core axis' scf.forall (marked tessel.cores)
// becomes an OpenMP region of exactly as many threads as cores, over a
// worksharing loop in chunks of one: each core its own thread, all at once,
// whatever thread count the schedule gives the other loops (tessel.num_threads
// leaves a region with a count alone). Unmarked foralls are left to
// scf-forall-to-parallel.
// RUN: tessel-opt %s --tessel-core-threads | FileCheck %s
// RUN: tessel-opt %s --tessel-core-threads --scf-forall-to-parallel --convert-scf-to-openmp --tessel-cpu-target | FileCheck %s --check-prefix=TARGET

// CHECK-LABEL: func.func @cores
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK: %[[C1:.*]] = arith.constant 1 : index
// CHECK: %[[N:.*]] = arith.constant 4 : index
// CHECK: %[[THREADS:.*]] = arith.constant 4 : i32
// CHECK: %[[CHUNK:.*]] = arith.constant 1 : i32
// CHECK: omp.parallel num_threads(%[[THREADS]] : i32) {
// CHECK-NEXT: omp.wsloop schedule(static = %[[CHUNK]] : i32) {
// CHECK-NEXT: omp.loop_nest (%[[CORE:.*]]) : index = (%[[C0]]) to (%[[N]]) step (%[[C1]]) {
// CHECK-NEXT: %[[V:.*]] = arith.index_cast %[[CORE]] : index to i32
// CHECK-NEXT: memref.store %[[V]], %{{.*}}[%[[CORE]]] : memref<4xi32>
// CHECK-NEXT: omp.yield
// CHECK-NOT: tessel.cores
// CHECK: scf.forall (%{{.*}}) in (8)
// TARGET-LABEL: func.func @cores
// TARGET: %[[FOUR:.*]] = arith.constant 4 : i32
// TARGET: omp.parallel num_threads(%[[FOUR]] : i32) {
// TARGET: %[[TWO:.*]] = arith.constant 2 : i32
// TARGET-NEXT: omp.parallel num_threads(%[[TWO]] : i32) {
module attributes {tessel.num_threads = 2 : i64} {
  func.func @cores(%ids: memref<4xi32>, %other: memref<8xf32>) {
    scf.forall (%core) in (4) {
      %v = arith.index_cast %core : index to i32
      memref.store %v, %ids[%core] : memref<4xi32>
    } {tessel.cores}
    scf.forall (%i) in (8) {
      %zero = arith.constant 0.0 : f32
      memref.store %zero, %other[%i] : memref<8xf32>
    }
    return
  }
}
