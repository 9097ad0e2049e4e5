// RUN: tessel-opt %s --tessel-batch-loads | FileCheck %s
// End to end: the eight-row softmax's normalization (32 vectors per
// work-item: 6 dwords each with the row's max and sum) runs as 4 trips of
// 8 vectors, its max and sum partial loops (32 vectors along a row each,
// 4 or 5 dwords) as 2 trips of 16, each batch's loads issued together: a
// wave waits for memory 8 times in the whole kernel, where batches of 4
// in the normalization alone made it 25, and one wait per vector 49.
// RUN: tessel compile examples/softmax_4096.mlir --target rocm --chip gfx942 --emit asm -o %t.softmax.s
// RUN: python3 benchmarks/amdgpu/interpreter.py %t.softmax.s | FileCheck %s --check-prefix=SOFTMAX

// A work-item's share of element-wise work, 16 iterations, marked by
// grid-to-gpu (batches of 4 at least): each iteration reads 4 dwords, and
// the loop keeps 2 trips at least, so 8 iterations; unrolled by 8, the eight
// iterations' reads of %x (which the loop does not write) and their index
// arithmetic first, then a scheduling barrier (LLVM's scheduler would sink
// some loads to their uses again), then the computations and writes; LLVM
// neither unrolls the loop further nor interleaves its trips.
// CHECK-DAG: #[[NO_UNROLL:.*]] = #llvm.loop_unroll<disable = true>
// CHECK-DAG: #[[NO_VECTORIZE:.*]] = #llvm.loop_vectorize<disable = true>
// CHECK-DAG: #[[NO_INTERLEAVE:.*]] = #llvm.loop_interleave<count = 1 : i64>
// CHECK: #[[ANNOTATION:.*]] = #llvm.loop_annotation<vectorize = #[[NO_VECTORIZE]], interleave = #[[NO_INTERLEAVE]], unroll = #[[NO_UNROLL]]>
// CHECK-LABEL: func.func @stream
// CHECK: %[[EIGHT:.*]] = arith.constant 8 : index
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %[[EIGHT]] {
// CHECK-COUNT-8: vector.transfer_read %arg0
// CHECK-NOT: vector.transfer_read
// CHECK: amdgpu.sched_barrier allow = <none>
// CHECK-NOT: vector.transfer_read
// CHECK-COUNT-8: vector.transfer_write
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

// SOFTMAX: wave 0 executes {{[0-9]+}} loads 1536 stores 512 bytes per lane in 8 round trips

// Block work's own long loop, unmarked: a row reduction's walk along its
// row (32 steps of 4 elements, the accumulator in LDS). Its nested 4-step
// loop unrolls completely; each step then reads 4 dwords of %x, so 16
// steps a batch; the reads of %x move up, the accumulator's loads and
// stores (memory the loop writes) stay in order.
// CHECK-LABEL: func.func @row_reduction
// CHECK: %[[SIXTEEN:.*]] = arith.constant 16 : index
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %[[SIXTEEN]] {
// CHECK-NOT: scf.for
// CHECK-COUNT-64: memref.load %arg0
// CHECK-NOT: memref.load %arg0
// CHECK: amdgpu.sched_barrier
// CHECK: memref.load %view
// CHECK-NEXT: arith.maximumf
// CHECK-NEXT: memref.store {{.*}} %view
// CHECK: } {loop_annotation = #[[ANNOTATION]]}
func.func @row_reduction(%x: memref<64x128x4xf32>) {
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) workgroup(%lds : memref<256xi8, #gpu.address_space<workgroup>>) {
    %c0 = arith.constant 0 : index
    %c4 = arith.constant 4 : index
    %c32 = arith.constant 32 : index
    %view = memref.view %lds[%c0][] : memref<256xi8, #gpu.address_space<workgroup>> to memref<64xf32, #gpu.address_space<workgroup>>
    scf.for %k = %c0 to %c32 step %c1 {
      scf.for %j = %c0 to %c4 step %c1 {
        %v = memref.load %x[%tx, %k, %j] : memref<64x128x4xf32>
        %a = memref.load %view[%tx] : memref<64xf32, #gpu.address_space<workgroup>>
        %m = arith.maximumf %v, %a : f32
        memref.store %m, %view[%tx] : memref<64xf32, #gpu.address_space<workgroup>>
      }
    }
    gpu.terminator
  }
  return
}

// Unmarked loops stay as they are where batching gains nothing or cannot
// work: reads of LDS only (short latency), and a nested loop too long to
// unroll completely — that one (16 steps reading %x) is batched itself.
// CHECK-LABEL: func.func @not_batched
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %[[ONE:c1]] {
// CHECK-NEXT: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %[[ONE]] {
// CHECK-NOT: loop_annotation
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %[[ONE]] {
// CHECK-NEXT: %[[EIGHT:.*]] = arith.constant 8 : index
// CHECK-NEXT: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %[[EIGHT]] {
// CHECK-COUNT-8: memref.load %arg0
// CHECK: } {loop_annotation = #[[ANNOTATION]]}
// CHECK-NEXT: }
// CHECK-NEXT: gpu.terminator
func.func @not_batched(%x: memref<64x128x16xf32>) {
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) workgroup(%lds : memref<8448xi8, #gpu.address_space<workgroup>>) {
    %c0 = arith.constant 0 : index
    %c4 = arith.constant 4 : index
    %c16 = arith.constant 16 : index
    %c32 = arith.constant 32 : index
    %c8192 = arith.constant 8192 : index
    %table = memref.view %lds[%c0][] : memref<8448xi8, #gpu.address_space<workgroup>> to memref<64x32xf32, #gpu.address_space<workgroup>>
    %view = memref.view %lds[%c8192][] : memref<8448xi8, #gpu.address_space<workgroup>> to memref<64xf32, #gpu.address_space<workgroup>>
    scf.for %k = %c0 to %c32 step %c1 {
      scf.for %j = %c0 to %c4 step %c1 {
        %v = memref.load %table[%tx, %k] : memref<64x32xf32, #gpu.address_space<workgroup>>
        %a = memref.load %view[%tx] : memref<64xf32, #gpu.address_space<workgroup>>
        %m = arith.maximumf %v, %a : f32
        memref.store %m, %view[%tx] : memref<64xf32, #gpu.address_space<workgroup>>
      }
    }
    scf.for %k = %c0 to %c32 step %c1 {
      scf.for %j = %c0 to %c16 step %c1 {
        %v = memref.load %x[%tx, %k, %j] : memref<64x128x16xf32>
        %a = memref.load %view[%tx] : memref<64xf32, #gpu.address_space<workgroup>>
        %m = arith.maximumf %v, %a : f32
        memref.store %m, %view[%tx] : memref<64xf32, #gpu.address_space<workgroup>>
      }
    }
    gpu.terminator
  }
  return
}

// A broadcast read loads one dword whatever its vector's width: 4 dwords
// of %x and 1 of the scale per iteration, so 8 iterations a batch (64
// dwords at most; a read counted as 4 wide would make it 4 iterations).
// CHECK-LABEL: func.func @broadcast_read
// CHECK: %[[EIGHT:.*]] = arith.constant 8 : index
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %[[EIGHT]] {
// CHECK-COUNT-16: vector.transfer_read
// CHECK-NOT: vector.transfer_read
// CHECK-COUNT-8: vector.transfer_write
// CHECK-NEXT: } {loop_annotation = #[[ANNOTATION]]}
func.func @broadcast_read(%x: memref<8192xf32>, %scale: memref<32xf32>, %o: memref<8192xf32>) {
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    %c0 = arith.constant 0 : index
    %c32 = arith.constant 32 : index
    %cst = arith.constant 0.0 : f32
    scf.for %k = %c0 to %c32 step %c1 {
      %offset = arith.muli %k, %c64 : index
      %l = arith.addi %offset, %tx : index
      %i = affine.apply affine_map<(d0) -> (d0 * 4)>(%l)
      %v = vector.transfer_read %x[%i], %cst {in_bounds = [true]} : memref<8192xf32>, vector<4xf32>
      %s = vector.transfer_read %scale[%k], %cst {in_bounds = [true], permutation_map = affine_map<(d0) -> (0)>} : memref<32xf32>, vector<4xf32>
      %w = arith.mulf %v, %s : vector<4xf32>
      vector.transfer_write %w, %o[%i] {in_bounds = [true]} : vector<4xf32>, memref<8192xf32>
    } {tessel.batch_loads = 2 : i64}
    gpu.terminator
  }
  return
}
