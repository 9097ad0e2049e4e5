//===- GridDialect.td - the launch-level `grid` dialect ------*- tablegen -*-===//
//
// `grid` describes *where* a block kernel runs: a grid of programs and, per
// operand, a BlockSpec saying which block each program sees (Pallas'
// `pallas_call` semantics).
//
//===----------------------------------------------------------------------===//

#ifndef TESSEL_GRID_DIALECT
#define TESSEL_GRID_DIALECT

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def Grid_Dialect : Dialect {
  let name = "grid";
  let cppNamespace = "::tessel::grid";
  let summary = "Pallas-style grids of block programs";
  let description = [{
    `grid.call` runs a block kernel once per point of a grid; each operand is
    cut into blocks by a `#grid.block` BlockSpec.
  }];
  let useDefaultAttributePrinterParser = 1;
  let dependentDialects = ["::mlir::func::FuncDialect"];
}

// Axis semantics of a grid: `parallel` axes may run in any order and
// concurrently, `arbitrary` axes run in order (revisited output blocks keep
// their contents between consecutive programs).
def Grid_DimensionSemantics : I32EnumAttr<"DimensionSemantics",
    "iteration semantics of a grid axis", [
      I32EnumAttrCase<"parallel", 0>,
      I32EnumAttrCase<"arbitrary", 1>
    ]> {
  let cppNamespace = "::tessel::grid";
}

def Grid_BlockSpecAttr : AttrDef<Grid_Dialect, "BlockSpec"> {
  let mnemonic = "block";
  let summary = "a Pallas BlockSpec: block shape + index map";
  let description = [{
    Forms:
      #grid.block<full>                              block_shape=None
      #grid.block<[b0, squeezed, ...]>               all-zero block indices
      #grid.block<[b0, ...], (i, j) -> (i, 0)>       blocked index map
      #grid.block<[b0, ...], (i) -> (i * 4, 0), unblocked>
      #grid.block<[b0, ...], (i) -> (i * 4, 0), unblocked pad [[1, 1], [0, 0]]>
      #grid.block<[b0, ...], @index_function>        any function of the ids
    A `squeezed` dimension is Pallas' `None`: block size 1, removed from the
    kernel's ref. `blockShape` stores it as `kSqueezed`; `indexMap` is null
    when the map is omitted; `padding` is empty or holds (lo, hi) per dim.
    `indexFunction` (instead of a map) names a `func.func` from the program
    ids and the call's scalar arrays to the block indices.
  }];
  let parameters = (ins
    "bool":$full,
    ArrayRefParameter<"int64_t", "block sizes, kSqueezed for squeezed">:$blockShape,
    "::mlir::AffineMap":$indexMap,
    "bool":$unblocked,
    ArrayRefParameter<"int64_t", "(lo, hi) pairs">:$padding,
    "::mlir::FlatSymbolRefAttr":$indexFunction
  );
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    static constexpr int64_t kSqueezed = -1;
    /// Rank of the array this spec cuts (0 for `full`: unknown until used).
    size_t getRank() const { return getBlockShape().size(); }
    /// The block shape as the kernel sees it: squeezed dimensions removed.
    ::llvm::SmallVector<int64_t> getKernelShape() const;
  }];
}

#endif // TESSEL_GRID_DIALECT
