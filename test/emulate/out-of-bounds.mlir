// RUN: not tessel run %s --entry shifted --device rocm-emulated 2>&1 | FileCheck %s
// RUN: tessel run %s --entry inside --device rocm-emulated | FileCheck %s --check-prefix=INSIDE

// The emulated GPU checks every access of its kernels: work-item 9 reads
// x[10], one past the end of the argument. The run fails, naming the
// access and its location, instead of reading whatever lies there (and the
// load is not made).
// CHECK: compiled code accessed memory outside its buffer (a compiler bug; the access was skipped): memref.load of memref<10xf32> at loc("{{.*}}out-of-bounds.mlir":[[@LINE+7]]:{{[0-9]+}})
func.func @shifted(%x: memref<10xf32>, %o: memref<10xf32>) {
  %c1 = arith.constant 1 : index
  %c10 = arith.constant 10 : index
  gpu.launch blocks(%b0, %b1, %b2) in (%g0 = %c1, %g1 = %c1, %g2 = %c1)
      threads(%t0, %t1, %t2) in (%s0 = %c10, %s1 = %c1, %s2 = %c1) {
    %next = arith.addi %t0, %c1 : index
    %v = memref.load %x[%next] : memref<10xf32>
    memref.store %v, %o[%t0] : memref<10xf32>
    gpu.terminator
  }
  return
}

// A kernel inside its arrays runs as it should: o[i + 1] = i.
// INSIDE: arg0: memref<10xf32>
// INSIDE-NEXT: [0. 0. 1. 2. 3. 4. 5. 6. 7. 8.]
func.func @inside(%o: memref<10xf32>) {
  %c1 = arith.constant 1 : index
  %c9 = arith.constant 9 : index
  gpu.launch blocks(%b0, %b1, %b2) in (%g0 = %c1, %g1 = %c1, %g2 = %c1)
      threads(%t0, %t1, %t2) in (%s0 = %c9, %s1 = %c1, %s2 = %c1) {
    %next = arith.addi %t0, %c1 : index
    %i = arith.index_cast %t0 : index to i32
    %v = arith.sitofp %i : i32 to f32
    memref.store %v, %o[%next] : memref<10xf32>
    gpu.terminator
  }
  return
}
