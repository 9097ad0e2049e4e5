//! Looking things up in modules, and facts about block ops that both the
//! lowering and the interpreter need.

use melior::StringRef;
use mlir_sys::{
    MlirOperation, mlirBlockGetFirstOperation, mlirOperationGetAttributeByName, mlirOperationGetFirstRegion,
    mlirOperationGetNextInBlock, mlirRegionGetFirstBlock, mlirStringAttrGetValue,
};

/// The top-level operation of `module` whose `sym_name` is `name`.
pub fn find_symbol(module: MlirOperation, name: &str) -> Option<MlirOperation> {
    unsafe {
        let mut op = mlirBlockGetFirstOperation(mlirRegionGetFirstBlock(mlirOperationGetFirstRegion(module)));
        while !op.ptr.is_null() {
            let symbol = mlirOperationGetAttributeByName(op, StringRef::new("sym_name").to_raw());
            if !symbol.ptr.is_null() && StringRef::from_raw(mlirStringAttrGetValue(symbol)).as_str() == Ok(name) {
                return Some(op);
            }
            op = mlirOperationGetNextInBlock(op);
        }
        None
    }
}

/// The `arith` op combining two elements for a `block.reduce` kind (sum,
/// max, min, prod) or a `block.atomic_rmw` kind (add, max, min).
pub fn combiner(kind: i64, float: bool) -> &'static str {
    match (kind, float) {
        (0, true) => "arith.addf",
        (1, true) => "arith.maximumf",
        (2, true) => "arith.minimumf",
        (_, true) => "arith.mulf",
        (0, false) => "arith.addi",
        (1, false) => "arith.maxsi",
        (2, false) => "arith.minsi",
        (_, false) => "arith.muli",
    }
}
