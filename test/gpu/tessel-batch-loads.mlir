// RUN: tessel-opt %s --tessel-batch-loads | FileCheck %s
// End to end: the eight-row softmax's normalization (32 vectors per
// work-item) runs as 8 trips of 4 vectors whose loads issue together: a
// wave waits for memory 25 times in the whole kernel (the max and sum
// partial loops 17, the normalization 8), where one wait per vector of
// the normalization made it 49.
// RUN: tessel compile examples/softmax_4096.mlir --target rocm --chip gfx942 --emit asm -o %t.softmax.s
// RUN: python3 benchmarks/amdgpu/interpreter.py %t.softmax.s | FileCheck %s --check-prefix=SOFTMAX

// A work-item's share of element-wise work, 16 iterations, marked by
// grid-to-gpu: unrolled by 4, the four iterations' reads of %x (which the
// loop does not write) and their index arithmetic first, then the
// computations and writes; the loop is not unrolled further by LLVM.
// CHECK: #[[NO_UNROLL:.*]] = #llvm.loop_unroll<disable = true>
// CHECK: #[[ANNOTATION:.*]] = #llvm.loop_annotation<unroll = #[[NO_UNROLL]]>
// CHECK-LABEL: func.func @stream
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %[[FOUR:.*]] {
// CHECK-COUNT-4: vector.transfer_read %arg0
// CHECK-NOT: vector.transfer_read
// CHECK: vector.transfer_write
// CHECK: vector.transfer_write
// CHECK: vector.transfer_write
// CHECK: vector.transfer_write
// CHECK-NEXT: } {loop_annotation = #[[ANNOTATION]]}
// CHECK-NOT: tessel.batch_loads
func.func @stream(%x: memref<4096xf32>, %o: memref<4096xf32>) {
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    %c0 = arith.constant 0 : index
    %c16 = arith.constant 16 : index
    %cst = arith.constant 0.0 : f32
    scf.for %k = %c0 to %c16 step %c1 {
      %offset = arith.muli %k, %c64 : index
      %l = arith.addi %offset, %tx : index
      %i = affine.apply affine_map<(d0) -> (d0 * 4)>(%l)
      %v = vector.transfer_read %x[%i], %cst {in_bounds = [true]} : memref<4096xf32>, vector<4xf32>
      %w = arith.addf %v, %v : vector<4xf32>
      vector.transfer_write %w, %o[%i] {in_bounds = [true]} : vector<4xf32>, memref<4096xf32>
    } {tessel.batch_loads = 4 : i64}
    gpu.terminator
  }
  return
}

// An in-place update reads the memory it writes: unrolled, but each read
// stays after the previous iteration's write. A read of a workgroup (LDS)
// value the loop does not write moves up.
// CHECK-LABEL: func.func @in_place
// CHECK: scf.for
// CHECK: memref.load %view
// CHECK-NEXT: memref.load %view
// CHECK: vector.transfer_read %arg0
// CHECK: vector.transfer_write {{.*}} %arg0
// CHECK: vector.transfer_read %arg0
// CHECK: vector.transfer_write {{.*}} %arg0
// CHECK: } {loop_annotation = #[[ANNOTATION]]}
func.func @in_place(%x: memref<4096xf32>) {
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) workgroup(%lds : memref<64xi8, #gpu.address_space<workgroup>>) {
    %c0 = arith.constant 0 : index
    %c32 = arith.constant 32 : index
    %cst = arith.constant 0.0 : f32
    %view = memref.view %lds[%c0][] : memref<64xi8, #gpu.address_space<workgroup>> to memref<16xf32, #gpu.address_space<workgroup>>
    scf.for %k = %c0 to %c32 step %c1 {
      %offset = arith.muli %k, %c64 : index
      %l = arith.addi %offset, %tx : index
      %i = affine.apply affine_map<(d0) -> (d0 * 2)>(%l)
      %v = vector.transfer_read %x[%i], %cst {in_bounds = [true]} : memref<4096xf32>, vector<2xf32>
      %s = memref.load %view[%c0] : memref<16xf32, #gpu.address_space<workgroup>>
      %b = vector.broadcast %s : f32 to vector<2xf32>
      %w = arith.mulf %v, %b : vector<2xf32>
      vector.transfer_write %w, %x[%i] {in_bounds = [true]} : vector<2xf32>, memref<4096xf32>
    } {tessel.batch_loads = 2 : i64}
    gpu.terminator
  }
  return
}

// A loop holding a barrier is unrolled, its order kept.
// CHECK-LABEL: func.func @synchronized
// CHECK: scf.for
// CHECK: vector.transfer_read %arg0
// CHECK: gpu.barrier
// CHECK: vector.transfer_write
// CHECK: vector.transfer_read %arg0
// CHECK: gpu.barrier
// CHECK: vector.transfer_write
func.func @synchronized(%x: memref<4096xf32>, %o: memref<4096xf32>) {
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    %c0 = arith.constant 0 : index
    %c32 = arith.constant 32 : index
    %cst = arith.constant 0.0 : f32
    scf.for %k = %c0 to %c32 step %c1 {
      %offset = arith.muli %k, %c64 : index
      %l = arith.addi %offset, %tx : index
      %i = affine.apply affine_map<(d0) -> (d0 * 2)>(%l)
      %v = vector.transfer_read %x[%i], %cst {in_bounds = [true]} : memref<4096xf32>, vector<2xf32>
      gpu.barrier
      vector.transfer_write %v, %o[%i] {in_bounds = [true]} : vector<2xf32>, memref<4096xf32>
    } {tessel.batch_loads = 2 : i64}
    gpu.terminator
  }
  return
}

// A read whose index comes from memory the loop writes (through a
// gather, a vector op that reads a buffer) stays where it is: moving the
// gather above the previous iteration's write would read stale data.
// CHECK-LABEL: func.func @indexed_by_written
// CHECK: scf.for
// CHECK: vector.gather %arg1
// CHECK: memref.load %arg0
// CHECK: memref.store {{.*}} %arg1
// CHECK: vector.gather %arg1
// CHECK: memref.load %arg0
// CHECK: memref.store {{.*}} %arg1
func.func @indexed_by_written(%x: memref<4096xf32>, %o: memref<4096xi32>) {
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    %c0 = arith.constant 0 : index
    %c32 = arith.constant 32 : index
    %pass = arith.constant dense<true> : vector<1xi1>
    %fill = arith.constant dense<0> : vector<1xi32>
    %at = arith.constant dense<0> : vector<1xindex>
    scf.for %k = %c0 to %c32 step %c1 {
      %offset = arith.muli %k, %c64 : index
      %l = arith.addi %offset, %tx : index
      %g = vector.gather %o[%l] [%at], %pass, %fill : memref<4096xi32>, vector<1xindex>, vector<1xi1>, vector<1xi32> into vector<1xi32>
      %e = vector.extract %g[0] : i32 from vector<1xi32>
      %j = arith.index_cast %e : i32 to index
      %v = memref.load %x[%j] : memref<4096xf32>
      %w = arith.fptosi %v : f32 to i32
      memref.store %w, %o[%l] : memref<4096xi32>
    } {tessel.batch_loads = 2 : i64}
    gpu.terminator
  }
  return
}

// SOFTMAX: wave 0 executes {{[0-9]+}} loads 1536 stores 512 bytes per lane in 25 round trips
