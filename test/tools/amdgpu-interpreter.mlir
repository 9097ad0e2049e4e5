// benchmarks/amdgpu/interpreter.py runs a wave's integer and control code
// to count what it executes: the streaming estimates of
// benchmarks/amdgpu/model.py rest on it. A hand-written kernel pins its
// semantics (scalar counters with carries, 16-bit immediates sign-extended
// as SOPK's _i32 forms read them, exec-masked loops whose lanes
// leave at different trips, dual-issued moves, an out-of-line block that
// branches back, a bound loaded from memory that it cannot know; a round
// trip is a run of loads and a wait for them); usage
// errors exit 2, unreadable files 1.
// RUN: python3 benchmarks/amdgpu/interpreter.py test/tools/Inputs/interpreter-loops.s | FileCheck %s
// RUN: python3 benchmarks/amdgpu/interpreter.py 2>&1; test $? -eq 2
// RUN: python3 benchmarks/amdgpu/interpreter.py test/does-not-exist.s 2>&1; test $? -eq 1
// The eight-row softmax LLVM compiles with loops of several kinds (counted
// down, exec-masked from the work-item id, out-of-line LDS updates) runs
// to the end in every wave: x is read three times (max, sum, normalize),
// the output written once: 3 x 512 + 512 bytes per lane of a wave64,
// twice that on RDNA 3's wave32 (4 waves of 32).
// RUN: tessel compile examples/softmax_4096.mlir --target rocm --chip gfx942 --emit asm -o %t.gfx942.s
// RUN: python3 benchmarks/amdgpu/interpreter.py %t.gfx942.s | FileCheck %s --check-prefix=SOFTMAX64
// RUN: tessel compile examples/softmax_4096.mlir --target rocm --chip gfx1100 --emit asm -o %t.gfx1100.s
// RUN: python3 benchmarks/amdgpu/interpreter.py %t.gfx1100.s | FileCheck %s --check-prefix=SOFTMAX32

// CHECK: kernel loops
// CHECK-NEXT: wave 0 executes 158 loads 32 stores 68 bytes per lane in 8 round trips
// CHECK-NEXT: wave 0 runs .LBB0_1 8 times
// CHECK-NEXT: wave 0 runs .LBB0_2 4 times
// CHECK-NEXT: wave 0 runs .LBB0_3 4 times
// CHECK-NEXT: wave 0 runs .LBB0_6 15 times
// CHECK-NEXT: wave 0 runs .LBB0_7 4 times
// CHECK-NEXT: wave 0 runs .LBB0_4 1 times
// CHECK-NEXT: wave 1 executes 150 loads 32 stores 48 bytes per lane in 8 round trips
// CHECK-NEXT: wave 1 runs .LBB0_1 8 times
// CHECK-NEXT: wave 1 runs .LBB0_2 3 times
// CHECK-NEXT: wave 1 runs .LBB0_3 4 times
// CHECK-NEXT: wave 1 runs .LBB0_6 15 times
// CHECK-NEXT: wave 1 runs .LBB0_7 4 times
// CHECK-NEXT: wave 1 runs .LBB0_4 1 times
// CHECK-NEXT: kernel loaded_bound
// CHECK-NEXT: unknown: a branch depends on a value not in the code

// SOFTMAX64: kernel softmax_4096_kernel
// SOFTMAX64-NOT: unknown
// SOFTMAX64: wave 0 executes {{[0-9]+}} loads 1536 stores 512 bytes per lane in {{[0-9]+}} round trips
// SOFTMAX64: wave 1 executes {{[0-9]+}} loads 1536 stores 512 bytes per lane in {{[0-9]+}} round trips
// SOFTMAX64: wave 2 executes {{[0-9]+}} loads 1536 stores 512 bytes per lane in {{[0-9]+}} round trips
// SOFTMAX64: wave 3 executes {{[0-9]+}} loads 1536 stores 512 bytes per lane in {{[0-9]+}} round trips

// SOFTMAX32: kernel softmax_4096_kernel
// SOFTMAX32-NOT: unknown
// SOFTMAX32: wave 0 executes {{[0-9]+}} loads 3072 stores 1024 bytes per lane in {{[0-9]+}} round trips
// SOFTMAX32: wave 3 executes {{[0-9]+}} loads 3072 stores 1024 bytes per lane in {{[0-9]+}} round trips
