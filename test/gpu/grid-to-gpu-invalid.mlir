// RUN: tessel-opt %s --split-input-file --verify-diagnostics --grid-to-gpu

func.func @dynamic_buffer(%n: index) {
  // expected-error @+1 {{grid-to-gpu: a local buffer of dynamic shape (memref<?xf32>) cannot live in workgroup memory}}
  scf.forall (%i) in (2) {
    %local = memref.alloc(%n) : memref<?xf32>
  }
  return
}

// -----

func.func @block_work_in_while(%out: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %one = arith.constant 1.0 : f32
  %true = arith.constant true
  // expected-error @+1 {{grid-to-gpu: block work nested in 'scf.execute_region' cannot be shared among work-items}}
  scf.forall (%i) in (2) {
    scf.execute_region {
      scf.parallel (%a) = (%c0) to (%c4) step (%c1) {
        memref.store %one, %out[%a] : memref<4xf32>
        scf.reduce
      }
      scf.yield
    }
  }
  return
}

// -----

// expected-error @+1 {{grid-to-gpu: a workgroup needs 1 to 1024 work-items and non-negative memory}}
module attributes {tessel.num_warps = 64 : i64} {
  func.func @too_many_items() {
    return
  }
}
