//! The reference interpreter runs every op any kernel uses: every function
//! a `grid.call` in `examples/` or `test/` runs is walked, and each op in it
//! must be one `tessel_runtime::interpret::supports` (else `--interpret` and
//! `--check` would refuse a kernel the compiled paths run).

use melior::ir::{
    BlockLike, Module,
    operation::{OperationLike, WalkOrder, WalkResult},
};
use std::{collections::BTreeSet, path::Path};
use tessel_dialects::GridCall;

/// Ops of every kernel of the file at `path` that the interpreter lacks.
fn unsupported_kernel_ops(path: &Path, source: &str) -> Result<BTreeSet<String>, String> {
    let context = tessel_dialects::create_context();
    let module = Module::parse(&context, source).ok_or_else(|| format!("{}: does not parse", path.display()))?;
    let mut kernels = BTreeSet::new();
    module.as_operation().walk(WalkOrder::PreOrder, |op| {
        if let Some(call) = GridCall::new(op) {
            kernels.insert(call.callee());
        }
        WalkResult::Advance
    });
    let mut missing = BTreeSet::new();
    let body = module.body();
    let mut function = body.first_operation();
    while let Some(current) = function {
        let name = current.attribute("sym_name").map(|name| name.to_string().trim_matches('"').to_string());
        if name.is_ok_and(|name| kernels.contains(&name)) {
            current.walk(WalkOrder::PreOrder, |op| {
                let op_name = op.name().as_string_ref().as_str().unwrap_or("?").to_string();
                if op_name != "func.func" && !tessel_runtime::interpret::supports(&op_name) {
                    missing.insert(op_name.clone());
                }
                // A linalg op's region is its implicit body, not code the
                // interpreter runs op by op.
                if op_name.starts_with("linalg.") { WalkResult::Skip } else { WalkResult::Advance }
            });
        }
        function = current.next_in_block();
    }
    Ok(missing)
}

/// Files that are one valid module are checked (not split inputs, not
/// diagnostics tests, not files whose RUN lines say they are invalid).
pub fn interpreter_covers_kernels(path: &Path, source: String) -> datatest_stable::Result<()> {
    let invalid = ["// -----", "expected-error", "--verify-diagnostics", "// RUN: not tessel-opt %s"];
    if invalid.iter().any(|marker| source.contains(marker)) {
        return Ok(());
    }
    tessel_lowering::register_everything();
    let missing = unsupported_kernel_ops(path, &source)?;
    if !missing.is_empty() {
        return Err(format!("{}: the interpreter does not support {missing:?}", path.display()).into());
    }
    Ok(())
}
