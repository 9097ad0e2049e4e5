// tessel-opt --each-pass runs every Tessel pass alone, each on a fresh
// parse of each chunk, and reports each (the lit harness's
// every_pass_never_crashes runs it on every test file and example): on a
// valid grid call every pass succeeds (each leaves alone what is not for
// it); a chunk that does not parse fails every pass, and the run exits 1;
// with pass flags or a pipeline it is a usage error.
// RUN: tessel-opt %s --split-input-file --each-pass 2>/dev/null | FileCheck %s; test ${PIPESTATUS[0]} -eq 1
// RUN: tessel-opt %s --each-pass --cse 2>&1 | FileCheck %s --check-prefix=FLAGS; test ${PIPESTATUS[0]} -eq 2
// RUN: tessel-opt %s --each-pass --pass-pipeline='builtin.module(cse)' 2>&1 | FileCheck %s --check-prefix=PIPELINE; test ${PIPESTATUS[0]} -eq 2

// CHECK: grid-verify-specs: ok
// CHECK: grid-to-loops: ok
// CHECK: block-to-linalg: ok
// CHECK: tessel-emulate-gpu: ok
// CHECK: tessel-fuse-elementwise: ok
// CHECK: tessel-lower-subgroup-reduce: ok
// CHECK: // -----
// CHECK: grid-verify-specs: failed
// CHECK: tessel-lower-subgroup-reduce: failed
// FLAGS: tessel-opt: error: --each-pass runs every Tessel pass itself: give no pass flags
// PIPELINE: error: the argument '--each-pass' cannot be used with '--pass-pipeline <PIPELINE>'

func.func @double_kernel(%x: memref<4xf32>, %o: memref<4xf32>) {
  %v = block.load %x : memref<4xf32> -> tensor<4xf32>
  %d = arith.addf %v, %v : tensor<4xf32>
  block.store %d, %o : tensor<4xf32>, memref<4xf32>
  return
}
func.func @double(%x: memref<8xf32>, %o: memref<8xf32>) {
  grid.call @double_kernel grid [2] ins(%x : memref<8xf32>) outs(%o : memref<8xf32>)
      in_specs [#grid.block<[4], (i) -> (i)>] out_specs [#grid.block<[4], (i) -> (i)>]
  return
}

// -----

func.func @broken(
