//===- BlockDialect.h - the kernel-level `block` dialect --------*- C++ -*-===//
#ifndef TESSEL_BLOCKDIALECT_H
#define TESSEL_BLOCKDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "BlockDialect.h.inc"
#include "BlockEnums.h.inc"

namespace tessel {
/// `[a, b, ...]`: the bare integer lists of Tessel's assembly formats.
mlir::ParseResult parseIntegerList(mlir::AsmParser &parser,
                                   llvm::SmallVectorImpl<int64_t> &values);
void printIntegerList(mlir::AsmPrinter &printer, llvm::ArrayRef<int64_t> values);
} // namespace tessel

#define GET_OP_CLASSES
#include "BlockOps.h.inc"

#endif // TESSEL_BLOCKDIALECT_H
