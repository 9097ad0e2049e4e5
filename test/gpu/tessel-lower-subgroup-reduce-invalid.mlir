// RUN: tessel-opt %s --verify-diagnostics --pass-pipeline='builtin.module(gpu.module(tessel-lower-subgroup-reduce{chipset=sm_90}))'

// A chip name that is not AMD's is an error located at the module, not a
// crash.
// expected-error @below {{tessel-lower-subgroup-reduce: unknown chip 'sm_90'}}
gpu.module @m {
  gpu.func @k(%a: memref<64xf32>) kernel {
    %t = gpu.thread_id x
    %v = memref.load %a[%t] : memref<64xf32>
    %w = gpu.subgroup_reduce add %v : (f32) -> f32
    memref.store %w, %a[%t] : memref<64xf32>
    gpu.return
  }
}
