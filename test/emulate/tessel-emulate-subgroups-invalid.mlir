// RUN: tessel-opt %s --split-input-file --verify-diagnostics --tessel-emulate-subgroups

// Tessel reduces scalars across lanes, in clusters of consecutive lanes;
// the emulator says so of anything else rather than guess.
func.func @vector(%a: memref<64xvector<4xf32>>) {
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    %v = memref.load %a[%tx] : memref<64xvector<4xf32>>
    // expected-error @+1 {{tessel-emulate-subgroups: the emulator reduces scalars across lanes, not vector<4xf32>}}
    %w = gpu.subgroup_reduce add %v : (vector<4xf32>) -> vector<4xf32>
    memref.store %w, %a[%tx] : memref<64xvector<4xf32>>
    gpu.terminator
  }
  return
}

// -----

func.func @strided(%a: memref<64xf32>) {
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    %v = memref.load %a[%tx] : memref<64xf32>
    // expected-error @+1 {{tessel-emulate-subgroups: the emulator reduces clusters of consecutive lanes only}}
    %w = gpu.subgroup_reduce add %v cluster(size = 4, stride = 2) : (f32) -> f32
    memref.store %w, %a[%tx] : memref<64xf32>
    gpu.terminator
  }
  return
}
