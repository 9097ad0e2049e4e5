// RUN: tessel-opt %s --verify-diagnostics --tessel-emulate-matrix-cores

// Broadcast and permutation modifiers change which lanes feed which
// entries; Tessel never emits them and the emulator says so.
func.func @broadcast(%a: memref<64xf32>, %out: memref<64xvector<4xf32>>) {
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    %x = memref.load %a[%tx] : memref<64xf32>
    %zero = arith.constant dense<0.0> : vector<4xf32>
    // expected-error @+1 {{tessel-emulate-matrix-cores: matrix instructions with broadcast, permutation, negation or reduced precision are not emulated}}
    %d = amdgpu.mfma 16x16x4 %x * %x + %zero blgp = bcast_first_32 : f32, f32, vector<4xf32>
    memref.store %d, %out[%tx] : memref<64xvector<4xf32>>
    gpu.terminator
  }
  return
}
