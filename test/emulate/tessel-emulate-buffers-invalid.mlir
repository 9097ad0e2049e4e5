// RUN: tessel-opt %s --split-input-file --verify-diagnostics --tessel-emulate-buffers

// tessel-buffer-resources makes one-dimensional buffers indexed by one
// offset; the emulator says so of other forms rather than guess.
func.func @offsets(%x: memref<64xf32>, %at: i32) -> vector<4xf32> {
  // expected-error @+1 {{tessel-emulate-buffers: the emulator runs buffer accesses of one-dimensional buffers at one index, without offsets}}
  %v = amdgpu.raw_buffer_load %x[%at] sgprOffset %at : memref<64xf32>, i32 -> vector<4xf32>
  return %v : vector<4xf32>
}

// -----

func.func @scalar(%x: memref<64xf32>, %at: i32) -> f32 {
  // expected-error @+1 {{tessel-emulate-buffers: the emulator runs buffer accesses of one-dimensional vectors, not f32}}
  %v = amdgpu.raw_buffer_load %x[%at] : memref<64xf32>, i32 -> f32
  return %v : f32
}

// -----

func.func @two_dimensional(%x: memref<8x8xf32>, %i: i32) -> vector<4xf32> {
  // expected-error @+1 {{tessel-emulate-buffers: the emulator runs buffer accesses of one-dimensional buffers at one index, without offsets}}
  %v = amdgpu.raw_buffer_load %x[%i, %i] : memref<8x8xf32>, i32, i32 -> vector<4xf32>
  return %v : vector<4xf32>
}

// -----

func.func @index_offset(%x: memref<64xf32>, %i: i32) -> vector<4xf32> {
  // expected-error @+1 {{tessel-emulate-buffers: the emulator runs buffer accesses of one-dimensional buffers at one index, without offsets}}
  %v = amdgpu.raw_buffer_load {indexOffset = 4 : i32} %x[%i] : memref<64xf32>, i32 -> vector<4xf32>
  return %v : vector<4xf32>
}
