// grid-to-loops refuses, located, a signal to another core in a kernel a
// call without a core mesh runs (no other core to signal), and scratch
// shared by every program on AMD GPUs (whose scratch is per workgroup).
// RUN: not tessel-opt %s --split-input-file --grid-verify-specs --grid-to-loops 2>&1 | FileCheck %s

// CHECK: grid-to-loops-cores-invalid.mlir:[[@LINE+6]]:3: error: grid-to-loops: a signal to another core (`core`) needs a call over a core mesh (`grid.call ... cores`)
func.func @k(%o: memref<4xf32>, %s: memref<i32>) {
  %c1 = arith.constant 1 : index
  %one = arith.constant 1 : i32
  %core = grid.program_id 0
  %peer = arith.subi %c1, %core : index
  block.semaphore_signal %s, %one core %peer : memref<i32>
  return
}
func.func @f(%o: memref<4xf32>) {
  grid.call @k grid [2] ins() outs(%o : memref<4xf32>) scratch(semaphore memref<i32>)
      in_specs [] out_specs [#grid.block<full>]
  return
}

// -----

// CHECK: grid-to-loops-cores-invalid.mlir:[[@LINE+6]]:5: error: grid-to-loops: scratch shared by every program (`shared`) runs on the CPU only, not on AMD GPUs yet
module attributes {tessel.chip = "gfx942"} {
  func.func @k(%o: memref<4xf32>, %shared: memref<4xf32>) {
    return
  }
  func.func @f(%o: memref<4xf32>) {
    grid.call @k grid [2] ins() outs(%o : memref<4xf32>) scratch(shared memref<4xf32>)
        in_specs [] out_specs [#grid.block<full>]
    return
  }
}
