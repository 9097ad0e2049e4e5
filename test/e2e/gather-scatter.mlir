// Gathers and scatters: block.load .. gather / block.store .. scatter
// along one dimension, whole refs and windows, masked, with positions
// outside the ref clamped (gathers) or dropped (scatters) as JAX does.
// Expected values are numpy's (`k[tables[i]]`, `x[1:3][:, clip(2 + idx)]`).
// On the CPU against the interpreter (--check); the harness reruns each
// `tessel run` on the emulated GPU; the ROCm path compiles for every chip.
// RUN: tessel run %s --entry pages --arg 0=test/e2e/Inputs/k_pages_8x4x2.npy --arg 1=test/e2e/Inputs/block_tables_2x3.npy --check | FileCheck %s --check-prefix=PAGES
// RUN: tessel run %s --entry paged --arg 0=test/e2e/Inputs/k_pages_8x4x2.npy --arg 1=test/e2e/Inputs/block_tables_2x3.npy --arg 2=test/e2e/Inputs/lengths_2.npy --check | FileCheck %s --check-prefix=PAGED
// RUN: tessel run %s --entry windows --check | FileCheck %s --check-prefix=WINDOWS
// RUN: tessel run %s --entry windows --interpret | FileCheck %s --check-prefix=WINDOWS
// RUN: tessel compile %s --target rocm --chip gfx90a --emit hsaco -o %t.gfx90a.hsaco
// RUN: tessel compile %s --target rocm --chip gfx942 --emit hsaco -o %t.gfx942.hsaco
// RUN: tessel compile %s --target rocm --chip gfx1100 --emit hsaco -o %t.gfx1100.hsaco

// Whole-ref gather of pages 5, 0, 7 of sequence 0's table row (flattened
// to 2x3 = 6 indices: pages 5 0 7 2 6 3), and a scatter of them doubled
// back to where they came from.
// PAGES:      arg2: memref<6x4x2xf32>
// PAGES-NEXT: {{\[\[\[}}13.  13.5]
// PAGES-NEXT:   [14.  14.5]
// PAGES-NEXT:   [15.  15.5]
// PAGES-NEXT:   [16.  16.5]]
// PAGES:      arg3: memref<8x4x2xf32>
// PAGES-NEXT: {{\[\[\[}}-14. -13.]
// PAGES:      check: compiled code matches the interpreter
func.func @pages_kernel(%k: memref<8x4x2xf32>, %tables: memref<2x3xi32>, %g: memref<6x4x2xf32>,
                        %back: memref<8x4x2xf32>) {
  %t2 = block.load %tables : memref<2x3xi32> -> tensor<2x3xi32>
  %t = tensor.collapse_shape %t2 [[0, 1]] : tensor<2x3xi32> into tensor<6xi32>
  %v = block.load %k gather %t dim 0 : memref<8x4x2xf32>, tensor<6xi32> -> tensor<6x4x2xf32>
  block.store %v, %g : tensor<6x4x2xf32>, memref<6x4x2xf32>
  %two = arith.constant dense<2.0> : tensor<6x4x2xf32>
  %d = arith.mulf %v, %two : tensor<6x4x2xf32>
  block.store %d, %back scatter %t dim 0 : tensor<6x4x2xf32>, memref<8x4x2xf32>, tensor<6xi32>
  return
}
func.func @pages(%k: memref<8x4x2xf32>, %tables: memref<2x3xi32>, %g: memref<6x4x2xf32>, %back: memref<8x4x2xf32>) {
  grid.call @pages_kernel grid [] ins(%k, %tables : memref<8x4x2xf32>, memref<2x3xi32>)
      outs(%g, %back : memref<6x4x2xf32>, memref<8x4x2xf32>)
      in_specs [#grid.block<full>, #grid.block<full>] out_specs [#grid.block<full>, #grid.block<full>]
  return
}

// Paged attention's access: one program per sequence gathers the pages its
// block-table row names, masked to the sequence's length in pages, and
// sums them per column.
// PAGED:      arg3: memref<2x2xf32>
// PAGED-NEXT: {{\[\[}} 36.  40.]
// PAGED-NEXT:  [110. 116.]]
// PAGED:      check: compiled code matches the interpreter
func.func @paged_kernel(%k: memref<8x4x2xf32>, %table: memref<1x3xi32>, %length: memref<1xi32>, %o: memref<1x2xf32>) {
  %row = block.load %table : memref<1x3xi32> -> tensor<1x3xi32>
  %t = tensor.collapse_shape %row [[0, 1]] : tensor<1x3xi32> into tensor<3xi32>
  %l1 = block.load %length : memref<1xi32> -> tensor<1xi32>
  %c0 = arith.constant 0 : index
  %l = tensor.extract %l1[%c0] : tensor<1xi32>
  %ls = tensor.splat %l : tensor<3x4x2xi32>
  %page = block.iota dim 0 : tensor<3x4x2xi32>
  %valid = arith.cmpi slt, %page, %ls : tensor<3x4x2xi32>
  %zero = arith.constant 0.0 : f32
  %v = block.load %k gather %t dim 0 mask %valid other %zero : memref<8x4x2xf32>, tensor<3xi32> -> tensor<3x4x2xf32>
  %s = block.reduce sum %v dims [0, 1] : tensor<3x4x2xf32> -> tensor<2xf32>
  %s1 = tensor.expand_shape %s [[0, 1]] output_shape [1, 2] : tensor<2xf32> into tensor<1x2xf32>
  block.store %s1, %o : tensor<1x2xf32>, memref<1x2xf32>
  return
}
func.func @paged(%k: memref<8x4x2xf32>, %tables: memref<2x3xi32>, %lengths: memref<2xi32>, %o: memref<2x2xf32>) {
  grid.call @paged_kernel grid [2] ins(%k, %tables, %lengths : memref<8x4x2xf32>, memref<2x3xi32>, memref<2xi32>)
      outs(%o : memref<2x2xf32>)
      in_specs [#grid.block<full>, #grid.block<[1, 3], (i) -> (i, 0)>, #grid.block<[1], (i) -> (i)>]
      out_specs [#grid.block<[1, 2], (i) -> (i, 0)>]
  return
}

// A gather along dimension 1 of a window at (1, 2) (column 2 + 6 = 8 is
// clamped to 7), and a masked scatter of it times 10 into a window at
// (2, 1), the middle index masked off.
// WINDOWS:      arg1: memref<2x3xi32>
// WINDOWS-NEXT: {{\[\[}}15 10 13]
// WINDOWS-NEXT:  [23 18 21]]
// WINDOWS-NEXT: arg2: memref<4x8xi32>
// WINDOWS-NEXT: {{\[\[}}  0   0   0   0   0   0   0   0]
// WINDOWS-NEXT:  [  0   0   0   0   0   0   0   0]
// WINDOWS-NEXT:  [  0   0   0   0 130   0   0 150]
// WINDOWS-NEXT:  [  0   0   0   0 210   0   0 230]]
func.func @windows_kernel(%x: memref<4x8xi32>, %w: memref<2x3xi32>, %s: memref<4x8xi32>) {
  %iota = block.iota dim 1 : tensor<4x8xi32>
  %rows = block.iota dim 0 : tensor<4x8xi32>
  %eight = arith.constant dense<8> : tensor<4x8xi32>
  %scaled = arith.muli %rows, %eight : tensor<4x8xi32>
  %values = arith.addi %scaled, %iota : tensor<4x8xi32>
  block.store %values, %x : tensor<4x8xi32>, memref<4x8xi32>
  %idx = arith.constant dense<[6, 0, 3]> : tensor<3xi32>
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %g = block.load %x[%c1, %c2] [2, 3] gather %idx dim 1 : memref<4x8xi32>, tensor<3xi32> -> tensor<2x3xi32>
  block.store %g, %w : tensor<2x3xi32>, memref<2x3xi32>
  %ten = arith.constant dense<10> : tensor<2x3xi32>
  %t = arith.muli %g, %ten : tensor<2x3xi32>
  %m = arith.constant dense<[[true, false, true], [true, false, true]]> : tensor<2x3xi1>
  block.store %t, %s[%c2, %c1] scatter %idx dim 1 mask %m : tensor<2x3xi32>, memref<4x8xi32>, tensor<3xi32>
  return
}
func.func @windows(%x: memref<4x8xi32>, %w: memref<2x3xi32>, %s: memref<4x8xi32>) {
  grid.call @windows_kernel grid [] ins() outs(%x, %w, %s : memref<4x8xi32>, memref<2x3xi32>, memref<4x8xi32>)
      in_specs [] out_specs [#grid.block<full>, #grid.block<full>, #grid.block<full>]
  return
}
