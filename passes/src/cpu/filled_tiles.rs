//! Register tiles that start from their init's fill value in registers
//! (`tessel-tile`), for contractions without an epilogue.
//!
//! `block.dot` without `acc` is a contraction into a zero-filled block. Run
//! as tiled, the whole block is filled in memory first (a memset of 64 KiB
//! for attention's 128 x 128 score block per key block), and every
//! register tile loads its share of those zeros back before its k loop.
//! A contraction whose epilogue the tiles compute has the fill fused into
//! its tiles already (`contraction_epilogue.rs`); the others (a result read
//! by a reduction, or by several ops) get the same effect here: after
//! tiling, each k loop whose accumulator comes from slices and loop-carried
//! copies of the marked fill starts from a fill of its own tile instead
//! (vectorized into a constant accumulator), and the block's fill goes.
//!
//! This is exact only because nothing reads a tile's region before its
//! own k loop: the panels and strips partition the block's parallel
//! dimensions (a remainder strip reads rows the main strips' insert left
//! alone: the regions are statically disjoint) and every tile is finished
//! in one k loop. `tessel-tile` marks a fill only where that holds (no k
//! chunks, whose loop revisits every tile; no padded tiles) and the fill
//! has no other user; the block's fill goes only when every k loop inside
//! the loops reading it starts from registers.

use crate::cpu::tessel_tile::REDUCTION_LOOP;
use crate::support::handles::{
    argument_owner, context_of, operation_ref, raw_op, replace_all_uses, set_unit_attribute, value_type,
};
use crate::support::ir::{collect_operations, defining_op, erase, print_type, uses};
use crate::support::template;
use melior::ir::OperationRef;
use mlir_sys::*;

/// The attribute marking a contraction's init fill whose tiles may start
/// from it in registers.
const FILLED_INIT: &str = "tessel.filled_init";

/// Marks `contraction`'s init, when it is a `linalg.fill` only the
/// contraction uses (the caller guarantees the tiling conditions above).
pub fn mark(contraction: MlirOperation) {
    let operands = raw_op(contraction).operands();
    let Some(&init) = operands.last() else { return };
    let Some(fill) = defining_op(init).filter(|&fill| raw_op(fill).name() == "linalg.fill") else { return };
    if uses(init).len() == 1 {
        set_unit_attribute(fill, FILLED_INIT);
    }
}

/// The marked fill `value` is a slice of, through slices, the init values
/// of `scf.for` loops' iteration arguments, and `tensor.insert_slice`s
/// into a tensor whose region the slice just taken of them is statically
/// disjoint from (the rows a remainder strip reads of the block the main
/// strips were inserted into are still the fill's).
fn marked_fill_of(mut value: MlirValue) -> Option<MlirOperation> {
    // The extract_slice that took `value`'s slice last, if that was the
    // last step.
    let mut slice: Option<MlirOperation> = None;
    loop {
        match defining_op(value) {
            Some(op) => {
                let raw = raw_op(op);
                match raw.name().as_str() {
                    "tensor.extract_slice" => {
                        value = raw.operands()[0];
                        slice = Some(op);
                        continue;
                    }
                    "tensor.insert_slice" if slice.is_some_and(|slice| disjoint_regions(slice, op)) => {
                        value = raw.operands()[1]
                    }
                    "linalg.fill" if raw.has(FILLED_INIT) => return Some(op),
                    _ => return None,
                }
            }
            // An scf.for's block arguments are its induction variable, then
            // one per iteration argument, whose inits follow its bounds and
            // step among its operands.
            None => {
                let (owner, number) = argument_owner(value)?;
                if owner.ptr.is_null() || raw_op(owner).name() != "scf.for" || number == 0 {
                    return None;
                }
                value = raw_op(owner).operands()[3 + number - 1];
            }
        }
        slice = None;
    }
}

/// Whether the region the slice `extract` takes and the one `insert`
/// writes are disjoint along some dimension where both are static.
fn disjoint_regions(extract: MlirOperation, insert: MlirOperation) -> bool {
    let region = |op: MlirOperation| {
        let raw = raw_op(op);
        (raw.integers("static_offsets"), raw.integers("static_sizes"))
    };
    let ((taken_at, taken), (written_at, written)) = (region(extract), region(insert));
    let known = |x: i64| x != i64::MIN;
    (0..taken_at.len().min(written_at.len())).any(|dim| {
        let (a, a_size, b, b_size) = (taken_at[dim], taken[dim], written_at[dim], written[dim]);
        [a, a_size, b, b_size].into_iter().all(known) && (a + a_size <= b || b + b_size <= a)
    })
}

/// Starts every tiled k loop (`tessel.reduction_loop`) whose accumulator
/// comes from a marked fill from a tile-sized fill of the same value
/// (marked for `tessel-vectorize`), and replaces the marked fills by their
/// destinations.
pub fn start_from_fills(module: OperationRef<'static, '_>) -> Result<(), String> {
    let mut filled: Vec<(MlirOperation, Vec<MlirOperation>)> = Vec::new();
    for (k_loop, _) in collect_operations(module, |name| name == "scf.for") {
        let op = raw_op(k_loop);
        if !op.has(REDUCTION_LOOP) {
            continue;
        }
        for (position, init) in op.operands().into_iter().enumerate().skip(3) {
            let Some(fill) = marked_fill_of(init) else { continue };
            let value = raw_op(fill).operands()[0];
            let text = format!(
                "func.func @template(%value: {e}) -> {t} {{\n\
                 %empty = tensor.empty() : {t}\n\
                 %tile = linalg.fill {{tessel.vectorize}} ins(%value : {e}) outs(%empty : {t}) -> {t}\n\
                 return %tile : {t}\n}}",
                e = print_type(value_type(value)),
                t = print_type(value_type(init)),
            );
            let tile = template::inline_before(context_of(k_loop), k_loop, &text, &[value]).map_err(|error| error.0)?;
            // SAFETY: live IR; the tile's fill has the init's type
            unsafe { mlirOperationSetOperand(k_loop, position as isize, tile[0]) };
            match filled.iter_mut().find(|(known, _)| known.ptr == fill.ptr) {
                Some((_, started)) => started.push(k_loop),
                None => filled.push((fill, vec![k_loop])),
            }
        }
    }
    // A fill goes only where every k loop reading it starts from registers
    // now (the others, if any, still read it from memory).
    for (fill, started) in filled {
        let fill_op = raw_op(fill);
        let readers = reduction_loops_reading(fill_op.results()[0]);
        if readers.is_some_and(|loops| loops.iter().all(|k_loop| started.iter().any(|known| known.ptr == k_loop.ptr))) {
            replace_all_uses(fill_op.results()[0], fill_op.operands()[1]);
            erase(fill);
        }
    }
    Ok(())
}

/// The k loops (`tessel.reduction_loop`) inside the loops `value` is an
/// iteration argument's init of, directly or through slices; `None` where
/// anything else reads it.
fn reduction_loops_reading(value: MlirValue) -> Option<Vec<MlirOperation>> {
    let mut loops = Vec::new();
    for (user, operand) in uses(value) {
        match (raw_op(user).name().as_str(), operand) {
            ("scf.for", _) => loops.extend(
                collect_operations(operation_ref(user), |name| name == "scf.for")
                    .into_iter()
                    .map(|(nested, _)| nested)
                    .filter(|&nested| raw_op(nested).has(REDUCTION_LOOP)),
            ),
            // Sliced, or the destination of an insert (not what it inserts).
            ("tensor.extract_slice", 0) | ("tensor.insert_slice", 1) => {
                loops.extend(reduction_loops_reading(raw_op(user).results()[0])?)
            }
            _ => return None,
        }
    }
    Some(loops)
}
