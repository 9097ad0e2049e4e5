// The ROCm pipeline end to end: one code object per module, one kernel per
// grid call, for each chip; checked structurally (no GPU here).
// RUN: tessel compile %s --target rocm --chip gfx90a -o %t.gfx90a.hsaco
// RUN: llvm-readelf --notes %t.gfx90a.hsaco | FileCheck %s --check-prefixes=NOTES,CDNA
// RUN: tessel compile %s --target rocm --chip gfx942 -o %t.gfx942.hsaco
// RUN: llvm-readelf --notes %t.gfx942.hsaco | FileCheck %s --check-prefixes=NOTES,CDNA
// RUN: tessel compile %s --target rocm --chip gfx1100 -o %t.gfx1100.hsaco
// RUN: llvm-readelf --notes %t.gfx1100.hsaco | FileCheck %s --check-prefixes=NOTES,RDNA
// RUN: llvm-readelf --file-header %t.gfx942.hsaco | FileCheck %s --check-prefix=HEADER
// RUN: tessel compile %s --target rocm --chip gfx90a --code-object 4 -o %t.v4.hsaco
// RUN: llvm-readelf --file-header %t.v4.hsaco | FileCheck %s --check-prefix=V4
// RUN: llvm-readelf --file-header %t.gfx90a.hsaco | FileCheck %s --check-prefix=V5
// RUN: tessel compile %s --target rocm --chip gfx90a --code-object 6 -o %t.v6.hsaco
// RUN: llvm-readelf --file-header %t.v6.hsaco | FileCheck %s --check-prefix=V6
// RUN: tessel compile %s --target rocm --chip gfx90a --emit asm -o %t.s
// RUN: FileCheck %s --check-prefix=ASM < %t.s
// RUN: tessel compile %s --target rocm --chip gfx90a --emit llvm -o %t.ll
// RUN: FileCheck %s --check-prefix=LLVM < %t.ll
// RUN: tessel compile %s --target rocm --chip gfx90a --emit mlir -o %t.mlir
// RUN: FileCheck %s --check-prefix=MLIR < %t.mlir
// RUN: llvm-objdump -d %t.gfx90a.hsaco | FileCheck %s --check-prefix=DISASSEMBLY
// The run-time bounds flag is a global of the code object, which the HIP
// launcher reads back after the launches.
// RUN: tessel compile test/e2e/bounds-at-run-time.mlir --target rocm -o %t.bounds.hsaco
// RUN: llvm-readelf --syms %t.bounds.hsaco | FileCheck %s --check-prefix=FLAG
// FLAG: OBJECT GLOBAL DEFAULT {{.*}} __tessel_out_of_bounds
// Element-wise work moves 16 bytes per work-item access, through buffer
// resources (tessel-buffer-resources): a 32-bit offset per lane, no
// 64-bit address arithmetic.
// RUN: tessel compile examples/elementwise_16m.mlir --target rocm --chip gfx942 --emit asm -o %t.elementwise.s
// RUN: FileCheck %s --check-prefix=VECTOR < %t.elementwise.s
// VECTOR-COUNT-3: buffer_load_dwordx4 v[{{[0-9]+}}:{{[0-9]+}}], v{{[0-9]+}}, s[{{[0-9]+}}:{{[0-9]+}}], 0 offen
// VECTOR: buffer_store_dwordx4
// (ADDRESSES, at the end of the file.)
// The k loops of the matrix-core contractions, read from the assembly
// (benchmarks/amdgpu/hot_loop.py: the loop with the most MFMAs, and the
// loop around it). On the 1024 matmul example (256x256 blocks, four
// waves: two 256x128 passes of 8x4 tiles per wave): one LDS buffer per
// operand takes two barriers per 16-deep chunk (128 MFMAs per wave); double-buffered
// LDS (--num-stages 2, in 32 KiB: 128x128 sub-blocks, as
// a 256x128 one would leave 8-deep chunks) one (below). Either way each iteration
// issues the next chunk's global loads and does not wait for them before
// its MFMAs (software pipelining through registers), and each lane reads
// its operand fragments 128 bits at a time.
// RUN: tessel compile examples/matmul_1024.mlir --target rocm --chip gfx90a --emit asm -o %t.single.s
// RUN: tessel compile examples/matmul_1024.mlir --target rocm --chip gfx90a --num-stages 2 --emit asm -o %t.staged.s
// RUN: python3 benchmarks/amdgpu/hot_loop.py %t.single.s | FileCheck %s --check-prefixes=SINGLE,PIPELINED
// RUN: tessel compile examples/matmul_1024.mlir --target rocm --chip gfx90a --num-stages 2 -o %t.staged.hsaco
// RUN: llvm-readelf --notes %t.staged.hsaco | FileCheck %s --check-prefix=STAGED
// Every example kernel compiles for the three chips, with and without
// double buffering, without spills or private (scratch) memory.
// RUN: bash test/gpu/Inputs/every-example.sh tessel llvm-readelf %t | FileCheck %s --check-prefix=NO-SPILLS
// NO-SPILLS-NOT: {{spills=[1-9]|private=[1-9]|kernels=0}}
// NO-SPILLS: gfx90a stages=1 attention_2048: kernels=1 spills=0 private=0
// NO-SPILLS-NOT: {{spills=[1-9]|private=[1-9]|kernels=0}}
// NO-SPILLS: gfx1100 stages=2 sum_64m: kernels=1 spills=0 private=0
// NO-SPILLS-NOT: {{spills=[1-9]|private=[1-9]|kernels=0}}
// Matrix cores: the f32 matmul examples' contractions are 16x16x4 MFMAs
// on CDNA, accumulators in registers (no spills, no scratch), A and B
// chunks staged in LDS (24 KiB: 256x16 of A, 16x128 of B); FMAs on RDNA3 (which has no f32 WMMA)
// and with --matrix-cores off. The int8 matmul runs on the matrix cores
// of all three chips.
// RUN: tessel compile examples/matmul_2048.mlir --target rocm --chip gfx90a --emit asm -o %t.mfma90a.s
// RUN: FileCheck %s --check-prefixes=MFMA,MFMA90A < %t.mfma90a.s
// RUN: tessel compile examples/matmul_2048.mlir --target rocm --chip gfx942 --emit asm -o %t.mfma942.s
// RUN: FileCheck %s --check-prefixes=MFMA,MFMA942 < %t.mfma942.s
// RUN: tessel compile examples/matmul_2048.mlir --target rocm --chip gfx1100 --emit asm -o %t.fma1100.s
// RUN: FileCheck %s --check-prefix=NO-MFMA < %t.fma1100.s
// RUN: tessel compile examples/matmul_2048.mlir --target rocm --chip gfx90a --matrix-cores off --emit asm -o %t.off.s
// RUN: FileCheck %s --check-prefix=NO-MFMA < %t.off.s
// RUN: tessel compile examples/matmul_i8.mlir --target rocm --chip gfx90a --emit asm -o %t.i8gfx90a.s
// RUN: FileCheck %s --check-prefixes=I8,I8-90A < %t.i8gfx90a.s
// RUN: tessel compile examples/matmul_i8.mlir --target rocm --chip gfx942 --emit asm -o %t.i8gfx942.s
// RUN: FileCheck %s --check-prefixes=I8,I8-942 < %t.i8gfx942.s
// RUN: tessel compile examples/matmul_i8.mlir --target rocm --chip gfx1100 --emit asm -o %t.i8gfx1100.s
// RUN: FileCheck %s --check-prefixes=I8,I8-1100 < %t.i8gfx1100.s
// MFMA: matmul_2048_kernel:
// MFMA: s_barrier
// MFMA: ds_read
// MFMA90A: v_mfma_f32_16x16x4f32
// MFMA942: v_mfma_f32_16x16x4_f32
// MFMA-NOT: {{^\s+(scratch|buffer)_store}}
// MFMA: .group_segment_fixed_size: 24576
// MFMA: .private_segment_fixed_size: 0
// MFMA: .sgpr_spill_count: 0
// MFMA: .vgpr_spill_count: 0
// NO-MFMA-NOT: v_mfma
// NO-MFMA-NOT: v_wmma
// NO-MFMA: v_{{(pk_)?}}fma{{c?}}_f32
// I8-90A: v_mfma_i32_16x16x16i8
// I8-942: v_mfma_i32_16x16x32_i8
// I8-1100: v_wmma_i32_16x16x16_iu8
// I8: .private_segment_fixed_size: 0
// I8: .sgpr_spill_count: 0
// I8: .vgpr_spill_count: 0
// RUN: not tessel compile %s --target rocm --emit so -o %t.so 2>&1 | FileCheck %s --check-prefix=NO-SO
// RUN: not tessel compile %s --target cpu --emit hsaco -o %t.x 2>&1 | FileCheck %s --check-prefix=NO-HSACO
// RUN: not tessel compile test/design/block-forms.mlir --target rocm -o %t.none 2>&1 | FileCheck %s --check-prefix=NO-KERNELS
// The double-buffered k loop of the 1024 matmul (see SINGLE above).
// RUN: python3 benchmarks/amdgpu/hot_loop.py %t.staged.s | FileCheck %s --check-prefixes=DOUBLE,PIPELINED
// SINGLE: matrix 128
// SINGLE-NEXT: barriers 2
// DOUBLE: matrix 128
// DOUBLE-NEXT: barriers 2
// WHOLE-256: matrix 128
// PIPELINED: global-stores 0
// PIPELINED: lds-read-min-bits 128
// PIPELINED-NEXT: waits-before-matrix no
// With K on the grid (128x128 blocks, benchmarks/amdgpu/kernels), the
// arbitrary k axis only accumulates the contraction's k blocks: it becomes
// one contraction over all of k (tessel-merge-k-steps), so no loop
// surrounds the k-chunk loop at all — the accumulators live in registers
// from start to end, and no grid step's first chunk is waited for — on
// both CDNA chips.
// RUN: tessel compile benchmarks/amdgpu/kernels/matmul_f32_kgrid.mlir --target rocm --chip gfx90a --emit asm -o %t.kgrid90a.s
// RUN: python3 benchmarks/amdgpu/hot_loop.py %t.kgrid90a.s | FileCheck %s --check-prefixes=PIPELINED,RESIDENT
// RUN: tessel compile benchmarks/amdgpu/kernels/matmul_f32_kgrid.mlir --target rocm --chip gfx942 --emit asm -o %t.kgrid942.s
// RUN: python3 benchmarks/amdgpu/hot_loop.py %t.kgrid942.s | FileCheck %s --check-prefixes=PIPELINED,RESIDENT
// RESIDENT: around none
// A 256x256 block with eight waves (as Triton's 256x256 tiles run best):
// 128 accumulator registers per lane cover the whole block, so the grid's
// k axis merges into the k-chunk loop there too (before, four 128x128
// sub-blocks each loaded and stored their accumulators at every grid
// step, and staged A and B again).
// RUN: tessel compile benchmarks/amdgpu/kernels/matmul_f32_256.mlir --target rocm --chip gfx942 --emit asm -o %t.f32-256.s
// RUN: python3 benchmarks/amdgpu/hot_loop.py %t.f32-256.s | FileCheck %s --check-prefixes=WHOLE-256,PIPELINED,RESIDENT
// RUN: FileCheck %s --check-prefix=SPILL-FREE < %t.f32-256.s
// So does bias + relu on the last k step (tessel-merge-k-steps runs the
// in-place epilogue once after the merged contraction).
// RUN: tessel compile examples/matmul_bias_relu_2048.mlir --target rocm --chip gfx942 --num-warps 8 --emit asm -o %t.bias-relu.s
// RUN: python3 benchmarks/amdgpu/hot_loop.py %t.bias-relu.s | FileCheck %s --check-prefixes=WHOLE-256,PIPELINED,RESIDENT
// RUN: FileCheck %s --check-prefix=SPILL-FREE < %t.bias-relu.s
// SPILL-FREE: .private_segment_fixed_size: 0
// SPILL-FREE: .vgpr_spill_count: 0
// 8-bit operands: B staged transposed, so each lane's fragment is 64 bits
// of one LDS row (not a byte at a time), on CDNA and RDNA 3; the k-chunk
// loop does not wait for its own loads before the matrix instructions,
// and the grid's k axis is merged into it (on RDNA 3 too: 128
// accumulator registers cover the 128x128 block).
// RUN: python3 benchmarks/amdgpu/hot_loop.py %t.i8gfx90a.s | FileCheck %s --check-prefixes=I8-WIDE
// RUN: python3 benchmarks/amdgpu/hot_loop.py %t.i8gfx942.s | FileCheck %s --check-prefixes=I8-WIDE
// RUN: python3 benchmarks/amdgpu/hot_loop.py %t.i8gfx1100.s | FileCheck %s --check-prefixes=I8-WIDE
// I8-WIDE: global-stores 0
// I8-WIDE: lds-read-min-bits {{64|128}}
// I8-WIDE-NEXT: waits-before-matrix no
// I8-WIDE-NEXT: around none
// A one-row softmax (4096 columns, 256 work-items): each of the row's max
// and sum has 256 partials, one per work-item; a wave's 64 are combined
// across its lanes (DPP moves, tessel-cross-lane-reductions), the 4 waves'
// results by one item: no serial fold of hundreds of partials, no tree of
// LDS levels (a barrier each): a few dozen LDS reads in the whole kernel.
// The same on RDNA 3's waves of 32 (permlanes between half-waves: the
// last RUN lines of this file).
// RUN: tessel compile benchmarks/amdgpu/kernels/softmax_row.mlir --target rocm --chip gfx942 --emit asm -o %t.softmax.s
// RUN: python3 benchmarks/amdgpu/hot_loop.py %t.softmax.s | FileCheck %s --check-prefix=CROSS
// Each work-item's share of the element-wise work (4 or 8 vectors) is a
// loop of a constant trip count that LLVM unrolls: its loads issue
// together, and no loop is left.
// CROSS: loops 0
// CROSS: lds-reads {{[0-9]$|[1-4][0-9]$}}
// CROSS: barriers {{[0-8]$}}
// CROSS-NEXT: cross-lane {{[1-9][0-9]+$}}

// Both kernels, with three (matmul) and two (scale) pointer arguments;
// the matmul stages 16x16 chunks of both operands in LDS (1 KiB each),
// scale's partial last block is padded in LDS (input and output, 512
// bytes each).
// NOTES: amdhsa.kernels:
// NOTES: .args:
// NOTES-COUNT-3: .value_kind: global_buffer
// NOTES: .group_segment_fixed_size: 2048
// NOTES: .kernarg_segment_size: 24
// NOTES: .name: matmul_kernel
// NOTES: .private_segment_fixed_size: 0
// NOTES: .sgpr_spill_count: 0
// NOTES: .vgpr_spill_count: 0
// CDNA: .wavefront_size: 64
// RDNA: .wavefront_size: 32
// @scale's last block is partial, past its array's end: it runs on a view
// too, through buffer accesses (tessel-past-end-views), with no LDS.
// NOTES: .args:
// NOTES-COUNT-2: .value_kind: global_buffer
// NOTES: .group_segment_fixed_size: 0
// NOTES: .kernarg_segment_size: 16
// NOTES: .name: scale_kernel
// NOTES: .private_segment_fixed_size: 0
// NOTES: .sgpr_spill_count: 0
// NOTES: .vgpr_spill_count: 0
// NOTES: amdhsa.target: amdgcn-amd-amdhsa--

// HEADER: Class: ELF64
// HEADER: OS/ABI: AMDGPU - HSA
// HEADER: Type: DYN
// HEADER: Machine: EM_AMDGPU

// The ELF ABI version names the code object version (v4: 2, v5: 3, v6: 4).
// V4: ABI Version: 2
// V5: ABI Version: 3
// V6: ABI Version: 4

// ASM: .amdgcn_target "amdgcn-amd-amdhsa--gfx90a"
// ASM: matmul_kernel:
// ASM: ds_write
// ASM: s_barrier
// ASM: ds_read
// ASM: v_fma{{c?}}_f32
// ASM: scale_kernel:

// LLVM: target triple = "amdgcn-amd-amdhsa"
// LLVM: define amdgpu_kernel void @matmul_kernel(ptr
// LLVM: @llvm.fma.{{(v1)?}}f32
// LLVM: define amdgpu_kernel void @scale_kernel(ptr

// MLIR: gpu.launch_func @matmul_kernel::@matmul_kernel blocks in
// MLIR: gpu.module @matmul_kernel [#rocdl.target<O = 3, chip = "gfx90a", abi = "500"
// MLIR: llvm.func @matmul_kernel
// MLIR-SAME: rocdl.kernel
// MLIR: llvm.func @scale_kernel
// MLIR: gpu.launch_func @matmul_kernel::@scale_kernel blocks in

// DISASSEMBLY: <matmul_kernel>:
// DISASSEMBLY-NOT: scratch_store
// DISASSEMBLY: <scale_kernel>:
// DISASSEMBLY-NOT: scratch_store

// STAGED: .group_segment_fixed_size: 32768
// STAGED: .name: matmul_1024_kernel
// STAGED: .vgpr_spill_count: 0

// NO-SO: tessel: error: --emit so is for --target cpu
// NO-HSACO: tessel: error: --emit hsaco needs --target rocm
// NO-KERNELS: tessel: error: nothing to compile for the GPU: the module calls no kernel over a grid (grid.call)

func.func @matmul_kernel(%x: memref<16x16xf32>, %y: memref<16x16xf32>, %z: memref<16x16xf32>) {
  %k = grid.program_id 2
  %c0 = arith.constant 0 : index
  %first = arith.cmpi eq, %k, %c0 : index
  scf.if %first {
    %zeros = arith.constant dense<0.0> : tensor<16x16xf32>
    block.store %zeros, %z : tensor<16x16xf32>, memref<16x16xf32>
  }
  %a = block.load %x : memref<16x16xf32> -> tensor<16x16xf32>
  %b = block.load %y : memref<16x16xf32> -> tensor<16x16xf32>
  %acc = block.load %z : memref<16x16xf32> -> tensor<16x16xf32>
  %c = block.dot %a, %b acc %acc : tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32> -> tensor<16x16xf32>
  block.store %c, %z : tensor<16x16xf32>, memref<16x16xf32>
  return
}

func.func @matmul(%x: memref<64x48xf32>, %y: memref<48x32xf32>, %z: memref<64x32xf32>) {
  grid.call @matmul_kernel grid [4, 2, 3] ins(%x, %y : memref<64x48xf32>, memref<48x32xf32>) outs(%z : memref<64x32xf32>)
      in_specs [#grid.block<[16, 16], (i, j, k) -> (i, k)>, #grid.block<[16, 16], (i, j, k) -> (k, j)>]
      out_specs [#grid.block<[16, 16], (i, j, k) -> (i, j)>]
      semantics [parallel, parallel, arbitrary]
  return
}

func.func @scale_kernel(%x: memref<128xf32>, %o: memref<128xf32>) {
  %v = block.load %x : memref<128xf32> -> tensor<128xf32>
  %two = arith.constant dense<2.0> : tensor<128xf32>
  %r = arith.mulf %v, %two : tensor<128xf32>
  block.store %r, %o : tensor<128xf32>, memref<128xf32>
  return
}

func.func @scale(%x: memref<1000xf32>, %o: memref<1000xf32>) {
  grid.call @scale_kernel grid [8] ins(%x : memref<1000xf32>) outs(%o : memref<1000xf32>)
      in_specs [#grid.block<[128], (i) -> (i)>] out_specs [#grid.block<[128], (i) -> (i)>]
  return
}

// The one-row softmax on RDNA 3 (waves of 32), as above.
// RUN: tessel compile benchmarks/amdgpu/kernels/softmax_row.mlir --target rocm --chip gfx1100 --emit asm -o %t.softmax32.s
// RUN: python3 benchmarks/amdgpu/hot_loop.py %t.softmax32.s | FileCheck %s --check-prefix=CROSS

// Eight 4096-wide rows per program: exp(x - max) (128 KiB) does not fit
// LDS; rather than written to global memory (the output buffer) and read
// back for the sums and the division, it is recomputed by both
// (tessel-recompute-large-values): the kernel's only global stores are the
// result's (8 rows x 4096 x 4 bytes / 256 work-items = 512 bytes per lane,
// counted as the waves run by benchmarks/amdgpu/interpreter.py: the last
// RUN lines of this file).
// RUN: tessel compile examples/softmax_4096.mlir --target rocm --chip gfx942 --emit asm -o %t.softmax8.s
// RUN: python3 benchmarks/amdgpu/hot_loop.py %t.softmax8.s | FileCheck %s --check-prefix=CROSS-LANE
// RECOMPUTED-COUNT-4: stores 512 bytes per lane
// RECOMPUTED-NOT: stores
// CROSS-LANE: cross-lane {{[1-9][0-9]*$}}
// Likewise a layernorm's x - mean (used by the variance and the result)
// and the squares its variance sums: no 128 KiB scratch buffer.
// RUN: tessel compile examples/layernorm_4096.mlir --target rocm --chip gfx942 --emit asm -o %t.layernorm.s
// RUN: python3 benchmarks/amdgpu/hot_loop.py %t.layernorm.s | FileCheck %s --check-prefix=CROSS-LANE

// Contractions matrix cores leave run on FMA register tiles
// (tessel-register-tiles): f32 on RDNA 3 (128 work-items, 8x16 tiles) and
// on CDNA with matrix cores off (256, 8x8). The k-step loop reads a
// tile's A and B values with 128-bit LDS reads, at least 16 multiply-adds
// per read, and touches no global memory; the chunk loop around it loads
// only the next chunk (stores nothing: the accumulators stay in
// registers), and the grid's k axis is merged into it: no loop around.
// RUN: tessel compile benchmarks/amdgpu/kernels/matmul_f32_kgrid.mlir --target rocm --chip gfx1100 --emit asm -o %t.tiles1100.s
// RUN: python3 benchmarks/amdgpu/hot_loop.py %t.tiles1100.s | FileCheck %s --check-prefix=FMA-TILES
// RUN: tessel compile benchmarks/amdgpu/kernels/matmul_f32_kgrid.mlir --target rocm --chip gfx942 --matrix-cores off --emit asm -o %t.tiles942.s
// RUN: python3 benchmarks/amdgpu/hot_loop.py %t.tiles942.s | FileCheck %s --check-prefix=FMA-TILES
// FMA-TILES: fma-loop-fmas-per-lds-read {{(1[6-9]|[2-9][0-9]|[1-9][0-9][0-9]+)$}}
// FMA-TILES-NEXT: fma-loop-lds-read-min-bits 128
// FMA-TILES-NEXT: fma-loop-global-loads 0
// FMA-TILES-NEXT: fma-loop-global-stores 0
// FMA-TILES-NEXT: fma-chunk-global-loads {{[1-9][0-9]*$}}
// FMA-TILES-NEXT: fma-chunk-global-stores 0
// FMA-TILES-NEXT: fma-outer none

// The eight-row softmax's and the layernorm's global stores, counted as
// each wave runs (see RECOMPUTED above).
// RUN: python3 benchmarks/amdgpu/interpreter.py %t.softmax8.s | FileCheck %s --check-prefix=RECOMPUTED
// RUN: python3 benchmarks/amdgpu/interpreter.py %t.layernorm.s | FileCheck %s --check-prefix=RECOMPUTED

// The element-wise kernel (VECTOR above) addresses its operands through
// buffer resources: no global instruction, no 64-bit address arithmetic.
// RUN: FileCheck %s --check-prefix=ADDRESSES < %t.elementwise.s
// ADDRESSES-NOT: global_load
// ADDRESSES-NOT: global_store
// ADDRESSES-NOT: v_addc_co_u32
// ADDRESSES: s_endpgm
