//===- BlockOps.td - `block` dialect operations -------------*- tablegen -*-===//

#ifndef TESSEL_BLOCK_OPS
#define TESSEL_BLOCK_OPS

include "BlockDialect.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

class Block_Op<string mnemonic, list<Trait> traits = []>
    : Op<Block_Dialect, mnemonic, traits>;

// Tensor types of a block: the mask of a masked access has the accessed
// block's shape with i1 elements; `other` is a scalar of its element type.
defvar MaskOfShape = "::mlir::RankedTensorType::get(::llvm::cast<::mlir::ShapedType>($_self).getShape(), ::mlir::IntegerType::get($_self.getContext(), 1))";
defvar ElementOf = "::llvm::cast<::mlir::ShapedType>($_self).getElementType()";

def Block_LoadOp : Block_Op<"load", [AttrSizedOperandSegments,
    OptionalTypesMatchWith<"mask has the result's shape with i1 elements",
                           "result", "mask", MaskOfShape>,
    OptionalTypesMatchWith<"other is a scalar of the result's element type",
                           "result", "other", ElementOf>]> {
  let summary = "read a block (or a window of it) from a ref";
  let description = [{
    ```mlir
    %a = block.load %x : memref<8x128xf32> -> tensor<8x128xf32>
    %w = block.load %x[%off] [16] : memref<64xf32> -> tensor<16xf32>
    %v = block.load %x mask %m other %ninf : memref<4x128xf32> -> tensor<4x128xf32>
    %g = block.load %pages gather %table dim 0 : memref<16x8xf32>, tensor<4xi32> -> tensor<4x8xf32>
    ```
    With offsets, reads the window of the given static sizes at those
    (dynamic) element offsets (`pl.ds`). Masked-off elements read `other`,
    or an unspecified value when `other` is absent.

    With `gather %indices dim d` (a 1-D tensor of integers), element `i` of
    the result along `d` comes from position `indices[i]` of the ref along
    `d` (plus the window's offset there): `x_ref[idx]`, paged attention's
    `k_pages_ref[block_tables]`. The result has `len(indices)` elements
    along `d` and the ref's (or the window's) sizes elsewhere. Positions
    outside the ref are clamped to it, as JAX's gathers clamp.
  }];
  let arguments = (ins
    Arg<AnyStaticShapeMemRef, "the ref", [MemRead]>:$ref,
    Variadic<Index>:$offsets,
    OptionalAttr<DenseI64ArrayAttr>:$sizes,
    Optional<RankedTensorOf<[I1]>>:$mask,
    Optional<AnyType>:$other,
    Optional<RankedTensorOf<[AnySignlessInteger, Index]>>:$indices,
    OptionalAttr<I64Attr>:$gather_dim);
  let results = (outs AnyStaticShapeTensor:$result);
  let assemblyFormat = [{
    $ref (`[` $offsets^ `]` custom<SizeList>($sizes))?
    (`gather` $indices^ `dim` $gather_dim)? (`mask` $mask^)?
    (`other` $other^)? attr-dict `:` type($ref) (`,` type($indices)^)?
    `->` type($result)
  }];
  let hasVerifier = 1;
}

def Block_StoreOp : Block_Op<"store", [AttrSizedOperandSegments,
    OptionalTypesMatchWith<"mask has the value's shape with i1 elements",
                           "value", "mask", MaskOfShape>]> {
  let summary = "write a block (or a window of it) to a ref";
  let description = [{
    ```mlir
    block.store %v, %o : tensor<8x128xf32>, memref<8x128xf32>
    block.store %w, %o[%off] mask %m2 : tensor<16xf32>, memref<64xf32>
    block.store %v, %pages scatter %table dim 0 : tensor<4x8xf32>, memref<16x8xf32>, tensor<4xi32>
    ```
    With offsets, writes the value as a window at those element offsets.
    Masked-off elements of the ref are left unchanged.

    With `scatter %indices dim d` (a 1-D tensor of integers), element `i`
    of the value along `d` goes to position `indices[i]` of the ref along
    `d` (plus the window's offset there). Elements whose position falls
    outside the ref are dropped, as JAX's scatters drop them; where two
    indices are equal, which element lands is unspecified.
  }];
  let arguments = (ins
    AnyStaticShapeTensor:$value,
    Arg<AnyStaticShapeMemRef, "the ref", [MemWrite]>:$ref,
    Variadic<Index>:$offsets,
    Optional<RankedTensorOf<[I1]>>:$mask,
    Optional<RankedTensorOf<[AnySignlessInteger, Index]>>:$indices,
    OptionalAttr<I64Attr>:$scatter_dim);
  let assemblyFormat = [{
    $value `,` $ref (`[` $offsets^ `]`)? (`scatter` $indices^ `dim` $scatter_dim)?
    (`mask` $mask^)? attr-dict `:` type($value) `,` type($ref)
    (`,` type($indices)^)?
  }];
  let hasVerifier = 1;
}

def Block_DotOp : Block_Op<"dot", [Pure]> {
  let summary = "matrix product of two blocks, optionally accumulated";
  let description = [{
    ```mlir
    %c = block.dot %a, %b : tensor<32x16xf32>, tensor<16x16xf32> -> tensor<32x16xf32>
    %c = block.dot %a, %b acc %c0 : tensor<32x16xbf16>, tensor<16x16xbf16>,
                                    tensor<32x16xf32> -> tensor<32x16xf32>
    ```
    `[B x] M x K` times `[B x] K x N` gives `[B x] M x N`. The result element
    type may be wider than the operands' (f16/bf16 -> f32, i8 -> i32); the
    products are accumulated in it.

    An operand marked `transposed` is given with its last two dimensions
    swapped (`K x M` for the lhs, `N x K` for the rhs): Pallas'
    `pl.dot(a, b, trans_a, trans_b)`, attention's `q @ k.T`.
    ```mlir
    %s = block.dot %q, %k transposed : tensor<64x32xf32>, tensor<128x32xf32>
                                      -> tensor<64x128xf32>
    ```
  }];
  let arguments = (ins AnyStaticShapeTensor:$lhs, AnyStaticShapeTensor:$rhs,
                       Optional<AnyStaticShapeTensor>:$acc,
                       UnitAttr:$transpose_lhs, UnitAttr:$transpose_rhs);
  let results = (outs AnyStaticShapeTensor:$result);
  let assemblyFormat = [{
    $lhs (`transposed` $transpose_lhs^)? `,` $rhs (`transposed` $transpose_rhs^)?
    (`acc` $acc^)? attr-dict `:` type($lhs) `,` type($rhs)
    (`,` type($acc)^)? `->` type($result)
  }];
  let hasVerifier = 1;
}

def Block_ReduceOp : Block_Op<"reduce", [Pure]> {
  let summary = "reduce a block along some dimensions";
  let description = [{
    ```mlir
    %s = block.reduce sum %v dims [1] : tensor<4x128xf32> -> tensor<4xf32>
    %u = block.reduce umax %b dims [0] : tensor<16xi8> -> tensor<i8>
    ```
    `sum`, `max`, `min`, `prod` (signed for integers); `umax` and `umin`
    compare integers as unsigned.
  }];
  let arguments = (ins Block_ReduceKind:$kind, AnyStaticShapeTensor:$input,
                       DenseI64ArrayAttr:$dims);
  let results = (outs AnyStaticShapeTensor:$result);
  let assemblyFormat = [{
    $kind $input `dims` custom<DimList>($dims) attr-dict `:` type($input)
    `->` type($result)
  }];
  let hasVerifier = 1;
}

def Block_BroadcastOp : Block_Op<"broadcast", [Pure]> {
  let summary = "broadcast a block into new dimensions";
  let description = [{
    ```mlir
    %b = block.broadcast %s dims [1] : tensor<4xf32> -> tensor<4x128xf32>
    ```
    `dims` are the result dimensions that the input does not have. An input
    dimension of size 1 also stretches to the result's size.
  }];
  let arguments = (ins AnyStaticShapeTensor:$input, DenseI64ArrayAttr:$dims);
  let results = (outs AnyStaticShapeTensor:$result);
  let assemblyFormat = [{
    $input `dims` custom<DimList>($dims) attr-dict `:` type($input)
    `->` type($result)
  }];
  let hasVerifier = 1;
}

def Block_IotaOp : Block_Op<"iota", [Pure]> {
  let summary = "a block whose elements are their index along one dimension";
  let description = [{
    ```mlir
    %i = block.iota dim 1 : tensor<4x128xi32>
    ```
  }];
  let arguments = (ins ConfinedAttr<I64Attr, [IntNonNegative]>:$dim);
  let results = (outs RankedTensorOf<[AnySignlessInteger, Index]>:$result);
  let assemblyFormat = "`dim` $dim attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Block_AtomicRMWOp : Block_Op<"atomic_rmw", [AttrSizedOperandSegments,
    OptionalTypesMatchWith<"mask has the value's shape with i1 elements",
                           "value", "mask", MaskOfShape>]> {
  let summary = "atomically combine a block into a ref";
  let description = [{
    ```mlir
    block.atomic_rmw add %s1, %o : tensor<1xf32>, memref<1xf32>
    block.atomic_rmw max %w, %o[%off] mask %m : tensor<16xf32>, memref<64xf32>
    %old = block.atomic_rmw xchg %v, %o : tensor<4xi32>, memref<4xi32> -> tensor<4xi32>
    ```
    Each element of the ref under the window is combined with the value's
    element atomically: `add`, `max`, `min` (floats and integers), `xchg`
    (store, any element type), `and`, `or`, `xor`, `umax`, `umin`
    (integers; `max`/`min` compare integers as signed). With a result,
    the op also gives the ref's elements as they were just before (Pallas'
    atomics return them); masked-off lanes of it are zero.
  }];
  let arguments = (ins
    Block_AtomicKind:$kind,
    AnyStaticShapeTensor:$value,
    Arg<AnyStaticShapeMemRef, "the ref", [MemRead, MemWrite]>:$ref,
    Variadic<Index>:$offsets,
    Optional<RankedTensorOf<[I1]>>:$mask);
  let results = (outs Optional<AnyStaticShapeTensor>:$old);
  let assemblyFormat = [{
    $kind $value `,` $ref (`[` $offsets^ `]`)? (`mask` $mask^)? attr-dict
    `:` type($value) `,` type($ref) (`->` type($old)^)?
  }];
  let hasVerifier = 1;
}

def Block_AtomicCASOp : Block_Op<"atomic_cas", [AttrSizedOperandSegments,
    AllTypesMatch<["compare", "value", "old"]>,
    OptionalTypesMatchWith<"mask has the value's shape with i1 elements",
                           "value", "mask", MaskOfShape>]> {
  let summary = "atomically compare and swap a block of a ref";
  let description = [{
    ```mlir
    %old = block.atomic_cas %expected, %new, %o[%off] mask %m
        : tensor<4xi32>, memref<16xi32> -> tensor<4xi32>
    ```
    For each element of the window, atomically: if it equals `compare`'s
    element (bit for bit, so also for floats), it becomes `value`'s. The
    result is the elements as they were before; masked-off lanes are zero.
  }];
  let arguments = (ins
    AnyStaticShapeTensor:$compare,
    AnyStaticShapeTensor:$value,
    Arg<AnyStaticShapeMemRef, "the ref", [MemRead, MemWrite]>:$ref,
    Variadic<Index>:$offsets,
    Optional<RankedTensorOf<[I1]>>:$mask);
  let results = (outs AnyStaticShapeTensor:$old);
  let assemblyFormat = [{
    $compare `,` $value `,` $ref (`[` $offsets^ `]`)? (`mask` $mask^)? attr-dict
    `:` type($value) `,` type($ref) `->` type($old)
  }];
  let hasVerifier = 1;
}

def Block_AtomicCASElementOp : Block_Op<"atomic_cas_element",
    [AllTypesMatch<["compare", "value", "old"]>]> {
  let summary = "atomically compare and swap one element of a buffer";
  let description = [{
    ```mlir
    %old = block.atomic_cas_element %expected, %new, %buffer[%i, %j] : i32, memref<4x8xi32>
    ```
    What block-to-linalg lowers each element of a `block.atomic_cas` to: a
    compare-and-swap without a region, so buffer deallocation (which needs
    every op with regions to describe its control flow) passes it by;
    `tessel-expand-atomics` turns it into `memref.generic_atomic_rmw` once
    buffers are final.
  }];
  let arguments = (ins
    AnyTypeOf<[AnySignlessInteger, AnyFloat]>:$compare,
    AnyTypeOf<[AnySignlessInteger, AnyFloat]>:$value,
    Arg<AnyMemRef, "the buffer", [MemRead, MemWrite]>:$ref,
    Variadic<Index>:$indices);
  let results = (outs AnyTypeOf<[AnySignlessInteger, AnyFloat]>:$old);
  let assemblyFormat = [{
    $compare `,` $value `,` $ref `[` $indices `]` attr-dict `:` type($value) `,` type($ref)
  }];
  let hasVerifier = 1;
}

// Semaphores: i32 counters in semaphore scratch (`grid.call`'s `scratch(...
// semaphore memref<..xi32>)`), zero where a worker's programs start, as a
// TPU core's semaphores are (Pallas' `SemaphoreType.REGULAR/DMA/BARRIER`).

def Block_PrintOp : Block_Op<"print"> {
  let summary = "print scalars from a kernel (pl.debug_print)";
  let description = [{
    ```mlir
    block.print "x[0] = {}, program {}" %x0, %i : f32, index
    ```
    Prints one line: `format` with each `{}` replaced by the next value,
    or, without placeholders, `format` then the values, separated by
    spaces (JAX's debug_print). A value may be a tensor, printed as numpy
    prints arrays. Lines of a kernel are printed in program order: a call
    whose kernel prints runs its grid in order.
  }];
  let arguments = (ins StrAttr:$format,
                   Variadic<AnyTypeOf<[AnySignlessInteger, AnyFloat, Index,
                     RankedTensorOf<[AnySignlessInteger, AnyFloat]>]>>:$values);
  let assemblyFormat = [{
    $format ($values^ `:` type($values))? attr-dict
  }];
  let hasVerifier = 1;
}

def Block_SemaphoreSignalOp : Block_Op<"semaphore_signal", [AttrSizedOperandSegments]> {
  let summary = "add to a semaphore (pl.semaphore_signal)";
  let description = [{
    ```mlir
    block.semaphore_signal %sems[%i], %one : memref<2xi32>
    block.semaphore_signal %ready, %one core %peer : memref<i32>
    ```
    Adds `amount` to the semaphore at `indices` (one per dimension of the
    semaphore ref). With `core`, to that semaphore of another core of the
    call's core mesh (`pl.semaphore_signal(..., core_index=)`): the kernel
    must be called by a `grid.call` with `cores`.

    `concurrent` (set by grid-to-loops for a core mesh, whose cores run at
    once) makes the addition atomic.
  }];
  let arguments = (ins
    Arg<MemRefOf<[I32]>, "the semaphores", [MemRead, MemWrite]>:$sem,
    Variadic<Index>:$indices,
    I32:$amount,
    Optional<Index>:$core,
    UnitAttr:$concurrent);
  let assemblyFormat = [{
    $sem (`[` $indices^ `]`)? `,` $amount (`core` $core^)? (`concurrent` $concurrent^)? attr-dict `:` type($sem)
  }];
  let hasVerifier = 1;
}

def Block_SemaphoreWaitOp : Block_Op<"semaphore_wait"> {
  let summary = "take from a semaphore once it holds enough (pl.semaphore_wait, DMA waits)";
  let description = [{
    ```mlir
    block.semaphore_wait %sems[%i], %bytes : memref<2xi32>
    ```
    Waits until the semaphore at `indices` holds at least `amount`, then
    subtracts it. A program's semaphores are its worker's alone, so a
    wait for more than the count can never be satisfied: compiled code and
    the interpreter report it at the op's location instead of hanging.

    `concurrent` (set by grid-to-loops for a core mesh, whose cores signal
    each other): the wait spins on the count, atomically, until it holds
    enough or the wait timeout (`TESSEL_WAIT_TIMEOUT`, seconds) passes,
    which is reported at the op's location.
  }];
  let arguments = (ins
    Arg<MemRefOf<[I32]>, "the semaphores", [MemRead, MemWrite]>:$sem,
    Variadic<Index>:$indices,
    I32:$amount,
    UnitAttr:$concurrent);
  let assemblyFormat = [{
    $sem (`[` $indices^ `]`)? `,` $amount (`concurrent` $concurrent^)? attr-dict `:` type($sem)
  }];
  let hasVerifier = 1;
}

def Block_SemaphoreReadOp : Block_Op<"semaphore_read"> {
  let summary = "a semaphore's count (pl.semaphore_read)";
  let description = [{
    ```mlir
    %n = block.semaphore_read %sems[%i] : memref<2xi32>
    ```
  }];
  let arguments = (ins
    Arg<MemRefOf<[I32]>, "the semaphores", [MemRead]>:$sem,
    Variadic<Index>:$indices,
    UnitAttr:$concurrent);
  let results = (outs I32:$count);
  let assemblyFormat = [{
    $sem (`[` $indices^ `]`)? (`concurrent` $concurrent^)? attr-dict `:` type($sem)
  }];
  let hasVerifier = 1;
}

def Block_DMAStartOp : Block_Op<"dma_start", [AttrSizedOperandSegments]> {
  let summary = "copy a window of one ref into another and count it on a semaphore (TPU async copies)";
  let description = [{
    ```mlir
    block.dma_start %pages[%page, %c0] [1, 128], %buf[%slot, %c0] [1, 128], %sems[%slot]
        : memref<64x128xf32>, memref<2x128xf32>, memref<2xi32>
    ```
    Copies the source window (offsets and static sizes, as `block.load`'s;
    the whole ref without them) into the destination window, whose sizes
    without their unit dimensions must equal the source's, adding to it
    with `add`, then adds the copy's size in bytes to the semaphore at
    `sem_indices` (`pltpu.make_async_copy(...).start()`; `.wait()` is a
    `block.semaphore_wait` for as many bytes). The copy is done when the
    DMA starts, as JAX's TPU interpreter does in its eager mode: a kernel
    that reads the destination before its wait reads the copied data.
    `concurrent` (a core mesh's): the count is added atomically.
  }];
  let arguments = (ins
    Arg<AnyStaticShapeMemRef, "the source", [MemRead]>:$src,
    Variadic<Index>:$src_offsets,
    OptionalAttr<DenseI64ArrayAttr>:$src_sizes,
    Arg<AnyStaticShapeMemRef, "the destination", [MemRead, MemWrite]>:$dst,
    Variadic<Index>:$dst_offsets,
    OptionalAttr<DenseI64ArrayAttr>:$dst_sizes,
    Arg<MemRefOf<[I32]>, "the semaphores", [MemRead, MemWrite]>:$sem,
    Variadic<Index>:$sem_indices,
    UnitAttr:$add,
    UnitAttr:$concurrent);
  let assemblyFormat = [{
    $src (`[` $src_offsets^ `]` custom<SizeList>($src_sizes))? `,`
    $dst (`[` $dst_offsets^ `]` custom<SizeList>($dst_sizes))? `,`
    $sem (`[` $sem_indices^ `]`)? (`add` $add^)? (`concurrent` $concurrent^)? attr-dict
    `:` type($src) `,` type($dst) `,` type($sem)
  }];
  let hasVerifier = 1;
}

#endif // TESSEL_BLOCK_OPS
