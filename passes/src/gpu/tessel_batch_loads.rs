//! `tessel-batch-loads`: a work-item's share of block work issues several
//! iterations' loads before it waits for any.
//!
//! grid-to-gpu runs a work-item's share of block work (iterations
//! item, item + T, ...) as a loop of constant trip count. Short ones LLVM
//! unrolls completely, and their loads issue together; longer ones
//! (softmax's normalization of eight 4096-wide rows: 32 vectors per item)
//! stay loops, and LLVM keeps each iteration's loads after the previous
//! iteration's stores — it cannot tell the buffers apart — so the item
//! waits for memory once per iteration. grid-to-gpu marks those loops
//! `tessel.batch_loads = U`; this pass unrolls each by U (upstream's
//! `transform.loop.unroll`) and moves every read of memory the loop body
//! does not write, with the index arithmetic it needs, to the top of the
//! body, in order: U iterations' loads in flight at once, one wait per U
//! iterations.
//!
//! Reads move above writes only when they touch different memory
//! (`memory_roots`: distinct memref arguments do not alias, LDS slots by
//! offset; anything untraced conflicts with everything), so every value is
//! computed as before. Bodies with barriers, or reads nested in control
//! flow, stay as they are.

use crate::gpu::memory_roots::{Effects, conflicts, is_read};
use crate::support::handles::{next_of, raw_op};
use crate::support::template::emit_line;
use crate::{
    PassDefinition, PassError,
    support::ir::{any_nested, block_operations, collect_operations, defining_op, enclosing, is_memory_effect_free},
    support::transform,
};
use melior::{
    StringRef,
    ir::{OperationRef, operation::OperationLike},
};
use mlir_sys::*;
use std::collections::HashSet;

pub static PASS: PassDefinition = PassDefinition {
    argument: "tessel-batch-loads",
    name: "TesselBatchLoads",
    description: "Unroll marked per-item loops and issue their reads of unwritten memory first (GPU)",
    anchor: "builtin.module",
    run,
};

/// Marks a per-item loop to unroll by the attribute's value, its reads
/// then issued together (set by grid-to-gpu).
pub const BATCH_LOADS: &str = "tessel.batch_loads";

/// The unrolled loop stays a loop: LLVM unrolling it further (completely,
/// when few trips are left) would keep every iteration's values live at
/// once (an attention kernel's 128 items on RDNA 3 spilled).
const NO_FURTHER_UNROLLING: &str = "#llvm.loop_annotation<unroll = #llvm.loop_unroll<disable = true>>";

/// Ops that touch no memory (values, views, item ids) and have no regions
/// (whose captured values the backward slice would not follow): a read's
/// operands may be computed earlier along with it.
fn is_pure(op: MlirOperation) -> bool {
    // SAFETY: live IR of the module being rewritten (crate invariant, support/handles.rs)
    is_memory_effect_free(op) && unsafe { mlirOperationGetNumRegions(op) } == 0
}

/// Adds `op` and the ops of `body` its operands come from, recursively, to
/// `slice`; false if one of them is not pure (the read cannot move).
fn backward_slice(op: MlirOperation, body: &HashSet<usize>, slice: &mut Vec<MlirOperation>) -> bool {
    for value in raw_op(op).operands() {
        let Some(definition) = defining_op(value) else { continue };
        if !body.contains(&(definition.ptr as usize)) || slice.iter().any(|done| done.ptr == definition.ptr) {
            continue;
        }
        if !is_pure(definition) || !backward_slice(definition, body, slice) {
            return false;
        }
        slice.push(definition);
    }
    true
}

/// Moves the reads of memory the body of `for_op` does not write (and
/// their operands' computations) to the top of the body, in order.
fn hoist_reads(for_op: MlirOperation, launch: MlirOperation) {
    let body = raw_op(for_op).region_block(0);
    let operations = block_operations(body);
    if operations.iter().any(|&op| any_nested(op, |nested| raw_op(nested).name() == "gpu.barrier")) {
        return;
    }
    let mut effects = Effects::default();
    for &op in &operations {
        effects.extend(Effects::of(op, launch));
    }
    let members: HashSet<usize> = operations.iter().map(|op| op.ptr as usize).collect();
    let mut moving: HashSet<usize> = HashSet::new();
    for &op in &operations {
        if !is_read(op) {
            continue;
        }
        let read = Effects::of(op, launch);
        if read.reads.iter().any(|&root| effects.writes.iter().any(|&written| conflicts(root, written))) {
            continue;
        }
        let mut slice = Vec::new();
        if backward_slice(op, &members, &mut slice) {
            moving.extend(slice.iter().map(|op| op.ptr as usize));
            moving.insert(op.ptr as usize);
        }
    }
    // Moved ops gather, in their order, before the first op that stays.
    let mut anchor = operations[0];
    for op in operations {
        if !moving.contains(&(op.ptr as usize)) {
            continue;
        }
        if op.ptr == anchor.ptr {
            anchor = next_of(op);
            continue;
        }
        // SAFETY: live IR of the module being rewritten (crate invariant, support/handles.rs); `op` and `anchor` are in the same block, and every in-body operand of `op` was moved before it
        unsafe { mlirOperationMoveBefore(op, anchor) };
    }
}

fn run(module: OperationRef<'static, '_>) -> Result<(), PassError> {
    let marked = || {
        collect_operations(module, |name| name == "scf.for").into_iter().filter(|(op, _)| raw_op(*op).has(BATCH_LOADS))
    };
    let mut factors: Vec<i64> = marked().map(|(op, _)| raw_op(op).integer(BATCH_LOADS)).collect();
    factors.sort_unstable();
    factors.dedup();
    if factors.is_empty() {
        return Ok(());
    }
    let any = "!transform.any_op";
    let mut body = String::new();
    for (index, factor) in factors.iter().enumerate() {
        emit_line!(
            body,
            "%loops{index} = transform.structured.match ops{{[\"scf.for\"]}} attributes{{{BATCH_LOADS} = {factor} : i64}} \
             in %root : ({any}) -> {any}\ntransform.loop.unroll %loops{index} {{factor = {factor}}} : {any}"
        );
    }
    if let Err(error) = transform::apply(module.to_raw(), &transform::script(&body)) {
        return Err(PassError::at(module.location(), error.0));
    }
    for (for_op, _) in marked().collect::<Vec<_>>() {
        if let Some(launch) = enclosing(for_op, |op| raw_op(op).name() == "gpu.launch") {
            hoist_reads(for_op, launch);
        }
        // SAFETY: live IR of the module being rewritten (crate invariant, support/handles.rs); the attribute text parses in the op's context (the LLVM dialect is loaded)
        unsafe {
            mlirOperationRemoveAttributeByName(for_op, StringRef::new(BATCH_LOADS).to_raw());
            let context = mlirOperationGetContext(for_op);
            let annotation = mlirAttributeParseGet(context, StringRef::new(NO_FURTHER_UNROLLING).to_raw());
            mlirOperationSetAttributeByName(for_op, StringRef::new("loop_annotation").to_raw(), annotation);
        }
    }
    Ok(())
}
