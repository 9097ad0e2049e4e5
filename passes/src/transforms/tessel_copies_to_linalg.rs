//! `tessel-copies-to-linalg`: strided `memref.copy`s as `linalg.copy`.
//!
//! Blocks are strided views of larger arrays, so most copies that
//! bufferization and block loads make are between non-contiguous memrefs.
//! `finalize-memref-to-llvm` turns those into calls of the runtime's generic
//! `memrefCopy`, which walks them element by element; as `linalg.copy` they
//! become loops with a unit-stride innermost loop that LLVM vectorizes.
//! Copies between contiguous memrefs stay `memref.copy` (a `memcpy`).

use crate::support::handles::is_memref;
use crate::support::handles::{raw_op, value_type};
use crate::{
    PassDefinition, PassError,
    support::ir::{has_identity_layout, print_type},
    support::template,
};
use melior::ir::OperationRef;
use mlir_sys::*;

pub static PASS: PassDefinition = PassDefinition {
    argument: "tessel-copies-to-linalg",
    name: "TesselCopiesToLinalg",
    description: "Rewrite memref.copy between strided memrefs as linalg.copy (vectorizable loops)",
    anchor: "builtin.module",
    run,
};

fn run(module: OperationRef<'static, '_>) -> Result<(), PassError> {
    template::rewrite_each(
        module,
        |name| name == "memref.copy",
        |raw, _| {
            let operands = raw_op(raw).operands();
            let types: Vec<MlirType> = operands.iter().map(|&value| value_type(value)).collect();
            if types.iter().any(|&t| !is_memref(t)) || types.iter().all(|&t| has_identity_layout(t)) {
                return Ok(None);
            }
            let (source, target) = (print_type(types[0]), print_type(types[1]));
            let text = format!(
                "func.func @template(%source: {source}, %target: {target}) {{\n\
             linalg.copy ins(%source : {source}) outs(%target : {target})\n\
             return\n}}\n"
            );
            Ok(Some((text, operands)))
        },
    )
}
