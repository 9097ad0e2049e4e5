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
//! Memory is told apart by its root: LDS by the byte offset of its slot
//! (views of the workgroup attribution at constant offsets), each function
//! argument on its own (distinct memref arguments do not alias: Tessel
//! assumes so throughout, as grid-to-loops' in-place reads and updates
//! do), globals and scratch as one more root, anything untraced as unknown
//! (conflicting with everything). Barriers that begin or end a
//! block, and ops that hold barriers themselves, are left alone: they order
//! work across loop iterations and enclosing code.

use crate::support::handles::{is_memref, next_of, operation_ref, parent_of, raw_op, value_type};
use crate::{
    PassDefinition, PassError,
    support::ir::{any_nested, block_operations, collect_operations, constant_value, erase, region_blocks},
};
use melior::ir::{
    OperationRef,
    operation::{OperationLike, WalkOrder, WalkResult},
};
use mlir_sys::*;

pub static PASS: PassDefinition = PassDefinition {
    argument: "tessel-elide-barriers",
    name: "TesselElideBarriers",
    description: "Remove gpu.barriers between phases that touch disjoint memory",
    anchor: "builtin.module",
    run,
};

/// Where a memref's memory lives.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Root {
    /// A function argument, by position.
    Argument(usize),
    /// Globals and global scratch.
    Global,
    /// Workgroup memory at this byte offset of its attribution (None: not
    /// known statically).
    Shared(Option<i64>),
    Unknown,
}

/// Ops whose result views the memory of their first operand, at the same
/// place (`memref.view` also moves it by a byte offset).
const SAME_MEMORY: [&str; 6] = [
    "memref.subview",
    "memref.cast",
    "memref.memory_space_cast",
    "memref.expand_shape",
    "memref.collapse_shape",
    "memref.reinterpret_cast",
];

fn conflicts(a: Root, b: Root) -> bool {
    match (a, b) {
        (Root::Unknown, _) | (_, Root::Unknown) => true,
        (Root::Global, Root::Global) => true,
        (Root::Argument(x), Root::Argument(y)) => x == y,
        (Root::Shared(Some(x)), Root::Shared(Some(y))) => x == y,
        (Root::Shared(_), Root::Shared(_)) => true,
        _ => false,
    }
}

fn constant_index(value: MlirValue) -> Option<i64> {
    let attribute = constant_value(value)?;
    // SAFETY: live IR (crate invariant, support/handles.rs); a value is read only after its kind is checked
    unsafe { mlirAttributeIsAInteger(attribute).then(|| mlirIntegerAttrGetValueInt(attribute)) }
}

/// The root of `memref`, through view-like ops.
fn root_of(memref: MlirValue, launch: MlirOperation) -> Root {
    // SAFETY: live values and uses of the module being rewritten (crate invariant, support/handles.rs); an owner is asked only of an op result
    unsafe {
        if mlirValueIsABlockArgument(memref) {
            let owner = mlirBlockGetParentOperation(mlirBlockArgumentGetOwner(memref));
            let index = mlirBlockArgumentGetArgNumber(memref) as usize;
            let workgroup = raw_op(launch).integer("workgroup_attributions") as usize;
            return if owner.ptr == launch.ptr && (12..12 + workgroup).contains(&index) {
                Root::Shared(Some(0))
            } else if raw_op(owner).name() == "func.func" {
                Root::Argument(index)
            } else {
                Root::Unknown
            };
        }
        let definition = raw_op(mlirOpResultGetOwner(memref));
        let operands = definition.operands();
        let name = definition.name();
        match name.as_str() {
            "memref.view" => match root_of(operands[0], launch) {
                Root::Shared(Some(base)) => Root::Shared(constant_index(operands[1]).map(|offset| base + offset)),
                Root::Shared(None) => Root::Shared(None),
                other => other,
            },
            "memref.get_global" | "gpu.alloc" => Root::Global,
            _ if SAME_MEMORY.contains(&name.as_str()) => root_of(operands[0], launch),
            _ => Root::Unknown,
        }
    }
}

/// The memory an op (and what it nests) reads and writes.
#[derive(Default)]
struct Effects {
    reads: Vec<Root>,
    writes: Vec<Root>,
}

impl Effects {
    fn of(op: MlirOperation, launch: MlirOperation) -> Effects {
        let mut effects = Effects::default();
        operation_ref(op).walk(WalkOrder::PreOrder, |nested| {
            let raw = raw_op(nested.to_raw());
            let operands = raw.operands();
            let memref = |index: usize| root_of(operands[index], launch);
            match raw.name().as_str() {
                "memref.load" | "vector.load" | "vector.transfer_read" => effects.reads.push(memref(0)),
                "memref.store" | "vector.store" | "vector.transfer_write" => effects.writes.push(memref(1)),
                "memref.atomic_rmw" | "memref.generic_atomic_rmw" => {
                    let index = if raw.name() == "memref.atomic_rmw" { 1 } else { 0 };
                    effects.reads.push(memref(index));
                    effects.writes.push(memref(index));
                }
                "memref.copy" => {
                    effects.reads.push(memref(0));
                    effects.writes.push(memref(1));
                }
                _ => {
                    let touches_memory = operands.iter().any(|&value| is_memref(value_type(value)));
                    let name = raw.name();
                    // Views and metadata touch no memory themselves.
                    let view_like = SAME_MEMORY.contains(&name.as_str())
                        || matches!(name.as_str(), "memref.view" | "memref.dim" | "memref.extract_strided_metadata");
                    if touches_memory && !view_like {
                        effects.reads.push(Root::Unknown);
                        effects.writes.push(Root::Unknown);
                    }
                }
            }
            WalkResult::Advance
        });
        effects
    }

    fn extend(&mut self, other: Effects) {
        self.reads.extend(other.reads);
        self.writes.extend(other.writes);
    }

    /// Does running `later` after `self`, unsynchronized, risk a race?
    fn conflicts_with(&self, later: &Effects) -> bool {
        let any = |a: &[Root], b: &[Root]| a.iter().any(|&x| b.iter().any(|&y| conflicts(x, y)));
        any(&self.writes, &later.reads) || any(&self.writes, &later.writes) || any(&self.reads, &later.writes)
    }
}

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
        if any_nested(op, is_barrier) || next_of(op).ptr.is_null() {
            // A boundary (or the terminator): the phase before it is
            // complete; nothing merges across it.
            if phase_has_ops {
                close_phase(&mut merged, std::mem::take(&mut phase), &mut pending_barrier, &mut removable);
            }
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
