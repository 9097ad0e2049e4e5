// RUN: tessel-opt %s --split-input-file --tessel-buffer-resources | FileCheck %s
// RUN: tessel-opt %s --split-input-file --tessel-buffer-resources --expand-strided-metadata --canonicalize | FileCheck %s --check-prefix=FOLDED

// Vector reads and writes of a function's memref through views become
// buffer accesses of the memref seen as one dimension, at the view's
// element offset (the strided metadata of the view).
// CHECK-LABEL: func.func @rows
// CHECK: gpu.launch
// CHECK-NEXT: %[[FLAT_X:.*]] = memref.reinterpret_cast %arg0 to offset: [0], sizes: [4096], strides: [1] : memref<64x64xf32> to memref<4096xf32>
// CHECK-NEXT: %[[FLAT_O:.*]] = memref.reinterpret_cast %arg1 to offset: [0], sizes: [4096], strides: [1] : memref<64x64xf32> to memref<4096xf32>
// CHECK: %[[ROW:.*]] = memref.subview %arg0
// CHECK: %{{.*}}, %[[OFFSET:.*]], %{{.*}}:2, %[[STRIDES:.*]]:2 = memref.extract_strided_metadata %[[ROW]]
// CHECK: %[[AT:.*]] = arith.index_cast %{{.*}} : index to i32
// CHECK: %[[V:.*]] = amdgpu.raw_buffer_load %[[FLAT_X]][%[[AT]]] : memref<4096xf32>, i32 -> vector<4xf32>
// CHECK: amdgpu.raw_buffer_store %{{.*}} -> %[[FLAT_O]][%{{.*}}] : vector<4xf32> -> memref<4096xf32>, i32
// CHECK-NOT: vector.transfer
// Once the metadata folds, the offsets are 64 * (block + 1) + 16 * item
// and 64 * block + 16 * item:
// FOLDED: #[[ROWS:.*]] = affine_map<()[s0] -> (s0 * 64)>
// FOLDED-LABEL: func.func @rows
// FOLDED: %[[NEXT:.*]] = arith.addi %arg2, %c1 : index
// FOLDED-NEXT: %[[COLUMN:.*]] = arith.muli %arg5, %c16 : index
// FOLDED-NEXT: %[[ROW:.*]] = affine.apply #[[ROWS]]()[%[[NEXT]]]
// FOLDED-NEXT: %[[AT:.*]] = arith.addi %[[ROW]], %[[COLUMN]] : index
// FOLDED-NEXT: %[[AT32:.*]] = arith.index_cast %[[AT]] : index to i32
// FOLDED-NEXT: amdgpu.raw_buffer_load %{{.*}}[%[[AT32]]]
// FOLDED: %[[OUT:.*]] = arith.muli %arg2, %c64 : index
// FOLDED-NEXT: %[[AT2:.*]] = arith.addi %[[OUT]], %[[COLUMN]] : index
// FOLDED-NEXT: %[[AT2_32:.*]] = arith.index_cast %[[AT2]] : index to i32
// FOLDED-NEXT: amdgpu.raw_buffer_store %{{.*}} -> %{{.*}}[%[[AT2_32]]]
func.func @rows(%x: memref<64x64xf32>, %o: memref<64x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c63 = arith.constant 63 : index
  %pad = ub.poison : f32
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c63, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c16, %sy = %c1, %sz = %c1) {
    %next = arith.addi %bx, %c1 : index
    %row = memref.subview %x[%next, 0] [1, 64] [1, 1] : memref<64x64xf32> to memref<1x64xf32, strided<[64, 1], offset: ?>>
    %column = arith.muli %tx, %c16 : index
    %v = vector.transfer_read %row[%c0, %column], %pad {in_bounds = [true]} : memref<1x64xf32, strided<[64, 1], offset: ?>>, vector<4xf32>
    %w = arith.addf %v, %v : vector<4xf32>
    vector.store %w, %o[%bx, %column] : memref<64x64xf32>, vector<4xf32>
    gpu.terminator
  }
  return
}

// -----

// Memory read by scalar loads keeps its global form (LLVM merges runs of
// scalar global loads into 16-byte ones, but not buffer intrinsics), and
// so does memory with any access a buffer instruction does not make: a
// transfer that may run past the end (masked), a read across a column.
// CHECK-LABEL: func.func @stay_global
// CHECK-NOT: amdgpu.raw_buffer
// CHECK-NOT: memref.reinterpret_cast
// CHECK: return
func.func @stay_global(%x: memref<64xf32>, %y: memref<64xf32>, %z: memref<64x64xf32>, %o: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %pad = ub.poison : f32
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c16, %sy = %c1, %sz = %c1) {
    %s = memref.load %x[%tx] : memref<64xf32>
    %v = vector.transfer_read %y[%tx], %pad : memref<64xf32>, vector<4xf32>
    %c = vector.transfer_read %z[%c0, %tx], %pad {in_bounds = [true], permutation_map = affine_map<(d0, d1) -> (d0)>} : memref<64x64xf32>, vector<4xf32>
    %sum = arith.addf %v, %c : vector<4xf32>
    %e = vector.extract %sum[0] : f32 from vector<4xf32>
    %t = arith.addf %s, %e : f32
    memref.store %t, %o[%tx] : memref<64xf32>
    gpu.terminator
  }
  return
}

// -----

// LDS seen through a generic memref, buffers allocated in the launch and
// host views are not global memory of the launch; a host allocation is.
// CHECK-LABEL: func.func @roots
// CHECK: %[[SCRATCH:.*]] = memref.alloc() : memref<64xf32>
// CHECK: gpu.launch
// CHECK-NEXT: memref.reinterpret_cast %[[SCRATCH]]
// CHECK-NOT: memref.reinterpret_cast
// CHECK: vector.load %{{.*}} : memref<64xf32, strided<[1], offset: 32>>, vector<4xf32>
// CHECK: amdgpu.raw_buffer_store %{{.*}} -> %{{.*}}[%{{.*}}] : vector<4xf32> -> memref<64xf32>, i32
// CHECK: vector.store %{{.*}}, %{{.*}}[%{{.*}}] : memref<16xf32>, vector<4xf32>
func.func @roots(%x: memref<96xf32>) {
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c0 = arith.constant 0 : index
  %scratch = memref.alloc() : memref<64xf32>
  %tail = memref.subview %x[32] [64] [1] : memref<96xf32> to memref<64xf32, strided<[1], offset: 32>>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c4, %sy = %c1, %sz = %c1) {
    %i = arith.muli %tx, %c4 : index
    %v = vector.load %tail[%i] : memref<64xf32, strided<[1], offset: 32>>, vector<4xf32>
    vector.store %v, %scratch[%i] : memref<64xf32>, vector<4xf32>
    %own = memref.alloc() : memref<16xf32>
    vector.store %v, %own[%i] : memref<16xf32>, vector<4xf32>
    memref.dealloc %own : memref<16xf32>
    gpu.terminator
  }
  memref.dealloc %scratch : memref<64xf32>
  return
}

// -----

// Offsets are 32 bits: 2 GiB and more stay global.
// CHECK-LABEL: func.func @large
// CHECK-NOT: amdgpu.raw_buffer
// CHECK: vector.load
func.func @large(%x: memref<536870912xf32>) {
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c4, %sy = %c1, %sz = %c1) {
    %i = arith.muli %tx, %c4 : index
    %v = vector.load %x[%i] : memref<536870912xf32>, vector<4xf32>
    %w = arith.addf %v, %v : vector<4xf32>
    vector.store %w, %x[%i] : memref<536870912xf32>, vector<4xf32>
    gpu.terminator
  }
  return
}

// -----

// A kernel grid-to-loops ran in two versions (partial blocks): the scalar
// copies of the staged version (the else region of the `scf.if` marked
// `tessel.staged_version`) do not keep the whole-block version's vector
// accesses of the same memref global; they stay global accesses themselves.
// A scalar access anywhere else still does (@scalar_outside).
// CHECK-LABEL: func.func @versions
// CHECK: %[[FLAT:.*]] = memref.reinterpret_cast %arg0
// CHECK: scf.if
// CHECK: amdgpu.raw_buffer_load %[[FLAT]]
// CHECK: amdgpu.raw_buffer_store %{{.*}} -> %[[FLAT]]
// CHECK: } else {
// CHECK: memref.load %arg0
// CHECK: memref.store %{{.*}}, %arg0
// CHECK: } {tessel.staged_version}
// CHECK-LABEL: func.func @scalar_outside
// CHECK-NOT: amdgpu.raw_buffer
// CHECK: vector.load
func.func @versions(%x: memref<64xf32>, %whole: i1) {
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c4, %sy = %c1, %sz = %c1) {
    %i = arith.muli %tx, %c4 : index
    scf.if %whole {
      %v = vector.load %x[%i] : memref<64xf32>, vector<4xf32>
      %w = arith.addf %v, %v : vector<4xf32>
      vector.store %w, %x[%i] : memref<64xf32>, vector<4xf32>
    } else {
      %s = memref.load %x[%tx] : memref<64xf32>
      %t = arith.addf %s, %s : f32
      memref.store %t, %x[%tx] : memref<64xf32>
    } {tessel.staged_version}
    gpu.terminator
  }
  return
}
func.func @scalar_outside(%x: memref<64xf32>, %whole: i1) {
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c4, %sy = %c1, %sz = %c1) {
    %i = arith.muli %tx, %c4 : index
    scf.if %whole {
      %v = vector.load %x[%i] : memref<64xf32>, vector<4xf32>
      %s = memref.load %x[%tx] : memref<64xf32>
      %w = vector.broadcast %s : f32 to vector<4xf32>
      vector.store %w, %x[%i] : memref<64xf32>, vector<4xf32>
    } else {
    } {tessel.staged_version}
    gpu.terminator
  }
  return
}
