//===- BlockDialect.td - the kernel-level `block` dialect ----*- tablegen -*-===//
//
// `block` is what a kernel body is written in: loads and stores between refs
// (memrefs of the block shape) and block values (tensors), plus the few
// block-level operations upstream dialects do not express directly.
//
//===----------------------------------------------------------------------===//

#ifndef TESSEL_BLOCK_DIALECT
#define TESSEL_BLOCK_DIALECT

include "mlir/IR/OpBase.td"
include "mlir/IR/EnumAttr.td"

def Block_Dialect : Dialect {
  let name = "block";
  let cppNamespace = "::tessel::block";
  let summary = "block-level operations of Pallas-style kernels";
  let dependentDialects = ["::mlir::tensor::TensorDialect"];
}

def Block_ReduceKind : I32EnumAttr<"ReduceKind", "reduction combiner", [
    I32EnumAttrCase<"sum", 0>,
    I32EnumAttrCase<"max", 1>,
    I32EnumAttrCase<"min", 2>,
    I32EnumAttrCase<"prod", 3>,
    I32EnumAttrCase<"umax", 4>,
    I32EnumAttrCase<"umin", 5>
  ]> {
  let cppNamespace = "::tessel::block";
}

def Block_AtomicKind : I32EnumAttr<"AtomicKind", "atomic read-modify-write", [
    I32EnumAttrCase<"add", 0>,
    I32EnumAttrCase<"max", 1>,
    I32EnumAttrCase<"min", 2>,
    I32EnumAttrCase<"xchg", 3>,
    I32EnumAttrCase<"and_", 4, "and">,
    I32EnumAttrCase<"or_", 5, "or">,
    I32EnumAttrCase<"xor_", 6, "xor">,
    I32EnumAttrCase<"umax", 7>,
    I32EnumAttrCase<"umin", 8>
  ]> {
  let cppNamespace = "::tessel::block";
}

#endif // TESSEL_BLOCK_DIALECT
