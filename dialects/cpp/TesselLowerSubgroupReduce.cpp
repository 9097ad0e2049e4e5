//===- TesselLowerSubgroupReduce.cpp - cross-lane reductions on AMD GPUs --===//
//
// `tessel-lower-subgroup-reduce{chipset= subgroup-size=}`: every
// `gpu.subgroup_reduce` of a `gpu.module` becomes AMD cross-lane code
// before `convert-gpu-to-rocdl` (which has no lowering for it): upstream's
// DPP patterns (`amdgpu.dpp` row shifts and broadcasts, `permlanex16` and
// `readlane` on RDNA), the butterfly of `gpu.shuffle`s (ds_bpermute)
// where DPP has no form for the cluster. The patterns exist upstream only
// as populate functions, not as a pass; this is that pass. It is C++
// because the C API cannot reach them.
//
//===----------------------------------------------------------------------===//

#include "TesselCppPasses.h"

#include "mlir/Dialect/AMDGPU/IR/AMDGPUDialect.h"
#include "mlir/Dialect/AMDGPU/Utils/Chipset.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;

namespace {
struct TesselLowerSubgroupReduce
    : PassWrapper<TesselLowerSubgroupReduce, OperationPass<gpu::GPUModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TesselLowerSubgroupReduce)

  TesselLowerSubgroupReduce() = default;
  TesselLowerSubgroupReduce(const TesselLowerSubgroupReduce &other)
      : PassWrapper(other) {}

  StringRef getArgument() const final { return "tessel-lower-subgroup-reduce"; }
  StringRef getDescription() const final {
    return "Lower gpu.subgroup_reduce to AMD DPP (cross-lane moves), with "
           "shuffles where DPP has no form";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<amdgpu::AMDGPUDialect, ROCDL::ROCDLDialect,
                    arith::ArithDialect, vector::VectorDialect>();
  }

  Option<std::string> chipset{*this, "chipset",
                              llvm::cl::desc("AMD chip (gfx90a, gfx942, ...)"),
                              llvm::cl::init("gfx942")};
  Option<unsigned> subgroupSize{*this, "subgroup-size",
                                llvm::cl::desc("Lanes per wave (32 or 64)"),
                                llvm::cl::init(64)};

  void runOnOperation() override {
    FailureOr<amdgpu::Chipset> chip = amdgpu::Chipset::parse(chipset);
    if (failed(chip)) {
      getOperation().emitError("tessel-lower-subgroup-reduce: unknown chip '")
          << chipset << "'";
      return signalPassFailure();
    }
    if (subgroupSize != 32 && subgroupSize != 64) {
      getOperation().emitError("tessel-lower-subgroup-reduce: a wave has 32 "
                               "or 64 lanes, not ")
          << static_cast<unsigned>(subgroupSize);
      return signalPassFailure();
    }
    RewritePatternSet patterns(&getContext());
    // Values wider than 32 bits reduce in 32-bit pieces; DPP first
    // (benefit 2), the shuffle butterfly for what it leaves.
    populateGpuBreakDownSubgroupReducePatterns(patterns, 32, 3);
    populateGpuLowerSubgroupReduceToDPPPatterns(patterns, subgroupSize, *chip,
                                                2);
    populateGpuLowerClusteredSubgroupReduceToDPPPatterns(patterns, subgroupSize,
                                                         *chip, 2);
    populateGpuLowerSubgroupReduceToShufflePatterns(patterns, subgroupSize, 32,
                                                    1);
    populateGpuLowerClusteredSubgroupReduceToShufflePatterns(
        patterns, subgroupSize, 32, 1);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    WalkResult left = getOperation().walk([](gpu::SubgroupReduceOp op) {
      op.emitError("this subgroup reduction has no AMD lowering");
      return WalkResult::interrupt();
    });
    if (left.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace

void tessel::registerLowerSubgroupReducePass() {
  PassRegistration<TesselLowerSubgroupReduce>();
}
