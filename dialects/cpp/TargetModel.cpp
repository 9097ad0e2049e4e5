//===- TargetModel.cpp - what LLVM's scheduling models say about a CPU ----===//
//
// The register tile of a contraction needs enough FMAs in flight to cover
// the FMA latency at the CPU's FMA throughput. Both numbers come from
// LLVM's scheduling model of the named CPU (the one its code generator
// schedules with), for the FMA instruction the register tile uses.
//
//===----------------------------------------------------------------------===//

#include "tessel-c/Tessel.h"

#include "llvm/MC/MCInstrInfo.h"
#include "llvm/MC/MCSchedule.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/TargetParser/Triple.h"

#include <memory>

bool tesselInstructionTiming(MlirStringRef triple, MlirStringRef cpu,
                             MlirStringRef features, MlirStringRef instruction,
                             int64_t *latency, double *reciprocalThroughput) {
  llvm::Triple target(llvm::StringRef(triple.data, triple.length));
  std::string error;
  const llvm::Target *found = llvm::TargetRegistry::lookupTarget(target, error);
  if (!found)
    return false;
  std::unique_ptr<llvm::MCSubtargetInfo> subtarget(found->createMCSubtargetInfo(
      target, llvm::StringRef(cpu.data, cpu.length),
      llvm::StringRef(features.data, features.length)));
  std::unique_ptr<llvm::MCInstrInfo> instructions(found->createMCInstrInfo());
  if (!subtarget || !instructions)
    return false;
  const llvm::MCSchedModel &model = subtarget->getSchedModel();
  if (!model.hasInstrSchedModel())
    return false;
  llvm::StringRef name(instruction.data, instruction.length);
  for (unsigned opcode = 0, e = instructions->getNumOpcodes(); opcode < e;
       ++opcode) {
    if (instructions->getName(opcode) != name)
      continue;
    const llvm::MCSchedClassDesc *desc =
        model.getSchedClassDesc(instructions->get(opcode).getSchedClass());
    if (!desc || !desc->isValid() || desc->isVariant())
      return false;
    *latency = llvm::MCSchedModel::computeInstrLatency(*subtarget, *desc);
    *reciprocalThroughput =
        llvm::MCSchedModel::getReciprocalThroughput(*subtarget, *desc);
    return true;
  }
  return false;
}

bool tesselCompareCpuFeatures(MlirStringRef triple, MlirStringRef cpu,
                              MlirStringRef features,
                              void (*difference)(MlirStringRef feature,
                                                 bool hostHas, void *data),
                              void *data) {
  llvm::Triple target(llvm::StringRef(triple.data, triple.length));
  std::string error;
  const llvm::Target *found = llvm::TargetRegistry::lookupTarget(target, error);
  if (!found)
    return false;
  llvm::StringRef name(cpu.data, cpu.length);
  // Asked of a generic subtarget first: one made for an unknown CPU warns
  // on stderr.
  std::unique_ptr<llvm::MCSubtargetInfo> generic(
      found->createMCSubtargetInfo(target, "", ""));
  if (!generic || !generic->isCPUStringValid(name))
    return false;
  std::unique_ptr<llvm::MCSubtargetInfo> subtarget(
      found->createMCSubtargetInfo(target, name, ""));
  if (!subtarget)
    return false;
  llvm::SmallVector<llvm::StringRef> list;
  llvm::StringRef(features.data, features.length)
      .split(list, ',', -1, /*KeepEmpty=*/false);
  for (llvm::StringRef feature : list) {
    if (feature.size() < 2 || (feature[0] != '+' && feature[0] != '-'))
      continue;
    bool hostHas = feature[0] == '+';
    llvm::StringRef bare = feature.drop_front();
    bool cpuHas = subtarget->checkFeatures("+" + bare.str());
    if (cpuHas != hostHas)
      difference(MlirStringRef{bare.data(), bare.size()}, hostHas, data);
  }
  return true;
}
