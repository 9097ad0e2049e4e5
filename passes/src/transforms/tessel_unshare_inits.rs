//! `tessel-unshare-inits`: every `tensor.empty` and tensor `linalg.fill`
//! gets one copy per use.
//!
//! CSE merges equal inits: two reductions of one block to results of the
//! same type share one `linalg.fill` of the identity. If one of them is
//! then stored to a ref, `eliminate-empty-tensors` builds that shared init
//! in the ref itself, and the other reduction, computing in place in its
//! init, overwrites the stored result (the ref's memory is written after
//! its `materialize_in_destination`, which one-shot analysis cannot see
//! through the `restrict` destination). Both ops are pure and cheap, so
//! each user gets its own: empty-tensor elimination then builds only the
//! stored result's init in the ref. Runs right before
//! `eliminate-empty-tensors` on every pipeline.

use crate::support::handles::result_of;
use crate::{
    PassDefinition, PassError,
    support::ir::{collect_operations, uses},
};
use melior::ir::OperationRef;
use mlir_sys::*;

pub static PASS: PassDefinition = PassDefinition {
    argument: "tessel-unshare-inits",
    name: "TesselUnshareInits",
    description: "Give each use of a tensor.empty or linalg.fill its own copy",
    anchor: "builtin.module",
    run,
};

fn run(module: OperationRef<'static, '_>) -> Result<(), PassError> {
    // Fills first: their copies add uses of the empty tensors they fill.
    for name in ["linalg.fill", "tensor.empty"] {
        for (op, _) in collect_operations(module, |found| found == name) {
            unshare(op);
        }
    }
    Ok(())
}

/// Gives every use of `op`'s result after the first a copy of `op`.
fn unshare(op: MlirOperation) {
    // SAFETY: the crate invariant: `op` is a live op of the module; a fill
    // without a result works on a buffer and is left alone.
    if unsafe { mlirOperationGetNumResults(op) } != 1 {
        return;
    }
    for (user, operand) in uses(result_of(op, 0)).into_iter().skip(1) {
        // SAFETY: the crate invariant for `op` and `user`; the copy is
        // inserted before `op` in its block (so it dominates every use of
        // `op`), and `operand` is a position `uses` found in `user`.
        unsafe {
            let copy = mlirOperationClone(op);
            mlirBlockInsertOwnedOperationBefore(mlirOperationGetBlock(op), op, copy);
            mlirOperationSetOperand(user, operand as isize, mlirOperationGetResult(copy, 0));
        }
    }
}
