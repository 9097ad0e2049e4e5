; A hand-written wave64 kernel for benchmarks/amdgpu/interpreter.py: loops
; whose trips are not one constant in the code, as LLVM lays them out.
	.text
	.globl	loops
loops:
	s_load_dwordx2 s[4:5], s[0:1], 0x0
	v_mov_b32_e32 v1, 0
	s_mov_b64 s[10:11], 0x80
; A scalar count down by 16 from 0x80: 8 trips.
.LBB0_1:
	global_load_dword v2, v[4:5], off
	s_waitcnt vmcnt(0)
	s_add_u32 s10, s10, -16
	s_addc_u32 s11, s11, -1
	s_cmp_lg_u64 s[10:11], 0
	s_cbranch_scc1 .LBB0_1
; Item t stores at t, t + 128, ... below 448: lanes leave the loop as their
; count passes it (exec masks), the wave when all have: 4 trips for wave 0
; (items 0-63), 3 for wave 1 (items 64-127).
	v_mov_b32_e32 v3, v0
	s_mov_b64 s[6:7], 0
.LBB0_2:
	global_store_dwordx4 v[4:5], v[8:11], off
	v_add_u32_e32 v3, 0x80, v3
	v_cmp_le_u32_e32 vcc, 0x1c0, v3
	s_or_b64 s[6:7], vcc, s[6:7]
	s_andn2_b64 exec, exec, s[6:7]
	s_cbranch_execnz .LBB0_2
	s_or_b64 exec, exec, s[6:7]
; A count from a vector register (set by a dual-issued pair): 4 trips.
	v_dual_mov_b32 v6, 3 :: v_dual_mov_b32 v7, 4
	v_readfirstlane_b32 s12, v7
.LBB0_3:
	s_sub_u32 s12, s12, 1
	s_cmp_lg_u32 s12, 0
	s_cbranch_scc1 .LBB0_3
; SOPK immediates are 16 bits, sign-extended by the _i32 forms: a count
; from -64 up by 64 while below 0x380 unsigned (Triton's k loop): 15
; trips; down by 4 from 8 while above -8 signed: 4 trips.
	s_movk_i32 s13, 0xffc0
.LBB0_6:
	s_add_i32 s13, s13, 64
	s_cmpk_lt_u32 s13, 0x380
	s_cbranch_scc1 .LBB0_6
	s_movk_i32 s14, 0x8
.LBB0_7:
	s_add_i32 s14, s14, -4
	s_cmpk_gt_i32 s14, 0xfff8
	s_cbranch_scc1 .LBB0_7
; Item 0 only, in a block laid out after the end that branches back: not a
; loop, though the branch goes up.
	v_cmp_eq_u32_e32 vcc, 0, v0
	s_and_saveexec_b64 s[8:9], vcc
	s_cbranch_execnz .LBB0_5
.LBB0_4:
	s_or_b64 exec, exec, s[8:9]
	s_endpgm
.LBB0_5:
	global_store_dword v[4:5], v6, off
	s_branch .LBB0_4

; A loop bound loaded from memory: not in the code.
	.globl	loaded_bound
loaded_bound:
	s_load_dword s4, s[0:1], 0x0
	s_waitcnt lgkmcnt(0)
.LBB1_1:
	s_sub_u32 s4, s4, 1
	s_cmp_lg_u32 s4, 0
	s_cbranch_scc1 .LBB1_1
	s_endpgm

	.amdhsa_kernel loops
		.amdhsa_user_sgpr_count 2
	.end_amdhsa_kernel

	.amdgpu_metadata
---
amdhsa.kernels:
  - .name: loops
    .max_flat_workgroup_size: 128
    .wavefront_size: 64
  - .name: loaded_bound
    .max_flat_workgroup_size: 64
    .wavefront_size: 64
...
	.end_amdgpu_metadata
