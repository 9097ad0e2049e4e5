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
// An upstream parser that throws on malformed input (MLIR 22's
// linalg.generic given iterator kinds as attributes) is a diagnostic too.
// RUN: printf 'func.func @g(%%a: tensor<4xf32>) -> tensor<4xf32> {\n%%r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = [#linalg.iterator_type<parallel>]} ins(%%a : tensor<4xf32>) outs(%%a : tensor<4xf32>) {\n^bb0(%%x: f32, %%y: f32):\nlinalg.yield %%x : f32\n} -> tensor<4xf32>\nreturn %%r : tensor<4xf32>\n}\n' > %t.generic.mlir
// RUN: tessel-opt %t.generic.mlir 2>&1 | FileCheck %s --check-prefix=THROWS; test ${PIPESTATUS[0]} -eq 1
// RUN: tessel run %t.generic.mlir --entry g 2>&1 | FileCheck %s --check-prefix=THROWS; test ${PIPESTATUS[0]} -eq 1

// CHECK: errors.mlir:[[@LINE+8]]:40: error: expected non-function type
// MISSING: tessel-opt: error: could not open input file 'test/does-not-exist.mlir'
// FLAG: error: unexpected argument '--no-such-flag' found
// PIPE: tessel-opt: error: invalid pass pipeline 'builtin.module(no-such-pass)'
// MIX: tessel-opt: error: use either --pass-pipeline or pass flags, not both
// BINARY: <stdin>:1:1: error: input is not valid UTF-8 text
// THROWS: generic.mlir:1:1: error: the input is malformed (the parser failed internally: {{.*}})
func.func @f(%x: memref<4xf32>) {
  %v = block.load %x : memref<4xf32> -> , tensor<4xf32>
  return
}
