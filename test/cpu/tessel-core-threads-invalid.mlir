// tessel-core-threads refuses what grid-to-loops never writes, located.
// RUN: not tessel-opt %s --tessel-core-threads 2>&1 | FileCheck %s

// The core axis must be one static extent.
// CHECK: error: tessel-core-threads: a core axis must be one static extent
func.func @two_axes(%ids: memref<4x2xi32>) {
  scf.forall (%core, %j) in (4, 2) {
    %v = arith.index_cast %core : index to i32
    memref.store %v, %ids[%core, %j] : memref<4x2xi32>
  } {tessel.cores}
  return
}
