//! `tessel-share-ref-tensors`: one tensor per ref, so bufferization sees
//! a ref's reads and writes alias.
//!
//! A kernel reads a ref as `bufferization.to_tensor %ref restrict` and
//! stores to it with `materialize_in_destination`; `eliminate-empty-tensors`
//! then builds the stored value's inits in the ref itself, through new
//! `to_tensor %ref restrict writable` ops. `restrict` tells one-shot
//! analysis that each is the only way to the memory, so a value computed
//! in place in the ref is not seen to overwrite what the first tensor
//! still has to read. Two kernels computed wrong results that way: a ref
//! rewritten as its own transpose (the in-place transpose read elements
//! it had overwritten, `test/e2e/in-place-refs.mlir`), and Pallas'
//! `k == last ? dot - acc : dot` with the dot started from `acc + 1` (or
//! the VNNI form's `acc - 128 * colsum`): that start went to the ref for
//! the else branch's store, and the then branch read it as `acc`
//! (`test/e2e/k-grid-epilogues.mlir`).
//!
//! Each such `to_tensor` is replaced by an earlier one of the same ref
//! value and type that dominates it outside loops, when no op between the
//! two may write the ref's memory (a read after a store must see the
//! store): one SSA
//! value, whose in-place writes one-shot analysis checks against its later
//! reads, copying where they would conflict. Runs right after
//! `eliminate-empty-tensors` on every pipeline.

use crate::support::handles::{raw_op, replace_all_uses, set_unit_attribute};
use crate::support::ir::{ancestor_in, erase, is_memory_effect_free, view_root};
use crate::{PassDefinition, PassError};
use melior::ir::OperationRef;
use melior::ir::operation::{OperationLike, WalkOrder, WalkResult};
use mlir_sys::*;

pub static PASS: PassDefinition = PassDefinition {
    argument: "tessel-share-ref-tensors",
    name: "TesselShareRefTensors",
    description: "Replace restrict to_tensors of a ref by an earlier one of the same ref, so reads and writes alias",
    anchor: "builtin.module",
    run,
};

const TO_TENSOR: &str = "bufferization.to_tensor";

fn run(module: OperationRef<'static, '_>) -> Result<(), PassError> {
    // Every op in program order (pre-order), to tell what lies between two.
    let mut order = Vec::new();
    module.walk(WalkOrder::PreOrder, |op| {
        order.push(op.to_raw());
        WalkResult::Advance
    });
    // The to_tensors kept so far, with their positions in `order`, and
    // the others with the one replacing each (erased once `order` is no
    // longer read).
    let mut kept: Vec<(usize, MlirOperation)> = Vec::new();
    let mut replaced: Vec<(MlirOperation, MlirOperation)> = Vec::new();
    for (position, &op) in order.iter().enumerate() {
        let raw = raw_op(op);
        if raw.name() != TO_TENSOR || !raw.has("restrict") {
            continue;
        }
        let earlier = kept.iter().copied().find(|&(at, first)| {
            same_ref_tensor(first, op)
                && dominates_outside_loops(first, op)
                && !writes_between(&order[at + 1..position], op)
        });
        match earlier {
            Some((_, first)) => replaced.push((op, first)),
            None => kept.push((position, op)),
        }
    }
    for (op, first) in replaced {
        if raw_op(op).has("writable") {
            set_unit_attribute(first, "writable");
        }
        replace_all_uses(raw_op(op).results()[0], raw_op(first).results()[0]);
        erase(op);
    }
    Ok(())
}

/// Do the two `to_tensor`s read the same memref value as the same type?
fn same_ref_tensor(first: MlirOperation, second: MlirOperation) -> bool {
    let (a, b) = (raw_op(first), raw_op(second));
    // SAFETY: live values of the module being rewritten (crate invariant, support/handles.rs)
    a.operands()[0].ptr == b.operands()[0].ptr
        && unsafe { mlirTypeEqual(mlirValueGetType(a.results()[0]), mlirValueGetType(b.results()[0])) }
}

/// Does `first` dominate `second` (an ancestor of `second` follows it in
/// `first`'s block) with no loop between them? ("Nothing between writes
/// the ref" is what `writes_between` checks in program order; a `second`
/// nested in a loop `first` is outside of would also read what the loop's
/// later ops stored on the trips before.)
fn dominates_outside_loops(first: MlirOperation, second: MlirOperation) -> bool {
    // SAFETY: live ops of the module being rewritten (crate invariant, support/handles.rs)
    let block = unsafe { mlirOperationGetBlock(first) };
    let Some(ancestor) = ancestor_in(block, second) else { return false };
    // SAFETY: both ops are live and in `block`
    if ancestor.ptr == first.ptr || !unsafe { mlirOperationIsBeforeInBlock(first, ancestor) } {
        return false;
    }
    let mut current = second;
    while current.ptr != ancestor.ptr {
        // SAFETY: `current` is a live op nested in `ancestor`, so it has a parent op
        current = unsafe { mlirOperationGetParentOperation(current) };
        if LOOPS.contains(&raw_op(current).name().as_str()) {
            return false;
        }
    }
    true
}

/// Ops whose regions run more than once.
const LOOPS: &[&str] = &["scf.for", "scf.while", "scf.forall", "scf.parallel", "affine.for", "affine.parallel"];

/// May any of `between` (ops in program order) write the memory the
/// `to_tensor` `op` reads? Other to_tensors only read; ops free of memory
/// effects never write; anything else touching a view of the same root
/// might.
fn writes_between(between: &[MlirOperation], op: MlirOperation) -> bool {
    let root = view_root(raw_op(op).operands()[0]);
    between.iter().any(|&other| {
        let raw = raw_op(other);
        raw.name() != TO_TENSOR
            && !is_memory_effect_free(other)
            && raw.operands().into_iter().any(|value| view_root(value).ptr == root.ptr)
    })
}
