//! Small IR helpers shared by the passes.

use melior::ir::{OperationRef, operation::{OperationLike, WalkOrder, WalkResult}};
use mlir_sys::{MlirOperation, MlirType};

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
