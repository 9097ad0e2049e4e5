// --split-input-file processes chunks independently, keeps going after a
// failing chunk (exit 1), joins outputs with the marker, and reports
// diagnostics at their line in the whole file.
// RUN: not tessel-opt %s --split-input-file 2>%t.err | FileCheck %s
// RUN: FileCheck %s --check-prefix=ERR --input-file=%t.err

// CHECK: func.func @first
// CHECK: // -----
// CHECK: func.func @third
// ERR: split-input-file.mlir:[[@LINE+9]]:8: error: 'block.iota' op dimension 1 is out of range for rank 1
// ERR-NEXT: %i = block.iota dim 1 : tensor<4xi32>
// ERR-NEXT: ^

func.func @first() { return }

// -----

func.func @second() {
  %i = block.iota dim 1 : tensor<4xi32>
  return
}

// -----

func.func @third() { return }
