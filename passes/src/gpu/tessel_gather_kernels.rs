//! `tessel-gather-kernels`: the kernels of every `gpu.module` in one, so a
//! module compiles to one code object holding one kernel per grid call.
//!
//! `gpu-kernel-outlining` makes a `gpu.module` per launch, each holding a
//! kernel. Each kernel moves to the first module, renamed after the module
//! it came from (module names are unique, so kernel names stay unique);
//! other symbols (globals the kernels use) move unless the first module has
//! one of that name already (outlining cloned the same definition); the
//! `gpu.launch_func`s are updated.

use crate::support::handles::{attribute_text, raw_op};
use crate::{
    PassDefinition, PassError,
    support::ir::{block_operations, collect_operations, erase},
};
use melior::{
    StringRef,
    ir::{OperationRef, operation::OperationLike},
};
use mlir_sys::*;
use std::collections::HashSet;

pub static PASS: PassDefinition = PassDefinition {
    argument: "tessel-gather-kernels",
    name: "TesselGatherKernels",
    description: "Move the kernels of every gpu.module into the first one",
    anchor: "builtin.module",
    run,
};

fn symbol_name(op: MlirOperation) -> String {
    let attribute = raw_op(op).attribute("sym_name");
    if attribute.ptr.is_null() {
        return String::new();
    }
    // SAFETY: attributes live in the context; each is read as the kind the op's verifier (or a check here) guarantees
    let name = unsafe { mlirStringAttrGetValue(attribute) };
    // SAFETY: attributes live in the context; each is read as the kind the op's verifier (or a check here) guarantees
    unsafe { StringRef::from_raw(name) }.as_str().unwrap_or("").to_string()
}

fn set_attribute(op: MlirOperation, name: &str, text: &str) -> Result<(), String> {
    // SAFETY: `op` is live (crate invariant); a text that does not parse gives a null attribute, which is returned as an error and never set.
    unsafe {
        let attribute = mlirAttributeParseGet(mlirOperationGetContext(op), StringRef::new(text).to_raw());
        if attribute.ptr.is_null() {
            return Err(format!("cannot build attribute {text}"));
        }
        mlirOperationSetAttributeByName(op, StringRef::new(name).to_raw(), attribute);
    }
    Ok(())
}

fn run(module: OperationRef<'static, '_>) -> Result<(), PassError> {
    if let Err(message) = gather(module) {
        return Err(PassError::at(module.location(), message));
    }
    Ok(())
}

fn gather(module: OperationRef<'static, '_>) -> Result<(), String> {
    let top = raw_op(module.to_raw()).region_block(0);
    let gpu_modules: Vec<MlirOperation> =
        block_operations(top).into_iter().filter(|&op| raw_op(op).name() == "gpu.module").collect();
    let Some((&first, others)) = gpu_modules.split_first() else { return Ok(()) };
    let target_name = symbol_name(first);
    let target_body = raw_op(first).region_block(0);
    let mut defined: HashSet<String> = block_operations(target_body).into_iter().map(symbol_name).collect();
    let mut renamed = Vec::new();
    for &other in others {
        let module_name = symbol_name(other);
        for op in block_operations(raw_op(other).region_block(0)) {
            let raw = raw_op(op);
            let name = symbol_name(op);
            if raw.name() == "gpu.func" {
                renamed.push((format!("@{module_name}::@{name}"), format!("@{target_name}::@{module_name}")));
                set_attribute(op, "sym_name", &format!("\"{module_name}\""))?;
                defined.insert(module_name.clone());
            } else if name.is_empty() || defined.contains(&name) {
                continue;
            } else {
                defined.insert(name);
            }
            // SAFETY: `op` is a live op of `other`'s body, unlinked and appended to the live `target_body`, which now owns it; `other`, erased next, no longer holds it.
            unsafe {
                mlirOperationRemoveFromParent(op);
                mlirBlockAppendOwnedOperation(target_body, op);
            }
        }
        erase(other);
    }
    for (launch, _) in collect_operations(module, |name| name == "gpu.launch_func") {
        let kernel = raw_op(launch).attribute("kernel");
        let text = attribute_text(kernel);
        if let Some((_, new)) = renamed.iter().find(|(old, _)| *old == text) {
            set_attribute(launch, "kernel", new)?;
        }
    }
    Ok(())
}
