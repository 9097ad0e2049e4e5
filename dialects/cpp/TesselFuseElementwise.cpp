//===- TesselFuseElementwise.cpp - element-wise fusion around contractions ===//
//
// `tessel-fuse-elementwise`: element-wise `linalg.generic`s fused into one
// another by upstream's element-wise fusion patterns, never into or out of
// a contraction (`tessel.contraction`).
//
// The CPU pipeline register-tiles contractions before it runs upstream's
// `linalg-fuse-elementwise-ops` over everything, because that pass would
// fold a contraction's producers (`q * scale`) into its body and hide it.
// Its consumers are then still a chain: `dot + bias` as one generic, the
// broadcast of the bias as another before it, `max(.., 0)` as a third
// after it. `tessel-tile` computes one element-wise consumer in the
// register tiles (contraction_epilogue.rs); the rest of the chain ran as
// separate passes over the block afterwards. Fused first, the chain is one
// generic and the whole of it runs on the accumulators in registers.
//
// The patterns run only on element-wise generics (all loops parallel,
// not contractions) and fuse a producer only into such a consumer when
// the producer has no other use, as upstream's pass does. The fused body
// computes the same operations on the same values, so results keep their
// bits. It is C++ because the C API cannot reach the patterns.
//
//===----------------------------------------------------------------------===//

#include "TesselCppPasses.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;

namespace {
/// block-to-linalg's mark on contractions (passes/src/block/block_to_linalg.rs).
constexpr llvm::StringLiteral kContraction = "tessel.contraction";

/// An element-wise generic (every loop parallel, not a contraction): what
/// the patterns may rewrite and fuse.
bool isFusable(Operation *op) {
  auto generic = dyn_cast_or_null<linalg::GenericOp>(op);
  return generic && !generic->hasAttr(kContraction) &&
         generic.getNumParallelLoops() == generic.getNumLoops();
}

struct TesselFuseElementwise
    : PassWrapper<TesselFuseElementwise, OperationPass<>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TesselFuseElementwise)

  StringRef getArgument() const final { return "tessel-fuse-elementwise"; }
  StringRef getDescription() const final {
    return "Fuse element-wise linalg generics into one another, never into "
           "or out of a contraction (so a contraction's element-wise "
           "consumers are one epilogue its register tiles compute)";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<linalg::LinalgDialect>();
  }

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    linalg::populateElementwiseOpsFusionPatterns(
        patterns, [](OpOperand *fused) {
          Operation *producer = fused->get().getDefiningOp();
          return isFusable(producer) && producer->hasOneUse() &&
                 isFusable(fused->getOwner());
        });
    FrozenRewritePatternSet frozen(std::move(patterns));
    // Only the element-wise generics (and the ops fusing them makes) are
    // rewritten: the patterns' constant and fill folding would rewrite a
    // contraction's body too.
    GreedyRewriteConfig config;
    config.setStrictness(GreedyRewriteStrictness::ExistingAndNewOps);
    // One application can leave a producer of a freshly fused op unfused
    // (a broadcast feeding `dot + b`, once `max` absorbed the add): run
    // rounds over the generics left until one changes nothing.
    bool changed = true;
    for (int round = 0; changed && round < 8; ++round) {
      SmallVector<Operation *> elementwise;
      getOperation()->walk([&](linalg::GenericOp op) {
        if (isFusable(op))
          elementwise.push_back(op);
      });
      // Not converging within the driver's iteration limit leaves valid
      // IR, only less fused; upstream's pass ignores it too.
      (void)applyOpPatternsGreedily(elementwise, frozen, config, &changed);
    }
  }
};
} // namespace

void tessel::registerFuseElementwisePass() {
  PassRegistration<TesselFuseElementwise>();
}
