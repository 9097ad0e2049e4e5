//! Work-items of grid-to-gpu: block work (`scf.parallel` nests) shared
//! among a workgroup's items as strided loops, other writes on item 0, with
//! barriers between, and `gpu.thread_id` bound to the item's id.

use crate::support::handles::{attribute_text, next_of, operation_ref, raw_op, replace_all_uses, result_of};
use crate::support::template::{emit, emit_line};
use crate::{
    gpu::{memory_roots::is_read, per_item::PerItem, replicated_buffers::writes_only, tessel_batch_loads::BATCH_LOADS},
    support::ir::{
        any_nested, block_arguments, block_operations, collect_operations, constant_integer, defining_op, erase,
        find_named, inline_template, is_inside, join, move_before, region_blocks,
    },
};
use mlir_sys::*;
use std::cell::RefCell;
use std::collections::HashMap;

/// Per-lane code (tessel-matrix-cores' fragments and matrix instructions)
/// reads `gpu.thread_id`: inside the launch, that is the work-item's id.
pub(super) fn bind_thread_ids(launch: MlirOperation, ids: [MlirValue; 3]) {
    let launch_ref = operation_ref(launch);
    for (op, _) in collect_operations(launch_ref, |name| name == "gpu.thread_id") {
        let dimension = attribute_text(raw_op(op).attribute("dimension"));
        let id = if dimension.contains('y') {
            ids[1]
        } else if dimension.contains('z') {
            ids[2]
        } else {
            ids[0]
        };
        replace_all_uses(result_of(op, 0), id);
        erase(op);
    }
}

/// How block work is shared: item ids and their count, and which values
/// are per item (code on them runs on every item).
pub(super) struct Items {
    pub(super) item: MlirValue,
    pub(super) threads: i64,
    pub(super) per_item: PerItem,
    /// The allocations of replicated buffers (`replicated_buffers.rs`):
    /// code writing only them runs on every item, as per-item code does.
    pub(super) replicated: std::collections::HashSet<usize>,
    /// Each shared-out block work's trip counter k (iteration k T + item),
    /// by the `scf.parallel`'s handle; None for one trip per item. Only
    /// block work of constant trips per item (what private buffers need).
    pub(super) trip_counters: RefCell<HashMap<usize, Option<MlirValue>>>,
}

/// Ops that neither write memory nor synchronize (their nested ops aside):
/// every work-item may run them.
pub(super) fn is_read_only(name: &str) -> bool {
    ["arith.", "math.", "index.", "ub."].iter().any(|prefix| name.starts_with(prefix))
        || matches!(
            name,
            "affine.apply"
                | "affine.delinearize_index"
                | "affine.linearize_index"
                | "affine.min"
                | "affine.max"
                | "memref.subview"
                | "memref.load"
                | "memref.dim"
                | "memref.cast"
                | "memref.view"
                | "memref.reinterpret_cast"
                | "memref.expand_shape"
                | "memref.collapse_shape"
                | "memref.extract_strided_metadata"
                | "memref.extract_aligned_pointer_as_index"
                | "memref.get_global"
                | "memref.memory_space_cast"
                | "scf.for"
                | "scf.if"
                | "scf.while"
                | "scf.condition"
                | "scf.index_switch"
                | "scf.yield"
                | "gpu.block_id"
                | "gpu.thread_id"
        )
}

fn writes(op: MlirOperation) -> bool {
    any_nested(op, |nested| !is_read_only(&raw_op(nested).name()))
}

fn is_terminator(name: &str) -> bool {
    matches!(name, "scf.yield" | "scf.condition" | "gpu.terminator" | "scf.reduce")
}

/// Shares the work of `block` (uniform code) among the work-items. Code on
/// per-item values (SIMT code) runs on every item as it is, a barrier
/// after each run of it.
pub(super) fn distribute(block: MlirBlock, items: &Items) -> Result<(), String> {
    let mut writes_of_one = Vec::new();
    let mut last_per_item = None;
    for op in block_operations(block) {
        let raw = raw_op(op);
        let name = raw.name();
        if is_terminator(&name) {
            continue;
        }
        let holds_block_work = any_nested(op, |nested| raw_op(nested).name() == "scf.parallel");
        if name == "gpu.barrier" {
            // Per-item code's own barrier (tessel-matrix-cores' pipelined
            // staging): every item reaches it; it ends the run before it.
            on_first_item(&mut writes_of_one, items)?;
            last_per_item = None;
        } else if name == "scf.parallel" {
            end_per_item(&mut last_per_item)?;
            on_first_item(&mut writes_of_one, items)?;
            distribute_parallel(op, items)?;
        } else if holds_block_work && is_structured_control_flow(&name) {
            end_per_item(&mut last_per_item)?;
            on_first_item(&mut writes_of_one, items)?;
            for nested in region_blocks(op) {
                distribute(nested, items)?;
            }
        } else if holds_block_work {
            return Err(format!("block work nested in '{name}' cannot be shared among work-items"));
        } else if items.per_item.used_by(op) || (writes(op) && writes_only(op, &items.replicated)) {
            on_first_item(&mut writes_of_one, items)?;
            last_per_item = Some(op);
        } else if writes(op) {
            end_per_item(&mut last_per_item)?;
            let results_used = raw.results().iter().any(|&result| !crate::support::ir::users(result).is_empty());
            // Control flow that writes and yields values (what a
            // one-element block's loops fold into): a conditional whose
            // yields can be selected runs on item 0 like other writes;
            // other control flow every item runs, as it runs control flow
            // around block work, its writes on item 0 inside, so the
            // values it yields are the same on every item.
            if results_used && name == "scf.if" && select_results_of_if(op)? {
                writes_of_one.push(op);
                continue;
            }
            if results_used && is_structured_control_flow(&name) {
                on_first_item(&mut writes_of_one, items)?;
                for nested in region_blocks(op) {
                    distribute(nested, items)?;
                }
                continue;
            }
            if results_used {
                return Err(format!("'{name}' writes memory outside block work and has results: unsupported on GPUs"));
            }
            writes_of_one.push(op);
        } else {
            on_first_item(&mut writes_of_one, items)?;
        }
    }
    end_per_item(&mut last_per_item)?;
    on_first_item(&mut writes_of_one, items)
}

/// Lets an `scf.if` that writes memory and yields values run on item 0
/// like other writes, while every item gets its results: its allocations
/// and views of them move before it (buffers of static shape, slots of the
/// workgroup's arena), and when every value it yields is then defined outside
/// it, each result becomes an `arith.select` of the yielded values on the
/// (uniform) condition. This is what a one-element block computed under
/// `scf.if` looks like once its loops fold away. False when some yielded
/// value is computed inside.
fn select_results_of_if(op: MlirOperation) -> Result<bool, String> {
    let raw = raw_op(op);
    let branches = region_blocks(op);
    let [then_block, else_block] = branches[..] else { return Ok(false) };
    let outside = |value: MlirValue| defining_op(value).is_none_or(|definer| !is_inside(definer, op));
    for block in [then_block, else_block] {
        // In order, so a view of a hoisted allocation follows it.
        for nested in block_operations(block) {
            let nested_op = raw_op(nested);
            // Allocations, views and index arithmetic: no memory access.
            let name = nested_op.name();
            let hoistable = name.starts_with("arith.")
                || matches!(
                    name.as_str(),
                    "memref.alloc"
                        | "memref.alloca"
                        | "memref.view"
                        | "memref.subview"
                        | "memref.cast"
                        | "memref.reinterpret_cast"
                        | "memref.memory_space_cast"
                        | "memref.expand_shape"
                        | "memref.collapse_shape"
                );
            if hoistable && nested_op.operands().iter().all(|&operand| outside(operand)) {
                move_before(&[nested], op);
            }
        }
    }
    let yielded = |block: MlirBlock| {
        let terminator = *block_operations(block).last().expect("a terminated branch");
        raw_op(terminator).operands()
    };
    let (then_values, else_values) = (yielded(then_block), yielded(else_block));
    if !then_values.iter().chain(&else_values).all(|&value| outside(value)) {
        return Ok(false);
    }
    let condition = raw.operands()[0];
    for (index, &result) in raw.results().iter().enumerate() {
        let r#type = crate::support::ir::print_type(crate::support::handles::value_type(result));
        let text = format!(
            "func.func @template(%c: i1, %a: {type}, %b: {type}) -> {type} {{\n\
             %r = arith.select %c, %a, %b : {type}\nreturn %r : {type}\n}}",
            type = r#type
        );
        let (selected, _) = inline_template(op, &text, &[condition, then_values[index], else_values[index]])?;
        replace_all_uses(result, selected[0]);
    }
    Ok(true)
}

/// Region ops whose control flow every work-item can run (on uniform
/// values), with their nested work shared out.
fn is_structured_control_flow(name: &str) -> bool {
    matches!(name, "scf.for" | "scf.if" | "scf.while" | "scf.index_switch")
}

/// A barrier after the last op of a run of per-item code (what the items
/// read or wrote is then safe for the work after it).
fn end_per_item(last: &mut Option<MlirOperation>) -> Result<(), String> {
    let Some(op) = last.take() else { return Ok(()) };
    let next = next_of(op);
    inline_template(next, "func.func @template() {\ngpu.barrier\nreturn\n}", &[])?;
    Ok(())
}

/// Runs `ops` (consecutive writes) on work-item 0, between barriers.
fn on_first_item(ops: &mut Vec<MlirOperation>, items: &Items) -> Result<(), String> {
    let Some(&anchor) = ops.first() else { return Ok(()) };
    // The test of the item id is in the same phase as its use (ids of
    // work-items are not kept across barriers).
    let text = "func.func @template(%t: index) {\ngpu.barrier\n%c0 = arith.constant 0 : index\n\
                %first = arith.cmpi eq, %t, %c0 : index\nscf.if %first {\ngpu.barrier\n}\ngpu.barrier\nreturn\n}";
    let (_, added) = inline_template(anchor, text, &[items.item])?;
    let guard = find_named(&added, "scf.if").expect("the template has an scf.if");
    let placeholder = block_operations(raw_op(guard).region_block(0))[0];
    // The closing barrier must follow the ops: move it after the last one.
    let closing = *added.last().expect("the template's last barrier");
    move_before(ops, placeholder);
    erase(placeholder);
    // SAFETY: `closing` and `guard` are live ops of one block (crate invariant); the move relinks `closing` after `guard`.
    unsafe { mlirOperationMoveAfter(closing, guard) };
    ops.clear();
    Ok(())
}

/// The most iterations per work-item of a constant-trip loop LLVM may
/// unroll as it likes (completely, for short ones: their loads issue
/// together): more, unrolled, keep too many values live at once (an
/// attention kernel's 128 items on RDNA 3 spilled).
const MAX_FREELY_UNROLLED_TRIPS: i64 = 8;

/// Longer constant-trip loops are unrolled by at least this much (a
/// divisor of the trips) by tessel-batch-loads, which issues the unrolled
/// iterations' loads together (as many iterations as its register budget
/// for loads allows): one wait for memory per batch.
const BATCHED_ITERATIONS: i64 = 4;

/// The iterations per batch of a long constant-trip loop of `trips`
/// (`BATCHED_ITERATIONS` or its largest divisor of `trips`, at least 2);
/// None for short loops and trips it does not divide.
fn batch_of_trips(trips: i64) -> Option<i64> {
    if trips <= MAX_FREELY_UNROLLED_TRIPS {
        return None;
    }
    (2..=BATCHED_ITERATIONS).rev().find(|batch| trips % batch == 0)
}

/// The iterations per batch of `parallel`'s per-item loop of `trips`: only
/// work that reads memory gains from batching its loads.
fn batch_of(parallel: MlirOperation, trips: i64) -> Option<i64> {
    if any_nested(parallel, is_read) { batch_of_trips(trips) } else { None }
}

/// The constant trips per item of the block work `parallel` shared by
/// `threads` items (iteration k T + item, k below the trips), when its
/// iterations are a multiple of the items and the item's loop is short
/// enough for LLVM to unroll or batched by tessel-batch-loads; None when
/// items stride over the iterations from their ids.
fn per_item_trips(parallel: MlirOperation, threads: i64) -> Option<i64> {
    let raw = raw_op(parallel);
    let operands = raw.operands();
    let rank = raw.segments().first().copied().unwrap_or(0);
    let trip = |d: usize| -> Option<i64> {
        let span = constant_integer(operands[rank + d])? - constant_integer(operands[d])?;
        let step = constant_integer(operands[2 * rank + d])?;
        (step > 0).then(|| (span + step - 1) / step)
    };
    let total = (0..rank).map(trip).try_fold(1i64, |total, n| Some(total * n?))?;
    (total > 0 && total % threads == 0)
        .then_some(total / threads)
        .filter(|&trips| trips <= MAX_FREELY_UNROLLED_TRIPS || batch_of(parallel, trips).is_some())
}

/// The trips per item of `parallel` when LLVM may unroll the item's loop
/// completely (what keeps a private buffer's indices constant).
pub(super) fn freely_unrolled_trips(parallel: MlirOperation, threads: i64) -> Option<i64> {
    per_item_trips(parallel, threads).filter(|&trips| trips <= MAX_FREELY_UNROLLED_TRIPS)
}

/// `scf.parallel` -> a loop of item `t` over linear iterations t, t + T, ...
fn distribute_parallel(parallel: MlirOperation, items: &Items) -> Result<(), String> {
    let raw = raw_op(parallel);
    if !raw.results().is_empty() {
        return Err("a parallel loop with reductions cannot be shared among work-items yet".into());
    }
    let operands = raw.operands();
    let rank = raw.segments().first().copied().unwrap_or(0);
    // Operands are grouped as lower bounds, upper bounds, steps.
    let (lower, upper, steps) = (&operands[..rank], &operands[rank..2 * rank], &operands[2 * rank..3 * rank]);
    let indices = |count: usize| join(vec!["index"; count]);
    // The trip counts (returned, for the induction variables below), then
    // the strided loop of item %t.
    let mut text = String::from("func.func @template(%t: index");
    for d in 0..rank {
        emit!(text, ", %lb{d}: index, %ub{d}: index, %st{d}: index");
    }
    emit_line!(text, ") -> ({}) {{\n%total0 = arith.constant 1 : index", indices(rank));
    for d in 0..rank {
        emit_line!(
            text,
            "%d{d} = arith.subi %ub{d}, %lb{d} : index\n%n{d} = arith.ceildivsi %d{d}, %st{d} : index\n\
             %total{} = arith.muli %total{d}, %n{d} : index",
            d + 1
        );
    }
    // Iterations a multiple of the work-items run as a loop of a constant
    // trip count per item (iteration = item + k x items), which LLVM can
    // unroll so an item's loads issue together; exactly one iteration per
    // item runs straight-line (no loop: the body stays in control flow
    // uniform across the workgroup, where wave-wide operations, a
    // cross-lane reduction, may sit). Others stride from the item's id.
    let per_item = per_item_trips(parallel, items.threads);
    let batch = |trips: i64| batch_of(parallel, trips);
    let work = match per_item {
        Some(1) => "gpu.barrier".to_string(),
        Some(trips) => format!(
            "%c0 = arith.constant 0 : index\n%c1 = arith.constant 1 : index\n%trips = arith.constant {trips} : index\n\
             scf.for %k = %c0 to %trips step %c1 {{\n%o = arith.muli %k, %threads : index\n\
             %l = arith.addi %o, %t : index\ngpu.barrier\n}}{}",
            batch(trips).map_or(String::new(), |iterations| format!(" {{{BATCH_LOADS} = {iterations} : i64}}"))
        ),
        None => format!("scf.for %l = %t to %total{rank} step %threads {{\ngpu.barrier\n}}"),
    };
    emit_line!(
        text,
        "%threads = arith.constant {} : index\n{work}\ngpu.barrier\nreturn {} : {}\n}}",
        items.threads,
        join((0..rank).map(|d| format!("%n{d}"))),
        indices(rank)
    );
    let args: Vec<MlirValue> =
        std::iter::once(items.item).chain((0..rank).flat_map(|d| [lower[d], upper[d], steps[d]])).collect();
    let (trips, added) = inline_template(parallel, &text, &args)?;
    let (linear, placeholder) = if per_item == Some(1) {
        items.trip_counters.borrow_mut().insert(parallel.ptr as usize, None);
        (items.item, find_named(&added, "gpu.barrier").expect("the template has a placeholder"))
    } else {
        let per_item_loop = find_named(&added, "scf.for").expect("the template has a loop");
        let loop_body = raw_op(per_item_loop).region_block(0);
        let body = block_operations(loop_body);
        if per_item.is_some() {
            let counter = block_arguments(loop_body)[0];
            items.trip_counters.borrow_mut().insert(parallel.ptr as usize, Some(counter));
            // muli, addi (the iteration), the placeholder, yield.
            (result_of(body[1], 0), body[2])
        } else {
            (block_arguments(loop_body)[0], body[0])
        }
    };

    // Induction variables from the linear iteration, the last one fastest.
    let mut ivs = String::from("func.func @template(%l: index");
    for d in 0..rank {
        emit!(ivs, ", %lb{d}: index, %st{d}: index, %n{d}: index");
    }
    emit_line!(ivs, ") -> ({}) {{", indices(rank));
    let positions: Vec<String> = if rank == 1 {
        vec!["%l".into()]
    } else {
        let basis: Vec<String> = (0..rank).map(|d| format!("%n{d}")).collect();
        emit_line!(ivs, "%i:{rank} = affine.delinearize_index %l into ({}) : {}", join(basis), indices(rank));
        (0..rank).map(|d| format!("%i#{d}")).collect()
    };
    for (d, position) in positions.iter().enumerate() {
        emit_line!(ivs, "%s{d} = arith.muli {position}, %st{d} : index\n%iv{d} = arith.addi %lb{d}, %s{d} : index");
    }
    emit_line!(ivs, "return {} : {}\n}}", join((0..rank).map(|d| format!("%iv{d}"))), indices(rank));
    let args: Vec<MlirValue> =
        std::iter::once(linear).chain((0..rank).flat_map(|d| [lower[d], steps[d], trips[d]])).collect();
    let (values, _) = inline_template(placeholder, &ivs, &args)?;

    let parallel_body = raw.region_block(0);
    let mut work = block_operations(parallel_body);
    work.pop(); // scf.reduce
    move_before(&work, placeholder);
    for (iv, value) in block_arguments(parallel_body).into_iter().zip(values) {
        replace_all_uses(iv, value);
    }
    erase(placeholder);
    erase(parallel);
    Ok(())
}
