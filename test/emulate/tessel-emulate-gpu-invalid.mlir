// RUN: tessel-opt %s --split-input-file --verify-diagnostics --tessel-emulate-gpu

// A barrier only some work-items reach cannot be emulated (nor run).
func.func @divergent_barrier(%out: memref<64xf32>) {
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c32 = arith.constant 32 : index
  // expected-error @+1 {{tessel-emulate-gpu: a barrier inside 'scf.if' that depends on the work-item id}}
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    %low = arith.cmpi ult, %tx, %c32 : index
    scf.if %low {
      gpu.barrier
    }
    gpu.terminator
  }
  return
}

// -----

// Per-item values kept across a barrier live in memory, a slot per
// work-item; a per-item view (a memref) cannot be stored so.
func.func @view_across_barrier(%out: memref<64xf32>) {
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %cst = arith.constant 1.0 : f32
  // expected-error @+1 {{tessel-emulate-gpu: a per-item value of type memref<1xf32, strided<[1], offset: ?>> kept across a barrier is not emulated}}
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    %view = memref.subview %out[%tx] [1] [1] : memref<64xf32> to memref<1xf32, strided<[1], offset: ?>>
    gpu.barrier
    %c0 = arith.constant 0 : index
    memref.store %cst, %view[%c0] : memref<1xf32, strided<[1], offset: ?>>
    gpu.terminator
  }
  return
}
