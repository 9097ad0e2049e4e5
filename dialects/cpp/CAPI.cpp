//===- CAPI.cpp - C API of the Tessel dialects and tool support -----------===//
//
// The only C++ the Rust half needs: dialect handles, BlockSpec access,
// by-name registration of Rust passes (the C API has none), and mlir-opt's
// source-manager diagnostics (printing and --verify-diagnostics).
//
//===----------------------------------------------------------------------===//

#include "tessel-c/Tessel.h"
#include "TesselCppPasses.h"
#include "tessel/BlockDialect.h"
#include "tessel/GridDialect.h"

#include "mlir/CAPI/IR.h"
#include "mlir/CAPI/Pass.h"
#include "mlir/CAPI/Registration.h"
#include "mlir/CAPI/Support.h"
#include "mlir-c/BuiltinAttributes.h"
#include "mlir/CAPI/AffineMap.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;
using tessel::grid::BlockSpecAttr;

MLIR_DEFINE_CAPI_DIALECT_REGISTRATION(Grid, grid, tessel::grid::GridDialect)
MLIR_DEFINE_CAPI_DIALECT_REGISTRATION(Block, block,
                                      tessel::block::BlockDialect)

//===----------------------------------------------------------------------===//
// #grid.block
//===----------------------------------------------------------------------===//

bool tesselAttributeIsABlockSpec(MlirAttribute attr) {
  return isa<BlockSpecAttr>(unwrap(attr));
}

MlirAttribute tesselBlockSpecGet(MlirContext ctx, bool full, intptr_t rank,
                                 const int64_t *blockShape,
                                 MlirAffineMap indexMap, bool unblocked,
                                 intptr_t nPadding, const int64_t *padding,
                                 MlirStringRef indexFunction) {
  // Invalid specs give a null attribute; the reason goes to the context's
  // diagnostic handlers.
  FlatSymbolRefAttr function;
  if (indexFunction.length != 0)
    function = FlatSymbolRefAttr::get(unwrap(ctx), unwrap(indexFunction));
  return wrap(BlockSpecAttr::getChecked(
      [&] { return emitError(UnknownLoc::get(unwrap(ctx))); }, unwrap(ctx),
      full, ArrayRef<int64_t>(blockShape, rank),
      mlirAffineMapIsNull(indexMap) ? AffineMap() : unwrap(indexMap),
      unblocked, ArrayRef<int64_t>(padding, nPadding), function));
}

MlirStringRef tesselBlockSpecGetIndexFunction(MlirAttribute attr) {
  FlatSymbolRefAttr function =
      cast<BlockSpecAttr>(unwrap(attr)).getIndexFunction();
  if (!function)
    return mlirStringRefCreate(nullptr, 0);
  return wrap(function.getValue());
}

int64_t tesselBlockSpecSqueezed(void) { return BlockSpecAttr::kSqueezed; }

bool tesselBlockSpecIsFull(MlirAttribute attr) {
  return cast<BlockSpecAttr>(unwrap(attr)).getFull();
}

intptr_t tesselBlockSpecGetRank(MlirAttribute attr) {
  return cast<BlockSpecAttr>(unwrap(attr)).getRank();
}

int64_t tesselBlockSpecGetBlockDim(MlirAttribute attr, intptr_t pos) {
  return cast<BlockSpecAttr>(unwrap(attr)).getBlockShape()[pos];
}

MlirAffineMap tesselBlockSpecGetIndexMap(MlirAttribute attr) {
  return wrap(cast<BlockSpecAttr>(unwrap(attr)).getIndexMap());
}

bool tesselBlockSpecIsUnblocked(MlirAttribute attr) {
  return cast<BlockSpecAttr>(unwrap(attr)).getUnblocked();
}

intptr_t tesselBlockSpecGetNumPadding(MlirAttribute attr) {
  return cast<BlockSpecAttr>(unwrap(attr)).getPadding().size();
}

int64_t tesselBlockSpecGetPadding(MlirAttribute attr, intptr_t pos) {
  return cast<BlockSpecAttr>(unwrap(attr)).getPadding()[pos];
}

MlirAttribute tesselDimensionSemanticsGet(MlirContext ctx, bool arbitrary) {
  return wrap(tessel::grid::DimensionSemanticsAttr::get(
      unwrap(ctx), arbitrary ? tessel::grid::DimensionSemantics::arbitrary
                             : tessel::grid::DimensionSemantics::parallel));
}

bool tesselOperationIsMemoryEffectFree(MlirOperation op) {
  return isMemoryEffectFree(unwrap(op));
}

void tesselEmitDiagnostic(MlirLocation loc, TesselSeverity severity,
                          MlirStringRef message) {
  switch (severity) {
  case TesselSeverityError:
    emitError(unwrap(loc)) << unwrap(message);
    break;
  case TesselSeverityWarning:
    emitWarning(unwrap(loc)) << unwrap(message);
    break;
  case TesselSeverityRemark:
    emitRemark(unwrap(loc)) << unwrap(message);
    break;
  }
}

//===----------------------------------------------------------------------===//
// Passes by name
//===----------------------------------------------------------------------===//

void tesselRegisterPass(TesselPassFactory factory, void *userData) {
  registerPass([factory, userData]() -> std::unique_ptr<Pass> {
    return std::unique_ptr<Pass>(unwrap(factory(userData)));
  });
}

void tesselRegisterPassPipeline(MlirStringRef argument,
                                MlirStringRef description,
                                MlirStringRef pipeline) {
  std::string text = unwrap(pipeline).str();
  PassPipelineRegistration<>(
      unwrap(argument), unwrap(description), [text](OpPassManager &pm) {
        if (failed(parsePassPipeline(text, pm, llvm::errs())))
          llvm::report_fatal_error("invalid built-in pipeline: " +
                                   llvm::Twine(text));
      });
}

bool tesselIsRegisteredPass(MlirStringRef argument) {
  StringRef name = unwrap(argument);
  return PassInfo::lookup(name) || PassPipelineInfo::lookup(name);
}

void tesselPrintRegisteredPasses(void) { printRegisteredPasses(); }

MlirPassManager tesselPassManagerCreateImplicitNesting(MlirContext ctx) {
  return wrap(new PassManager(unwrap(ctx), ModuleOp::getOperationName(),
                              OpPassManager::Nesting::Implicit));
}

//===----------------------------------------------------------------------===//
// Source diagnostics
//===----------------------------------------------------------------------===//

struct TesselSourceDiagnostics {
  MLIRContext *context;
  llvm::SourceMgr sourceMgr;
  std::unique_ptr<SourceMgrDiagnosticHandler> printer;
  std::unique_ptr<SourceMgrDiagnosticVerifierHandler> verifier;
};

TesselSourceDiagnostics *tesselSourceDiagnosticsCreate(MlirContext ctx,
                                                       MlirStringRef buffer,
                                                       MlirStringRef bufferName,
                                                       bool verify) {
  auto *diagnostics = new TesselSourceDiagnostics();
  diagnostics->context = unwrap(ctx);
  diagnostics->sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(unwrap(buffer), unwrap(bufferName)),
      llvm::SMLoc());
  // Like mlir-opt: expected-* comments never mention the op dump note.
  diagnostics->context->printOpOnDiagnostic(!verify);
  if (verify)
    diagnostics->verifier = std::make_unique<SourceMgrDiagnosticVerifierHandler>(
        diagnostics->sourceMgr, diagnostics->context);
  else
    diagnostics->printer = std::make_unique<SourceMgrDiagnosticHandler>(
        diagnostics->sourceMgr, diagnostics->context);
  return diagnostics;
}

// Some upstream parsers throw from their error paths (MLIR 22's
// linalg.generic, given iterator kinds as attributes rather than strings,
// builds its diagnostic from a dangling Twine and dies in operator new):
// malformed input must give a diagnostic, not a crash, so parsing catches
// what it can and reports it at the buffer's start.
/// MLIR 22's custom parsers of linalg.reduce, linalg.broadcast and
/// linalg.transpose store a null attribute when their `dimensions = [..]`
/// (`permutation = [..]`) list is malformed, and crash. The offset of such
/// a list in `text`, if any, so the parse can fail with a diagnostic
/// instead.
static std::optional<size_t> malformedLinalgList(StringRef text) {
  for (StringRef op : {"linalg.reduce", "linalg.broadcast", "linalg.transpose"}) {
    for (size_t at = text.find(op); at != StringRef::npos;
         at = text.find(op, at + 1)) {
      // The list comes before the op's region or attributes (`{`).
      StringRef rest = text.substr(at + op.size());
      rest = rest.take_front(rest.find('{'));
      size_t keyword = std::min(rest.find("dimensions"), rest.find("permutation"));
      if (keyword == StringRef::npos)
        continue;
      StringRef list = rest.substr(keyword).drop_until(
          [](char c) { return c == '=' || c == '[' || c == '\n'; });
      if (!list.consume_front("="))
        continue;
      list = list.ltrim();
      size_t offset = list.data() - text.data();
      if (list.starts_with("array<"))
        continue;
      if (!list.consume_front("["))
        return offset;
      list = list.ltrim();
      bool first = true;
      while (!list.consume_front("]")) {
        if (!first && !list.consume_front(","))
          return offset;
        list = list.ltrim();
        list.consume_front("-");
        size_t digits = list.find_if_not([](char c) { return isdigit(c); });
        if (digits == 0 || digits == StringRef::npos)
          return offset;
        list = list.drop_front(digits).ltrim();
        first = false;
      }
    }
  }
  return std::nullopt;
}

MlirOperation
tesselSourceDiagnosticsParse(TesselSourceDiagnostics *diagnostics) {
  ParserConfig config(diagnostics->context);
  const llvm::MemoryBuffer *source = diagnostics->sourceMgr.getMemoryBuffer(
      diagnostics->sourceMgr.getMainFileID());
  if (std::optional<size_t> offset =
          malformedLinalgList(source->getBuffer())) {
    auto [line, column] = diagnostics->sourceMgr.getLineAndColumn(
        llvm::SMLoc::getFromPointer(source->getBufferStart() + *offset));
    emitError(FileLineColLoc::get(diagnostics->context,
                                  source->getBufferIdentifier(), line, column))
        << "expected a list of integers in '[' and ']'";
    return MlirOperation{nullptr};
  }
  try {
    OwningOpRef<ModuleOp> module =
        parseSourceFile<ModuleOp>(diagnostics->sourceMgr, config);
    if (!module)
      return MlirOperation{nullptr};
    return wrap(module.release().getOperation());
  } catch (const std::exception &error) {
    const llvm::MemoryBuffer *buffer = diagnostics->sourceMgr.getMemoryBuffer(
        diagnostics->sourceMgr.getMainFileID());
    emitError(FileLineColLoc::get(diagnostics->context,
                                  buffer->getBufferIdentifier(), 1, 1))
        << "the input is malformed (the parser failed internally: "
        << error.what() << ")";
    return MlirOperation{nullptr};
  }
}

MlirModule tesselParseModule(MlirContext ctx, MlirStringRef text) {
  try {
    // MLIR's lexer finds the end of its buffer by the NUL after it; Rust
    // strings have none (the byte past them is whatever the allocation
    // holds), so parse a NUL-terminated copy.
    std::string owned(text.data, text.length);
    return mlirModuleCreateParse(
        ctx, mlirStringRefCreate(owned.c_str(), owned.size()));
  } catch (const std::exception &) {
    return MlirModule{nullptr};
  }
}

MlirLogicalResult
tesselSourceDiagnosticsVerify(TesselSourceDiagnostics *diagnostics) {
  if (!diagnostics->verifier)
    return mlirLogicalResultSuccess();
  return wrap(diagnostics->verifier->verify());
}

void tesselSourceDiagnosticsDestroy(TesselSourceDiagnostics *diagnostics) {
  delete diagnostics;
}

//===----------------------------------------------------------------------===//
// The passes written in C++
//===----------------------------------------------------------------------===//

void tesselRegisterCppPasses(void) {
  tessel::registerLowerSubgroupReducePass();
  tessel::registerFuseElementwisePass();
}
