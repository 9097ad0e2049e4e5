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

// A work-item's register value kept across a barrier is valid GPU code,
// but the emulator (which runs each phase for all items in turn) does not
// keep per-item values between phases yet: it says so.
func.func @value_across_barrier(%out: memref<64xf32>) {
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  // expected-error @+1 {{tessel-emulate-gpu: a value of 'memref.load' computed per work-item and used after a barrier is not emulated yet}}
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    %v = memref.load %out[%tx] : memref<64xf32>
    gpu.barrier
    memref.store %v, %out[%tx] : memref<64xf32>
    gpu.terminator
  }
  return
}
