//! `tessel-resident-accumulators`: an output block revisited along an
//! arbitrary grid axis stays in registers across it, instead of going to
//! global memory and back at every step.
//!
//! The Pallas idiom for a contraction with K on the grid — zero the
//! output block at the first k, then `acc = load; acc += a @ b; store` —
//! becomes, after `tessel-matrix-cores`, an arbitrary-axis loop (from
//! grid-to-loops) whose body fills the block under `scf.if k == first`,
//! loads each lane's accumulators, runs the k-chunk loop and stores them
//! back. Here, per arbitrary-axis `scf.for` (constant bounds, at least one
//! trip, inside the program nest):
//!
//! 1. pure index arithmetic and views that do not vary with the loop move
//!    before it (so the accumulators' addresses do);
//! 2. loads and stores of the same loop-invariant address (`vector.load`
//!    / `vector.store`, or scalar `memref.load` / `memref.store`), when
//!    nothing else in the loop touches that memory — the only other access
//!    allowed being the first iteration's fill of the block holding it —
//!    become loop-carried values: loaded once before the loop (after the
//!    fill, which moves there: it ran at the first iteration, before any
//!    load), stored once after it;
//! 3. a load right after a fill of the block holding it (nothing touching
//!    that memory between) reads the fill value instead: the accumulators
//!    start as a splat, without reading back what was just written.
//!
//! "Touching" is decided by the memory's root (through views): distinct
//! function arguments do not alias (Tessel's rule throughout), and a root
//! used by any op in the loop other than the pair and the fill blocks the
//! rewrite. Results are bit-identical: the same values are accumulated in
//! the same order, only their trips through memory are gone.

use crate::support::handles::{
    argument_owner, is_memref, location_of, next_of, operation_ref, parent_of, raw_op, replace_all_uses, result_of,
    shaped_element, value_type,
};
use crate::{
    PassDefinition, PassError,
    gpu::matrix_staging::is_program_loop,
    grid::grid_to_loops::ARBITRARY_AXIS,
    support::ir::{
        VIEWS, block_arguments, block_operations, collect_operations, constant_integer, defining_op, erase,
        inline_template, is_inside, move_before, print_type, region_blocks, view_root,
    },
};
use melior::ir::{
    OperationRef,
    operation::{OperationLike, WalkOrder, WalkResult},
};
use mlir_sys::*;

pub static PASS: PassDefinition = PassDefinition {
    argument: "tessel-resident-accumulators",
    name: "TesselResidentAccumulators",
    description: "Keep output blocks revisited along arbitrary grid axes in registers across them",
    anchor: "builtin.module",
    run,
};

/// Ops that only compute addresses: movable when their operands are.
fn is_address_arithmetic(name: &str) -> bool {
    ["arith.", "index."].iter().any(|prefix| name.starts_with(prefix))
        || matches!(name, "affine.apply" | "memref.subview" | "memref.cast" | "gpu.thread_id")
}

fn run(module: OperationRef<'static, '_>) -> Result<(), PassError> {
    // Innermost loops first: an inner axis' accumulators then ride the
    // outer one too.
    let mut loops: Vec<MlirOperation> = collect_operations(module, |name| name == "scf.for")
        .into_iter()
        .map(|(op, _)| op)
        .filter(|&op| raw_op(op).has(ARBITRARY_AXIS))
        .collect();
    loops.reverse();
    for axis in loops {
        if let Err(message) = keep_resident(axis) {
            return Err(PassError::at(location_of(axis), message));
        }
    }
    for (fill, _) in collect_operations(module, |name| name == "linalg.fill") {
        forward_fill(fill)?;
    }
    Ok(())
}

/// Is `view` `block` or a view of it?
fn is_view_of(view: MlirValue, block: MlirValue) -> bool {
    let mut current = view;
    loop {
        if current.ptr == block.ptr {
            return true;
        }
        match defining_op(current) {
            Some(op) if VIEWS.contains(&raw_op(op).name().as_str()) => current = raw_op(op).operands()[0],
            _ => return false,
        }
    }
}

/// Is `value` defined outside `op`?
fn defined_outside(value: MlirValue, op: MlirOperation) -> bool {
    match defining_op(value) {
        Some(definer) => !is_inside(definer, op),
        None => argument_owner(value).is_some_and(|(owner, _)| !is_inside(owner, op)),
    }
}

/// A load and the store back of the same address, in an axis' body.
struct Pair {
    load: MlirOperation,
    store: MlirOperation,
}

/// Steps 1 and 2 for the arbitrary-axis loop `axis`.
fn keep_resident(axis: MlirOperation) -> Result<(), String> {
    let raw = raw_op(axis);
    let operands = raw.operands();
    if operands.len() != 3 || !raw.results().is_empty() {
        return Ok(());
    }
    let (Some(lower), Some(upper), Some(step)) =
        (constant_integer(operands[0]), constant_integer(operands[1]), constant_integer(operands[2]))
    else {
        return Ok(());
    };
    // Inside the program nest (whose outermost loop grid-to-gpu makes the
    // launch: thread ids may not leave it).
    let parent = parent_of(axis);
    let nested = !parent.ptr.is_null() && is_program_loop(parent);
    if step <= 0 || upper <= lower || !nested {
        return Ok(());
    }
    let body = raw.region_block(0);
    let iv = block_arguments(body)[0];
    // 1. Loop-invariant address arithmetic moves out.
    for op in block_operations(body) {
        let op_raw = raw_op(op);
        if is_address_arithmetic(&op_raw.name())
            && region_blocks(op).is_empty()
            && op_raw.operands().iter().all(|&operand| defined_outside(operand, axis))
        {
            move_before(&[op], axis);
        }
    }
    // 2. Pairs of invariant loads and stores; the first iteration's fill.
    let ops = block_operations(body);
    let fill = ops.iter().copied().find_map(|op| first_iteration_fill(op, iv, lower));
    let mut pairs = Vec::new();
    for (index, &load) in ops.iter().enumerate() {
        let name = raw_op(load).name();
        let store_name = match name.as_str() {
            "vector.load" => "vector.store",
            "memref.load" => "memref.store",
            _ => continue,
        };
        let address = raw_op(load).operands();
        if !address.iter().all(|&operand| defined_outside(operand, axis)) {
            continue;
        }
        let store = ops[index + 1..].iter().copied().find(|&op| {
            let op_raw = raw_op(op);
            op_raw.name() == store_name
                && op_raw.operands()[1..].iter().map(|v| v.ptr).eq(address.iter().map(|v| v.ptr))
        });
        let same_type = |store: MlirOperation| {
            // SAFETY: live types (crate invariant)
            unsafe { mlirTypeEqual(value_type(raw_op(store).operands()[0]), value_type(result_of(load, 0))) }
        };
        match store {
            Some(store) if same_type(store) && !pairs.iter().any(|pair: &Pair| pair.store.ptr == store.ptr) => {
                pairs.push(Pair { load, store })
            }
            _ => {}
        }
    }
    if pairs.is_empty() {
        return Ok(());
    }
    // Nothing else in the loop may touch the pairs' memory; a fill must
    // cover what the pairs load.
    let allowed: Vec<usize> = pairs
        .iter()
        .flat_map(|pair| [pair.load.ptr as usize, pair.store.ptr as usize])
        .chain(fill.map(|(_, fill)| fill.ptr as usize))
        .collect();
    let roots: Vec<MlirValue> = pairs.iter().map(|pair| view_root(raw_op(pair.load).operands()[0])).collect();
    let mut foreign = false;
    operation_ref(axis).walk(WalkOrder::PreOrder, |nested| {
        let op = nested.to_raw();
        if op.ptr == axis.ptr || allowed.contains(&(op.ptr as usize)) {
            return WalkResult::Advance;
        }
        let op_raw = raw_op(op);
        if VIEWS.contains(&op_raw.name().as_str()) {
            return WalkResult::Advance; // judged by their users
        }
        let touches = op_raw.operands().iter().any(|&operand| {
            is_memref(value_type(operand)) && roots.iter().any(|root| root.ptr == view_root(operand).ptr)
        });
        if touches {
            foreign = true;
            return WalkResult::Interrupt;
        }
        WalkResult::Advance
    });
    if foreign {
        return Ok(());
    }
    if let Some((_, fill_op)) = fill {
        let filled = raw_op(fill_op).operands()[1];
        let covered = pairs.iter().all(|pair| is_view_of(raw_op(pair.load).operands()[0], filled));
        if !covered || !defined_outside(filled, axis) || !defined_outside(raw_op(fill_op).operands()[0], axis) {
            return Ok(());
        }
    }
    // The rewrite: fill, then loads, before the loop; the loop carries the
    // values; stores after it.
    if let Some((guard, fill_op)) = fill {
        move_before(&[fill_op], axis);
        erase(guard);
    }
    let loads: Vec<MlirOperation> = pairs.iter().map(|pair| pair.load).collect();
    move_before(&loads, axis);
    carry(axis, &pairs)
}

/// Is `op` (an `scf.if`) conditioned on `iv == trip` (`arith.cmpi eq`,
/// either operand order)?
pub(crate) fn runs_on_trip(op: MlirOperation, iv: MlirValue, trip: i64) -> bool {
    let Some(condition) = raw_op(op).operands().first().and_then(|&value| defining_op(value)) else { return false };
    let compare = raw_op(condition);
    // arith.cmpi predicate 0 is `eq`.
    if compare.name() != "arith.cmpi" || crate::support::ir::integer_of(compare.attribute("predicate")) != Some(0) {
        return false;
    }
    let [x, y] = compare.operands()[..] else { return false };
    let is_trip = |a: MlirValue, b: MlirValue| a.ptr == iv.ptr && constant_integer(b) == Some(trip);
    is_trip(x, y) || is_trip(y, x)
}

/// The fill `op` is, if it is `scf.if %iv == first { linalg.fill }`
/// (also `tessel-merge-k-steps`' first-trip fill).
pub(crate) fn first_iteration_fill(
    op: MlirOperation,
    iv: MlirValue,
    first: i64,
) -> Option<(MlirOperation, MlirOperation)> {
    let raw = raw_op(op);
    if raw.name() != "scf.if" || !raw.results().is_empty() || !runs_on_trip(op, iv, first) {
        return None;
    }
    let blocks = region_blocks(op);
    if blocks.iter().skip(1).any(|&block| block_operations(block).len() > 1) {
        return None;
    }
    let then_ops = block_operations(*blocks.first()?);
    match then_ops[..] {
        [fill, _yield] if raw_op(fill).name() == "linalg.fill" && raw_op(fill).operands().len() == 2 => {
            Some((op, fill))
        }
        _ => None,
    }
}

/// Rebuilds `axis` carrying the pairs' values: iteration arguments start
/// as the (hoisted) loads, each iteration yields what its store stored,
/// and the stores move after the loop with its results.
fn carry(axis: MlirOperation, pairs: &[Pair]) -> Result<(), String> {
    let raw = raw_op(axis);
    let types: Vec<String> = pairs.iter().map(|pair| print_type(value_type(result_of(pair.load, 0)))).collect();
    let count = pairs.len();
    let arguments: Vec<String> = (0..count).map(|i| format!("%a{i} = %i{i}")).collect();
    let parameters: Vec<String> = (0..count).map(|i| format!(", %i{i}: {}", types[i])).collect();
    let carried: Vec<String> = (0..count).map(|i| format!("%a{i}")).collect();
    let results: Vec<String> = (0..count).map(|i| format!("%r#{i}")).collect();
    let type_list = types.join(", ");
    let text = format!(
        "func.func @template(%lb: index, %ub: index, %st: index{}) -> ({type_list}) {{\n\
         %r:{count} = scf.for %iv = %lb to %ub step %st iter_args({}) -> ({type_list}) {{\n\
         scf.yield {} : {type_list}\n}}\nreturn {} : {type_list}\n}}",
        parameters.concat(),
        arguments.join(", "),
        carried.join(", "),
        results.join(", "),
    );
    let mut args = raw.operands();
    args.extend(pairs.iter().map(|pair| result_of(pair.load, 0)));
    let (values, added) = inline_template(axis, &text, &args)?;
    let rebuilt = crate::support::ir::find_named(&added, "scf.for").ok_or("the loop template has no loop")?;
    let new_body = raw_op(rebuilt).region_block(0);
    let new_arguments = block_arguments(new_body);
    let new_yield = *block_operations(new_body).last().ok_or("the loop template has no yield")?;
    // The old body's ops (its terminator aside) into the new loop.
    let old_body = raw.region_block(0);
    let mut moved = block_operations(old_body);
    moved.pop();
    move_before(&moved, new_yield);
    replace_all_uses(block_arguments(old_body)[0], new_arguments[0]);
    for (index, pair) in pairs.iter().enumerate() {
        let loaded = result_of(pair.load, 0);
        // Inside the loop the value is the iteration argument.
        for op in &moved {
            crate::support::ir::replace_uses_within(*op, loaded, new_arguments[index + 1]);
        }
        let stored = raw_op(pair.store).operands()[0];
        // SAFETY: live IR of the module being rewritten (crate invariant, support/handles.rs); the yield and the store are ours, their operand counts known
        unsafe {
            mlirOperationSetOperand(new_yield, index as isize, stored);
            mlirOperationSetOperand(pair.store, 0, values[index]);
        }
    }
    // SAFETY: live IR (crate invariant); the attributes are copied from the op being replaced
    unsafe {
        for index in 0..mlirOperationGetNumAttributes(axis) {
            let named = mlirOperationGetAttribute(axis, index);
            mlirOperationSetAttributeByName(rebuilt, mlirIdentifierStr(named.name), named.attribute);
        }
    }
    // The stores follow the rebuilt loop (which the template put before
    // `axis`), in their order.
    for pair in pairs.iter().rev() {
        // SAFETY: live IR (crate invariant); moving our own ops
        unsafe { mlirOperationMoveAfter(pair.store, rebuilt) };
    }
    erase(axis);
    Ok(())
}

/// Step 3: loads right after `fill` from the block it filled read the
/// fill value.
fn forward_fill(fill: MlirOperation) -> Result<(), PassError> {
    let raw = raw_op(fill);
    if raw.operands().len() != 2 || !raw.results().is_empty() {
        return Ok(());
    }
    let (value, filled) = (raw.operands()[0], raw.operands()[1]);
    let root = view_root(filled);
    let mut current = next_of(fill);
    while !current.ptr.is_null() {
        let op = raw_op(current);
        let name = op.name();
        let next = next_of(current);
        let touches = |op: MlirOperation| {
            let mut found = false;
            operation_ref(op).walk(WalkOrder::PreOrder, |nested| {
                let nested_raw = raw_op(nested.to_raw());
                if nested_raw.operands().iter().any(|&v| is_memref(value_type(v)) && view_root(v).ptr == root.ptr) {
                    found = true;
                    return WalkResult::Interrupt;
                }
                WalkResult::Advance
            });
            found
        };
        if VIEWS.contains(&name.as_str()) {
            current = next;
            continue;
        }
        let is_load = name == "vector.load" || name == "memref.load";
        if is_load && is_view_of(op.operands()[0], filled) {
            let loaded = result_of(current, 0);
            let element_type = value_type(value);
            let loaded_element =
                if name == "vector.load" { shaped_element(value_type(loaded)) } else { value_type(loaded) };
            // SAFETY: live types (crate invariant)
            if !unsafe { mlirTypeEqual(loaded_element, element_type) } {
                break;
            }
            let replacement = if name == "vector.load" {
                let (r#type, element) = (print_type(value_type(loaded)), print_type(element_type));
                let text = format!(
                    "func.func @template(%v: {element}) -> {type} {{\n\
                     %s = vector.broadcast %v : {element} to {type}\nreturn %s : {type}\n}}",
                    type = r#type
                );
                let (values, _) = inline_template(current, &text, &[value])
                    .map_err(|message| PassError::at(location_of(current), message))?;
                values[0]
            } else {
                value
            };
            replace_all_uses(loaded, replacement);
            erase(current);
        } else if touches(current) {
            break;
        }
        current = next;
    }
    Ok(())
}
