//===- GridDialect.h - the launch-level `grid` dialect ----------*- C++ -*-===//
#ifndef TESSEL_GRIDDIALECT_H
#define TESSEL_GRIDDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "GridDialect.h.inc"
#include "GridEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "GridAttrs.h.inc"

#define GET_OP_CLASSES
#include "GridOps.h.inc"

#endif // TESSEL_GRIDDIALECT_H
