//===- GridDialect.cpp - `grid` dialect: BlockSpecs, grid.call ------------===//
//
// Parsing, printing and verification of the launch level. Every misuse is a
// diagnostic at the offending op (or attribute), never an assertion.
//
//===----------------------------------------------------------------------===//

#include "tessel/GridDialect.h"
#include "tessel/BlockDialect.h"

#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/SmallSet.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "tessel/Inlining.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace tessel::grid;

#include "GridDialect.cpp.inc"
#include "GridEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "GridAttrs.cpp.inc"

#define GET_OP_CLASSES
#include "GridOps.cpp.inc"

void GridDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "GridAttrs.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "GridOps.cpp.inc"
      >();
  addInterfaces<tessel::InlineEverything>();
}

//===----------------------------------------------------------------------===//
// #grid.block
//===----------------------------------------------------------------------===//

SmallVector<int64_t> BlockSpecAttr::getKernelShape() const {
  SmallVector<int64_t> shape;
  for (int64_t size : getBlockShape())
    if (size != kSqueezed)
      shape.push_back(size);
  return shape;
}

LogicalResult
BlockSpecAttr::verify(function_ref<InFlightDiagnostic()> emitError, bool full,
                      ArrayRef<int64_t> blockShape, AffineMap indexMap,
                      bool unblocked, ArrayRef<int64_t> padding,
                      FlatSymbolRefAttr indexFunction) {
  if (full && (!blockShape.empty() || indexMap || unblocked ||
               !padding.empty() || indexFunction))
    return emitError() << "a 'full' BlockSpec takes no shape, map or mode";
  if (indexMap && indexFunction)
    return emitError() << "a BlockSpec takes an index map or an index "
                          "function, not both";
  for (int64_t size : blockShape)
    if (size != kSqueezed && size <= 0)
      return emitError() << "block size must be positive, got " << size;
  if (indexMap) {
    if (indexMap.getNumSymbols() != 0)
      return emitError() << "index map must not use symbols";
    if (indexMap.getNumResults() != blockShape.size())
      return emitError() << "index map returns " << indexMap.getNumResults()
                         << " indices but the block has rank "
                         << blockShape.size();
  }
  if (!padding.empty()) {
    if (!unblocked)
      return emitError() << "'pad' is only allowed on an unblocked BlockSpec";
    if (padding.size() != 2 * blockShape.size())
      return emitError() << "'pad' needs one [lo, hi] pair per dimension ("
                         << blockShape.size() << "), got "
                         << padding.size() / 2;
    for (int64_t amount : padding)
      if (amount < 0)
        return emitError() << "padding must be non-negative, got " << amount;
  }
  return success();
}

Attribute BlockSpecAttr::parse(AsmParser &parser, Type) {
  MLIRContext *ctx = parser.getContext();
  SMLoc start = parser.getCurrentLocation();
  bool full = false, unblocked = false;
  SmallVector<int64_t> shape, padding;
  AffineMap map;
  FlatSymbolRefAttr function;
  if (parser.parseLess())
    return {};
  if (succeeded(parser.parseOptionalKeyword("full"))) {
    full = true;
  } else {
    auto parseSize = [&]() -> ParseResult {
      if (succeeded(parser.parseOptionalKeyword("squeezed"))) {
        shape.push_back(kSqueezed);
        return success();
      }
      SMLoc loc = parser.getCurrentLocation();
      int64_t size;
      if (parser.parseInteger(size))
        return failure();
      if (size <= 0)
        return parser.emitError(loc, "block size must be positive, got ")
               << size;
      shape.push_back(size);
      return success();
    };
    if (parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, parseSize))
      return {};
    // Then, comma separated and in any order: the map, `unblocked [pad ..]`,
    // and (diagnosed by the verifier) `pad` without `unblocked`.
    while (succeeded(parser.parseOptionalComma())) {
      bool sawUnblocked = succeeded(parser.parseOptionalKeyword("unblocked"));
      unblocked |= sawUnblocked;
      if (succeeded(parser.parseOptionalKeyword("pad"))) {
        auto parsePair = [&]() -> ParseResult {
          SmallVector<int64_t> pair;
          SMLoc loc = parser.getCurrentLocation();
          if (tessel::parseIntegerList(parser, pair))
            return failure();
          if (pair.size() != 2)
            return parser.emitError(loc, "expected a [lo, hi] pair");
          padding.append(pair);
          return success();
        };
        if (parser.parseCommaSeparatedList(AsmParser::Delimiter::Square,
                                           parsePair))
          return {};
        continue;
      }
      if (sawUnblocked)
        continue;
      if (map || function) {
        parser.emitError(parser.getCurrentLocation(),
                         "expected 'unblocked' or 'pad' (a BlockSpec takes "
                         "one index map or index function)");
        return {};
      }
      // An index function `@f`, or an affine map.
      OptionalParseResult parsedFunction =
          parser.parseOptionalAttribute(function);
      if (parsedFunction.has_value()) {
        if (failed(*parsedFunction))
          return {};
        continue;
      }
      if (parser.parseAffineMap(map))
        return {};
    }
  }
  if (parser.parseGreater())
    return {};
  return getChecked([&] { return parser.emitError(start); }, ctx, full, shape,
                    map, unblocked, padding, function);
}

void BlockSpecAttr::print(AsmPrinter &printer) const {
  printer << "<";
  if (getFull()) {
    printer << "full>";
    return;
  }
  printer << "[";
  llvm::interleaveComma(getBlockShape(), printer, [&](int64_t size) {
    if (size == kSqueezed)
      printer << "squeezed";
    else
      printer << size;
  });
  printer << "]";
  if (getIndexMap()) {
    printer << ", ";
    getIndexMap().print(printer.getStream());
  }
  if (getIndexFunction())
    printer << ", " << getIndexFunction();
  if (getUnblocked() || !getPadding().empty()) {
    printer << ",";
    if (getUnblocked())
      printer << " unblocked";
    if (!getPadding().empty()) {
      printer << " pad [";
      for (size_t i = 0; i < getPadding().size(); i += 2) {
        if (i)
          printer << ", ";
        printer << "[" << getPadding()[i] << ", " << getPadding()[i + 1] << "]";
      }
      printer << "]";
    }
  }
  printer << ">";
}

//===----------------------------------------------------------------------===//
// grid.call
//===----------------------------------------------------------------------===//

ParseResult CallOp::parse(OpAsmParser &parser, OperationState &result) {
  Builder &builder = parser.getBuilder();
  MLIRContext *ctx = builder.getContext();
  FlatSymbolRefAttr callee;
  if (parser.parseAttribute(callee, "callee", result.attributes))
    return failure();

  // Sizes or `index` values: `grid [%n, 4]`.
  SmallVector<OpAsmParser::UnresolvedOperand> dynamicGrid;
  DenseI64ArrayAttr grid;
  if (parser.parseKeyword("grid") ||
      parseDynamicIndexList(parser, dynamicGrid, grid))
    return failure();
  result.addAttribute("grid", grid);
  if (succeeded(parser.parseOptionalKeyword("cores")))
    result.addAttribute("cores", builder.getUnitAttr());

  // ins(%a, %b : t1, t2) and outs(...): both always written, maybe empty.
  auto parseOperandGroup =
      [&](StringRef keyword,
          SmallVectorImpl<OpAsmParser::UnresolvedOperand> &operands,
          SmallVectorImpl<Type> &types) -> ParseResult {
    if (parser.parseKeyword(keyword) || parser.parseLParen())
      return failure();
    if (succeeded(parser.parseOptionalRParen()))
      return success();
    if (parser.parseOperandList(operands) || parser.parseColonTypeList(types) ||
        parser.parseRParen())
      return failure();
    return success();
  };
  SmallVector<OpAsmParser::UnresolvedOperand> scalars, inputs, outputs;
  SmallVector<Type> scalarTypes, inputTypes, outputTypes;
  SMLoc scalarsLoc = parser.getCurrentLocation();
  if (succeeded(parser.parseOptionalKeyword("scalars"))) {
    if (parser.parseLParen() || parser.parseOperandList(scalars) ||
        parser.parseColonTypeList(scalarTypes) || parser.parseRParen())
      return failure();
  }
  SMLoc inputsLoc = parser.getCurrentLocation();
  if (parseOperandGroup("ins", inputs, inputTypes))
    return failure();
  SMLoc outputsLoc = parser.getCurrentLocation();
  if (parseOperandGroup("outs", outputs, outputTypes))
    return failure();

  if (succeeded(parser.parseOptionalKeyword("scratch"))) {
    // `scratch(memref<..>, semaphore memref<..xi32>, shared memref<..>,
    // ..)`: a semaphore entry's index goes to `semaphores`, a shared one's
    // to `shared`.
    SmallVector<Type> scratch;
    SmallVector<int64_t> semaphores, shared;
    auto parseOne = [&]() -> ParseResult {
      if (succeeded(parser.parseOptionalKeyword("semaphore")))
        semaphores.push_back(static_cast<int64_t>(scratch.size()));
      else if (succeeded(parser.parseOptionalKeyword("shared")))
        shared.push_back(static_cast<int64_t>(scratch.size()));
      return parser.parseType(scratch.emplace_back());
    };
    if (parser.parseCommaSeparatedList(AsmParser::Delimiter::Paren, parseOne))
      return failure();
    result.addAttribute("scratch", builder.getTypeArrayAttr(scratch));
    if (!semaphores.empty())
      result.addAttribute("semaphores",
                          builder.getDenseI64ArrayAttr(semaphores));
    if (!shared.empty())
      result.addAttribute("shared", builder.getDenseI64ArrayAttr(shared));
  }

  ArrayAttr inSpecs, outSpecs;
  if (parser.parseKeyword("in_specs") ||
      parser.parseAttribute(inSpecs, "in_specs", result.attributes) ||
      parser.parseKeyword("out_specs") ||
      parser.parseAttribute(outSpecs, "out_specs", result.attributes))
    return failure();

  if (succeeded(parser.parseOptionalKeyword("semantics"))) {
    SmallVector<Attribute> semantics;
    auto parseOne = [&]() -> ParseResult {
      SMLoc loc = parser.getCurrentLocation();
      StringRef keyword;
      if (parser.parseKeyword(&keyword))
        return failure();
      std::optional<DimensionSemantics> value =
          symbolizeDimensionSemantics(keyword);
      if (!value)
        return parser.emitError(loc, "expected 'parallel' or 'arbitrary'");
      semantics.push_back(DimensionSemanticsAttr::get(ctx, *value));
      return success();
    };
    if (parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, parseOne))
      return failure();
    result.addAttribute("semantics", builder.getArrayAttr(semantics));
  }

  if (parser.parseOptionalAttrDict(result.attributes) ||
      parser.resolveOperands(inputs, inputTypes, inputsLoc, result.operands) ||
      parser.resolveOperands(outputs, outputTypes, outputsLoc, result.operands) ||
      parser.resolveOperands(scalars, scalarTypes, scalarsLoc, result.operands) ||
      parser.resolveOperands(dynamicGrid, builder.getIndexType(),
                             result.operands))
    return failure();
  result.addAttribute("operandSegmentSizes",
                      builder.getDenseI32ArrayAttr(
                          {static_cast<int32_t>(inputs.size()),
                           static_cast<int32_t>(outputs.size()),
                           static_cast<int32_t>(scalars.size()),
                           static_cast<int32_t>(dynamicGrid.size())}));
  return success();
}

void CallOp::print(OpAsmPrinter &p) {
  p << " ";
  p.printAttributeWithoutType(getCalleeAttr());
  p << " grid ";
  printDynamicIndexList(p, *this, getDynamicGrid(), getGrid());
  if (getCores())
    p << " cores";
  auto printGroup = [&](StringRef keyword, OperandRange operands) {
    p << " " << keyword << "(";
    if (!operands.empty())
      p << operands << " : " << operands.getTypes();
    p << ")";
  };
  if (!getScalars().empty()) {
    p << " scalars(" << getScalars() << " : " << getScalars().getTypes()
      << ")";
  }
  printGroup("ins", getInputs());
  printGroup("outs", getOutputs());
  if (std::optional<ArrayAttr> scratch = getScratch()) {
    ArrayRef<int64_t> semaphores, shared;
    if (std::optional<ArrayRef<int64_t>> marked = getSemaphores())
      semaphores = *marked;
    if (std::optional<ArrayRef<int64_t>> marked = getShared())
      shared = *marked;
    p << " scratch(";
    llvm::interleaveComma(
        llvm::enumerate(scratch->getAsValueRange<TypeAttr>()), p,
        [&](auto entry) {
          auto index = static_cast<int64_t>(entry.index());
          if (llvm::is_contained(semaphores, index))
            p << "semaphore ";
          if (llvm::is_contained(shared, index))
            p << "shared ";
          p << entry.value();
        });
    p << ")";
  }
  p << " in_specs ";
  p.printAttribute(getInSpecs());
  p << " out_specs ";
  p.printAttribute(getOutSpecs());
  if (std::optional<ArrayAttr> semantics = getSemantics()) {
    p << " semantics [";
    llvm::interleaveComma(*semantics, p, [&](Attribute attr) {
      p << stringifyDimensionSemantics(
          cast<DimensionSemanticsAttr>(attr).getValue());
    });
    p << "]";
  }
  p.printOptionalAttrDict((*this)->getAttrs(),
                          {"callee", "grid", "cores", "scratch", "semaphores", "shared",
                           "in_specs", "out_specs", "semantics",
                           "operandSegmentSizes"});
}

namespace {
/// The operands of a grid.call, described for diagnostics.
std::string describeOperand(bool isInput, size_t index) {
  return (Twine(isInput ? "input #" : "output #") + Twine(index)).str();
}
} // namespace

LogicalResult CallOp::verify() {
  int64_t gridRank = getGrid().size();
  for (int64_t size : getGrid())
    if (size < 0 && !ShapedType::isDynamic(size))
      return emitOpError("grid sizes must be non-negative, got ") << size;
  if (failed(verifyListOfOperandsOrIntegers(*this, "grid", gridRank,
                                            getGrid(), getDynamicGrid())))
    return failure();
  if (getInSpecs().size() != getInputs().size())
    return emitOpError("expected ")
           << getInputs().size() << " in_specs (one per input), got "
           << getInSpecs().size();
  if (getOutSpecs().size() != getOutputs().size())
    return emitOpError("expected ")
           << getOutputs().size() << " out_specs (one per output), got "
           << getOutSpecs().size();
  if (std::optional<ArrayAttr> semantics = getSemantics())
    if (static_cast<int64_t>(semantics->size()) != gridRank)
      return emitOpError("expected ")
             << gridRank << " semantics entries (one per grid axis), got "
             << semantics->size();
  if (std::optional<ArrayAttr> scratch = getScratch())
    for (Type type : scratch->getAsValueRange<TypeAttr>()) {
      auto memref = dyn_cast<MemRefType>(type);
      if (!memref || !memref.hasStaticShape())
        return emitOpError("scratch buffers must be statically shaped "
                           "memrefs, got ")
               << type;
    }
  if (std::optional<ArrayRef<int64_t>> semaphores = getSemaphores()) {
    SmallVector<Type> scratch;
    if (std::optional<ArrayAttr> types = getScratch())
      scratch = llvm::to_vector(types->getAsValueRange<TypeAttr>());
    llvm::SmallSet<int64_t, 4> seen;
    for (int64_t index : *semaphores) {
      if (index < 0 || index >= static_cast<int64_t>(scratch.size()) ||
          !seen.insert(index).second)
        return emitOpError("semaphores names scratch #")
               << index << ", which is not a scratch buffer or is named twice";
      if (!cast<MemRefType>(scratch[index]).getElementType().isInteger(32))
        return emitOpError("semaphore scratch #")
               << index << " must hold i32 counters, got " << scratch[index];
    }
  }
  if (std::optional<ArrayRef<int64_t>> shared = getShared()) {
    int64_t count = getScratch() ? getScratch()->size() : 0;
    ArrayRef<int64_t> semaphores;
    if (std::optional<ArrayRef<int64_t>> marked = getSemaphores())
      semaphores = *marked;
    llvm::SmallSet<int64_t, 4> seen;
    for (int64_t index : *shared)
      if (index < 0 || index >= count || !seen.insert(index).second ||
          llvm::is_contained(semaphores, index))
        return emitOpError("shared names scratch #")
               << index
               << ", which is not a scratch buffer, is named twice or is a "
                  "semaphore (each core has its own)";
  }
  if (getCores()) {
    // One thread per core, all at once.
    constexpr int64_t kMaxCores = 64;
    if (gridRank == 0 || ShapedType::isDynamic(getGrid()[0]) ||
        getGrid()[0] < 1 || getGrid()[0] > kMaxCores)
      return emitOpError("a core mesh (`cores`) needs a leading grid axis "
                         "of 1 to ")
             << kMaxCores << " cores";
    if (std::optional<ArrayAttr> semantics = getSemantics())
      if (!semantics->empty() &&
          cast<DimensionSemanticsAttr>((*semantics)[0]).getValue() !=
              DimensionSemantics::parallel)
        return emitOpError("the core axis (the leading one) runs its cores "
                           "at once: its semantics must be parallel");
  }

  auto checkSpec = [&](bool isInput, size_t index, Value array,
                       Attribute specAttr) -> LogicalResult {
    auto arrayType = cast<MemRefType>(array.getType());
    std::string what = describeOperand(isInput, index);
    if (!arrayType.hasStaticShape())
      return emitOpError() << what << " must have a static shape, got "
                           << arrayType;
    auto spec = cast<BlockSpecAttr>(specAttr);
    if (spec.getFull())
      return success();
    int64_t rank = arrayType.getRank();
    if (static_cast<int64_t>(spec.getRank()) != rank)
      return emitOpError() << "BlockSpec of " << what << " has rank "
                           << spec.getRank() << " but the array has rank "
                           << rank;
    for (Value scalar : getScalars())
      if (!cast<MemRefType>(scalar.getType()).hasStaticShape())
        return emitOpError("scalar arrays must have a static shape, got ")
               << scalar.getType();
    if (AffineMap map = spec.getIndexMap())
      if (static_cast<int64_t>(map.getNumDims()) != gridRank)
        return emitOpError() << "index map of " << what << " takes "
                             << map.getNumDims()
                             << " grid indices but the grid has rank "
                             << gridRank;
    if (spec.getUnblocked()) {
      ArrayRef<int64_t> padding = spec.getPadding();
      for (int64_t d = 0; d < rank; ++d) {
        int64_t block = spec.getBlockShape()[d];
        int64_t extent = arrayType.getDimSize(d);
        if (!padding.empty())
          extent += padding[2 * d] + padding[2 * d + 1];
        if (block != BlockSpecAttr::kSqueezed && block > extent)
          return emitOpError() << "unblocked block of " << what
                               << " is larger than the "
                               << (padding.empty() ? "" : "padded ")
                               << "array in dimension " << d << " (" << block
                               << " > " << extent << ")";
      }
    }
    return success();
  };
  for (auto [i, pair] :
       llvm::enumerate(llvm::zip_equal(getInputs(), getInSpecs())))
    if (failed(checkSpec(true, i, std::get<0>(pair), std::get<1>(pair))))
      return failure();
  for (auto [i, pair] :
       llvm::enumerate(llvm::zip_equal(getOutputs(), getOutSpecs())))
    if (failed(checkSpec(false, i, std::get<0>(pair), std::get<1>(pair))))
      return failure();
  return success();
}

/// The ref type a kernel receives for `array` cut by `spec`. Kernels
/// compute on signless integers: a `ui8` array gives an `i8` ref (the entry
/// function's signedness only tells the runtime how to read and print it).
static MemRefType refTypeFor(MemRefType array, BlockSpecAttr spec) {
  Type element = array.getElementType();
  if (auto integer = dyn_cast<IntegerType>(element); integer && !integer.isSignless())
    element = IntegerType::get(integer.getContext(), integer.getWidth());
  if (!spec || spec.getFull())
    return MemRefType::get(array.getShape(), element);
  return MemRefType::get(spec.getKernelShape(), element);
}

/// An index function must take the program ids (`index`, one per grid
/// axis) and the call's scalar arrays (their kernel ref types), and return
/// one `index` per dimension of the block.
static LogicalResult verifyIndexFunction(CallOp call, BlockSpecAttr spec,
                                         StringRef what,
                                         SymbolTableCollection &symbols) {
  FlatSymbolRefAttr name = spec.getIndexFunction();
  if (!name)
    return success();
  auto function = dyn_cast_or_null<func::FuncOp>(
      symbols.lookupNearestSymbolFrom(call, name));
  if (!function)
    return call.emitOpError("the index function ")
           << name << " of " << what << " does not name a func.func";
  Builder builder(call.getContext());
  SmallVector<Type> inputs(call.getGrid().size(), builder.getIndexType());
  for (Value scalar : call.getScalars())
    inputs.push_back(refTypeFor(cast<MemRefType>(scalar.getType()), {}));
  SmallVector<Type> results(spec.getRank(), builder.getIndexType());
  FunctionType expected = builder.getFunctionType(inputs, results);
  if (function.getFunctionType() != expected)
    return call.emitOpError("the index function ")
           << name << " of " << what << " has type "
           << function.getFunctionType() << " but must be " << expected
           << " (the program ids, then the scalar arrays, to one block "
              "index per dimension)";
  return success();
}

LogicalResult CallOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  Operation *symbol =
      symbolTable.lookupNearestSymbolFrom(*this, getCalleeAttr());
  if (!symbol)
    return emitOpError("unknown kernel ") << getCalleeAttr();
  auto kernel = dyn_cast<func::FuncOp>(symbol);
  if (!kernel)
    return emitOpError() << getCalleeAttr()
                         << " does not name a func.func kernel";
  FunctionType signature = kernel.getFunctionType();
  if (signature.getNumResults() != 0)
    return emitOpError("kernel ")
           << getCalleeAttr()
           << " must return nothing: outputs are written through its refs";

  SmallVector<Type> expected;
  SmallVector<std::string> roles;
  for (auto [i, scalar] : llvm::enumerate(getScalars())) {
    expected.push_back(refTypeFor(cast<MemRefType>(scalar.getType()), {}));
    roles.push_back((Twine("scalar #") + Twine(i)).str());
  }
  for (auto [i, pair] :
       llvm::enumerate(llvm::zip_equal(getInputs(), getInSpecs()))) {
    expected.push_back(refTypeFor(cast<MemRefType>(std::get<0>(pair).getType()),
                                  cast<BlockSpecAttr>(std::get<1>(pair))));
    roles.push_back(describeOperand(true, i));
  }
  for (auto [i, pair] :
       llvm::enumerate(llvm::zip_equal(getOutputs(), getOutSpecs()))) {
    expected.push_back(refTypeFor(cast<MemRefType>(std::get<0>(pair).getType()),
                                  cast<BlockSpecAttr>(std::get<1>(pair))));
    roles.push_back(describeOperand(false, i));
  }
  if (std::optional<ArrayAttr> scratch = getScratch())
    for (auto [i, type] : llvm::enumerate(scratch->getAsValueRange<TypeAttr>())) {
      expected.push_back(type);
      roles.push_back((Twine("scratch #") + Twine(i)).str());
    }

  for (auto [i, spec] : llvm::enumerate(getInSpecs()))
    if (failed(verifyIndexFunction(*this, cast<BlockSpecAttr>(spec),
                                   describeOperand(true, i), symbolTable)))
      return failure();
  for (auto [i, spec] : llvm::enumerate(getOutSpecs()))
    if (failed(verifyIndexFunction(*this, cast<BlockSpecAttr>(spec),
                                   describeOperand(false, i), symbolTable)))
      return failure();

  if (signature.getNumInputs() != expected.size()) {
    InFlightDiagnostic diag = emitOpError("kernel ")
                              << getCalleeAttr() << " takes "
                              << signature.getNumInputs()
                              << " refs but the call passes "
                              << expected.size() << " (";
    if (!getScalars().empty())
      diag << getScalars().size() << " scalars, ";
    diag << getInputs().size() << " inputs, " << getOutputs().size()
         << " outputs, "
         << (expected.size() - getScalars().size() - getInputs().size() -
             getOutputs().size())
         << " scratch)";
    return diag;
  }
  for (auto [i, pair] :
       llvm::enumerate(llvm::zip_equal(signature.getInputs(), expected))) {
    auto [actual, want] = pair;
    if (actual == want)
      continue;
    InFlightDiagnostic diag = emitOpError("kernel ref #")
                              << i << " has type " << actual << " but "
                              << roles[i] << " gives " << want;
    if (llvm::is_contained(expected, actual))
      diag.attachNote(kernel.getLoc())
          << "kernel refs come in Pallas order: scalars, inputs, outputs, "
             "scratch";
    return diag;
  }

  // Grid axes named inside the kernel must exist in this call's grid.
  int64_t gridRank = getGrid().size();
  WalkResult walk = kernel.walk([&](Operation *op) {
    int64_t axis = -1;
    if (auto programId = dyn_cast<ProgramIdOp>(op))
      axis = programId.getAxis();
    else if (auto numPrograms = dyn_cast<NumProgramsOp>(op))
      axis = numPrograms.getAxis();
    if (axis < gridRank)
      return WalkResult::advance();
    op->emitOpError("axis ")
            .append(axis)
            .append(" is out of range for the rank-", gridRank, " grid")
            .attachNote(getLoc())
        << "kernel called here";
    return WalkResult::interrupt();
  });
  return failure(walk.wasInterrupted());
}
