//! Which output stores only the last visit of a block needs, for
//! grid-to-loops.
//!
//! An output block whose index does not depend on the grid's trailing
//! arbitrary axes (K of a Pallas matmul: `(i, j, k) -> (i, j)`) is visited
//! by consecutive programs, which all write the same block. When a
//! program's only use of the output ref is one unmasked whole-block store
//! at the kernel's top level, every visit overwrites the whole block, so
//! only the last visit's store is observable: earlier ones are skipped. That
//! is JAX's TPU matmul, which copies its scratch accumulator to the output
//! at every k step (`o_ref[...] = acc_ref[...]`): a 256 KiB strided copy
//! per step of which only the last counts. A whole-block load feeding only
//! that store, right before it, moves under the same guard.
//!
//! The ref must alias no other operand of the call (else another operand's
//! reads could observe the earlier stores).

use crate::support::{
    handles::{block_of, raw_op},
    ir::{block_arguments, block_operations, join, move_before, region_blocks, users},
    template::{self, emit_conjunction, emit_line},
};
use mlir_sys::*;

/// The extent of a grid axis: a constant, or the kernel argument carrying
/// it (grids sized at run time).
#[derive(Clone, Copy, Debug)]
pub enum Extent {
    Static(i64),
    Argument(usize),
}

/// An output ref revisited along trailing arbitrary axes.
pub struct Revisit {
    /// The kernel argument of the output's ref.
    pub argument: usize,
    /// The revisiting axes: the kernel argument of each one's program id,
    /// and its extent.
    pub axes: Vec<(usize, Extent)>,
}

/// Guards the qualifying output stores of `kernel` (a specialized kernel
/// function) so that they run on each block's last visit only.
pub fn guard_stores(context: MlirContext, kernel: MlirOperation, revisits: &[Revisit]) -> Result<(), String> {
    let Some(&entry) = region_blocks(kernel).first() else { return Ok(()) };
    let arguments = block_arguments(entry);
    for revisit in revisits.iter().filter(|revisit| !revisit.axes.is_empty()) {
        let Some(&output) = arguments.get(revisit.argument) else { continue };
        let [store] = users(output)[..] else { continue };
        if !is_whole_store_of(store, output) || block_of(store).ptr != entry.ptr {
            continue;
        }
        let moved = match feeding_load(store) {
            Some(load) => vec![load, store],
            None => vec![store],
        };
        let mut template = String::new();
        let mut parameters = Vec::new();
        let mut bound = Vec::new();
        let mut conditions = Vec::new();
        for (position, &(program_id, extent)) in revisit.axes.iter().enumerate() {
            parameters.push(format!("%p{position}: index"));
            bound.push(arguments[program_id]);
            match extent {
                Extent::Static(size) => emit_line!(template, "%last{position} = arith.constant {} : index", size - 1),
                Extent::Argument(argument) => {
                    parameters.push(format!("%n{position}: index"));
                    bound.push(arguments[argument]);
                    emit_line!(template, "%one{position} = arith.constant 1 : index");
                    emit_line!(template, "%last{position} = arith.subi %n{position}, %one{position} : index");
                }
            }
            emit_line!(template, "%at{position} = arith.cmpi eq, %p{position}, %last{position} : index");
            conditions.push(format!("%at{position}"));
        }
        let Some(all) = emit_conjunction(&mut template, &conditions, "%all") else { continue };
        emit_line!(template, "scf.if {all} {{\n}}");
        let text = format!("func.func @template({}) {{\n{template}return\n}}", join(&parameters));
        let inlined = template::inline_ops_before(context, moved[0], &text, &bound).map_err(|error| error.0)?;
        // The `scf.if` is the template's last op.
        let &guard = inlined.operations.last().expect("the template ends with its scf.if");
        let then = region_blocks(guard)[0];
        // SAFETY: live IR of the module being rewritten (crate invariant,
        // support/handles.rs): the guard's then block has its terminator.
        let terminator = unsafe { mlirBlockGetTerminator(then) };
        move_before(&moved, terminator);
    }
    Ok(())
}

/// Whether `op` is a `block.store` of a whole block (no offsets, no mask)
/// to `target`.
fn is_whole_store_of(op: MlirOperation, target: MlirValue) -> bool {
    let op = raw_op(op);
    op.name() == "block.store" && matches!(op.operands()[..], [_, r#ref] if r#ref.ptr == target.ptr)
}

/// The whole-block `block.load` right before `store` whose value only
/// `store` uses, if there is one: moving it with the store changes nothing
/// it reads in between.
fn feeding_load(store: MlirOperation) -> Option<MlirOperation> {
    let stored = raw_op(store).operands()[0];
    let operations = block_operations(block_of(store));
    let at = operations.iter().position(|op| op.ptr == store.ptr)?;
    let previous = raw_op(*operations.get(at.checked_sub(1)?)?);
    (previous.name() == "block.load"
        && previous.operands().len() == 1
        && matches!(previous.results()[..], [value] if value.ptr == stored.ptr)
        && matches!(users(stored)[..], [user] if user.ptr == store.ptr))
    .then(|| previous.raw())
}
