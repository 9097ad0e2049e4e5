// Float max/min reductions (block.reduce max/min: arith.maximumf/minimumf)
// on the values where the semantics show: NaN wins, -0 is below +0,
// infinities and denormals are ordered. On the CPU they are computed on
// integer keys (tessel-minmax-as-integers); against the interpreter and,
// rerun by the harness, on the emulated GPU.
// RUN: tessel run %s --entry specials --check | FileCheck %s --check-prefix=SPECIALS
// RUN: tessel run %s --entry specials64 --check | FileCheck %s --check-prefix=SPECIALS64

// Row maxima and minima of
//   [  1   nan    3    -2   ]
//   [ -0    0    -0    -0   ]
//   [-inf   -3  -inf   -5   ]
//   [ -0   -0    -0    -0   ]
//   [  5   inf  1e-45 -1e-45]
// maximumf/minimumf: NaN wins, -0 is below +0, denormals are ordered.
// SPECIALS:      arg0: memref<5xf32>
// SPECIALS-NEXT: [nan  0. -3. -0. inf]
// SPECIALS-NEXT: arg1: memref<5xf32>
// SPECIALS-NEXT: [    nan -0.e+00    -inf -0.e+00 -1.e-45]
// SPECIALS: check: compiled code matches the interpreter
func.func @specials_kernel(%row_max: memref<5xf32>, %row_min: memref<5xf32>) {
  %x = arith.constant dense<[[1.0, 0x7FC00000, 3.0, -2.0], [-0.0, 0.0, -0.0, -0.0], [0xFF800000, -3.0, 0xFF800000, -5.0],
                             [-0.0, -0.0, -0.0, -0.0], [5.0, 0x7F800000, 1.0e-45, -1.0e-45]]> : tensor<5x4xf32>
  %max = block.reduce max %x dims [1] : tensor<5x4xf32> -> tensor<5xf32>
  %min = block.reduce min %x dims [1] : tensor<5x4xf32> -> tensor<5xf32>
  block.store %max, %row_max : tensor<5xf32>, memref<5xf32>
  block.store %min, %row_min : tensor<5xf32>, memref<5xf32>
  return
}

func.func @specials(%row_max: memref<5xf32>, %row_min: memref<5xf32>) {
  grid.call @specials_kernel grid [] ins() outs(%row_max, %row_min : memref<5xf32>, memref<5xf32>)
      in_specs [] out_specs [#grid.block<full>, #grid.block<full>]
  return
}

// The same in f64, as column extremes of the transposed array.
// SPECIALS64:      arg0: memref<5xf64>
// SPECIALS64-NEXT: [nan  0. -3. -0. inf]
// SPECIALS64-NEXT: arg1: memref<5xf64>
// SPECIALS64-NEXT: [     nan -0.e+000     -inf -0.e+000 -5.e-324]
// SPECIALS64: check: compiled code matches the interpreter
func.func @specials64_kernel(%column_max: memref<5xf64>, %column_min: memref<5xf64>) {
  %x = arith.constant dense<[[1.0, -0.0, 0xFFF0000000000000, -0.0, 5.0], [0x7FF8000000000000, 0.0, -3.0, -0.0, 0x7FF0000000000000],
                             [3.0, -0.0, 0xFFF0000000000000, -0.0, 4.9406564584124654e-324],
                             [-2.0, -0.0, -5.0, -0.0, -4.9406564584124654e-324]]> : tensor<4x5xf64>
  %max = block.reduce max %x dims [0] : tensor<4x5xf64> -> tensor<5xf64>
  %min = block.reduce min %x dims [0] : tensor<4x5xf64> -> tensor<5xf64>
  block.store %max, %column_max : tensor<5xf64>, memref<5xf64>
  block.store %min, %column_min : tensor<5xf64>, memref<5xf64>
  return
}

func.func @specials64(%column_max: memref<5xf64>, %column_min: memref<5xf64>) {
  grid.call @specials64_kernel grid [] ins() outs(%column_max, %column_min : memref<5xf64>, memref<5xf64>)
      in_specs [] out_specs [#grid.block<full>, #grid.block<full>]
  return
}
