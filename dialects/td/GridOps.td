//===- GridOps.td - `grid` dialect operations ---------------*- tablegen -*-===//

#ifndef TESSEL_GRID_OPS
#define TESSEL_GRID_OPS

include "GridDialect.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"

class Grid_Op<string mnemonic, list<Trait> traits = []>
    : Op<Grid_Dialect, mnemonic, traits>;

def Grid_CallOp : Grid_Op<"call", [
    AttrSizedOperandSegments,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "run a block kernel once per grid point (pallas_call)";
  let description = [{
    ```mlir
    grid.call @matmul_kernel grid [8, 8]
        ins(%x, %y : memref<1024x256xf32>, memref<256x1024xf32>)
        outs(%z : memref<1024x1024xf32>)
        in_specs [#grid.block<[128, 256], (i, j) -> (i, 0)>,
                  #grid.block<[256, 128], (i, j) -> (0, j)>]
        out_specs [#grid.block<[128, 128], (i, j) -> (i, j)>]
    ```
    The kernel's arguments are the refs in Pallas order: one per scalar
    (scalar prefetch: whole arrays, also passed to index functions), one per
    input, one per output, then one per `scratch` type. Inputs and outputs
    may alias. `semantics` lists `parallel`/`arbitrary` per grid axis; when
    omitted it is inferred by `grid-verify-specs`.

    ```mlir
    grid.call @paged grid [2, 3] scalars(%tables : memref<2x3xi32>)
        ins(%pages : memref<8x16xf32>) outs(%o : memref<2x16xf32>)
        in_specs [#grid.block<[1, 16], @page_of>]
        out_specs [#grid.block<[1, 16], (i, j) -> (i, 0)>]
    ```
    A BlockSpec's index map may be a function `@page_of(%i: index, %j:
    index, %tables: memref<2x3xi32>) -> index` of the program ids and the
    scalar arrays (Pallas' index maps with `num_scalar_prefetch`). Grid
    sizes may be `index` values (`grid [%n, 4]`), e.g. loaded from a
    scalar array: `grid` holds `ShapedType::kDynamic` for them and
    `dynamic_grid` their values, in order.

    ```mlir
    grid.call @pair grid [2] cores ins(%x : memref<16x128xf32>)
        outs(%o : memref<16x128xf32>)
        scratch(semaphore memref<i32>, shared memref<8x128xf32>)
        in_specs [#grid.block<full>] out_specs [#grid.block<full>]
    ```
    `cores`: the leading axis is a TensorCore mesh (`pl.kernel`,
    `pl.core_map`): its programs are cores, which all run at once (a
    thread each), signal each other's semaphores (`block.semaphore_signal`
    with `core`) and run the rest of the grid, if any, in order. A
    `shared` scratch buffer is one for the whole call, which every program
    sees (`pltpu.VMEM_SHARED`); the others are each core's own.
  }];
  let arguments = (ins
    FlatSymbolRefAttr:$callee,
    DenseI64ArrayAttr:$grid,
    Arg<Variadic<AnyMemRef>, "arrays read by the kernel", [MemRead]>:$inputs,
    Arg<Variadic<AnyMemRef>, "arrays written by the kernel", [MemRead, MemWrite]>:$outputs,
    Arg<Variadic<AnyMemRef>, "scalar-prefetch arrays, read by kernel and index functions", [MemRead]>:$scalars,
    Variadic<Index>:$dynamic_grid,
    OptionalAttr<TypeArrayAttr>:$scratch,
    OptionalAttr<DenseI64ArrayAttr>:$semaphores,
    OptionalAttr<DenseI64ArrayAttr>:$shared,
    UnitAttr:$cores,
    TypedArrayAttrBase<Grid_BlockSpecAttr, "input BlockSpecs">:$in_specs,
    TypedArrayAttrBase<Grid_BlockSpecAttr, "output BlockSpecs">:$out_specs,
    OptionalAttr<TypedArrayAttrBase<Grid_DimensionSemantics, "axis semantics">>:$semantics
  );
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
}

def Grid_ProgramIdOp : Grid_Op<"program_id", [Pure]> {
  let summary = "index of the running program along a grid axis (pl.program_id)";
  let arguments = (ins ConfinedAttr<I64Attr, [IntNonNegative]>:$axis);
  let results = (outs Index:$result);
  let assemblyFormat = "$axis attr-dict";
}

def Grid_NumProgramsOp : Grid_Op<"num_programs", [Pure]> {
  let summary = "size of the grid along an axis (pl.num_programs)";
  let arguments = (ins ConfinedAttr<I64Attr, [IntNonNegative]>:$axis);
  let results = (outs Index:$result);
  let assemblyFormat = "$axis attr-dict";
}

#endif // TESSEL_GRID_OPS
