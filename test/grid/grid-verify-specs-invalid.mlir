// grid-verify-specs walks the grid: every program's block needs an element
// in bounds, maps must not divide by zero, and a parallel axis that revisits
// an output block is warned about.
// RUN: tessel-opt %s --split-input-file --verify-diagnostics --grid-verify-specs

func.func @k(%o: memref<2x3xi32>) { return }
func.func @f(%o: memref<8x6xi32>) {
  // expected-error @+1 {{Out-of-bounds block index [4, 0] for output #0 at grid point [4, 0]: the block starts at element 8 of dimension 0, outside the array of size 8; at least one element of each block must be in bounds}}
  grid.call @k grid [5, 2] ins() outs(%o : memref<8x6xi32>)
      in_specs [] out_specs [#grid.block<[2, 3], (i, j) -> (i, j)>]
  return
}

// -----

func.func @k(%x: memref<4xf32>, %o: memref<4xf32>) { return }
func.func @f(%x: memref<16xf32>, %o: memref<16xf32>) {
  // expected-error @+1 {{Out-of-bounds block index [-1] for input #0 at grid point [2]: the block starts at element -4 of dimension 0}}
  grid.call @k grid [4] ins(%x : memref<16xf32>) outs(%o : memref<16xf32>)
      in_specs [#grid.block<[4], (i) -> (1 - i)>]
      out_specs [#grid.block<[4], (i) -> (i)>]
  return
}

// -----

func.func @k(%o: memref<2x3xi32>) { return }
func.func @f(%o: memref<7x7xi32>) {
  // The padded array is 8x9: offsets up to 6 rows and 6 columns are fine, 9 is not.
  // expected-error @+1 {{for output #0 at grid point [0, 3]: the block starts at element 9 of dimension 1, outside the padded array of size 9}}
  grid.call @k grid [4, 4] ins() outs(%o : memref<7x7xi32>)
      in_specs [] out_specs [#grid.block<[2, 3], (i, j) -> (2 * i, 3 * j), unblocked pad [[1, 0], [2, 0]]>]
  return
}

// -----

func.func @k(%o: memref<2x3xi32>) { return }
func.func @f(%o: memref<8x6xi32>) {
  // expected-warning @+1 {{grid axis 2 is parallel but the block of output #0 does not depend on it: its programs run in order, as on one TPU core (in parallel they would race on the block)}}
  grid.call @k grid [4, 2, 10] ins() outs(%o : memref<8x6xi32>)
      in_specs [] out_specs [#grid.block<[2, 3], (i, j, k) -> (i, j)>] semantics [parallel, parallel, parallel]
  return
}

// -----

func.func @k(%o: memref<4xf32>) { return }
func.func @f(%o: memref<1048576xf32>) {
  // Too many programs to enumerate: linear maps are checked at the corners.
  // expected-error @+1 {{for output #0 at grid point [524287]: the block starts at element 2097148 of dimension 0}}
  grid.call @k grid [524288] ins() outs(%o : memref<1048576xf32>)
      in_specs [] out_specs [#grid.block<[4], (i) -> (i)>]
  return
}

// -----

// Buffers the compiled code would allocate beyond a process's address
// space (128 TiB) could never be allocated: scratch, and local block copies.
func.func @k(%x: memref<8xf32>, %o: memref<8xf32>, %s: memref<1000000000x1000000xf32>) { return }
func.func @f(%x: memref<8xf32>, %o: memref<8xf32>) {
  // expected-error @+1 {{scratch #0 (memref<1000000000x1000000xf32>) is too large to allocate}}
  grid.call @k grid [1] ins(%x : memref<8xf32>) outs(%o : memref<8xf32>) scratch(memref<1000000000x1000000xf32>)
      in_specs [#grid.block<[8], (i) -> (i)>] out_specs [#grid.block<[8], (i) -> (i)>]
  return
}

// -----

func.func @k(%x: memref<100000000000x100000000xf32>, %o: memref<8xf32>) { return }
func.func @f(%x: memref<100000000000x100000000xf32>, %o: memref<8xf32>) {
  // expected-error @+1 {{the block of input #0 is too large to allocate}}
  grid.call @k grid [1] ins(%x : memref<100000000000x100000000xf32>) outs(%o : memref<8xf32>)
      in_specs [#grid.block<[100000000000, 100000000], (i) -> (0, 0)>] out_specs [#grid.block<[8], (i) -> (i)>]
  return
}

// -----

// A kernel may not write its inputs (compiled code would write the
// caller's array, the interpreter a copy).
func.func @writes_input_kernel(%x: memref<4xf32>, %o: memref<4xf32>) {
  %v = block.load %x : memref<4xf32> -> tensor<4xf32>
  // expected-error @+1 {{the kernel @writes_input_kernel writes input #0 of a grid.call: inputs are read-only}}
  block.atomic_rmw xchg %v, %x : tensor<4xf32>, memref<4xf32>
  block.store %v, %o : tensor<4xf32>, memref<4xf32>
  return
}
func.func @writes_input(%x: memref<8xf32>, %o: memref<8xf32>) {
  grid.call @writes_input_kernel grid [2] ins(%x : memref<8xf32>) outs(%o : memref<8xf32>)
      in_specs [#grid.block<[4], (i) -> (i)>] out_specs [#grid.block<[4], (i) -> (i)>]
  return
}

// -----

// Outputs updated only atomically may be shared by parallel programs (no
// warning for the counter); a store to a shared block still races.
func.func @counts_kernel(%x: memref<4xi32>, %count: memref<1xi32>, %last: memref<4xi32>) {
  %v = block.load %x : memref<4xi32> -> tensor<4xi32>
  %s = block.reduce sum %v dims [0] : tensor<4xi32> -> tensor<i32>
  %s1 = tensor.expand_shape %s [] output_shape [1] : tensor<i32> into tensor<1xi32>
  block.atomic_rmw add %s1, %count : tensor<1xi32>, memref<1xi32>
  block.store %v, %last : tensor<4xi32>, memref<4xi32>
  return
}
func.func @counts(%x: memref<8xi32>, %count: memref<1xi32>, %last: memref<4xi32>) {
  // expected-warning @+1 {{grid axis 0 is parallel but the block of output #1 does not depend on it}}
  grid.call @counts_kernel grid [2] ins(%x : memref<8xi32>) outs(%count, %last : memref<1xi32>, memref<4xi32>)
      in_specs [#grid.block<[4], (i) -> (i)>] out_specs [#grid.block<full>, #grid.block<full>] semantics [parallel]
  return
}

// -----

// Scalar arrays are read-only too.
func.func @writes_scalar_kernel(%t: memref<4xi32>, %o: memref<4xi32>) {
  %v = block.load %t : memref<4xi32> -> tensor<4xi32>
  // expected-error @+1 {{the kernel @writes_scalar_kernel writes scalar #0 of a grid.call: inputs are read-only}}
  block.store %v, %t : tensor<4xi32>, memref<4xi32>
  block.store %v, %o : tensor<4xi32>, memref<4xi32>
  return
}
func.func @writes_scalar(%t: memref<4xi32>, %o: memref<8xi32>) {
  grid.call @writes_scalar_kernel grid [2] scalars(%t : memref<4xi32>) ins() outs(%o : memref<8xi32>)
      in_specs [] out_specs [#grid.block<[4], (i) -> (i)>]
  return
}
