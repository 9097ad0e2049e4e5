//! `tessel-sink-into-branches`: work on an `scf.if`'s result moved into
//! its branches: a contraction used only inside the `scf.if` before it is
//! computed in the branches that use it, and a store of the `scf.if`'s
//! result (`materialize_in_destination`) after it is made by each branch.
//!
//! Pallas kernels with K on the grid finish the output at the last k step
//! only: `out = k == last ? relu(dot + bias) : dot`, stored to the output
//! block, an `scf.if` whose branches both read the dot. The register tiles
//! compute a contraction's element-wise consumer on the accumulators in
//! registers when it is the contraction's one user
//! (`contraction_epilogue.rs`); with the consumer in one branch and the
//! plain dot yielded by the other, it is not, and the last step wrote the
//! dot to memory and ran the epilogue over the block again. With a copy of
//! the contraction in each branch, the last step's tiles compute
//! `relu(dot + bias)` and the other steps the dot alone; a branch that
//! does not use the dot no longer computes it.
//!
//! The store: bufferized, an `scf.if` yields one of its branches' buffers,
//! and storing that to the output block is a copy at every step, even
//! where the branch computed in the output block itself (the dot updated
//! in place: a copy of the block onto itself). Stored by each branch, the
//! in-place branch's store is no copy at all.
//!
//! Contractions and stores of tensors are moved past the ops up to the
//! `scf.if` (or from it) only where those ops neither read nor write
//! memory (by MLIR's memory-effect interface: arithmetic, tensor and
//! linalg ops on tensors, views). The values computed are the same, so
//! results keep their bits.

use crate::block::block_to_linalg::CONTRACTION;
use crate::support::handles::{block_of, next_of, raw_op, result_of};
use crate::support::ir::{
    ancestor_in, collect_operations, defining_op, erase, is_memory_effect_free, region_blocks, uses,
};
use crate::{PassDefinition, PassError};
use melior::ir::OperationRef;
use mlir_sys::*;

pub static PASS: PassDefinition = PassDefinition {
    argument: "tessel-sink-into-branches",
    name: "TesselSinkIntoBranches",
    description: "Compute a contraction used only inside an scf.if, and store an scf.if's result, in its branches (CPU)",
    anchor: "builtin.module",
    run,
};

fn run(module: OperationRef<'static, '_>) -> Result<(), PassError> {
    for (op, name) in collect_operations(module, |name| name == "linalg.generic" || name == STORE) {
        if name == STORE {
            store_in_branches(op);
        } else if raw_op(op).has(CONTRACTION) {
            contraction_into_branches(op);
        }
    }
    Ok(())
}

/// How block-to-linalg stores a tensor to a ref.
const STORE: &str = "bufferization.materialize_in_destination";

/// Whether every op strictly between `first` and `last` (in one block)
/// touches no memory, so `first` can move past them.
fn pure_between(first: MlirOperation, last: MlirOperation) -> bool {
    let mut between = next_of(first);
    while between.ptr != last.ptr {
        if between.ptr.is_null() || !is_memory_effect_free(between) {
            return false;
        }
        between = next_of(between);
    }
    true
}

/// Moves `contraction` into the branches of the `scf.if` its uses are in,
/// when there is one such `scf.if` in its block and only pure ops between.
fn contraction_into_branches(contraction: MlirOperation) {
    let op = raw_op(contraction);
    if op.results().len() != 1 {
        return;
    }
    let result = result_of(contraction, 0);
    let block = block_of(contraction);
    let uses = uses(result);
    let Some(Some(branching)) = uses.first().map(|&(user, _)| ancestor_in(block, user)) else { return };
    let inside_branches = |user: MlirOperation| {
        user.ptr != branching.ptr && ancestor_in(block, user).is_some_and(|ancestor| ancestor.ptr == branching.ptr)
    };
    if raw_op(branching).name() != "scf.if" || !uses.iter().all(|&(user, _)| inside_branches(user)) {
        return;
    }
    if !pure_between(contraction, branching) {
        return;
    }
    for branch in region_blocks(branching) {
        let in_branch: Vec<_> = uses.iter().filter(|&&(user, _)| ancestor_in(branch, user).is_some()).collect();
        if in_branch.is_empty() {
            continue;
        }
        // SAFETY: live IR of the module being rewritten (crate invariant,
        // support/handles.rs); the copy goes first in the branch, where the
        // contraction's operands (defined before it, outside the `scf.if`)
        // dominate it and it dominates every use rewired to it.
        unsafe {
            let copy = mlirOperationClone(contraction);
            mlirBlockInsertOwnedOperation(branch, 0, copy);
            for &&(user, operand) in &in_branch {
                mlirOperationSetOperand(user, operand as isize, mlirOperationGetResult(copy, 0));
            }
        }
    }
    erase(contraction);
}

/// Makes each branch of the `scf.if` whose result `store` stores (that
/// result's one use, only pure ops between) store its own yielded value.
fn store_in_branches(store: MlirOperation) {
    // Stores to a ref (no result), not the tensor form, whose result later
    // ops read.
    let store_op = raw_op(store);
    let ([source, destination], []) = (&store_op.operands()[..], &store_op.results()[..]) else { return };
    let (source, destination) = (*source, *destination);
    // SAFETY: live values of the module being rewritten (crate invariant,
    // support/handles.rs); the owner and number are asked of an op result.
    let (branching, index) = unsafe {
        if !mlirValueIsAOpResult(source) {
            return;
        }
        (mlirOpResultGetOwner(source), mlirOpResultGetResultNumber(source) as isize)
    };
    // The destination must be defined before the `scf.if` to be used in it.
    let defined_after = defining_op(destination)
        .and_then(|defined| ancestor_in(block_of(branching), defined))
        // SAFETY: live ops of one block (crate invariant, support/handles.rs).
        .is_some_and(|defined| unsafe { mlirOperationIsBeforeInBlock(branching, defined) });
    if raw_op(branching).name() != "scf.if"
        || block_of(branching).ptr != block_of(store).ptr
        || uses(source).len() != 1
        || defined_after
        || !pure_between(branching, store)
    {
        return;
    }
    for branch in region_blocks(branching) {
        // SAFETY: live IR of the module being rewritten (crate invariant,
        // support/handles.rs); an `scf.if` with results ends each branch in
        // an `scf.yield` of one value per result, and the copy goes right
        // before it, where the yielded value and the destination (defined
        // before the `scf.if`) dominate it.
        unsafe {
            let terminator = mlirBlockGetTerminator(branch);
            let copy = mlirOperationClone(store);
            mlirBlockInsertOwnedOperationBefore(branch, terminator, copy);
            mlirOperationSetOperand(copy, 0, mlirOperationGetOperand(terminator, index));
        }
    }
    erase(store);
}
