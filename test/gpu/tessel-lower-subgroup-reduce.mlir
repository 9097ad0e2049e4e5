// RUN: tessel-opt %s --pass-pipeline='builtin.module(gpu.module(tessel-lower-subgroup-reduce{chipset=gfx942 subgroup-size=64}))' | FileCheck %s --check-prefix=CDNA
// RUN: tessel-opt %s --pass-pipeline='builtin.module(gpu.module(tessel-lower-subgroup-reduce{chipset=gfx1100 subgroup-size=32}))' | FileCheck %s --check-prefix=RDNA
// RUN: tessel-opt %s --pass-pipeline='builtin.module(gpu.module(tessel-lower-subgroup-reduce{chipset=gfx942 subgroup-size=64},convert-gpu-to-rocdl{chipset=gfx942}))' | FileCheck %s --check-prefix=ROCDL

// Cross-lane reductions become DPP lane moves, each followed by the
// combine, no loop and no LDS: within a row of 16 lanes quad permutations
// and mirrors; across rows, on CDNA, row broadcasts (lane 15 into the
// next row, lane 31 into the upper half) and a readlane of the last lane;
// on RDNA 3, permlanex16 and readlanes.
// CDNA-LABEL: gpu.func @k
// CDNA-NOT: gpu.subgroup_reduce
// CDNA-NOT: gpu.shuffle
// Clusters of 8: two quad permutations and a half-row mirror.
// CDNA: amdgpu.dpp %{{.*}} quad_perm([1 : i32, 0 : i32, 3 : i32, 2 : i32])
// CDNA-NEXT: arith.addf
// CDNA-NEXT: amdgpu.dpp %{{.*}} quad_perm([2 : i32, 3 : i32, 0 : i32, 1 : i32])
// CDNA-NEXT: arith.addf
// CDNA-NEXT: amdgpu.dpp %{{.*}} row_half_mirror
// CDNA-NEXT: arith.addf
// The whole wave of 64:
// CDNA: amdgpu.dpp %{{.*}} row_mirror
// CDNA: amdgpu.dpp %{{.*}} row_bcast_15
// CDNA: amdgpu.dpp %{{.*}} row_bcast_31
// CDNA: arith.maximumf
// CDNA: rocdl.readlane
// Clusters of 32:
// CDNA: amdgpu.dpp %{{.*}} row_bcast_15
// CDNA: arith.xori
// CDNA-NOT: gpu.subgroup_reduce
// RDNA-LABEL: gpu.func @k
// RDNA-NOT: gpu.subgroup_reduce
// RDNA: rocdl.permlanex16
// RDNA: rocdl.readlane
// RDNA-NOT: gpu.subgroup_reduce
// And through the ROCDL conversion, to the DPP intrinsic:
// ROCDL: rocdl.update.dpp
// ROCDL-NOT: gpu.subgroup_reduce
gpu.module @m {
  gpu.func @k(%a: memref<256xf32>, %b: memref<256xi32>) kernel {
    %t = gpu.thread_id x
    %v = memref.load %a[%t] : memref<256xf32>
    %w = gpu.subgroup_reduce add %v cluster(size = 8) : (f32) -> f32
    %x = gpu.subgroup_reduce maximumf %v : (f32) -> f32
    %i = memref.load %b[%t] : memref<256xi32>
    %j = gpu.subgroup_reduce xor %i cluster(size = 32) : (i32) -> i32
    %s = arith.addf %w, %x : f32
    memref.store %s, %a[%t] : memref<256xf32>
    memref.store %j, %b[%t] : memref<256xi32>
    gpu.return
  }
}
