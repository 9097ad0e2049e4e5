// Malformed BlockSpecs are diagnosed where they are written.
// RUN: tessel-opt %s --split-input-file --verify-diagnostics

func.func @k(%o: memref<2x3xi32>) { return }
func.func @f(%o: memref<8x6xi32>) {
  // expected-error @+2 {{block size must be positive, got 0}}
  grid.call @k grid [4, 2] ins() outs(%o : memref<8x6xi32>)
      in_specs [] out_specs [#grid.block<[0, 3], (i, j) -> (i, j)>]
  return
}

// -----

func.func @k(%o: memref<2x3xi32>) { return }
func.func @f(%o: memref<8x6xi32>) {
  // expected-error @+2 {{block size must be positive, got -2}}
  grid.call @k grid [4, 2] ins() outs(%o : memref<8x6xi32>)
      in_specs [] out_specs [#grid.block<[-2, 3], (i, j) -> (i, j)>]
  return
}

// -----

func.func @k(%o: memref<2x3xi32>) { return }
func.func @f(%o: memref<8x6xi32>) {
  // expected-error @+2 {{index map returns 1 indices but the block has rank 2}}
  grid.call @k grid [4, 2] ins() outs(%o : memref<8x6xi32>)
      in_specs [] out_specs [#grid.block<[2, 3], (i, j) -> (i)>]
  return
}

// -----

func.func @k(%o: memref<2x3xi32>) { return }
func.func @f(%o: memref<8x6xi32>) {
  // expected-error @+2 {{'pad' is only allowed on an unblocked BlockSpec}}
  grid.call @k grid [4, 2] ins() outs(%o : memref<8x6xi32>)
      in_specs [] out_specs [#grid.block<[2, 3], (i, j) -> (i, j), pad [[1, 0], [0, 0]]>]
  return
}

// -----

func.func @k(%o: memref<2x3xi32>) { return }
func.func @f(%o: memref<8x6xi32>) {
  // expected-error @+2 {{'pad' needs one [lo, hi] pair per dimension (2), got 1}}
  grid.call @k grid [4, 2] ins() outs(%o : memref<8x6xi32>)
      in_specs [] out_specs [#grid.block<[2, 3], (i, j) -> (2 * i, 3 * j), unblocked pad [[1, 0]]>]
  return
}

// -----

func.func @k(%o: memref<2x3xi32>) { return }
func.func @f(%o: memref<8x6xi32>) {
  // expected-error @+2 {{padding must be non-negative, got -1}}
  grid.call @k grid [4, 2] ins() outs(%o : memref<8x6xi32>)
      in_specs [] out_specs [#grid.block<[2, 3], (i, j) -> (2 * i, 3 * j), unblocked pad [[1, 0], [-1, 0]]>]
  return
}

// -----

func.func @k(%o: memref<2x3xi32>) { return }
func.func @f(%o: memref<8x6xi32>) {
  // expected-error @+2 {{expected a [lo, hi] pair}}
  grid.call @k grid [4, 2] ins() outs(%o : memref<8x6xi32>)
      in_specs [] out_specs [#grid.block<[2, 3], (i, j) -> (2 * i, 3 * j), unblocked pad [[1, 0, 3], [0, 0]]>]
  return
}

// -----

func.func @k(%o: memref<2x3xi32>) { return }
func.func @f(%o: memref<8x6xi32>) {
  // expected-error @+2 {{index map must not use symbols}}
  grid.call @k grid [4, 2] ins() outs(%o : memref<8x6xi32>)
      in_specs [] out_specs [#grid.block<[2, 3], (i, j)[s] -> (i, s)>]
  return
}

// -----

func.func @k(%o: memref<2x3xi32>) { return }
func.func @f(%o: memref<8x6xi32>) {
  // expected-error @+2 {{expected 'unblocked' or 'pad'}}
  grid.call @k grid [4, 2] ins() outs(%o : memref<8x6xi32>)
      in_specs [] out_specs [#grid.block<[2, 3], (i, j) -> (i, j), (i, j) -> (j, i)>]
  return
}

// -----

func.func @k(%o: memref<2x3xi32>) { return }
func.func @f(%o: memref<8x6xi32>) {
  // expected-error @+1 {{'grid.call' op attribute 'out_specs' failed to satisfy constraint: output BlockSpecs}}
  grid.call @k grid [4, 2] ins() outs(%o : memref<8x6xi32>)
      in_specs [] out_specs [[2, 3]]
  return
}

// -----

func.func @k(%o: memref<2x3xi32>) { return }
func.func @f(%o: memref<8x6xi32>) {
  // expected-error @+2 {{expected 'unblocked' or 'pad' (a BlockSpec takes one index map or index function)}}
  grid.call @k grid [4, 2] ins() outs(%o : memref<8x6xi32>)
      in_specs [] out_specs [#grid.block<[2, 3], (i, j) -> (i, j), @g>]
  return
}
