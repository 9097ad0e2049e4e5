// RUN: tessel-opt %s --split-input-file --tessel-gpu-vectorize --canonicalize | FileCheck %s

// An element-wise op with contiguous rows: one vector<4xf32> per
// iteration of an scf.parallel over (rows, vectors per row), the tile's
// leading unit dimension dropped (one-dimensional vectors, which every
// LLVM conversion lowers).
// CHECK-LABEL: func.func @elementwise
// CHECK: scf.parallel (%[[I:.*]], %[[J:.*]]) = (%{{.*}}, %{{.*}}) to (%c8, %c16) step (%c1, %c1) {
// CHECK: %[[X:.*]] = vector.transfer_read {{.*}} : memref<1x4xf32, strided<[64, 1], offset: ?>>, vector<4xf32>
// CHECK: %[[Y:.*]] = arith.mulf %[[X]], %[[X]] : vector<4xf32>
// CHECK: vector.transfer_write %[[Y]]
#id = affine_map<(i, j) -> (i, j)>
func.func @elementwise(%x: memref<8x64xf32>, %o: memref<8x64xf32>) {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<8x64xf32>) outs(%o : memref<8x64xf32>) {
  ^bb0(%a: f32, %b: f32):
    %s = arith.mulf %a, %a : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// bf16 moves 8 per vector; a transpose, a dynamic row stride and a
// reduction keep scalar code.
// CHECK-LABEL: func.func @kept
// CHECK: vector.transfer_read {{.*}} vector<8xbf16>
// CHECK: vector.transfer_write {{.*}} vector<8xbf16>
// CHECK-NOT: vector<
#id = affine_map<(i, j) -> (i, j)>
#t = affine_map<(i, j) -> (j, i)>
#row = affine_map<(i, j) -> (i)>
func.func @kept(%x: memref<8x64xbf16>, %o: memref<8x64xbf16>, %s: memref<64x64xf32>, %d: memref<64x64xf32, strided<[?, ?]>>, %r: memref<64xf32>) {
  linalg.copy ins(%x : memref<8x64xbf16>) outs(%o : memref<8x64xbf16>)
  linalg.generic {indexing_maps = [#t, #id], iterator_types = ["parallel", "parallel"]}
      ins(%s : memref<64x64xf32>) outs(%s : memref<64x64xf32>) {
  ^bb0(%a: f32, %b: f32):
    linalg.yield %a : f32
  }
  linalg.copy ins(%d : memref<64x64xf32, strided<[?, ?]>>) outs(%s : memref<64x64xf32>)
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%s : memref<64x64xf32>) outs(%r : memref<64xf32>) {
  ^bb0(%a: f32, %b: f32):
    %t = arith.addf %a, %b : f32
    linalg.yield %t : f32
  }
  return
}

// -----

// A buffer of i1 (a mask) holds a byte per element, which LLVM's vectors
// of i1 would read bit-packed: the op keeps scalar accesses.
// CHECK-LABEL: func.func @mask_operand
// CHECK-NOT: vector<
// CHECK: return
#id = affine_map<(i, j) -> (i, j)>
func.func @mask_operand(%m: memref<8x64xi1>, %x: memref<8x64xf32>, %o: memref<8x64xf32>) {
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%m, %x : memref<8x64xi1>, memref<8x64xf32>) outs(%o : memref<8x64xf32>) {
  ^bb0(%c: i1, %a: f32, %b: f32):
    %s = arith.select %c, %a, %b : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Integer absolute values of a 2-D block: math.absi on vector<4xi32>
// (on vector<1x4xi32> the LLVM conversion left it unconverted, and the
// GPU paths failed to compile); end to end in the differential suite
// (sibling_reductions' one-sign integer blocks).
// CHECK-LABEL: func.func @absolute
// CHECK: math.absi %{{.*}} : vector<4xi32>
// CHECK-NOT: vector<1x
#id = affine_map<(i, j) -> (i, j)>
func.func @absolute(%x: memref<8x64xi32>, %o: memref<8x64xi32>) {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<8x64xi32>) outs(%o : memref<8x64xi32>) {
  ^bb0(%a: i32, %b: i32):
    %s = math.absi %a : i32
    linalg.yield %s : i32
  }
  return
}

// -----

// A program's own buffer with at most one element per work-item (256 at
// the default 4 waves of 64) keeps scalar work: every item runs one
// iteration either way, and item t writes element t as the block work
// accumulating into it reads it (a row reduction's partials), which lets
// grid-to-gpu keep it in the items' registers. A larger local buffer, or
// an argument, is vectorized.
// CHECK-LABEL: func.func @small_local_fill
// CHECK: %[[PARTIALS:.*]] = memref.alloc() : memref<8x32xf32>
// CHECK: %[[LARGER:.*]] = memref.alloc() : memref<8x64xf32>
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[PARTIALS]] : memref<8x32xf32>)
// CHECK: vector.transfer_write {{.*}} : vector<4xf32>, memref<1x4xf32, strided<[64, 1], offset: ?>>
// CHECK: vector.transfer_write {{.*}} : vector<4xf32>, memref<1x4xf32, strided<[32, 1], offset: ?>>
func.func @small_local_fill(%o: memref<8x32xf32>) {
  %zero = arith.constant 0.0 : f32
  %partials = memref.alloc() : memref<8x32xf32>
  %larger = memref.alloc() : memref<8x64xf32>
  linalg.fill ins(%zero : f32) outs(%partials : memref<8x32xf32>)
  linalg.fill ins(%zero : f32) outs(%larger : memref<8x64xf32>)
  linalg.fill ins(%zero : f32) outs(%o : memref<8x32xf32>)
  return
}
