//! Registers across barriers, for the GPU emulator: a work-item's value
//! defined before a barrier and used after it (a matrix accumulator, a
//! loaded value) is kept in memory, one slot per work-item — the emulator
//! runs each phase for all items in turn, so a value cannot stay in a
//! register from one phase to the next.
//!
//! Per value: a buffer of one element per work-item (allocated once per
//! workgroup), a store right after the definition, a load right before
//! each use in a later phase. Per-item values a barrier-holding loop
//! carries (`iter_args`) go through a buffer too: stored before the loop
//! and at the end of each iteration, loaded where the iteration and the
//! code after the loop use them; the loop itself then carries nothing
//! per item (its control stays uniform, as barriers need). Pure
//! computations on the item ids are left to rematerialization.

use crate::support::handles::{block_of, next_of, operation_ref, raw_op, shaped_element, value_type};
use crate::support::handles::{is_float_type, is_integer_or_index, is_vector};
use crate::{
    gpu::per_item::{PerItem, is_pure_arithmetic},
    support::ir::{
        ancestor_in, any_nested, block_arguments, block_operations, collect_operations, inline_template, print_type,
        users, uses,
    },
};
use melior::ir::operation::OperationLike;
use mlir_sys::*;
use std::collections::HashSet;

/// Where the emulated workgroup's ops live and who its work-items are.
pub struct Workgroup {
    /// The block holding the workgroup's code (an `scf.forall` body).
    pub body: MlirBlock,
    /// The op ending it, before which buffers are freed.
    pub end: MlirOperation,
    /// Work-item ids (x, y, z) and counts.
    pub ids: [MlirValue; 3],
    pub counts: [MlirValue; 3],
}

fn is_barrier(op: MlirOperation) -> bool {
    raw_op(op).name() == "gpu.barrier"
}

fn holds_barrier(op: MlirOperation) -> bool {
    any_nested(op, is_barrier)
}

/// Pure computations whose per-item operands are item ids or such
/// computations themselves: the emulator recomputes them in each phase
/// (`tessel-emulate-gpu`'s rematerialization, same predicate).
fn recomputable(root: MlirOperation, ids: &[MlirValue; 3], per_item: &PerItem) -> HashSet<usize> {
    let mut values: HashSet<usize> = ids.iter().map(|value| value.ptr as usize).collect();
    operation_ref(root).walk(melior::ir::operation::WalkOrder::PreOrder, |nested| {
        let raw = raw_op(nested.to_raw());
        let operands = raw.operands();
        let recomputed = |value: &MlirValue| values.contains(&(value.ptr as usize));
        let per_item_ok = operands.iter().all(|value| recomputed(value) || !per_item.contains(*value));
        if is_pure_arithmetic(&raw.name()) && per_item_ok && operands.iter().any(recomputed) {
            values.extend(raw.results().iter().map(|value| value.ptr as usize));
        }
        melior::ir::operation::WalkResult::Advance
    });
    values
}

/// The zero of `type_` (scalar or vector), as an `arith.constant` body.
pub(crate) fn zero(type_: MlirType) -> Result<String, String> {
    let text = print_type(type_);
    // SAFETY: live IR (crate invariant, support/handles.rs); a value is read only after its kind is checked
    let element = unsafe { if mlirTypeIsAVector(type_) { mlirShapedTypeGetElementType(type_) } else { type_ } };
    let scalar = if is_float_type(element) {
        "0.0"
    } else if is_integer_or_index(element) {
        "0"
    } else {
        return Err(format!("a per-item value of type {text} kept across a barrier is not emulated"));
    };
    Ok(if is_vector(type_) { format!("dense<{scalar}> : {text}") } else { format!("{scalar} : {text}") })
}

impl Workgroup {
    /// A buffer of one `type_` per work-item, for the whole workgroup.
    fn buffer(&self, type_: MlirType) -> Result<MlirValue, String> {
        zero(type_)?;
        let memref = format!("memref<?x{}>", print_type(type_));
        let text = format!(
            "func.func @template(%nx: index, %ny: index, %nz: index) -> {memref} {{\n\
             %nxy = arith.muli %nx, %ny : index\n%n = arith.muli %nxy, %nz : index\n\
             %buffer = memref.alloc(%n) : {memref}\nreturn %buffer : {memref}\n}}"
        );
        let first = block_operations(self.body)[0];
        let (values, _) = inline_template(first, &text, &self.counts)?;
        let free = format!("func.func @template(%b: {memref}) {{\nmemref.dealloc %b : {memref}\nreturn\n}}");
        inline_template(self.end, &free, &values)?;
        Ok(values[0])
    }

    /// Template arguments and the linear item id, for slot accesses.
    fn slot(&self) -> (String, String) {
        (
            "%x: index, %y: index, %z: index, %nx: index, %ny: index".into(),
            "%zy = arith.muli %z, %ny : index\n%row = arith.addi %zy, %y : index\n\
             %rows = arith.muli %row, %nx : index\n%slot = arith.addi %rows, %x : index\n"
                .into(),
        )
    }

    fn slot_args(&self) -> Vec<MlirValue> {
        vec![self.ids[0], self.ids[1], self.ids[2], self.counts[0], self.counts[1]]
    }

    /// Stores `value` in this item's slot of `buffer`, before `anchor`.
    fn store(&self, buffer: MlirValue, value: MlirValue, anchor: MlirOperation) -> Result<(), String> {
        let memref = print_type(value_type(buffer));
        let element = print_type(value_type(value));
        let (params, slot) = self.slot();
        let text = format!(
            "func.func @template(%b: {memref}, %v: {element}, {params}) {{\n{slot}\
             memref.store %v, %b[%slot] : {memref}\nreturn\n}}"
        );
        let mut args = vec![buffer, value];
        args.extend(self.slot_args());
        inline_template(anchor, &text, &args).map(|_| ())
    }

    /// This item's value in `buffer`, loaded before `anchor`.
    fn load(&self, buffer: MlirValue, anchor: MlirOperation) -> Result<MlirValue, String> {
        let memref_type = value_type(buffer);
        let memref = print_type(memref_type);
        let element = print_type(shaped_element(memref_type));
        let (params, slot) = self.slot();
        let text = format!(
            "func.func @template(%b: {memref}, {params}) -> {element} {{\n{slot}\
             %v = memref.load %b[%slot] : {memref}\nreturn %v : {element}\n}}"
        );
        let mut args = vec![buffer];
        args.extend(self.slot_args());
        Ok(inline_template(anchor, &text, &args)?.0[0])
    }

    /// A uniform zero of `type_`, before `anchor`.
    fn uniform_zero(&self, type_: MlirType, anchor: MlirOperation) -> Result<MlirValue, String> {
        let element = print_type(type_);
        let text = format!(
            "func.func @template() -> {element} {{\n%z = arith.constant {}\nreturn %z : {element}\n}}",
            zero(type_)?
        );
        Ok(inline_template(anchor, &text, &[])?.0[0])
    }
}

/// Replaces operand `index` of every use of `value` by a load of this
/// item's slot in `buffer` (right before the user).
fn load_at_uses(
    group: &Workgroup,
    value: MlirValue,
    buffer: MlirValue,
    only: impl Fn(MlirOperation) -> bool,
) -> Result<(), String> {
    for (user, index) in uses(value) {
        if only(user) {
            let loaded = group.load(buffer, user)?;
            // SAFETY: `user` is a live user of `value` and `index` the operand position `uses` found it at; `loaded` is a live value defined before `user`.
            unsafe { mlirOperationSetOperand(user, index as isize, loaded) };
        }
    }
    Ok(())
}

/// Does a use by `user` of a value `definition` defines run in a later
/// phase (a barrier between them, or the use inside a loop that holds
/// barriers)?
fn crosses_barrier(definition: MlirOperation, user: MlirOperation) -> bool {
    let block = block_of(definition);
    let Some(holder) = ancestor_in(block, user) else { return true };
    if holder.ptr != definition.ptr && holds_barrier(holder) {
        return true;
    }
    let mut op = next_of(definition);
    while !op.ptr.is_null() && op.ptr != holder.ptr {
        if holds_barrier(op) {
            return true;
        }
        op = next_of(op);
    }
    false
}

/// Keeps every per-item value used across a barrier in memory.
pub fn privatize(root: MlirOperation, group: &Workgroup) -> Result<(), String> {
    let root_ref = operation_ref(root);
    // Loops holding barriers carry no per-item values.
    let per_item = PerItem::analyze(root, &group.ids);
    for (op, _) in collect_operations(root_ref, |name| name == "scf.for") {
        if !holds_barrier(op) {
            continue;
        }
        let raw = raw_op(op);
        let body = raw.region_block(0);
        let yield_op = *block_operations(body).last().expect("a terminator");
        for (index, result) in raw.results().into_iter().enumerate() {
            if !per_item.contains(result) {
                continue;
            }
            let type_ = value_type(result);
            let buffer = group.buffer(type_)?;
            let (init, yielded) = (raw.operands()[3 + index], raw_op(yield_op).operands()[index]);
            group.store(buffer, init, op)?;
            group.store(buffer, yielded, yield_op)?;
            load_at_uses(group, block_arguments(body)[1 + index], buffer, |_| true)?;
            load_at_uses(group, result, buffer, |_| true)?;
            let zero = group.uniform_zero(type_, op)?;
            let zero_in_body = group.uniform_zero(type_, yield_op)?;
            // SAFETY: `op` (an scf.for) has iteration arguments from operand 3 on and `yield_op` one operand per result, so both positions exist; the zeros are live values defined before each.
            unsafe {
                mlirOperationSetOperand(op, 3 + index as isize, zero);
                mlirOperationSetOperand(yield_op, index as isize, zero_in_body);
            }
        }
    }
    // Then every other per-item value a later phase uses.
    let per_item = PerItem::analyze(root, &group.ids);
    let recomputed = recomputable(root, &group.ids, &per_item);
    for (op, _) in collect_operations(root_ref, |_| true) {
        if op.ptr == root.ptr || holds_barrier(op) {
            continue;
        }
        for value in raw_op(op).results() {
            if !per_item.contains(value) || recomputed.contains(&(value.ptr as usize)) {
                continue;
            }
            if !users(value).into_iter().any(|user| crosses_barrier(op, user)) {
                continue;
            }
            let buffer = group.buffer(value_type(value))?;
            group.store(buffer, value, next_of(op))?;
            load_at_uses(group, value, buffer, |user| crosses_barrier(op, user) && !is_slot_store(user, buffer))?;
        }
    }
    Ok(())
}

/// Is `user` the store of a value into `buffer` (not a use to redirect)?
fn is_slot_store(user: MlirOperation, buffer: MlirValue) -> bool {
    raw_op(user).name() == "memref.store" && raw_op(user).operands()[1].ptr == buffer.ptr
}
