// Grids of single programs (`grid [1]`, `grid [1, 1]`) are GPU launches
// like any other: a one-trip loop nest must not be folded away before
// grid-to-gpu, or the ROCm path has nothing to compile (and the emulated
// GPU silently runs host code). The harness reruns the `tessel run` lines
// on the emulated GPU.
// RUN: tessel run %s --entry one --arg 0=random:1 --check | FileCheck %s
// RUN: tessel run %s --entry one_by_one --arg 0=random:1 --check | FileCheck %s
// RUN: tessel compile %s --target rocm --chip gfx90a -o %t.gfx90a && llvm-readelf --notes %t.gfx90a | FileCheck %s --check-prefix=HSACO
// RUN: tessel compile %s --target rocm --chip gfx942 -o %t.gfx942 && llvm-readelf --notes %t.gfx942 | FileCheck %s --check-prefix=HSACO
// RUN: tessel compile %s --target rocm --chip gfx1100 -o %t.gfx1100 && llvm-readelf --notes %t.gfx1100 | FileCheck %s --check-prefix=HSACO
// RUN: tessel run %s --entry ordered_one --arg 0=random:1 --check | FileCheck %s
// CHECK: arg1: memref<8xf32>
// CHECK: check: compiled code matches the interpreter
// HSACO: amdhsa.kernels:
// HSACO-DAG: .name: one_kernel
// HSACO-DAG: .name: one_by_one_kernel
// HSACO-DAG: .name: ordered_one_kernel
// HSACO: amdhsa.target

func.func @double(%x: memref<8xf32>, %o: memref<8xf32>) {
  %a = block.load %x : memref<8xf32> -> tensor<8xf32>
  %b = arith.addf %a, %a : tensor<8xf32>
  block.store %b, %o : tensor<8xf32>, memref<8xf32>
  return
}

func.func @one(%x: memref<8xf32>, %o: memref<8xf32>) {
  grid.call @double grid [1] ins(%x : memref<8xf32>) outs(%o : memref<8xf32>)
      in_specs [#grid.block<[8], (i) -> (i)>] out_specs [#grid.block<[8], (i) -> (i)>]
  return
}

func.func @one_by_one(%x: memref<8xf32>, %o: memref<8xf32>) {
  grid.call @double grid [1, 1] ins(%x : memref<8xf32>) outs(%o : memref<8xf32>)
      in_specs [#grid.block<[8], (i, j) -> (i)>] out_specs [#grid.block<[8], (i, j) -> (j)>]
  return
}

// An arbitrary axis of one program (the output block does not depend on
// it): its one-trip ordered loop was folded away, so the ROCm path had no
// launch ("nothing to compile") and the emulated GPU ran host code. It now
// runs as a parallel axis (one program has nothing to order).
func.func @ordered_one(%x: memref<8xf32>, %o: memref<8xf32>) {
  grid.call @double grid [1] ins(%x : memref<8xf32>) outs(%o : memref<8xf32>)
      in_specs [#grid.block<[8], (i) -> (i)>] out_specs [#grid.block<[8], (i) -> (0)>]
  return
}
