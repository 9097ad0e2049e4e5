//===- TesselCppPasses.h - the passes written in C++ ----------------------===//
//
// Passes that need MLIR's C++ API (upstream patterns the C API cannot
// reach); `tesselRegisterCppPasses` (Tessel.h) registers them all.
//
//===----------------------------------------------------------------------===//

#ifndef TESSEL_CPP_PASSES_H
#define TESSEL_CPP_PASSES_H

namespace tessel {
/// `tessel-lower-subgroup-reduce` (TesselLowerSubgroupReduce.cpp).
void registerLowerSubgroupReducePass();
/// `tessel-fuse-elementwise` (TesselFuseElementwise.cpp).
void registerFuseElementwisePass();
} // namespace tessel

#endif // TESSEL_CPP_PASSES_H
