// Every misuse of grid.call is a located diagnostic.
// RUN: tessel-opt %s --split-input-file --verify-diagnostics

func.func @f(%o: memref<8x6xi32>) {
  // expected-error @+1 {{'grid.call' op unknown kernel @missing}}
  grid.call @missing grid [4, 2] ins() outs(%o : memref<8x6xi32>)
      in_specs [] out_specs [#grid.block<[2, 3], (i, j) -> (i, j)>]
  return
}

// -----

memref.global @not_a_kernel : memref<2x3xi32>
func.func @f(%o: memref<8x6xi32>) {
  // expected-error @+1 {{@not_a_kernel does not name a func.func kernel}}
  grid.call @not_a_kernel grid [4, 2] ins() outs(%o : memref<8x6xi32>)
      in_specs [] out_specs [#grid.block<[2, 3], (i, j) -> (i, j)>]
  return
}

// -----

func.func @k(%o: memref<2x3xi32>) { return }
func.func @f(%o: memref<8x6xi32>) {
  // expected-error @+1 {{index map of output #0 takes 3 grid indices but the grid has rank 2}}
  grid.call @k grid [4, 2] ins() outs(%o : memref<8x6xi32>)
      in_specs [] out_specs [#grid.block<[2, 3], (i, j, k) -> (i, j)>]
  return
}

// -----

func.func @k(%o: memref<2x3xi32>) { return }
func.func @f(%o: memref<8x6xi32>) {
  // expected-error @+1 {{BlockSpec of output #0 has rank 3 but the array has rank 2}}
  grid.call @k grid [4, 2] ins() outs(%o : memref<8x6xi32>)
      in_specs [] out_specs [#grid.block<[2, 3, 1], (i, j) -> (i, j, 0)>]
  return
}

// -----

func.func @k(%o: memref<2x3xi32>) { return }
func.func @f(%o: memref<8x6xi32>) {
  // expected-error @+1 {{expected 1 out_specs (one per output), got 0}}
  grid.call @k grid [4, 2] ins() outs(%o : memref<8x6xi32>)
      in_specs [] out_specs []
  return
}

// -----

func.func @k(%x: memref<2x3xi32>, %o: memref<2x3xi32>) { return }
func.func @f(%x: memref<8x6xi32>, %o: memref<8x6xi32>) {
  // expected-error @+1 {{expected 1 in_specs (one per input), got 2}}
  grid.call @k grid [4, 2] ins(%x : memref<8x6xi32>) outs(%o : memref<8x6xi32>)
      in_specs [#grid.block<[2, 3], (i, j) -> (i, j)>, #grid.block<[2, 3], (i, j) -> (i, j)>]
      out_specs [#grid.block<[2, 3], (i, j) -> (i, j)>]
  return
}

// -----

func.func @k(%o: memref<2x3xi32>) { return }
func.func @f(%o: memref<8x6xi32>) {
  // expected-error @+1 {{kernel @k takes 1 refs but the call passes 2 (0 inputs, 1 outputs, 1 scratch)}}
  grid.call @k grid [4, 2] ins() outs(%o : memref<8x6xi32>) scratch(memref<4xf32>)
      in_specs [] out_specs [#grid.block<[2, 3], (i, j) -> (i, j)>]
  return
}

// -----

func.func @k(%o: memref<3x2xi32>) { return }
func.func @f(%o: memref<8x6xi32>) {
  // expected-error @+1 {{kernel ref #0 has type 'memref<3x2xi32>' but output #0 gives 'memref<2x3xi32>'}}
  grid.call @k grid [4, 2] ins() outs(%o : memref<8x6xi32>)
      in_specs [] out_specs [#grid.block<[2, 3], (i, j) -> (i, j)>]
  return
}

// -----

func.func @k(%o: memref<2x3xf32>) { return }
func.func @f(%o: memref<8x6xi32>) {
  // expected-error @+1 {{kernel ref #0 has type 'memref<2x3xf32>' but output #0 gives 'memref<2x3xi32>'}}
  grid.call @k grid [4, 2] ins() outs(%o : memref<8x6xi32>)
      in_specs [] out_specs [#grid.block<[2, 3], (i, j) -> (i, j)>]
  return
}

// -----

// expected-note @+1 {{kernel refs come in Pallas order: scalars, inputs, outputs, scratch}}
func.func @k(%o: memref<4x4xf32>, %x: memref<2x2xf32>) { return }
func.func @f(%x: memref<8x8xf32>, %o: memref<8x8xf32>) {
  // expected-error @+1 {{kernel ref #0 has type 'memref<4x4xf32>' but input #0 gives 'memref<2x2xf32>'}}
  grid.call @k grid [2] ins(%x : memref<8x8xf32>) outs(%o : memref<8x8xf32>)
      in_specs [#grid.block<[2, 2], (i) -> (i, i)>]
      out_specs [#grid.block<[4, 4], (i) -> (i, i)>]
  return
}

// -----

func.func @k(%o: memref<2xi32>) { return }
func.func @f(%o: memref<3x4xi32>) {
  // A squeezed dimension is removed from the kernel's ref.
  // expected-error @+1 {{kernel ref #0 has type 'memref<2xi32>' but output #0 gives 'memref<1x2xi32>'}}
  grid.call @k grid [3, 2] ins() outs(%o : memref<3x4xi32>)
      in_specs [] out_specs [#grid.block<[1, 2], (i, j) -> (i, j)>]
  return
}

// -----

func.func @k(%o: memref<2x3xi32>) -> i32 {
  %c = arith.constant 0 : i32
  return %c : i32
}
func.func @f(%o: memref<8x6xi32>) {
  // expected-error @+1 {{kernel @k must return nothing: outputs are written through its refs}}
  grid.call @k grid [4, 2] ins() outs(%o : memref<8x6xi32>)
      in_specs [] out_specs [#grid.block<[2, 3], (i, j) -> (i, j)>]
  return
}

// -----

func.func @k(%o: memref<2x3xi32>) {
  // expected-error @+1 {{'grid.program_id' op axis 2 is out of range for the rank-2 grid}}
  %p = grid.program_id 2
  return
}
func.func @f(%o: memref<8x6xi32>) {
  // expected-note @+1 {{kernel called here}}
  grid.call @k grid [4, 2] ins() outs(%o : memref<8x6xi32>)
      in_specs [] out_specs [#grid.block<[2, 3], (i, j) -> (i, j)>]
  return
}

// -----

func.func @k(%o: memref<2x3xi32>) {
  // expected-error @+1 {{'grid.num_programs' op axis 0 is out of range for the rank-0 grid}}
  %n = grid.num_programs 0
  return
}
func.func @f(%o: memref<2x3xi32>) {
  // expected-note @+1 {{kernel called here}}
  grid.call @k grid [] ins() outs(%o : memref<2x3xi32>)
      in_specs [] out_specs [#grid.block<[2, 3]>]
  return
}

// -----

func.func @k(%o: memref<2x3xi32>) { return }
func.func @f(%o: memref<8x6xi32>) {
  // expected-error @+1 {{expected 2 semantics entries (one per grid axis), got 1}}
  grid.call @k grid [4, 2] ins() outs(%o : memref<8x6xi32>)
      in_specs [] out_specs [#grid.block<[2, 3], (i, j) -> (i, j)>] semantics [parallel]
  return
}

// -----

func.func @k(%o: memref<2x3xi32>) { return }
func.func @f(%o: memref<8x6xi32>) {
  // expected-error @+2 {{expected 'parallel' or 'arbitrary'}}
  grid.call @k grid [4, 2] ins() outs(%o : memref<8x6xi32>)
      in_specs [] out_specs [#grid.block<[2, 3], (i, j) -> (i, j)>] semantics [parallel, sequential]
  return
}

// -----

func.func @k(%o: memref<2x3xi32>) { return }
func.func @f(%o: memref<8x6xi32>) {
  // expected-error @+1 {{grid sizes must be non-negative, got -4}}
  grid.call @k grid [-4, 2] ins() outs(%o : memref<8x6xi32>)
      in_specs [] out_specs [#grid.block<[2, 3], (i, j) -> (i, j)>]
  return
}

// -----

func.func @k(%o: memref<2x3xi32>) { return }
func.func @f(%o: memref<?x6xi32>) {
  // expected-error @+1 {{output #0 must have a static shape, got 'memref<?x6xi32>'}}
  grid.call @k grid [4, 2] ins() outs(%o : memref<?x6xi32>)
      in_specs [] out_specs [#grid.block<[2, 3], (i, j) -> (i, j)>]
  return
}

// -----

func.func @k(%o: memref<2x3xi32>, %s: memref<?xf32>) { return }
func.func @f(%o: memref<8x6xi32>) {
  // expected-error @+1 {{scratch buffers must be statically shaped memrefs, got 'memref<?xf32>'}}
  grid.call @k grid [4, 2] ins() outs(%o : memref<8x6xi32>) scratch(memref<?xf32>)
      in_specs [] out_specs [#grid.block<[2, 3], (i, j) -> (i, j)>]
  return
}

// -----

func.func @k(%o: memref<4x3xi32>) { return }
func.func @f(%o: memref<3x6xi32>) {
  // expected-error @+1 {{unblocked block of output #0 is larger than the array in dimension 0 (4 > 3)}}
  grid.call @k grid [2] ins() outs(%o : memref<3x6xi32>)
      in_specs [] out_specs [#grid.block<[4, 3], (i) -> (0, i * 3), unblocked>]
  return
}

// -----

func.func @k(%o: memref<6x3xi32>) { return }
func.func @f(%o: memref<3x6xi32>) {
  // expected-error @+1 {{unblocked block of output #0 is larger than the padded array in dimension 0 (6 > 5)}}
  grid.call @k grid [2] ins() outs(%o : memref<3x6xi32>)
      in_specs [] out_specs [#grid.block<[6, 3], (i) -> (0, i * 3), unblocked pad [[1, 1], [0, 0]]>]
  return
}

// -----

func.func @f(%o: memref<8x6xi32>) {
  // expected-error @+2 {{expected ',' or ']'}}
  grid.call @k grid [4, 2] ins() outs(%o : memref<8x6xi32>)
      in_specs [] out_specs [#grid.block<[2, 3], (i, j) -> (i, j)>
  return
}

// -----

// An index function takes the program ids, then the scalar arrays, and
// returns one block index per dimension.
func.func @k(%t: memref<4xi32>, %o: memref<2x3xi32>) { return }
func.func @rows(%i: index, %j: index) -> (index, index) { return %i, %j : index, index }
func.func @f(%t: memref<4xi32>, %o: memref<8x6xi32>) {
  // expected-error @+1 {{the index function @rows of output #0 has type '(index, index) -> (index, index)' but must be '(index, index, memref<4xi32>) -> (index, index)'}}
  grid.call @k grid [4, 2] scalars(%t : memref<4xi32>) ins() outs(%o : memref<8x6xi32>)
      in_specs [] out_specs [#grid.block<[2, 3], @rows>]
  return
}

// -----

func.func @k(%o: memref<2x3xi32>) { return }
func.func @f(%o: memref<8x6xi32>) {
  // expected-error @+1 {{the index function @nowhere of output #0 does not name a func.func}}
  grid.call @k grid [4, 2] ins() outs(%o : memref<8x6xi32>)
      in_specs [] out_specs [#grid.block<[2, 3], @nowhere>]
  return
}

// -----

// The kernel gets the scalar arrays first.
// expected-note @+1 {{kernel refs come in Pallas order: scalars, inputs, outputs, scratch}}
func.func @k(%o: memref<2x3xi32>, %t: memref<4xi32>) { return }
func.func @f(%t: memref<4xi32>, %o: memref<8x6xi32>) {
  // expected-error @+1 {{'grid.call' op kernel ref #0 has type 'memref<2x3xi32>' but scalar #0 gives 'memref<4xi32>'}}
  grid.call @k grid [4, 2] scalars(%t : memref<4xi32>) ins() outs(%o : memref<8x6xi32>)
      in_specs [] out_specs [#grid.block<[2, 3], (i, j) -> (i, j)>]
  return
}
