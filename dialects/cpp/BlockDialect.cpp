//===- BlockDialect.cpp - `block` dialect: kernel-level block ops ---------===//
//
// Verifiers state the shape rules of Pallas block operations; each failure
// names the operands and shapes involved.
//
//===----------------------------------------------------------------------===//

#include "tessel/BlockDialect.h"

#include "mlir/IR/DialectImplementation.h"
#include "tessel/Inlining.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallSet.h"

using namespace mlir;
using namespace tessel::block;

#include "BlockDialect.cpp.inc"
#include "BlockEnums.cpp.inc"

ParseResult tessel::parseIntegerList(AsmParser &parser,
                                     SmallVectorImpl<int64_t> &values) {
  return parser.parseCommaSeparatedList(
      AsmParser::Delimiter::Square, [&]() -> ParseResult {
        int64_t value;
        if (parser.parseInteger(value))
          return failure();
        values.push_back(value);
        return success();
      });
}

void tessel::printIntegerList(AsmPrinter &printer, ArrayRef<int64_t> values) {
  printer << "[";
  llvm::interleaveComma(values, printer);
  printer << "]";
}

// Custom directives of the declarative formats: `[16, 16]` and `[0, 1]`.
static ParseResult parseSizeList(OpAsmParser &parser, DenseI64ArrayAttr &attr) {
  SmallVector<int64_t> values;
  if (tessel::parseIntegerList(parser, values))
    return failure();
  attr = parser.getBuilder().getDenseI64ArrayAttr(values);
  return success();
}
static void printSizeList(OpAsmPrinter &printer, Operation *,
                          DenseI64ArrayAttr attr) {
  tessel::printIntegerList(printer, attr ? attr.asArrayRef()
                                         : ArrayRef<int64_t>());
}
static ParseResult parseDimList(OpAsmParser &parser, DenseI64ArrayAttr &attr) {
  return parseSizeList(parser, attr);
}
static void printDimList(OpAsmPrinter &printer, Operation *op,
                         DenseI64ArrayAttr attr) {
  printSizeList(printer, op, attr);
}

#define GET_OP_CLASSES
#include "BlockOps.cpp.inc"

void BlockDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "BlockOps.cpp.inc"
      >();
  addInterfaces<tessel::InlineEverything>();
}

//===----------------------------------------------------------------------===//
// Verifiers
//===----------------------------------------------------------------------===//

namespace {
std::string shapeString(ArrayRef<int64_t> shape) {
  if (shape.empty())
    return "scalar";
  std::string text;
  llvm::raw_string_ostream os(text);
  llvm::interleave(shape, os, "x");
  return text;
}

/// Shared by load, store and atomic_rmw: the accessed block `blockType` is
/// either the whole ref or, with offsets, a window of it. A masked window
/// may be wider than the ref (Pallas-Triton's `pl.ds(0, next_pow2(n))`):
/// its accesses are predicated, so masked-off lanes never touch memory.
/// A gather or scatter (`indexed`: its dimension and index count) takes
/// that many elements along that dimension, wherever the indices point.
LogicalResult verifyAccess(Operation *op, StringRef blockName,
                           ShapedType blockType, MemRefType refType,
                           size_t numOffsets,
                           std::optional<ArrayRef<int64_t>> sizes,
                           bool masked,
                           std::optional<std::pair<int64_t, int64_t>> indexed =
                               std::nullopt) {
  if (blockType.getElementType() != refType.getElementType())
    return op->emitOpError()
           << blockName << " element type " << blockType.getElementType()
           << " does not match the ref's " << refType.getElementType();
  int64_t rank = refType.getRank();
  if (numOffsets == 0) {
    if (sizes)
      return op->emitOpError("window sizes need offsets");
    SmallVector<int64_t> expected(refType.getShape());
    if (indexed && indexed->first < rank)
      expected[indexed->first] = indexed->second;
    if (blockType.getShape() == ArrayRef<int64_t>(expected))
      return success();
    if (!indexed)
      return op->emitOpError()
             << blockName << " shape " << shapeString(blockType.getShape())
             << " does not match the ref's " << shapeString(expected)
             << " (use offsets for a window)";
    return op->emitOpError()
           << blockName << " shape " << shapeString(blockType.getShape())
           << " must be " << shapeString(expected)
           << " (the ref's, with one element per index along dimension "
           << indexed->first << ")";
  }
  if (static_cast<int64_t>(numOffsets) != rank)
    return op->emitOpError("expected ")
           << rank << " offsets (one per ref dimension), got " << numOffsets;
  if (sizes && *sizes != blockType.getShape())
    return op->emitOpError("window sizes ")
           << shapeString(*sizes) << " do not match the " << blockName
           << " shape " << shapeString(blockType.getShape());
  if (blockType.getRank() != rank)
    return op->emitOpError("a window has the ref's rank ")
           << rank << ", got " << blockName << " of rank "
           << blockType.getRank();
  for (int64_t d = 0; d < rank && !masked; ++d)
    if ((!indexed || indexed->first != d) &&
        blockType.getDimSize(d) > refType.getDimSize(d))
      return op->emitOpError("window of size ")
             << blockType.getDimSize(d) << " exceeds the ref's size "
             << refType.getDimSize(d) << " in dimension " << d;
  return success();
}

/// Distinct dimensions in [0, rank), for reduce and broadcast.
LogicalResult verifyDimensions(Operation *op, ArrayRef<int64_t> dims,
                               int64_t rank) {
  llvm::SmallSet<int64_t, 4> seen;
  for (int64_t dim : dims) {
    if (dim < 0 || dim >= rank)
      return op->emitOpError("dimension ")
             << dim << " is out of range for rank " << rank;
    if (!seen.insert(dim).second)
      return op->emitOpError("dimension ") << dim << " is listed twice";
  }
  return success();
}
} // namespace

/// The dimension and index count of a gather or scatter, after checking
/// that the indices are a 1-D tensor and the dimension is one of the ref's.
static FailureOr<std::optional<std::pair<int64_t, int64_t>>>
verifyIndexed(Operation *op, Value indices, std::optional<uint64_t> dim,
              StringRef keyword, int64_t rank) {
  if (!indices && !dim)
    return std::optional<std::pair<int64_t, int64_t>>();
  if (!indices || !dim)
    return op->emitOpError("'") << keyword
                                << "' needs both its indices and its 'dim'";
  auto type = cast<RankedTensorType>(indices.getType());
  if (type.getRank() != 1)
    return op->emitOpError("the ")
           << keyword << " indices must be a 1-D tensor, got " << type;
  if (static_cast<int64_t>(*dim) >= rank)
    return op->emitOpError("the ") << keyword << " dimension " << *dim
                                   << " is out of range for the ref's rank "
                                   << rank;
  return std::optional(
      std::make_pair(static_cast<int64_t>(*dim), type.getDimSize(0)));
}

LogicalResult LoadOp::verify() {
  if (getOther() && !getMask())
    return emitOpError("'other' requires a 'mask'");
  if (getSizes() && getOffsets().empty())
    return emitOpError("window sizes need offsets");
  if (!getOffsets().empty() && !getSizes())
    return emitOpError("a window needs its sizes");
  auto indexed = verifyIndexed(*this, getIndices(), getGatherDim(), "gather",
                               getRef().getType().getRank());
  if (failed(indexed))
    return failure();
  return verifyAccess(*this, "result", getResult().getType(),
                      getRef().getType(), getOffsets().size(), getSizes(),
                      static_cast<bool>(getMask()), *indexed);
}

LogicalResult StoreOp::verify() {
  auto indexed = verifyIndexed(*this, getIndices(), getScatterDim(), "scatter",
                               getRef().getType().getRank());
  if (failed(indexed))
    return failure();
  return verifyAccess(*this, "value", getValue().getType(), getRef().getType(),
                      getOffsets().size(), std::nullopt,
                      static_cast<bool>(getMask()), *indexed);
}

/// Atomics need float or integer elements of at least 8 bits.
static LogicalResult verifyAtomicElement(Operation *op, Type element) {
  if (!isa<FloatType, IntegerType>(element) || element.getIntOrFloatBitWidth() < 8)
    return op->emitOpError("atomics need float or integer elements of at least 8 "
                           "bits, got ")
           << element;
  return success();
}

LogicalResult AtomicRMWOp::verify() {
  Type element = getValue().getType().getElementType();
  if (failed(verifyAtomicElement(*this, element)))
    return failure();
  AtomicKind kind = getKind();
  bool integral = kind == AtomicKind::and_ || kind == AtomicKind::or_ ||
                  kind == AtomicKind::xor_ || kind == AtomicKind::umax ||
                  kind == AtomicKind::umin;
  if (integral && !isa<IntegerType>(element))
    return emitOpError("'") << stringifyAtomicKind(kind)
                            << "' needs integer elements, got " << element;
  if (getOld() && getOld().getType() != getValue().getType())
    return emitOpError("the old values' type ")
           << getOld().getType() << " must equal the value's "
           << getValue().getType();
  return verifyAccess(*this, "value", getValue().getType(), getRef().getType(),
                      getOffsets().size(), std::nullopt,
                      static_cast<bool>(getMask()));
}

LogicalResult AtomicCASElementOp::verify() {
  MemRefType buffer = getRef().getType();
  if (buffer.getElementType() != getValue().getType())
    return emitOpError("the buffer's elements ")
           << buffer.getElementType() << " must be the value's type "
           << getValue().getType();
  if (static_cast<int64_t>(getIndices().size()) != buffer.getRank())
    return emitOpError("needs one index per dimension of the buffer (")
           << buffer.getRank() << "), got " << getIndices().size();
  return verifyAtomicElement(*this, getValue().getType());
}

LogicalResult AtomicCASOp::verify() {
  if (failed(verifyAtomicElement(*this, getValue().getType().getElementType())))
    return failure();
  return verifyAccess(*this, "value", getValue().getType(), getRef().getType(),
                      getOffsets().size(), std::nullopt,
                      static_cast<bool>(getMask()));
}

/// Accumulation may widen: f16/bf16 -> f32, i8 -> i32, but never change kind.
static bool canAccumulateInto(Type operand, Type result) {
  if (operand == result)
    return true;
  if (isa<FloatType>(operand) && isa<FloatType>(result))
    return operand.getIntOrFloatBitWidth() <= result.getIntOrFloatBitWidth();
  if (isa<IntegerType>(operand) && isa<IntegerType>(result))
    return operand.getIntOrFloatBitWidth() <= result.getIntOrFloatBitWidth();
  return false;
}

LogicalResult DotOp::verify() {
  ShapedType lhs = getLhs().getType(), rhs = getRhs().getType(),
             result = getResult().getType();
  int64_t rank = lhs.getRank();
  if (rank != 2 && rank != 3)
    return emitOpError("operands must be matrices (rank 2) or batches of "
                       "matrices (rank 3), got rank ")
           << rank;
  if (rhs.getRank() != rank || result.getRank() != rank)
    return emitOpError("lhs, rhs and result must have the same rank, got ")
           << rank << ", " << rhs.getRank() << " and " << result.getRank();
  if (lhs.getElementType() != rhs.getElementType())
    return emitOpError("lhs and rhs element types differ: ")
           << lhs.getElementType() << " vs " << rhs.getElementType();
  if (!canAccumulateInto(lhs.getElementType(), result.getElementType()))
    return emitOpError("cannot accumulate ")
           << lhs.getElementType() << " products into "
           << result.getElementType();
  int64_t batch = rank - 2;
  if (batch && (lhs.getDimSize(0) != rhs.getDimSize(0) ||
                lhs.getDimSize(0) != result.getDimSize(0)))
    return emitOpError("batch sizes differ: ")
           << lhs.getDimSize(0) << ", " << rhs.getDimSize(0) << " and "
           << result.getDimSize(0);
  // A transposed operand has its last two dimensions swapped.
  int64_t m = lhs.getDimSize(batch), k = lhs.getDimSize(batch + 1),
          rhsK = rhs.getDimSize(batch), n = rhs.getDimSize(batch + 1);
  if (getTransposeLhs())
    std::swap(m, k);
  if (getTransposeRhs())
    std::swap(rhsK, n);
  if (k != rhsK)
    return emitOpError("contraction sizes differ: lhs has K = ")
           << k << " but rhs has K = " << rhsK;
  if (result.getDimSize(batch) != m || result.getDimSize(batch + 1) != n)
    return emitOpError("result shape ")
           << shapeString(result.getShape()) << " must be " << m << "x" << n
           << (batch ? " per batch" : "");
  if (getAcc() && getAcc().getType() != result)
    return emitOpError("accumulator type ")
           << getAcc().getType() << " must equal the result type " << result;
  return success();
}

LogicalResult ReduceOp::verify() {
  ShapedType input = getInput().getType(), result = getResult().getType();
  if (failed(verifyDimensions(*this, getDims(), input.getRank())))
    return failure();
  if (getDims().empty())
    return emitOpError("expected at least one dimension to reduce");
  bool unsignedKind =
      getKind() == ReduceKind::umax || getKind() == ReduceKind::umin;
  if (unsignedKind && !isa<IntegerType>(input.getElementType()))
    return emitOpError("'") << stringifyReduceKind(getKind())
                            << "' needs integer elements, got "
                            << input.getElementType();
  if (input.getElementType() != result.getElementType())
    return emitOpError("result element type ")
           << result.getElementType() << " must equal the input's "
           << input.getElementType();
  SmallVector<int64_t> kept;
  for (int64_t d = 0; d < input.getRank(); ++d)
    if (!llvm::is_contained(getDims(), d))
      kept.push_back(input.getDimSize(d));
  if (result.getShape() != ArrayRef<int64_t>(kept))
    return emitOpError("result shape ")
           << shapeString(result.getShape()) << " must be "
           << shapeString(kept) << " (the input without the reduced dims)";
  return success();
}

LogicalResult BroadcastOp::verify() {
  ShapedType input = getInput().getType(), result = getResult().getType();
  if (input.getElementType() != result.getElementType())
    return emitOpError("result element type ")
           << result.getElementType() << " must equal the input's "
           << input.getElementType();
  if (failed(verifyDimensions(*this, getDims(), result.getRank())))
    return failure();
  if (input.getRank() + static_cast<int64_t>(getDims().size()) !=
      result.getRank())
    return emitOpError("result rank ")
           << result.getRank() << " must be the input rank "
           << input.getRank() << " plus " << getDims().size()
           << " added dims";
  int64_t inputDim = 0;
  for (int64_t d = 0; d < result.getRank(); ++d) {
    if (llvm::is_contained(getDims(), d))
      continue;
    int64_t from = input.getDimSize(inputDim), to = result.getDimSize(d);
    if (from != to && from != 1)
      return emitOpError("input dimension ")
             << inputDim << " of size " << from
             << " cannot broadcast to size " << to << " (result dim " << d
             << ")";
    ++inputDim;
  }
  return success();
}

LogicalResult IotaOp::verify() {
  int64_t rank = getResult().getType().getRank();
  if (static_cast<int64_t>(getDim()) >= rank)
    return emitOpError("dimension ")
           << getDim() << " is out of range for rank " << rank;
  return success();
}

/// A semaphore ref: i32 counters, statically shaped, indexed by one index
/// per dimension.
static LogicalResult verifySemaphore(Operation *op, MemRefType type,
                                     size_t numIndices, StringRef what) {
  if (!type.hasStaticShape())
    return op->emitOpError("the ") << what << " must be statically shaped, got " << type;
  if (static_cast<int64_t>(numIndices) != type.getRank())
    return op->emitOpError("expected ")
           << type.getRank() << " semaphore indices (one per dimension of "
           << type << "), got " << numIndices;
  return success();
}

LogicalResult PrintOp::verify() {
  // `{}` placeholders only (no specs, names or positions), one per value,
  // or none at all.
  llvm::StringRef format = getFormat();
  size_t placeholders = 0;
  for (size_t at = 0; at < format.size(); ++at) {
    if (format[at] == '{') {
      if (at + 1 < format.size() && format[at + 1] == '{') {
        ++at;
        continue;
      }
      if (at + 1 >= format.size() || format[at + 1] != '}')
        return emitOpError("format placeholders are `{}` alone, got '")
               << format << "'";
      ++placeholders;
      ++at;
    } else if (format[at] == '}') {
      if (at + 1 < format.size() && format[at + 1] == '}') {
        ++at;
        continue;
      }
      return emitOpError("an unmatched '}' in the format '") << format << "'";
    }
  }
  for (Value value : getValues())
    if (auto tensor = dyn_cast<RankedTensorType>(value.getType());
        tensor && !tensor.hasStaticShape())
      return emitOpError("printed tensors must be statically shaped, got ")
             << tensor;
  if (placeholders != 0 && placeholders != getValues().size())
    return emitOpError("the format has ")
           << placeholders << " placeholders for " << getValues().size()
           << " values";
  return success();
}

LogicalResult SemaphoreSignalOp::verify() {
  return verifySemaphore(*this, getSem().getType(), getIndices().size(),
                         "semaphore ref");
}

LogicalResult SemaphoreWaitOp::verify() {
  return verifySemaphore(*this, getSem().getType(), getIndices().size(),
                         "semaphore ref");
}

LogicalResult SemaphoreReadOp::verify() {
  return verifySemaphore(*this, getSem().getType(), getIndices().size(),
                         "semaphore ref");
}

/// One side of a DMA: the window's sizes (the whole ref without offsets).
static FailureOr<SmallVector<int64_t>>
dmaWindow(Operation *op, StringRef side, MemRefType type, size_t numOffsets,
          std::optional<ArrayRef<int64_t>> sizes) {
  if (numOffsets == 0) {
    if (sizes)
      return op->emitOpError("the ") << side << " window's sizes need offsets";
    return SmallVector<int64_t>(type.getShape());
  }
  if (!sizes)
    return op->emitOpError("the ") << side << " window needs its sizes";
  if (static_cast<int64_t>(numOffsets) != type.getRank() ||
      static_cast<int64_t>(sizes->size()) != type.getRank())
    return op->emitOpError("the ")
           << side << " window needs " << type.getRank()
           << " offsets and sizes (one per dimension of " << type << ")";
  for (auto [d, size] : llvm::enumerate(*sizes))
    if (size < 1 || size > type.getDimSize(d))
      return op->emitOpError("the ")
             << side << " window's size " << size << " in dimension " << d
             << " is outside [1, " << type.getDimSize(d) << "]";
  return SmallVector<int64_t>(*sizes);
}

LogicalResult DMAStartOp::verify() {
  MemRefType src = getSrc().getType(), dst = getDst().getType();
  if (src.getElementType() != dst.getElementType())
    return emitOpError("copies ") << src.getElementType() << " elements into "
                                  << dst.getElementType() << " ones";
  auto srcWindow = dmaWindow(*this, "source", src, getSrcOffsets().size(),
                             getSrcSizes());
  auto dstWindow = dmaWindow(*this, "destination", dst,
                             getDstOffsets().size(), getDstSizes());
  if (failed(srcWindow) || failed(dstWindow))
    return failure();
  auto squeezed = [](ArrayRef<int64_t> sizes) {
    SmallVector<int64_t> kept;
    for (int64_t size : sizes)
      if (size != 1)
        kept.push_back(size);
    return kept;
  };
  if (squeezed(*srcWindow) != squeezed(*dstWindow))
    return emitOpError("the source window ")
           << shapeString(*srcWindow) << " and the destination window "
           << shapeString(*dstWindow)
           << " differ beyond their unit dimensions";
  return verifySemaphore(*this, getSem().getType(), getSemIndices().size(),
                         "semaphore ref");
}
