// RUN: tessel-opt %s --split-input-file --verify-diagnostics --tessel-emulate-buffers

// tessel-buffer-resources makes one-dimensional buffers indexed by one
// offset; the emulator says so of other forms rather than guess.
func.func @offsets(%x: memref<64xf32>, %at: i32) -> vector<4xf32> {
  // expected-error @+1 {{tessel-emulate-buffers: the emulator runs buffer accesses with one index and no offsets}}
  %v = amdgpu.raw_buffer_load %x[%at] sgprOffset %at : memref<64xf32>, i32 -> vector<4xf32>
  return %v : vector<4xf32>
}

// -----

func.func @scalar(%x: memref<64xf32>, %at: i32) -> f32 {
  // expected-error @+1 {{tessel-emulate-buffers: the emulator runs buffer accesses of one-dimensional vectors, not f32}}
  %v = amdgpu.raw_buffer_load %x[%at] : memref<64xf32>, i32 -> f32
  return %v : f32
}
