//! Small IR helpers shared by the passes.

use crate::support::handles::{block_of, context_of, next_of, operation_ref, parent_of, raw_op, shaped_element};
use melior::ir::{
    OperationRef,
    operation::{OperationLike, WalkOrder, WalkResult},
};
use mlir_sys::*;

/// The operations nested in `root` whose name satisfies `wanted`, in
/// post-order, with their names: collected before any rewriting starts.
pub fn collect_operations(root: OperationRef, wanted: impl Fn(&str) -> bool) -> Vec<(MlirOperation, String)> {
    let mut found = Vec::new();
    root.walk(WalkOrder::PostOrder, |operation| {
        let name = operation.name().as_string_ref().as_str().unwrap_or("").to_string();
        if wanted(&name) {
            found.push((operation.to_raw(), name));
        }
        WalkResult::Advance
    });
    found
}

/// A type as MLIR prints it, for IR templates.
pub fn print_type(raw: MlirType) -> String {
    // SAFETY: live IR of the module being rewritten (crate invariant, support/handles.rs); indices stay below the counts they are taken from
    unsafe { melior::ir::Type::from_raw(raw) }.to_string()
}

/// `a, b, c`.
pub fn join<T: ToString>(items: impl IntoIterator<Item = T>) -> String {
    items.into_iter().map(|item| item.to_string()).collect::<Vec<_>>().join(", ")
}

/// `d0, d1, ...`: the dimensions of a rank-`rank` affine map.
pub fn map_dims(rank: usize) -> String {
    join((0..rank).map(|d| format!("d{d}")))
}

/// The identity affine map of rank `rank`, as text.
pub fn identity_map(rank: usize) -> String {
    format!("affine_map<({d}) -> ({d})>", d = map_dims(rank))
}

/// `"parallel", ...`: the iterator types of a rank-`rank` element-wise
/// `linalg.generic`.
pub fn parallel_iterators(rank: usize) -> String {
    join((0..rank).map(|_| "\"parallel\""))
}

/// The element type of a shaped type, printed (`f32`, `i8`).
pub fn element_name(shaped: MlirType) -> String {
    print_type(element_type(shaped))
}

/// The element type of a shaped type, or the type itself.
pub fn element_type(raw: MlirType) -> MlirType {
    // SAFETY: live IR (crate invariant, support/handles.rs); a value is read only after its kind is checked
    unsafe { if mlirTypeIsAShaped(raw) { mlirShapedTypeGetElementType(raw) } else { raw } }
}

/// Bits of an element type: a float's or integer's width, 64 for `index`
/// (the host's), 32 for anything else.
pub fn element_bits(element: MlirType) -> i64 {
    // SAFETY: types live in the context; a width is read only of a type
    // of the kind just tested.
    unsafe {
        if mlirTypeIsAFloat(element) {
            mlirFloatTypeGetWidth(element) as i64
        } else if mlirTypeIsAInteger(element) {
            mlirIntegerTypeGetWidth(element) as i64
        } else if mlirTypeIsAIndex(element) {
            64
        } else {
            32
        }
    }
}

/// Bytes of one element of a shaped type (or of an element type): its
/// bits rounded up to whole bytes.
pub fn element_bytes(r#type: MlirType) -> i64 {
    (element_bits(element_type(r#type)) + 7) / 8
}

/// Bytes of a statically shaped type; `None` for a dynamic shape or a
/// size beyond `i64`.
pub fn static_bytes(shaped: MlirType) -> Option<i64> {
    // SAFETY: types live in the context; the shape is read only from a shaped type
    let rank = unsafe {
        if mlirTypeIsAShaped(shaped) && mlirShapedTypeHasRank(shaped) {
            mlirShapedTypeGetRank(shaped)
        } else {
            return None;
        }
    };
    let elements = (0..rank as isize).try_fold(1i64, |total, d| {
        // SAFETY: as above, `d` is below the rank
        let size = unsafe { mlirShapedTypeGetDimSize(shaped, d) };
        (size >= 0).then(|| total.checked_mul(size)).flatten()
    });
    elements?.checked_mul(element_bytes(shaped))
}

/// The op that defines `value` (`None` for a block argument).
pub fn defining_op(value: MlirValue) -> Option<MlirOperation> {
    // SAFETY: live values of the module being rewritten (crate invariant, support/handles.rs); the owner is asked only of an op result
    unsafe { mlirValueIsAOpResult(value).then(|| mlirOpResultGetOwner(value)) }
}

/// The `value` attribute of the `arith.constant` defining `value`, if that
/// is what defines it.
pub fn constant_value(value: MlirValue) -> Option<MlirAttribute> {
    let definition = raw_op(defining_op(value)?);
    let attribute = definition.attribute("value");
    (definition.name() == "arith.constant" && !attribute.ptr.is_null()).then_some(attribute)
}

/// The integer an attribute holds: an integer attribute's, or the element
/// of a splat of integers.
pub fn integer_of(attribute: MlirAttribute) -> Option<i64> {
    // SAFETY: a live attribute of the context, read as the kind it is
    // checked to be.
    unsafe {
        if mlirAttributeIsAInteger(attribute) {
            return Some(mlirIntegerAttrGetValueInt(attribute));
        }
        if mlirAttributeIsADenseElements(attribute) && mlirDenseElementsAttrIsSplat(attribute) {
            let element = mlirDenseElementsAttrGetSplatValue(attribute);
            if mlirAttributeIsAInteger(element) {
                return Some(mlirIntegerAttrGetValueInt(element));
            }
        }
    }
    None
}

/// The integer (or splat of one) `value` is an `arith.constant` of.
pub fn constant_integer(value: MlirValue) -> Option<i64> {
    integer_of(constant_value(value)?)
}

/// The names of the operations in the first block of `op`'s first region
/// (a `linalg.generic`'s body), in order.
pub fn body_names(op: MlirOperation) -> Vec<String> {
    let op = raw_op(op);
    block_operations(op.region_block(0)).into_iter().map(|nested| raw_op(nested).name()).collect()
}

/// The operations of `block`, in order.
pub fn block_operations(block: MlirBlock) -> Vec<MlirOperation> {
    let mut operations = Vec::new();
    // SAFETY: live IR of the module being rewritten (crate invariant, support/handles.rs); indices stay below the counts they are taken from
    let mut op = unsafe { mlirBlockGetFirstOperation(block) };
    while !op.ptr.is_null() {
        operations.push(op);
        op = next_of(op);
    }
    operations
}

/// The blocks of every region of `op`.
pub fn region_blocks(op: MlirOperation) -> Vec<MlirBlock> {
    let mut blocks = Vec::new();
    // SAFETY: live IR of the module being rewritten (crate invariant, support/handles.rs); indices stay below the counts they are taken from
    unsafe {
        for index in 0..mlirOperationGetNumRegions(op) {
            let mut block = mlirRegionGetFirstBlock(mlirOperationGetRegion(op, index));
            while !block.ptr.is_null() {
                blocks.push(block);
                block = mlirBlockGetNextInRegion(block);
            }
        }
    }
    blocks
}

/// The arguments of `block`.
pub fn block_arguments(block: MlirBlock) -> Vec<MlirValue> {
    // SAFETY: `block` is a live block of the module (crate invariant, support/handles.rs); indices stay below its argument count.
    unsafe { (0..mlirBlockGetNumArguments(block)).map(|i| mlirBlockGetArgument(block, i)).collect() }
}

/// Moves `operations`, in order, before `anchor`.
pub fn move_before(operations: &[MlirOperation], anchor: MlirOperation) {
    for &op in operations {
        // SAFETY: `op` and `anchor` are live ops of the module (crate invariant); the move unlinks `op` and links it before `anchor`, so every handle still names a linked op.
        unsafe { mlirOperationMoveBefore(op, anchor) };
    }
}

/// Erases `op` (its results must be unused).
pub fn erase(op: MlirOperation) {
    // SAFETY: `op` is live (crate invariant) and, as the caller promises, none of its results is used, so erasing it leaves no dangling use; the rewriter is created and destroyed here.
    unsafe {
        let rewriter = mlirIRRewriterCreate(mlirOperationGetContext(op));
        mlirRewriterBaseEraseOp(rewriter, op);
        mlirIRRewriterDestroy(rewriter);
    }
}

/// Replaces the uses of `of` by `with` in `op` and in every op nested in it.
pub fn replace_uses_within(op: MlirOperation, of: MlirValue, with: MlirValue) {
    operation_ref(op).walk(WalkOrder::PreOrder, |nested| {
        // SAFETY: `nested` is a live op of the walk; `of` and `with` are live values of the module (crate invariant): only operand slots of `nested` change.
        unsafe { mlirOperationReplaceUsesOfWith(nested.to_raw(), of, with) };
        WalkResult::Advance
    });
}

/// The uses of `value`: each user and the operand number it is at
/// (collected first, so callers may rewrite the operands).
pub fn uses(value: MlirValue) -> Vec<(MlirOperation, usize)> {
    let mut found = Vec::new();
    // SAFETY: live values and uses of the module being rewritten (crate invariant, support/handles.rs); an owner is asked only of an op result
    unsafe {
        let mut used = mlirValueGetFirstUse(value);
        while !mlirOpOperandIsNull(used) {
            found.push((mlirOpOperandGetOwner(used), mlirOpOperandGetOperandNumber(used) as usize));
            used = mlirOpOperandGetNextUse(used);
        }
    }
    found
}

/// The operations that use `value`.
pub fn users(value: MlirValue) -> Vec<MlirOperation> {
    uses(value).into_iter().map(|(user, _)| user).collect()
}

/// `op`'s ancestor (or `op` itself) directly in `block`, if any.
pub fn ancestor_in(block: MlirBlock, op: MlirOperation) -> Option<MlirOperation> {
    let mut current = op;
    while !current.ptr.is_null() {
        if block_of(current).ptr == block.ptr {
            return Some(current);
        }
        current = parent_of(current);
    }
    None
}

/// Does `op`, or an op nested in it, satisfy `test`?
pub fn any_nested(op: MlirOperation, test: impl Fn(MlirOperation) -> bool) -> bool {
    let mut found = false;
    operation_ref(op).walk(WalkOrder::PreOrder, |nested| {
        found |= test(nested.to_raw());
        if found { WalkResult::Interrupt } else { WalkResult::Advance }
    });
    found
}

/// Inlines the template `text` before `anchor` (see `template::inline_before`)
/// and returns its results and the operations it added to `anchor`'s block.
pub fn inline_template(
    anchor: MlirOperation,
    text: &str,
    args: &[MlirValue],
) -> Result<(Vec<MlirValue>, Vec<MlirOperation>), String> {
    let inlined =
        crate::support::template::inline_ops_before(context_of(anchor), anchor, text, args).map_err(|error| error.0)?;
    Ok((inlined.results, inlined.operations))
}

/// The first of `operations` named `name`.
pub fn find_named(operations: &[MlirOperation], name: &str) -> Option<MlirOperation> {
    operations.iter().copied().find(|&op| raw_op(op).name() == name)
}

/// The innermost op enclosing `op` (not `op` itself) that passes `test`.
pub fn enclosing(op: MlirOperation, test: impl Fn(MlirOperation) -> bool) -> Option<MlirOperation> {
    let mut current = parent_of(op);
    while !current.ptr.is_null() {
        if test(current) {
            return Some(current);
        }
        current = parent_of(current);
    }
    None
}

/// Is `op` `ancestor` or nested in it?
pub fn is_inside(op: MlirOperation, ancestor: MlirOperation) -> bool {
    let mut current = op;
    while !current.ptr.is_null() {
        if current.ptr == ancestor.ptr {
            return true;
        }
        current = parent_of(current);
    }
    false
}

/// The largest divisor of `extent` not above `wanted` (at least 1).
pub fn fitting(extent: i64, wanted: i64) -> i64 {
    (1..=wanted.clamp(1, extent.max(1))).rev().find(|size| extent % size == 0).unwrap_or(1)
}

/// Sets the attribute `name` of `op` to `value : i64`.
pub fn set_i64_attribute(op: MlirOperation, name: &str, value: i64) {
    // SAFETY: `op` is live (crate invariant); the i64 attribute is made in its context, and the name outlives the call.
    unsafe {
        let context = mlirOperationGetContext(op);
        let attribute = mlirIntegerAttrGet(mlirIntegerTypeGet(context, 64), value);
        mlirOperationSetAttributeByName(op, melior::StringRef::new(name).to_raw(), attribute);
    }
}

/// The index of `key` in `groups`, added if new (ops sharing a schedule
/// share one transform-script entry).
pub fn group_of<K: PartialEq>(groups: &mut Vec<K>, key: K) -> usize {
    groups.iter().position(|known| *known == key).unwrap_or_else(|| {
        groups.push(key);
        groups.len() - 1
    })
}

/// Which shaped type `shaped_type_text` writes.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum ShapedKind {
    Tensor,
    Memref,
}

/// The text of a shaped type for IR templates, the one writer of them:
/// `tensor<4x8xf32>`, `memref<?x8xi8>`, or with a strided layout and a
/// dynamic offset, `memref<4x8xf32, strided<[64, 1], offset: ?>>`
/// (`i64::MIN`, the C API's dynamic stride, is written `?`).
pub fn shaped_type_text(kind: ShapedKind, dims: &[impl ToString], element: &str, strides: Option<&[i64]>) -> String {
    let name = if kind == ShapedKind::Tensor { "tensor" } else { "memref" };
    let dims: String = dims.iter().map(|size| format!("{}x", size.to_string())).collect();
    match strides {
        Some(strides) => {
            let stride = |s: &i64| if *s == i64::MIN { "?".to_string() } else { s.to_string() };
            format!("{name}<{dims}{element}, strided<[{}], offset: ?>>", join(strides.iter().map(stride)))
        }
        None => format!("{name}<{dims}{element}>"),
    }
}

/// The shape of a statically shaped memref type.
pub fn static_shape(memref: MlirType) -> Option<Vec<i64>> {
    // SAFETY: types live in the context; shape queries run on a memref type, as checked first.
    unsafe {
        if !mlirTypeIsAMemRef(memref) || !mlirShapedTypeHasStaticShape(memref) {
            return None;
        }
        Some((0..mlirShapedTypeGetRank(memref)).map(|dim| mlirShapedTypeGetDimSize(memref, dim as isize)).collect())
    }
}

/// The static shape of a ranked tensor type (a block op's value).
pub fn tensor_shape(tensor: MlirType) -> Vec<i64> {
    // SAFETY: a live ranked tensor type.
    let rank = unsafe { mlirShapedTypeGetRank(tensor) };
    // SAFETY: as above, `d` below the rank.
    (0..rank).map(|d| unsafe { mlirShapedTypeGetDimSize(tensor, d as isize) }).collect()
}

/// Whether the memref type `memref` has the identity layout (row-major,
/// contiguous, offset 0).
pub fn has_identity_layout(memref: MlirType) -> bool {
    // SAFETY: types and their layouts live in the context; the layout is read from a memref type.
    unsafe { mlirTypeIsAMemRef(memref) && mlirAffineMapIsIdentity(mlirMemRefTypeGetAffineMap(memref)) }
}

/// The strides and offset of the memref type `memref` (dynamic ones as
/// `ShapedType::kDynamic`), `None` when its layout is not strided.
pub fn strides_and_offset(memref: MlirType) -> Option<(Vec<i64>, i64)> {
    // SAFETY: types live in the context; the strides buffer holds the memref's rank.
    unsafe {
        let rank = mlirShapedTypeGetRank(memref) as usize;
        let (mut strides, mut offset) = (vec![0i64; rank.max(1)], 0i64);
        let strided = mlirMemRefTypeGetStridesAndOffset(memref, strides.as_mut_ptr(), &mut offset).value != 0;
        strides.truncate(rank);
        strided.then_some((strides, offset))
    }
}

/// `memref<RxCxE, strided<[s0, s1], offset: ?>>`: the type of an `R`x`C`
/// subview (unit steps, dynamic offsets) of the rank-2 memref `source`.
pub fn strided_view_type(source: MlirType, rows: i64, columns: i64) -> String {
    let strides = strides_and_offset(source).map_or(vec![0; 2], |(strides, _)| strides);
    let element = print_type(shaped_element(source));
    shaped_type_text(ShapedKind::Memref, &[rows, columns], &element, Some(&strides))
}

/// Ops that view a memref (operand 0) without touching its elements.
pub const VIEWS: &[&str] = &[
    "memref.subview",
    "memref.expand_shape",
    "memref.collapse_shape",
    "memref.cast",
    "memref.reinterpret_cast",
    "memref.transpose",
];

/// The memref `value` is a view of, through `VIEWS` (`value` itself when
/// no view defines it).
pub fn view_root(value: MlirValue) -> MlirValue {
    let mut current = value;
    while let Some(op) = defining_op(current) {
        let raw = raw_op(op);
        if !VIEWS.contains(&raw.name().as_str()) {
            break;
        }
        current = raw.operands()[0];
    }
    current
}

/// Whether the memref windows `a` and `b` cannot overlap: views (through
/// [`VIEWS`] and `memref.view`s of byte buffers) of different buffers, at
/// least one allocated in the function (arguments may alias each other).
pub fn disjoint_windows(a: MlirValue, b: MlirValue) -> bool {
    let buffer = |value: MlirValue| {
        let mut root = view_root(value);
        while let Some(op) = defining_op(root).filter(|&op| raw_op(op).name() == "memref.view") {
            root = view_root(raw_op(op).operands()[0]);
        }
        root
    };
    let (a, b) = (buffer(a), buffer(b));
    // SAFETY: values live in the module being rewritten.
    if unsafe { mlirValueEqual(a, b) } {
        return false;
    }
    let allocated = |value: MlirValue| {
        defining_op(value).is_some_and(|op| matches!(raw_op(op).name().as_str(), "memref.alloc" | "memref.alloca"))
    };
    allocated(a) || allocated(b)
}

/// Clones, before `anchor`, the ops `value` is computed from that `inside`
/// accepts, with the values of `substitutes` (keyed by their handles)
/// replaced; returns the new value. `cloned` maps the ops cloned so far to
/// their clones (a value used twice is computed once). Values from ops
/// `inside` rejects, and block arguments, are used as they are.
pub fn recompute_before(
    value: MlirValue,
    substitutes: &std::collections::HashMap<usize, MlirValue>,
    inside: &dyn Fn(MlirOperation) -> bool,
    anchor: MlirOperation,
    cloned: &mut std::collections::HashMap<usize, MlirOperation>,
) -> MlirValue {
    if let Some(&substitute) = substitutes.get(&(value.ptr as usize)) {
        return substitute;
    }
    let Some(op) = defining_op(value).filter(|&op| inside(op)) else { return value };
    let clone = match cloned.get(&(op.ptr as usize)) {
        Some(&clone) => clone,
        None => {
            let operands: Vec<MlirValue> = raw_op(op)
                .operands()
                .iter()
                .map(|&operand| recompute_before(operand, substitutes, inside, anchor, cloned))
                .collect();
            // SAFETY: live IR of the module being rewritten (crate invariant, support/handles.rs); the clone is the caller's pass's own, inserted once, its operand positions those of the op it copies
            let clone = unsafe {
                let clone = mlirOperationClone(op);
                for (position, &operand) in operands.iter().enumerate() {
                    mlirOperationSetOperand(clone, position as isize, operand);
                }
                mlirBlockInsertOwnedOperationBefore(mlirOperationGetBlock(anchor), anchor, clone);
                clone
            };
            cloned.insert(op.ptr as usize, clone);
            clone
        }
    };
    let position = raw_op(op).results().iter().position(|result| result.ptr == value.ptr).unwrap_or(0);
    raw_op(clone).results()[position]
}

/// Whether `op` reads, writes, allocates or frees no memory, by MLIR's
/// memory-effect interface (nested ops included for ops with recursive
/// effects; ops declaring nothing count as effectful): such an op may be
/// reordered with any read or write.
pub fn is_memory_effect_free(op: MlirOperation) -> bool {
    // SAFETY: live IR of the module being rewritten (crate invariant, support/handles.rs)
    unsafe { tessel_dialects::ffi::tesselOperationIsMemoryEffectFree(op) }
}
