// erf and erfc (exact GELU's function, `jax.nn.gelu(x, approximate=False)`)
// compile to the C library's erff/erfcf (tessel-libm-calls) and agree with
// the interpreter's f64 functions, the far tail included: erfc(9) is
// 4.1e-37 and erfc(10) a subnormal, which 1 - erf(x) would make 0. The
// harness reruns `tessel run` on the emulated GPU; the ROCm path compiles
// for every chip.
// RUN: tessel run %s --entry errors --arg 0=test/e2e/Inputs/error_function_points_f32_16.npy --check | FileCheck %s --check-prefix=CHECKED
// RUN: tessel run %s --entry errors --arg 0=test/e2e/Inputs/error_function_points_f32_16.npy --interpret | FileCheck %s
// RUN: tessel compile %s --target rocm --chip gfx90a --emit hsaco -o %t.gfx90a.hsaco
// RUN: tessel compile %s --target rocm --chip gfx942 --emit hsaco -o %t.gfx942.hsaco
// RUN: tessel compile %s --target rocm --chip gfx1100 --emit hsaco -o %t.gfx1100.hsaco

// The compiled digits are the C library's; --check bounds them.
// SNAPSHOT-FILTER: \s*-?[0-9]+\.[0-9]+(e[-+]?[0-9]+)?\s* =>  <float>

// CHECKED: check: compiled code matches the interpreter

// CHECK: arg1: memref<16xf32>
// CHECK-NEXT: [-1.         -0.9953223  -0.8427008  -0.5204999  -0.          0.
// CHECK-NEXT:   0.00112838  0.5204999   0.8427008   0.9953223   0.9999779   1.
// CHECK-NEXT:   1.          1.          1.          1.        ]
// CHECK: arg2: memref<16xf32>
// CHECK-NEXT: [2.0000000e+00 1.9953222e+00 1.8427008e+00 1.5204998e+00 1.0000000e+00
// CHECK-NEXT:  1.0000000e+00 9.9887162e-01 4.7950011e-01 1.5729921e-01 4.6777348e-03
// CHECK-NEXT:  2.2090497e-05 1.5417259e-08 2.1519737e-17 4.1370317e-37 1.4012985e-45
// CHECK-NEXT:  0.0000000e+00]
func.func @errors_kernel(%x: memref<16xf32>, %e: memref<16xf32>, %c: memref<16xf32>) {
  %a = block.load %x : memref<16xf32> -> tensor<16xf32>
  %erf = math.erf %a : tensor<16xf32>
  %erfc = math.erfc %a : tensor<16xf32>
  block.store %erf, %e : tensor<16xf32>, memref<16xf32>
  block.store %erfc, %c : tensor<16xf32>, memref<16xf32>
  return
}
func.func @errors(%x: memref<16xf32>, %e: memref<16xf32>, %c: memref<16xf32>) {
  grid.call @errors_kernel grid [1] ins(%x : memref<16xf32>) outs(%e, %c : memref<16xf32>, memref<16xf32>)
    in_specs [#grid.block<[16], (i) -> (i)>] out_specs [#grid.block<[16], (i) -> (i)>, #grid.block<[16], (i) -> (i)>]
  return
}
