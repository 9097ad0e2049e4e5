// tessel tune: a BEAM search by measurement, cached on disk and used by
// later runs; the cache survives corruption and concurrent tuners.
// RUN: rm -rf %t.cache %t.shared
// RUN: env TESSEL_CACHE_DIR=%t.cache tessel tune %s --entry matmul --budget 3 --beam 2 | FileCheck %s --check-prefix=FIRST
// RUN: env TESSEL_CACHE_DIR=%t.cache tessel tune %s --entry matmul --budget 3 | FileCheck %s --check-prefix=CACHED
// RUN: env TESSEL_CACHE_DIR=%t.cache tessel run %s --entry matmul --arg 0=random:1 --arg 1=random:2 --check 2>&1 | FileCheck %s --check-prefix=USED
// RUN: env TESSEL_CACHE_DIR=%t.cache tessel run %s --entry matmul --no-cache --arg 0=random:1 --arg 1=random:2 --check 2>&1 | FileCheck %s --check-prefix=IGNORED
// RUN: env TESSEL_CACHE_DIR=%t.cache tessel run %s --entry matmul --register-tile 2x16 --arg 0=random:1 --arg 1=random:2 --check 2>&1 | FileCheck %s --check-prefix=IGNORED
// RUN: for entry in %t.cache/*.json; do echo '{"schedule": [' > $entry; done
// RUN: env TESSEL_CACHE_DIR=%t.cache tessel run %s --entry matmul --arg 0=random:1 --arg 1=random:2 --check 2>&1 | FileCheck %s --check-prefix=CORRUPT
// RUN: env TESSEL_CACHE_DIR=%t.cache tessel tune %s --entry matmul --budget 2 2>&1 | FileCheck %s --check-prefix=RETUNED
// RUN: env TESSEL_CACHE_DIR=%t.shared tessel tune %s --entry matmul --budget 2 > %t.a & env TESSEL_CACHE_DIR=%t.shared tessel tune %s --entry matmul --budget 2 > %t.b; wait; cat %t.a %t.b | FileCheck %s --check-prefix=CONCURRENT
// RUN: env TESSEL_CACHE_DIR=%t.shared tessel tune %s --entry matmul | FileCheck %s --check-prefix=CACHED
// RUN: not tessel tune %s --entry nothing 2>&1 | FileCheck %s --check-prefix=NO-ENTRY
// RUN: not tessel tune %s --entry matmul --target rocm --chip gfx942 2>&1 | FileCheck %s --check-prefix=NO-GPU
// RUN: not tessel tune %s --entry matmul --budget=-1 2>&1 | FileCheck %s --check-prefix=BAD-BUDGET

// FIRST: {"default_s": {{[0-9.e+-]+}}, "best_s": {{[0-9.e+-]+}}, "candidates": {{[1-9][0-9]*}}, "cached": false, "best": {"register_tile": [{{[0-9]+}}, {{[0-9]+}}], "num_stages": {{[1-4]}}, "k_chunk": {{[0-9]+}}, "k_unroll": {{[1-8]}}, "num_threads": {{[0-9]+}}, "vector_bits": {{128|256|512}}, "pad_tiles": {{true|false}}, "grid_order": "{{row-major|column-major}}", "group": 0, "group_top": false}}
// CACHED: "cached": true
// USED: tessel: note: using the tuned schedule from the cache: register tile
// USED: check: compiled code matches the interpreter
// IGNORED-NOT: tuned schedule
// IGNORED: check: compiled code matches the interpreter
// CORRUPT: tessel: warning: ignoring corrupt cache entry
// CORRUPT: check: compiled code matches the interpreter
// RETUNED: tessel: warning: ignoring corrupt cache entry
// RETUNED: "cached": false
// CONCURRENT-COUNT-2: "cached": false
// NO-ENTRY: error: no function @nothing
// NO-GPU: tessel: error: {{no AMD GPU available|this tessel was built without the .hip. feature}}
// BAD-BUDGET: error: --budget must be a non-negative number of seconds

func.func @kernel(%x: memref<32x64xf32>, %y: memref<64x32xf32>, %z: memref<32x32xf32>) {
  %a = block.load %x : memref<32x64xf32> -> tensor<32x64xf32>
  %b = block.load %y : memref<64x32xf32> -> tensor<64x32xf32>
  %c = block.dot %a, %b : tensor<32x64xf32>, tensor<64x32xf32> -> tensor<32x32xf32>
  block.store %c, %z : tensor<32x32xf32>, memref<32x32xf32>
  return
}

func.func @matmul(%x: memref<64x64xf32>, %y: memref<64x64xf32>, %z: memref<64x64xf32>) {
  grid.call @kernel grid [2, 2] ins(%x, %y : memref<64x64xf32>, memref<64x64xf32>) outs(%z : memref<64x64xf32>)
      in_specs [#grid.block<[32, 64], (i, j) -> (i, 0)>, #grid.block<[64, 32], (i, j) -> (0, j)>]
      out_specs [#grid.block<[32, 32], (i, j) -> (i, j)>]
  return
}
