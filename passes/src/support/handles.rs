//! Safe views of the C API's raw handles, for passes.
//!
//! Tessel's passes rewrite IR through raw handles (`MlirOperation`,
//! `MlirValue`, `MlirType`), which melior's safe API does not cover in full.
//! The crate keeps one invariant: **a handle a pass holds names a live
//! object of the module that pass is running on** — taken from that module
//! during the run and not erased since. Types and attributes are uniqued in
//! the context, which outlives every pass. Under that invariant the calls
//! below are sound; this module is crate-private, so no code outside the
//! crate can hand them anything else.

use melior::ir::{Location, OperationRef, operation::OperationLike};
use mlir_sys::*;
use tessel_dialects::RawOp;

/// `op` through melior's safe API.
pub fn operation_ref(op: MlirOperation) -> OperationRef<'static, 'static> {
    // SAFETY: the crate invariant: `op` is a live operation of the module
    // being transformed, whose context lives for the pass.
    unsafe { OperationRef::from_raw(op) }
}

/// `op` through the name/operand/attribute view the passes share.
pub fn raw_op(op: MlirOperation) -> RawOp {
    // SAFETY: the crate invariant, as in `operation_ref`.
    unsafe { RawOp::from_raw(op) }
}

/// Where `op` is in the source, for diagnostics.
pub fn location_of(op: MlirOperation) -> Location<'static> {
    operation_ref(op).location()
}

/// The type of `value`.
pub fn value_type(value: MlirValue) -> MlirType {
    // SAFETY: the crate invariant: `value` is a live value of the module.
    unsafe { mlirValueGetType(value) }
}

/// The operation `op` is nested in (null at the top).
pub fn parent_of(op: MlirOperation) -> MlirOperation {
    // SAFETY: the crate invariant.
    unsafe { mlirOperationGetParentOperation(op) }
}

/// The operation after `op` in its block (null at the end).
pub fn next_of(op: MlirOperation) -> MlirOperation {
    // SAFETY: the crate invariant.
    unsafe { mlirOperationGetNextInBlock(op) }
}

/// The block `op` is in (null when detached).
pub fn block_of(op: MlirOperation) -> MlirBlock {
    // SAFETY: the crate invariant.
    unsafe { mlirOperationGetBlock(op) }
}

/// The context of `op`.
pub fn context_of(op: MlirOperation) -> MlirContext {
    // SAFETY: the crate invariant.
    unsafe { mlirOperationGetContext(op) }
}

/// Result `index` of `op`.
pub fn result_of(op: MlirOperation, index: usize) -> MlirValue {
    // SAFETY: the crate invariant; the index is checked against the count.
    unsafe {
        assert!((index as isize) < mlirOperationGetNumResults(op), "result #{index} of an op with fewer");
        mlirOperationGetResult(op, index as isize)
    }
}

/// The element type of the shaped type `shaped`.
pub fn shaped_element(shaped: MlirType) -> MlirType {
    // SAFETY: types live in the context; the type is checked to be shaped.
    unsafe {
        assert!(mlirTypeIsAShaped(shaped), "the element type of a type that is not shaped");
        mlirShapedTypeGetElementType(shaped)
    }
}

/// The rank of the ranked shaped type `shaped`.
pub fn rank_of(shaped: MlirType) -> i64 {
    // SAFETY: types live in the context; checked to be shaped and ranked.
    unsafe {
        assert!(mlirTypeIsAShaped(shaped) && mlirShapedTypeHasRank(shaped), "the rank of an unranked type");
        mlirShapedTypeGetRank(shaped)
    }
}

/// Size `dimension` of the ranked shaped type `shaped` (`i64::MIN` when
/// dynamic).
pub fn dim_size(shaped: MlirType, dimension: usize) -> i64 {
    let rank = rank_of(shaped);
    assert!((dimension as i64) < rank, "dimension {dimension} of a rank-{rank} type");
    // SAFETY: a ranked shaped type (checked by `rank_of`) and a dimension
    // below its rank.
    unsafe { mlirShapedTypeGetDimSize(shaped, dimension as isize) }
}

/// Whether `r#type` is a memref type.
pub fn is_memref(r#type: MlirType) -> bool {
    // SAFETY: types live in the context.
    unsafe { mlirTypeIsAMemRef(r#type) }
}

/// Whether `r#type` is a ranked tensor type.
pub fn is_ranked_tensor(r#type: MlirType) -> bool {
    // SAFETY: types live in the context; a kind test reads only the type's id.
    unsafe { mlirTypeIsARankedTensor(r#type) }
}

/// Whether `r#type` is a vector type.
pub fn is_vector(r#type: MlirType) -> bool {
    // SAFETY: types live in the context; a kind test reads only the type's id.
    unsafe { mlirTypeIsAVector(r#type) }
}

/// Whether `r#type` is a shaped type (tensor, memref, vector).
pub fn is_shaped(r#type: MlirType) -> bool {
    // SAFETY: types live in the context; a kind test reads only the type's id.
    unsafe { mlirTypeIsAShaped(r#type) }
}

/// Whether `r#type` is a float type.
pub fn is_float_type(r#type: MlirType) -> bool {
    // SAFETY: types live in the context; a kind test reads only the type's id.
    unsafe { mlirTypeIsAFloat(r#type) }
}

/// Whether `r#type` is an integer or `index`.
pub fn is_integer_or_index(r#type: MlirType) -> bool {
    // SAFETY: types live in the context; kind tests read only the type's id.
    unsafe { mlirTypeIsAInteger(r#type) || mlirTypeIsAIndex(r#type) }
}

/// Whether `r#type` is a shaped type with a static shape.
pub fn has_static_shape(r#type: MlirType) -> bool {
    // SAFETY: types live in the context; the shape is read only of a
    // shaped type.
    unsafe { mlirTypeIsAShaped(r#type) && mlirShapedTypeHasStaticShape(r#type) }
}

/// Replaces every use of `of` by `with`.
pub fn replace_all_uses(of: MlirValue, with: MlirValue) {
    // SAFETY: the crate invariant, for both values.
    unsafe { mlirValueReplaceAllUsesOfWith(of, with) }
}

/// An attribute as MLIR prints it (empty for a null attribute).
pub fn attribute_text(attribute: MlirAttribute) -> String {
    if attribute.ptr.is_null() {
        return String::new();
    }
    // SAFETY: attributes live in the context; checked non-null.
    unsafe { melior::ir::Attribute::from_raw(attribute) }.to_string()
}

/// `r#type` with its signed and unsigned integers (`ui8`, `si32`) made
/// signless (`i8`, `i32`), in scalars, tensors, memrefs and function types;
/// `None` when it has none.
pub fn signless(r#type: MlirType) -> Option<MlirType> {
    // SAFETY: types are uniqued in their context, which outlives every
    // pass; each constructor gets the parts read from a type of its kind
    // (shape and rank of a ranked type, its layout and memory space).
    unsafe {
        if mlirTypeIsAInteger(r#type) {
            let signless = mlirIntegerTypeIsSigned(r#type) || mlirIntegerTypeIsUnsigned(r#type);
            return signless.then(|| mlirIntegerTypeGet(mlirTypeGetContext(r#type), mlirIntegerTypeGetWidth(r#type)));
        }
        if mlirTypeIsAFunction(r#type) {
            let inputs: Vec<MlirType> =
                (0..mlirFunctionTypeGetNumInputs(r#type)).map(|i| mlirFunctionTypeGetInput(r#type, i)).collect();
            let results: Vec<MlirType> =
                (0..mlirFunctionTypeGetNumResults(r#type)).map(|i| mlirFunctionTypeGetResult(r#type, i)).collect();
            if !inputs.iter().chain(&results).any(|&t| signless(t).is_some()) {
                return None;
            }
            let inputs: Vec<MlirType> = inputs.into_iter().map(|t| signless(t).unwrap_or(t)).collect();
            let results: Vec<MlirType> = results.into_iter().map(|t| signless(t).unwrap_or(t)).collect();
            return Some(mlirFunctionTypeGet(
                mlirTypeGetContext(r#type),
                inputs.len() as isize,
                inputs.as_ptr(),
                results.len() as isize,
                results.as_ptr(),
            ));
        }
        let ranked = mlirTypeIsAMemRef(r#type) || mlirTypeIsARankedTensor(r#type);
        if !ranked {
            return None;
        }
        let element = signless(mlirShapedTypeGetElementType(r#type))?;
        let shape: Vec<i64> =
            (0..mlirShapedTypeGetRank(r#type)).map(|d| mlirShapedTypeGetDimSize(r#type, d as isize)).collect();
        Some(if mlirTypeIsAMemRef(r#type) {
            mlirMemRefTypeGet(
                element,
                shape.len() as isize,
                shape.as_ptr(),
                mlirMemRefTypeGetLayout(r#type),
                mlirMemRefTypeGetMemorySpace(r#type),
            )
        } else {
            mlirRankedTensorTypeGet(
                shape.len() as isize,
                shape.as_ptr(),
                element,
                mlirRankedTensorTypeGetEncoding(r#type),
            )
        })
    }
}

/// Gives `value` the type `r#type` (uses must accept it: the caller
/// rewrites every value whose type changes).
pub fn set_value_type(value: MlirValue, r#type: MlirType) {
    // SAFETY: the crate invariant: `value` is a live value of the module.
    unsafe { mlirValueSetType(value, r#type) }
}

/// Sets the attribute `name` of `op`.
pub fn set_attribute(op: MlirOperation, name: &str, attribute: MlirAttribute) {
    // SAFETY: the crate invariant; attributes live in the context.
    unsafe { mlirOperationSetAttributeByName(op, melior::StringRef::new(name).to_raw(), attribute) }
}

/// Sets the unit attribute `name` on `op`.
pub fn set_unit_attribute(op: MlirOperation, name: &str) {
    // SAFETY: the crate invariant; the unit attribute is uniqued in op's context.
    set_attribute(op, name, unsafe { mlirUnitAttrGet(mlirOperationGetContext(op)) })
}

/// The op whose region holds block argument `value`, and the argument's
/// position in its block (`None` for an op result).
pub fn argument_owner(value: MlirValue) -> Option<(MlirOperation, usize)> {
    // SAFETY: the crate invariant; owner and position are asked only of a block argument
    unsafe {
        mlirValueIsABlockArgument(value).then(|| {
            (
                mlirBlockGetParentOperation(mlirBlockArgumentGetOwner(value)),
                mlirBlockArgumentGetArgNumber(value) as usize,
            )
        })
    }
}

/// Type `r#type` as a type attribute.
pub fn type_attribute(r#type: MlirType) -> MlirAttribute {
    // SAFETY: types and attributes are uniqued in the context.
    unsafe { mlirTypeAttrGet(r#type) }
}

#[cfg(test)]
mod tests {
    use std::{fs, path::Path};

    /// Every `.rs` file under `dir`, recursively.
    fn rust_sources(dir: &Path, found: &mut Vec<std::path::PathBuf>) {
        for entry in fs::read_dir(dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() && !path.ends_with("target") {
                rust_sources(&path, found);
            } else if path.extension().is_some_and(|extension| extension == "rs") {
                found.push(path);
            }
        }
    }

    /// melior's `ContextRef::to_ref` hands out a reference into the
    /// `ContextRef` itself, so calling it on a temporary (`op.context()
    /// .to_ref()`) leaves a reference to a dead stack slot: a pass crashed
    /// on it only when the slot was reused. Bind the handle to a local.
    #[test]
    fn no_context_reference_into_a_temporary_handle() {
        let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the workspace");
        let mut sources = Vec::new();
        for crate_dir in ["dialects", "passes", "lowering", "runtime", "driver", "tuner", "python"] {
            rust_sources(&workspace.join(crate_dir), &mut sources);
        }
        assert!(sources.len() > 20, "found the workspace's sources");
        let offenders: Vec<String> = sources
            .iter()
            .flat_map(|path| {
                let text = fs::read_to_string(path).unwrap_or_default();
                text.lines()
                    .enumerate()
                    .filter(|(_, line)| line.contains(concat!("context()", ".to_ref()")))
                    .map(|(number, _)| format!("{}:{}", path.display(), number + 1))
                    .collect::<Vec<_>>()
            })
            .collect();
        assert!(offenders.is_empty(), "to_ref on a temporary context handle at {offenders:?}");
    }
}
