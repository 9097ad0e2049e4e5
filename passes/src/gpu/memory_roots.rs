//! Which memory a GPU kernel's ops read and write, told apart by root:
//! LDS by the byte offset of its slot (views of the workgroup attribution
//! at constant offsets), each function argument on its own (distinct
//! memref arguments do not alias: Tessel assumes so throughout, as
//! grid-to-loops' in-place reads and updates do), globals and scratch as
//! one more root, anything untraced as unknown (conflicting with
//! everything). Shared by the passes that reorder or unsynchronize memory
//! accesses inside a `gpu.launch` (tessel-elide-barriers,
//! tessel-batch-loads).

use crate::support::handles::{is_memref, operation_ref, raw_op, value_type};
use crate::support::ir::constant_value;
use melior::ir::operation::{OperationLike, WalkOrder, WalkResult};
use mlir_sys::*;

/// Where a memref's memory lives.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Root {
    /// A function argument, by position.
    Argument(usize),
    /// Globals and global scratch.
    Global,
    /// Workgroup memory at this byte offset of its attribution (None: not
    /// known statically).
    Shared(Option<i64>),
    /// A work-item's private memory (the launch's private attribution, by
    /// position): no other item sees it.
    Private(usize),
    Unknown,
}

/// Ops that read memory through their first operand and write none.
const READS: [&str; 3] = ["memref.load", "vector.load", "vector.transfer_read"];

/// Does `op` read memory (through its first operand) and write none?
pub(super) fn is_read(op: MlirOperation) -> bool {
    READS.contains(&raw_op(op).name().as_str())
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

pub(super) fn conflicts(a: Root, b: Root) -> bool {
    match (a, b) {
        (Root::Unknown, _) | (_, Root::Unknown) => true,
        (Root::Global, Root::Global) => true,
        (Root::Argument(x), Root::Argument(y)) => x == y,
        (Root::Shared(Some(x)), Root::Shared(Some(y))) => x == y,
        (Root::Shared(_), Root::Shared(_)) => true,
        (Root::Private(x), Root::Private(y)) => x == y,
        _ => false,
    }
}

fn constant_index(value: MlirValue) -> Option<i64> {
    let attribute = constant_value(value)?;
    // SAFETY: live IR (crate invariant, support/handles.rs); a value is read only after its kind is checked
    unsafe { mlirAttributeIsAInteger(attribute).then(|| mlirIntegerAttrGetValueInt(attribute)) }
}

/// The root of `memref`, through view-like ops.
pub(super) fn root_of(memref: MlirValue, launch: MlirOperation) -> Root {
    // SAFETY: live values and uses of the module being rewritten (crate invariant, support/handles.rs); an owner is asked only of an op result
    unsafe {
        if mlirValueIsABlockArgument(memref) {
            let owner = mlirBlockGetParentOperation(mlirBlockArgumentGetOwner(memref));
            let index = mlirBlockArgumentGetArgNumber(memref) as usize;
            let workgroup = raw_op(launch).integer("workgroup_attributions") as usize;
            return if owner.ptr == launch.ptr && (12..12 + workgroup).contains(&index) {
                Root::Shared(Some(0))
            } else if owner.ptr == launch.ptr && index >= 12 + workgroup {
                Root::Private(index - 12 - workgroup)
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
pub(super) struct Effects {
    pub(super) reads: Vec<Root>,
    pub(super) writes: Vec<Root>,
}

impl Effects {
    pub(super) fn of(op: MlirOperation, launch: MlirOperation) -> Effects {
        let mut effects = Effects::default();
        operation_ref(op).walk(WalkOrder::PreOrder, |nested| {
            let raw = raw_op(nested.to_raw());
            let operands = raw.operands();
            let memref = |index: usize| root_of(operands[index], launch);
            match raw.name().as_str() {
                name if READS.contains(&name) => effects.reads.push(memref(0)),
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

    pub(super) fn extend(&mut self, other: Effects) {
        self.reads.extend(other.reads);
        self.writes.extend(other.writes);
    }

    /// Does running `later` after `self` on other work-items, without a
    /// barrier between, risk a race? (An item's private memory is its own:
    /// its accesses stay in program order.)
    pub(super) fn conflicts_with(&self, later: &Effects) -> bool {
        let private = |root: Root| matches!(root, Root::Private(_));
        let shared = |x: Root, y: Root| !private(x) && !private(y) && conflicts(x, y);
        let any = |a: &[Root], b: &[Root]| a.iter().any(|&x| b.iter().any(|&y| shared(x, y)));
        any(&self.writes, &later.reads) || any(&self.writes, &later.writes) || any(&self.reads, &later.writes)
    }
}
