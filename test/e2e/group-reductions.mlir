// GROUP / GROUPTOP (`--group P`, `--group-top P`): block reductions as
// partials and a combine compute what the unsplit ones do: float ones
// within --check's tolerance of the interpreter (block.reduce's order is
// unspecified), integer ones bit for bit (byte-compared with the unsplit
// schedule through --dump). Row statistics over partial blocks (6 x 100:
// a split of 16 shrinks to 10, not whole vectors), a split wider than a
// vector, GROUPTOP with an odd split, and integer sums over rows and over
// the leading dimension (split, not vectorized).
// The last digits of reassociated float sums depend on the vector width:
// --check compares them with the interpreter within its tolerance.
// SNAPSHOT-FILTER: \s*-?[0-9]+\.[0-9]+(e[-+]?[0-9]+)?\s* =>  <float>
// RUN: rm -rf %t && mkdir -p %t
// RUN: tessel run %s --entry rows --arg 0=random:1 --check | FileCheck %s
// RUN: tessel run %s --entry rows --arg 0=random:1 --group 16 --check | FileCheck %s
// RUN: tessel run %s --entry rows --arg 0=random:1 --group 64 --check | FileCheck %s
// RUN: tessel run %s --entry rows --arg 0=random:1 --group-top 4 --check | FileCheck %s
// RUN: tessel run %s --entry rows --arg 0=random:1 --group-top 5 --num-threads 1 --check | FileCheck %s
// RUN: tessel run %s --entry sums --arg 0=random:2 --arg 1=random:3 --check | FileCheck %s
// RUN: tessel run %s --entry sums --arg 0=random:2 --arg 1=random:3 --dump %t/unsplit > /dev/null
// RUN: tessel run %s --entry sums --arg 0=random:2 --arg 1=random:3 --group 16 --dump %t/group > /dev/null
// RUN: tessel run %s --entry sums --arg 0=random:2 --arg 1=random:3 --group-top 8 --dump %t/top > /dev/null
// RUN: cmp %t/unsplit/arg2.npy %t/group/arg2.npy && cmp %t/unsplit/arg3.npy %t/group/arg3.npy
// RUN: cmp %t/unsplit/arg2.npy %t/top/arg2.npy && cmp %t/unsplit/arg3.npy %t/top/arg3.npy
// The split is real: 10 partials per row are a vector of 10 lanes.
// RUN: tessel compile %s --target cpu --emit mlir --group 16 -o %t/split.mlir && FileCheck %s --check-prefix=SPLIT < %t/split.mlir
// RUN: tessel run %s --entry sums --group 1 2>&1 | FileCheck %s --check-prefix=USAGE; test ${PIPESTATUS[0]} -eq 2
// RUN: tessel run %s --entry sums --group 4 --group-top 4 2>&1 | FileCheck %s --check-prefix=BOTH; test ${PIPESTATUS[0]} -eq 2
// CHECK: check: compiled code matches the interpreter
// SPLIT: llvm.fadd {{.*}} : vector<10xf32>
// USAGE: error: invalid value '1' for '--group <P>'
// BOTH: error: the argument '--group <P>' cannot be used with '--group-top <P>'

// Per row of a 6 x 100 block: sum, max and the variance about the mean.
func.func @rows_kernel(%x: memref<6x100xf32>, %s: memref<6xf32>, %m: memref<6xf32>, %v: memref<6xf32>) {
  %a = block.load %x : memref<6x100xf32> -> tensor<6x100xf32>
  %sum = block.reduce sum %a dims [1] : tensor<6x100xf32> -> tensor<6xf32>
  %max = block.reduce max %a dims [1] : tensor<6x100xf32> -> tensor<6xf32>
  %n = arith.constant dense<100.0> : tensor<6xf32>
  %mean = arith.divf %sum, %n : tensor<6xf32>
  %mb = block.broadcast %mean dims [1] : tensor<6xf32> -> tensor<6x100xf32>
  %d = arith.subf %a, %mb : tensor<6x100xf32>
  %sq = arith.mulf %d, %d : tensor<6x100xf32>
  %ss = block.reduce sum %sq dims [1] : tensor<6x100xf32> -> tensor<6xf32>
  %var = arith.divf %ss, %n : tensor<6xf32>
  block.store %sum, %s : tensor<6xf32>, memref<6xf32>
  block.store %max, %m : tensor<6xf32>, memref<6xf32>
  block.store %var, %v : tensor<6xf32>, memref<6xf32>
  return
}

func.func @rows(%x: memref<20x100xf32>, %s: memref<20xf32>, %m: memref<20xf32>, %v: memref<20xf32>) {
  grid.call @rows_kernel grid [4] ins(%x : memref<20x100xf32>) outs(%s, %m, %v : memref<20xf32>, memref<20xf32>, memref<20xf32>)
      in_specs [#grid.block<[6, 100], (i) -> (i, 0)>]
      out_specs [#grid.block<[6], (i) -> (i)>, #grid.block<[6], (i) -> (i)>, #grid.block<[6], (i) -> (i)>]
  return
}

// Integer sums: rows of a 4 x 512 block, and the leading dimension of a
// 64 x 8 block.
func.func @sums_kernel(%x: memref<4x512xi32>, %y: memref<64x8xi32>, %r: memref<4xi32>, %c: memref<8xi32>) {
  %a = block.load %x : memref<4x512xi32> -> tensor<4x512xi32>
  %rows = block.reduce sum %a dims [1] : tensor<4x512xi32> -> tensor<4xi32>
  block.store %rows, %r : tensor<4xi32>, memref<4xi32>
  %b = block.load %y : memref<64x8xi32> -> tensor<64x8xi32>
  %columns = block.reduce sum %b dims [0] : tensor<64x8xi32> -> tensor<8xi32>
  block.store %columns, %c : tensor<8xi32>, memref<8xi32>
  return
}

func.func @sums(%x: memref<8x512xi32>, %y: memref<64x16xi32>, %r: memref<8xi32>, %c: memref<16xi32>) {
  grid.call @sums_kernel grid [2] ins(%x, %y : memref<8x512xi32>, memref<64x16xi32>) outs(%r, %c : memref<8xi32>, memref<16xi32>)
      in_specs [#grid.block<[4, 512], (i) -> (i, 0)>, #grid.block<[64, 8], (i) -> (0, i)>]
      out_specs [#grid.block<[4], (i) -> (i)>, #grid.block<[8], (i) -> (i)>]
  return
}
