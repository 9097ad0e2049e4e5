//! `tessel-elide-barriers`: drops workgroup barriers that order nothing.
//!
//! grid-to-gpu puts a barrier after every piece of shared work. A barrier
//! is needed only if the work after it touches memory the work before it
//! wrote, or writes memory the work before it read. Two copies into
//! different LDS buffers (a contraction's A and B chunks) need none between
//! them. Inside each block of a `gpu.launch`, the ops between barriers form
//! phases; a barrier goes when the phase after it conflicts with nothing in
//! the phases merged so far.
//!
//! Memory is told apart by its root (`memory_roots`: LDS slots, each
//! function argument, globals, unknown). Only a barrier between two
//! barriers of one block can go: barriers that begin or end a block's
//! barrier-delimited phases (the last one before the block's end or before
//! an op holding barriers itself), and such ops, are left alone: they order
//! work across loop iterations and enclosing code. The kernel's end is not
//! such a boundary: nothing runs after it, so the last phase of a launch's
//! body is merged like the others.

use crate::gpu::memory_roots::Effects;
use crate::support::handles::{next_of, operation_ref, parent_of, raw_op};
use crate::{
    PassDefinition, PassError,
    support::ir::{any_nested, block_operations, collect_operations, erase, region_blocks},
};
use melior::ir::OperationRef;
use mlir_sys::*;

pub static PASS: PassDefinition = PassDefinition {
    argument: "tessel-elide-barriers",
    name: "TesselElideBarriers",
    description: "Remove gpu.barriers between phases that touch disjoint memory",
    anchor: "builtin.module",
    run,
};

fn is_barrier(op: MlirOperation) -> bool {
    raw_op(op).name() == "gpu.barrier"
}

fn run(module: OperationRef<'static, '_>) -> Result<(), PassError> {
    for (launch, _) in collect_operations(module, |name| name == "gpu.launch") {
        let launch_ref = operation_ref(launch);
        let mut blocks = region_blocks(launch);
        for (op, _) in collect_operations(launch_ref, |_| true) {
            if op.ptr != launch.ptr {
                blocks.extend(region_blocks(op));
            }
        }
        for block in blocks {
            elide_in(block, launch);
        }
    }
    Ok(())
}

/// Merges the phases of `block` across barriers that order nothing.
fn elide_in(block: MlirBlock, launch: MlirOperation) {
    let operations = block_operations(block);
    // Phases: runs of ops between barriers; an op holding barriers ends
    // the merging (it is its own boundary).
    let mut merged: Option<Effects> = None;
    let mut pending_barrier: Option<MlirOperation> = None;
    let mut phase = Effects::default();
    let mut phase_has_ops = false;
    let mut removable = Vec::new();
    let close_phase = |merged: &mut Option<Effects>,
                       phase: Effects,
                       pending: &mut Option<MlirOperation>,
                       removable: &mut Vec<MlirOperation>| {
        match (merged.as_mut(), pending.take()) {
            (Some(before), Some(barrier)) if !before.conflicts_with(&phase) => {
                removable.push(barrier);
                before.extend(phase);
            }
            _ => *merged = Some(phase),
        }
    };
    for op in operations {
        if is_barrier(op) {
            if phase_has_ops {
                close_phase(&mut merged, std::mem::take(&mut phase), &mut pending_barrier, &mut removable);
                phase_has_ops = false;
            }
            // A barrier right after a boundary (or another barrier) stays.
            pending_barrier = merged.as_ref().map(|_| op);
            continue;
        }
        if raw_op(op).name() == "gpu.terminator" {
            // The kernel's end orders nothing: the last phase is checked
            // against the ones before it like any other.
            if phase_has_ops {
                close_phase(&mut merged, std::mem::take(&mut phase), &mut pending_barrier, &mut removable);
            }
            break;
        }
        if any_nested(op, is_barrier) || next_of(op).ptr.is_null() {
            // A boundary (or the terminator): nothing merges across it, and
            // a barrier before the phase it ends stays, whatever that phase
            // touches: it also orders the work before it against the
            // boundary's own work before its first barrier (or against
            // the enclosing code, after the terminator; e.g. an `scf.if`
            // branch writing LDS whose result is read after the `scf.if`,
            // the barrier followed only by a `memref.cast` of the result).
            merged = None;
            pending_barrier = None;
            phase = Effects::default();
            phase_has_ops = false;
            continue;
        }
        phase.extend(Effects::of(op, launch));
        phase_has_ops = true;
    }
    // A barrier that ends the block (nothing after it but the terminator)
    // orders work for the next iteration or the enclosing code: no phase
    // follows it, so it is never removed.
    for barrier in removable {
        erase(barrier);
    }
}

/// Drops barriers right after another barrier or at the kernel's end: the
/// clean-up grid-to-gpu needs at once (the pass below then drops the ones
/// that order nothing).
pub(crate) fn drop_adjacent_barriers(launch: MlirOperation) {
    let mut redundant = Vec::new();
    for (barrier, _) in collect_operations(operation_ref(launch), |name| name == "gpu.barrier") {
        let next = next_of(barrier);
        let next_name = raw_op(next).name();
        let at_end = next_name == "gpu.terminator" && parent_of(barrier).ptr == launch.ptr;
        if next_name == "gpu.barrier" || at_end {
            redundant.push(barrier);
        }
    }
    for barrier in redundant {
        erase(barrier);
    }
}
