//! Small IR helpers shared by the passes.

use melior::ir::{OperationRef, operation::{OperationLike, WalkOrder, WalkResult}};
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
    unsafe { melior::ir::Type::from_raw(raw) }.to_string()
}

/// `a, b, c`.
pub fn join<T: ToString>(items: impl IntoIterator<Item = T>) -> String {
    items.into_iter().map(|item| item.to_string()).collect::<Vec<_>>().join(", ")
}

/// The element type of a shaped type, or the type itself.
pub fn element_type(raw: MlirType) -> MlirType {
    unsafe { if mlirTypeIsAShaped(raw) { mlirShapedTypeGetElementType(raw) } else { raw } }
}

/// Bits of an element type: a float's or integer's width, 64 for `index`
/// (the host's), 32 for anything else.
pub fn element_bits(element: MlirType) -> i64 {
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

/// The `value` attribute of the `arith.constant` defining `value`, if that
/// is what defines it.
pub fn constant_value(value: MlirValue) -> Option<MlirAttribute> {
    unsafe {
        if !mlirValueIsAOpResult(value) {
            return None;
        }
        let definition = tessel_dialects::RawOp(mlirOpResultGetOwner(value));
        let attribute = definition.attribute("value");
        (definition.name() == "arith.constant" && !attribute.ptr.is_null()).then_some(attribute)
    }
}
