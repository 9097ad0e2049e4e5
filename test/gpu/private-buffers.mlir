// Rows in registers: the one-row softmax's exp(x) (16 KiB per program) is
// touched element by element by one work-item only, so grid-to-gpu keeps
// it in the items' private memory (16 floats each) instead of LDS, and the
// row of x too (read by the max, then by exp(x - max)), and the two
// reductions' partials (one per item: tessel-gpu-vectorize initializes
// them one element per item, as the items accumulate them), and the
// reductions' results, which every item folds from the waves' results
// itself (replicated_buffers.rs); LLVM keeps all six in registers (no
// scratch). The emulated GPU, which gives every
// item its own row of private memory, matches the interpreter.
// RUN: tessel run %s --entry softmax --device rocm-emulated --arg 0=random:1 --check | FileCheck %s
// CHECK: check: compiled code matches the interpreter
// Sums of exps: their last digits are the host's.
// SNAPSHOT-FILTER: \s*-?[0-9]+\.[0-9]+(e[-+]?[0-9]+)?\s* =>  <float>
// RUN: tessel compile %s --target rocm --chip gfx942 -o %t.gfx942.hsaco
// RUN: llvm-readelf --notes %t.gfx942.hsaco | FileCheck %s --check-prefixes=LDS942,NOTES
// RUN: llvm-objdump -d %t.gfx942.hsaco | FileCheck %s --check-prefix=CODE --implicit-check-not=scratch_
// RUN: tessel compile %s --target rocm --chip gfx1100 -o %t.gfx1100.hsaco
// RUN: llvm-readelf --notes %t.gfx1100.hsaco | FileCheck %s --check-prefixes=LDS,NOTES
// RUN: tessel compile %s --target rocm --chip gfx942 --emit mlir -o %t.mlir
// RUN: FileCheck %s --check-prefix=PRIVATE < %t.mlir
// The row of x comes from memory once: the max's loop keeps what it loads
// (16 floats per item), exp(x - max) reads that (4 dwordx4 loads per item,
// not 8).
// RUN: tessel compile %s --target rocm --chip gfx942 --emit asm -o %t.s
// RUN: python3 benchmarks/amdgpu/hot_loop.py %t.s | FileCheck %s --check-prefix=ONCE
// ONCE: global-loads 4{{$}}
// Only the waves' results of the reductions stay in LDS (was 18 KiB with
// exp(x), then 2 KiB with the partials): on gfx942 and on gfx1100 (128
// items: 32 floats of x and of exp(x) each, then the partials and the
// results in the private budget) below 1000 bytes.
// LDS: .group_segment_fixed_size: {{[0-9]{1,3}$}}
// LDS942: .group_segment_fixed_size: {{[0-9]{1,3}$}}
// NOTES: .private_segment_fixed_size: 0
// NOTES: .vgpr_spill_count: 0
// CODE: v_exp_f32
// PRIVATE-COUNT-6: llvm.alloca %{{.*}} x f32 : (i64) -> !llvm.ptr<5>
// PRIVATE-NOT: llvm.alloca
func.func @softmax_kernel(%x: memref<1x4096xf32>, %o: memref<1x4096xf32>) {
  %v = block.load %x : memref<1x4096xf32> -> tensor<1x4096xf32>
  %m = block.reduce max %v dims [1] : tensor<1x4096xf32> -> tensor<1xf32>
  %mb = block.broadcast %m dims [1] : tensor<1xf32> -> tensor<1x4096xf32>
  %d = arith.subf %v, %mb : tensor<1x4096xf32>
  %e = math.exp %d : tensor<1x4096xf32>
  %s = block.reduce sum %e dims [1] : tensor<1x4096xf32> -> tensor<1xf32>
  %sb = block.broadcast %s dims [1] : tensor<1xf32> -> tensor<1x4096xf32>
  %r = arith.divf %e, %sb : tensor<1x4096xf32>
  block.store %r, %o : tensor<1x4096xf32>, memref<1x4096xf32>
  return
}

func.func @softmax(%x: memref<8x4096xf32>, %o: memref<8x4096xf32>) {
  grid.call @softmax_kernel grid [8] ins(%x : memref<8x4096xf32>) outs(%o : memref<8x4096xf32>)
      in_specs [#grid.block<[1, 4096], (i) -> (i, 0)>] out_specs [#grid.block<[1, 4096], (i) -> (i, 0)>]
  return
}
