//===- Plugin.cpp - load the Tessel dialects into upstream mlir-opt -------===//
//
//   mlir-opt-22 --load-dialect-plugin=libTesselPlugin.so file.mlir
//
//===----------------------------------------------------------------------===//

#include "tessel/BlockDialect.h"
#include "tessel/GridDialect.h"

#include "mlir/Tools/Plugins/DialectPlugin.h"
#include "llvm/Config/llvm-config.h"

extern "C" LLVM_ATTRIBUTE_WEAK mlir::DialectPluginLibraryInfo
mlirGetDialectPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "Tessel", LLVM_VERSION_STRING,
          [](mlir::DialectRegistry *registry) {
            registry->insert<tessel::grid::GridDialect,
                             tessel::block::BlockDialect>();
          }};
}
