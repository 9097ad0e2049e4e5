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
