//===- Inlining.h - inlining Tessel ops -------------------------*- C++ -*-===//
#ifndef TESSEL_INLINING_H
#define TESSEL_INLINING_H

#include "mlir/Transforms/InliningUtils.h"

namespace tessel {
/// Kernels are specialized per call site and inlined into the loops that
/// run them: every op of the grid and block dialects may be inlined anywhere.
struct InlineEverything : public mlir::DialectInlinerInterface {
  using DialectInlinerInterface::DialectInlinerInterface;
  bool isLegalToInline(mlir::Operation *, mlir::Region *, bool,
                       mlir::IRMapping &) const final {
    return true;
  }
  bool isLegalToInline(mlir::Region *, mlir::Region *, bool,
                       mlir::IRMapping &) const final {
    return true;
  }
};
} // namespace tessel

#endif // TESSEL_INLINING_H
