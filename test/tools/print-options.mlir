// --mlir-print-ir-after-all, --mlir-print-debuginfo, --mlir-print-op-generic,
// -o and reading stdin.
// RUN: tessel-opt %s --grid-verify-specs --cse --mlir-print-ir-after-all 2>&1 >/dev/null | FileCheck %s --check-prefix=AFTER
// RUN: tessel-opt %s --mlir-print-debuginfo | FileCheck %s --check-prefix=DEBUG
// RUN: tessel-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC
// RUN: tessel-opt %s --mlir-print-op-generic | tessel-opt - | FileCheck %s --check-prefix=BACK
// RUN: tessel-opt - < %s -o %t.out && FileCheck %s --check-prefix=BACK --input-file=%t.out

// AFTER: // -----// IR Dump After GridVerifySpecs (grid-verify-specs) {{.*}}//----- //
// AFTER: semantics [parallel]
// AFTER: // -----// IR Dump After CSE (cse) {{.*}}//----- //

// DEBUG: grid.program_id 0 loc(#[[LOC:.*]])
// DEBUG: #[[LOC]] = loc("{{.*}}print-options.mlir":[[@LINE+8]]:8)

// GENERIC: "grid.program_id"() <{axis = 0 : i64}> : () -> index
// GENERIC: "grid.call"(%{{.*}}) <{callee = @kernel, grid = array<i64: 4>, in_specs = [], operandSegmentSizes = array<i32: 0, 1, 0, 0>, out_specs = [#grid.block<[2], (d0) -> (d0)>]}>

// BACK: grid.call @kernel grid [4] ins() outs(%{{.*}} : memref<8xindex>) in_specs [] out_specs [#grid.block<[2], (d0) -> (d0)>]

func.func @kernel(%o: memref<2xindex>) {
  %p = grid.program_id 0
  %b = tensor.splat %p : tensor<2xindex>
  block.store %b, %o : tensor<2xindex>, memref<2xindex>
  return
}
func.func @launch(%o: memref<8xindex>) {
  grid.call @kernel grid [4] ins() outs(%o : memref<8xindex>)
      in_specs [] out_specs [#grid.block<[2], (i) -> (i)>]
  return
}
