//! Which `block.load`s may read their ref in place, for grid-to-loops.
//!
//! A load normally copies its block (the value is a snapshot; later stores
//! to the ref must not change it). Two cases need no copy:
//! - `tessel.read_only`: nothing writes the ref during the call;
//! - `tessel.in_place`: the read-modify-write of an accumulator, `acc =
//!   load r; ...; store f(acc), r` with the load and the one store after it
//!   at the kernel's top level, no other load of `r`, and every use of a
//!   value computed from `acc` before that store. Then the snapshot is never
//!   observed after `r` changes, so the block is updated where it lives and
//!   the output block stays resident in the output across an arbitrary
//!   axis instead of being copied in and out by every program.
//!
//! Both need the ref to alias no other operand of the call.

use crate::support::handles::{operation_ref, result_of, set_unit_attribute};
use crate::support::ir::{ancestor_in, block_operations};
use mlir_sys::*;
use std::collections::{HashMap, HashSet};

/// Marks `block.load`s of refs nothing writes while the call runs.
pub const READ_ONLY: &str = "tessel.read_only";
/// Marks accumulator loads that may be updated in place.
pub const IN_PLACE: &str = "tessel.in_place";

fn uses_value(op: MlirOperation, value: MlirValue) -> bool {
    // SAFETY: live IR of the module being rewritten (crate invariant, support/handles.rs); indices stay below the counts they are taken from
    unsafe { (0..mlirOperationGetNumOperands(op)).any(|i| mlirOperationGetOperand(op, i).ptr == value.ptr) }
}

/// How a kernel argument's ref relates to the call's other operands.
#[derive(Clone, Copy)]
pub struct Aliasing {
    /// No output of the call is the same array (an input's reads are then
    /// unaffected by the call's writes).
    pub no_output_alias: bool,
    /// No other operand at all is the same array.
    pub exclusive: bool,
}

/// Marks the loads of each ref (kernel argument `i` described by
/// `refs[i]`) that can skip their copy.
pub fn mark_loads(kernel: MlirOperation, refs: &[Aliasing]) {
    // SAFETY: live IR of the module being rewritten (crate invariant, support/handles.rs); indices stay below the counts they are taken from
    let entry = unsafe { mlirRegionGetFirstBlock(mlirOperationGetFirstRegion(kernel)) };
    let ops = crate::support::ir::collect_operations(operation_ref(kernel), |_| true);
    for (index, aliasing) in refs.iter().enumerate() {
        // SAFETY: live IR of the module being rewritten (crate invariant, support/handles.rs); indices stay below the counts they are taken from
        let argument = unsafe { mlirBlockGetArgument(entry, index as isize) };
        let users: Vec<(MlirOperation, &str)> =
            ops.iter().filter(|(op, _)| uses_value(*op, argument)).map(|(op, name)| (*op, name.as_str())).collect();
        let loads: Vec<MlirOperation> =
            users.iter().filter(|(_, name)| *name == "block.load").map(|(op, _)| *op).collect();
        if users.len() == loads.len() {
            if aliasing.no_output_alias {
                loads.iter().for_each(|&load| set_unit_attribute(load, READ_ONLY));
            }
        } else if aliasing.exclusive
            && let Some(load) = accumulating_load(entry, &loads, &users)
        {
            set_unit_attribute(load, IN_PLACE);
        }
    }
}

/// Positions of a kernel's top-level ops; a nested op's is its top-level
/// ancestor's.
struct TopLevel {
    entry: MlirBlock,
    index: HashMap<*const std::ffi::c_void, usize>,
}

impl TopLevel {
    fn new(entry: MlirBlock) -> Self {
        let index = block_operations(entry)
            .iter()
            .enumerate()
            .map(|(at, op)| (op.ptr as *const std::ffi::c_void, at))
            .collect();
        TopLevel { entry, index }
    }

    fn position(&self, op: MlirOperation) -> Option<usize> {
        ancestor_in(self.entry, op).and_then(|top| self.index.get(&(top.ptr as *const std::ffi::c_void)).copied())
    }

    /// Whether `op` sits directly in the kernel's body.
    fn contains(&self, op: MlirOperation) -> bool {
        // SAFETY: live IR of the module being rewritten (crate invariant, support/handles.rs)
        unsafe { mlirOperationGetBlock(op).ptr == self.entry.ptr }
    }
}

/// The load of an accumulator that may be updated in place: the first of
/// `loads` at the kernel's top level, when it accumulates in place and every
/// other load of the ref runs after its store (reading the updated block,
/// as the TPU matmul's copy of its accumulator to the output does).
fn accumulating_load(
    entry: MlirBlock,
    loads: &[MlirOperation],
    users: &[(MlirOperation, &str)],
) -> Option<MlirOperation> {
    let top = TopLevel::new(entry);
    let &first = loads.iter().min_by_key(|&&load| top.position(load).unwrap_or(usize::MAX))?;
    let later: Vec<MlirOperation> = loads.iter().copied().filter(|load| load.ptr != first.ptr).collect();
    let rest: Vec<(MlirOperation, &str)> =
        users.iter().copied().filter(|(op, _)| later.iter().all(|load| load.ptr != op.ptr)).collect();
    let store_at = top.position(accumulating_store(&top, first, &rest)?)?;
    later.iter().all(|&load| top.position(load).is_some_and(|at| at > store_at)).then_some(first)
}

/// The one store of `acc = load r; ...; store f(acc), r` when the load
/// accumulates in place (`users`: the ref's users, the load included).
fn accumulating_store(top: &TopLevel, load: MlirOperation, users: &[(MlirOperation, &str)]) -> Option<MlirOperation> {
    // SAFETY: live IR of the module being rewritten (crate invariant, support/handles.rs); indices stay below the counts they are taken from
    let whole = |op: MlirOperation, operands: isize| unsafe { mlirOperationGetNumOperands(op) == operands };
    // A whole-block load at top level; otherwise only whole-block stores.
    if !top.contains(load) || !whole(load, 1) {
        return None;
    }
    let load_at = top.position(load)?;
    if users.iter().any(|(op, name)| op.ptr != load.ptr && (*name != "block.store" || !whole(*op, 2))) {
        return None;
    }
    let later: Vec<MlirOperation> = users
        .iter()
        .filter(|(op, _)| op.ptr != load.ptr && top.position(*op) > Some(load_at))
        .map(|(op, _)| *op)
        .collect();
    let [store] = later[..] else { return None };
    if !top.contains(store) {
        return None;
    }
    let store_at = top.position(store)?;
    // Every op that uses a value computed from the loaded one runs before
    // the store (or is the store).
    let mut seen = HashSet::new();
    let mut values: Vec<MlirValue> = vec![result_of(load, 0)];
    while let Some(value) = values.pop() {
        // SAFETY: live values and uses of the module being rewritten (crate invariant, support/handles.rs); an owner is asked only of an op result
        let mut operand = unsafe { mlirValueGetFirstUse(value) };
        while !operand.ptr.is_null() {
            // SAFETY: live values and uses of the module being rewritten (crate invariant, support/handles.rs); an owner is asked only of an op result
            let owner = unsafe { mlirOpOperandGetOwner(operand) };
            // SAFETY: live values and uses of the module being rewritten (crate invariant, support/handles.rs); an owner is asked only of an op result
            operand = unsafe { mlirOpOperandGetNextUse(operand) };
            if owner.ptr == store.ptr {
                continue;
            }
            let ancestor = ancestor_in(top.entry, owner)?;
            if top.position(ancestor)? >= store_at {
                return None;
            }
            // Results of the user, and of its top-level ancestor (values
            // yielded out of regions), carry the loaded value on.
            for op in [owner, ancestor] {
                if seen.insert(op.ptr as *const std::ffi::c_void) {
                    values.extend(
                        // SAFETY: live IR of the module being rewritten (crate invariant, support/handles.rs); indices stay below the counts they are taken from
                        (0..unsafe { mlirOperationGetNumResults(op) })
                            // SAFETY: live IR of the module being rewritten (crate invariant, support/handles.rs); indices stay below the counts they are taken from
                            .map(|i| unsafe { mlirOperationGetResult(op, i) }),
                    );
                }
            }
        }
    }
    Some(store)
}
