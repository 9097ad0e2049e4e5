// Tool-level errors: malformed IR is a located diagnostic with exit 1; a
// missing file exits 1; unknown flags, bad pipelines and mixing a pipeline
// with pass flags are usage errors (exit 2). Nothing crashes.
// RUN: tessel-opt %s 2>&1 >/dev/null; test $? -eq 1
// RUN: not tessel-opt %s 2>&1 | FileCheck %s
// RUN: tessel-opt test/does-not-exist.mlir 2>&1 | FileCheck %s --check-prefix=MISSING; test ${PIPESTATUS[0]} -eq 1
// RUN: tessel-opt %s --no-such-flag 2>&1 | FileCheck %s --check-prefix=FLAG; test ${PIPESTATUS[0]} -eq 2
// RUN: tessel-opt %s --pass-pipeline='builtin.module(no-such-pass)' 2>&1 | FileCheck %s --check-prefix=PIPE; test ${PIPESTATUS[0]} -eq 2
// RUN: tessel-opt %s --pass-pipeline='builtin.module(cse)' --cse 2>&1 | FileCheck %s --check-prefix=MIX; test ${PIPESTATUS[0]} -eq 2
// RUN: printf '\xff\xfe' | tessel-opt 2>&1 | FileCheck %s --check-prefix=BINARY; test ${PIPESTATUS[1]} -eq 1

// CHECK: errors.mlir:[[@LINE+7]]:40: error: expected non-function type
// MISSING: tessel-opt: error: could not open input file 'test/does-not-exist.mlir'
// FLAG: error: unexpected argument '--no-such-flag' found
// PIPE: tessel-opt: error: invalid pass pipeline 'builtin.module(no-such-pass)'
// MIX: tessel-opt: error: use either --pass-pipeline or pass flags, not both
// BINARY: <stdin>:1:1: error: input is not valid UTF-8 text
func.func @f(%x: memref<4xf32>) {
  %v = block.load %x : memref<4xf32> -> , tensor<4xf32>
  return
}
