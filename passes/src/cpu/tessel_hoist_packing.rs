//! `tessel-hoist-packing`: pack contraction panels once per call.
//!
//! `tessel-tile` copies each B panel of a contraction into a contiguous
//! buffer (a `linalg.copy` marked `tessel.packing`) right before the strips
//! that read it. Under a Pallas grid that copy runs once per program, and
//! the same panels come back for every row block: in a `(i, j, k)` matmul
//! the B block `(k, j)` is packed again for each `i` — eight times on the
//! 2048 example, 8% of its time, spent waiting on rows 8 KiB apart.
//!
//! Where the copy's source does not vary with some enclosing loop, this
//! pass packs every panel the loops will ask for once, before the loops,
//! into one buffer (IREE's data tiling, decided per copy): a nest over the
//! loops the source does vary with (an `scf.forall` on all threads from
//! 1 MiB of panels, serial `scf.for`s below) copies panel
//! `(d0, d1, ...)` to slot `d0 * T1 * ... + ...` of the buffer, and the
//! program reads the slot of its own iteration (`memref.view`) where it
//! used to allocate and copy. The panels' contents are the same bytes, so
//! every result keeps its bits.
//!
//! Only when that is sound and pays:
//! - the copy's loops are all `scf.for`/`scf.forall` with constant bounds,
//!   with nothing conditional between them and the copy (every slot packed
//!   ahead is one a program reads, in bounds);
//! - its source is a view of a function argument that nothing in the
//!   function writes (distinct arguments are distinct arrays, as for
//!   grid-to-loops' in-place loads), computed from the loops' induction
//!   variables by pure index arithmetic;
//! - the destination is the copy's own allocation, otherwise only read;
//! - some enclosing loop of more than one trip leaves the source unchanged
//!   (else nothing repeats), and the buffer is at most twice the argument
//!   (it is the argument's panels, not a multiple of them).
//!
//! Runs after bufferization (it moves buffers, not tensors), before loops
//! become OpenMP regions.

use crate::support::handles::{
    argument_owner, block_of, context_of, location_of, next_of, operation_ref, parent_of, raw_op, replace_all_uses,
    value_type,
};
use crate::support::ir::{
    VIEWS, collect_operations, constant_integer, defining_op, erase, is_inside, join, print_type, recompute_before,
    static_bytes, uses, view_root,
};
use crate::support::template;
use crate::{PassDefinition, PassError};
use melior::ir::OperationRef;
use mlir_sys::*;
use std::collections::HashMap;

pub static PASS: PassDefinition = PassDefinition {
    argument: "tessel-hoist-packing",
    name: "TesselHoistPacking",
    description: "Pack contraction panels once per call: hoist tessel.packing copies out of the loops they do not vary in",
    anchor: "builtin.module",
    run,
};

/// The marker `tessel-tile` puts on its panel copies.
pub const PACKING: &str = "tessel.packing";

/// The callee standing, in the packing nest's template, for the place of
/// the cloned source computation and copy.
const SLOT: &str = "tessel_packing_slot";

/// Bytes from which the panels are packed by all threads.
const PARALLEL_BYTES: i64 = 1 << 20;

/// Ops that only read the memref they are given.
const READS: &[&str] = &[
    "vector.transfer_read",
    "vector.load",
    "memref.load",
    "memref.prefetch",
    "memref.dim",
    "memref.extract_strided_metadata",
];

/// Index arithmetic a source view may be computed with (pure, no regions).
fn is_index_arithmetic(name: &str) -> bool {
    VIEWS.contains(&name)
        || name.starts_with("arith.")
        || name.starts_with("index.")
        || matches!(name, "affine.apply" | "affine.min" | "affine.max")
}

/// One induction variable of a loop around the copy, with its constant
/// bounds.
#[derive(Clone, Copy)]
struct Dimension {
    iv: MlirValue,
    lower: i64,
    step: i64,
    trips: i64,
}

/// A packing copy that may be hoisted, and how.
struct Plan {
    copy: MlirOperation,
    alloc: MlirOperation,
    dealloc: MlirOperation,
    /// The outermost loop around the copy: the nest goes before it.
    outermost: MlirOperation,
    /// The dimensions the source varies with, outermost first.
    varying: Vec<Dimension>,
    /// Bytes of one panel.
    panel_bytes: i64,
    /// Bytes of all the panels.
    packed_bytes: i64,
}

fn run(module: OperationRef<'static, '_>) -> Result<(), PassError> {
    for (copy, _) in collect_operations(module, |name| name == "linalg.copy") {
        if !raw_op(copy).has(PACKING) {
            continue;
        }
        if let Some(plan) = plan(copy) {
            hoist(&plan).map_err(|message| PassError::at(location_of(copy), message))?;
        }
    }
    Ok(())
}

/// Whether every use of `value` (through views) only reads it, except the
/// uses by `allowed`.
fn only_read(value: MlirValue, allowed: &[MlirOperation]) -> bool {
    uses(value).into_iter().all(|(user, position)| {
        if allowed.iter().any(|op| op.ptr == user.ptr) {
            return true;
        }
        let op = raw_op(user);
        let name = op.name();
        if VIEWS.contains(&name.as_str()) {
            return position == 0 && op.results().iter().all(|&result| only_read(result, allowed));
        }
        if READS.contains(&name.as_str()) {
            return true;
        }
        // Structured ops read their inputs (the first operand group) and
        // write their outputs.
        name.starts_with("linalg.") && op.segments().first().is_some_and(|&inputs| position < inputs)
    })
}

/// The induction variables and constant bounds of `op`, a loop (`scf.for`
/// or `scf.forall` without dynamic bounds); `None` for anything else.
fn dimensions_of(op: MlirOperation) -> Option<Vec<Dimension>> {
    let raw = raw_op(op);
    let body = raw.region_block(0);
    // SAFETY: live IR of the module being rewritten (crate invariant, support/handles.rs); indices stay below the counts they are taken from
    let argument = |index: isize| unsafe { mlirBlockGetArgument(body, index) };
    // Checked: bounds are whatever the input says (mutated tests included).
    let trips = |lower: i64, upper: i64, step: i64| {
        let span = upper.checked_sub(lower)?.max(0);
        (step > 0).then(|| span.checked_add(step - 1).map(|rounded| rounded / step)).flatten()
    };
    match raw.name().as_str() {
        "scf.for" => {
            let operands = raw.operands();
            let [lower, upper, step] = [0, 1, 2].map(|i| constant_integer(operands[i]));
            let (lower, upper, step) = (lower?, upper?, step?);
            Some(vec![Dimension { iv: argument(0), lower, step, trips: trips(lower, upper, step)? }])
        }
        "scf.forall" if raw.operands().is_empty() => {
            let lowers = raw.integers("staticLowerBound");
            let uppers = raw.integers("staticUpperBound");
            let steps = raw.integers("staticStep");
            (0..uppers.len())
                .map(|d| {
                    let (lower, upper, step) = (lowers[d], uppers[d], steps[d]);
                    Some(Dimension { iv: argument(d as isize), lower, step, trips: trips(lower, upper, step)? })
                })
                .collect()
        }
        _ => None,
    }
}

/// The function argument `view` is a view of, if it is one.
fn root_argument(view: MlirValue) -> Option<MlirValue> {
    let current = view_root(view);
    if defining_op(current).is_some() {
        return None;
    }
    let (owner, _) = argument_owner(current)?;
    (raw_op(owner).name() == "func.func").then_some(current)
}

/// The dimensions `value` is computed from (indices into `dimensions`),
/// if it is computed from them, and from values defined outside `scope`,
/// by index arithmetic only.
fn varies_with(value: MlirValue, dimensions: &[Dimension], scope: MlirOperation, found: &mut Vec<usize>) -> bool {
    if let Some(index) = dimensions.iter().position(|d| d.iv.ptr == value.ptr) {
        if !found.contains(&index) {
            found.push(index);
        }
        return true;
    }
    match defining_op(value) {
        Some(op) if is_inside(op, scope) => {
            let raw = raw_op(op);
            // SAFETY: live IR of the module being rewritten (crate invariant, support/handles.rs)
            let regions = unsafe { mlirOperationGetNumRegions(op) };
            regions == 0
                && is_index_arithmetic(&raw.name())
                && raw.operands().iter().all(|&operand| varies_with(operand, dimensions, scope, found))
        }
        Some(_) => true,
        // A block argument other than the loops' induction variables
        // (iteration arguments) varies in ways this pass does not model.
        None => argument_owner(value).is_some_and(|(owner, _)| !is_inside(owner, scope)),
    }
}

/// Whether and how `copy` can be packed ahead (module docs).
fn plan(copy: MlirOperation) -> Option<Plan> {
    let operands = raw_op(copy).operands();
    let (source, destination) = (operands[0], operands[1]);
    let alloc = defining_op(destination).filter(|&op| raw_op(op).name() == "memref.alloc")?;
    if block_of(alloc).ptr != block_of(copy).ptr || !raw_op(alloc).operands().is_empty() {
        return None;
    }
    let deallocs: Vec<MlirOperation> = uses(destination)
        .into_iter()
        .map(|(user, _)| user)
        .filter(|&user| raw_op(user).name() == "memref.dealloc")
        .collect();
    let [dealloc] = deallocs[..] else { return None };
    if !only_read(destination, &[copy, dealloc]) {
        return None;
    }
    // The loops around the copy, outermost first, up to the function.
    let mut loops = Vec::new();
    let mut current = parent_of(copy);
    while raw_op(current).name() != "func.func" {
        loops.push(current);
        current = parent_of(current);
    }
    loops.reverse();
    let outermost = *loops.first()?;
    let dimensions: Vec<Dimension> = loops.iter().map(|&op| dimensions_of(op)).collect::<Option<Vec<_>>>()?.concat();
    let argument = root_argument(source)?;
    if !only_read(argument, &[]) {
        return None;
    }
    let mut varying = Vec::new();
    if !varies_with(source, &dimensions, outermost, &mut varying) {
        return None;
    }
    varying.sort_unstable();
    let product = |indices: &mut dyn Iterator<Item = usize>| {
        indices.map(|index| dimensions[index].trips).try_fold(1i64, i64::checked_mul)
    };
    let repeats = product(&mut (0..dimensions.len()).filter(|index| !varying.contains(index)))?;
    let panel_bytes = static_bytes(value_type(destination))?;
    let slots = product(&mut varying.iter().copied())?;
    let packed_bytes = slots.checked_mul(panel_bytes)?;
    if repeats < 2 || packed_bytes > static_bytes(value_type(argument))?.saturating_mul(2) {
        return None;
    }
    let varying = varying.iter().map(|&index| dimensions[index]).collect();
    Some(Plan { copy, alloc, dealloc, outermost, varying, panel_bytes, packed_bytes })
}

/// Bytes between consecutive slots of each varying dimension.
fn slot_strides(plan: &Plan) -> Vec<i64> {
    let mut strides = vec![plan.panel_bytes; plan.varying.len()];
    for d in (0..plan.varying.len().saturating_sub(1)).rev() {
        strides[d] = strides[d + 1] * plan.varying[d + 1].trips;
    }
    strides
}

/// Erases the ops inside `scope` that computed `value` and nothing else
/// now (the programs' own source views, once their copy is gone).
fn erase_unused(value: MlirValue, scope: MlirOperation) {
    let Some(op) = defining_op(value).filter(|&op| is_inside(op, scope)) else { return };
    if raw_op(op).results().iter().any(|&result| !uses(result).is_empty()) {
        return;
    }
    let operands = raw_op(op).operands();
    erase(op);
    for operand in operands {
        erase_unused(operand, scope);
    }
}

fn hoist(plan: &Plan) -> Result<(), String> {
    let panel_type = print_type(value_type(raw_op(plan.alloc).results()[0]));
    let buffer_type = format!("memref<{}xi8>", plan.packed_bytes);
    let strides = slot_strides(plan);
    let count = plan.varying.len();
    let dims = join((0..count).map(|d| format!("d{d}")));
    let offset_of = |term: &dyn Fn(usize) -> String| {
        let terms: Vec<String> = (0..count).map(|d| format!("{} * {}", term(d), strides[d])).collect();
        if terms.is_empty() { "0".to_string() } else { terms.join(" + ") }
    };
    // The nest packing every slot, before the outermost loop.
    let ivs: Vec<String> = (0..count).map(|d| format!("%iv{d}")).collect();
    let mut body = String::new();
    // Each induction variable from its normalized index (the index itself
    // when the loop counts from 0 by 1).
    let mut slot_ivs = Vec::new();
    for (d, dimension) in plan.varying.iter().enumerate() {
        if (dimension.lower, dimension.step) == (0, 1) {
            slot_ivs.push(format!("%d{d}"));
            continue;
        }
        template::emit_line!(
            body,
            "%iv{d} = affine.apply affine_map<(d) -> (d * {} + {})>(%d{d})",
            dimension.step,
            dimension.lower
        );
        slot_ivs.push(format!("%iv{d}"));
    }
    template::emit_line!(
        body,
        "%offset = affine.apply affine_map<({dims}) -> ({})>({})\n\
         %panel = memref.view %packed[%offset][] : {buffer_type} to {panel_type}\n\
         func.call @{SLOT}({}) : ({}) -> ()",
        offset_of(&|d| format!("d{d}")),
        join((0..count).map(|d| format!("%d{d}"))),
        join(slot_ivs.into_iter().chain(["%panel".to_string()])),
        join((0..count).map(|_| "index".to_string()).chain([panel_type.clone()]))
    );
    // Threads share a large packing; a small one is not worth a parallel
    // region's fork and join (calls of small kernels are microseconds).
    let nest = if count == 0 {
        body
    } else if plan.packed_bytes >= PARALLEL_BYTES {
        format!(
            "scf.forall ({}) in ({}) {{\n{body}}}\n",
            join((0..count).map(|d| format!("%d{d}"))),
            join(plan.varying.iter().map(|d| d.trips))
        )
    } else {
        let mut loops = String::from("%zero = arith.constant 0 : index\n%one = arith.constant 1 : index\n");
        for (d, dimension) in plan.varying.iter().enumerate() {
            template::emit_line!(loops, "%trips{d} = arith.constant {} : index", dimension.trips);
        }
        for d in 0..count {
            template::emit_line!(loops, "scf.for %d{d} = %zero to %trips{d} step %one {{");
        }
        loops + &body + &"}\n".repeat(count)
    };
    let text = format!(
        "func.func @template() -> {buffer_type} {{\n\
         %packed = memref.alloc() {{alignment = 64 : i64}} : {buffer_type}\n{nest}\
         return %packed : {buffer_type}\n}}\n\
         func.func private @{SLOT}({})\n",
        join((0..count).map(|_| "index".to_string()).chain([panel_type.clone()]))
    );
    let context = context_of(plan.copy);
    let inlined = template::inline_ops_before(context, plan.outermost, &text, &[]).map_err(|error| error.0)?;
    let packed = inlined.results[0];
    let slot = inlined
        .operations
        .iter()
        .flat_map(|&op| collect_operations(operation_ref(op), |name| name == "func.call"))
        .map(|(op, _)| op)
        .next()
        .ok_or("the packing nest lost its slot")?;
    // The source recomputed in the nest from its induction variables, and
    // the copy into the slot.
    let slot_operands = raw_op(slot).operands();
    let substitutes: HashMap<usize, MlirValue> =
        plan.varying.iter().zip(&slot_operands).map(|(d, &value)| (d.iv.ptr as usize, value)).collect();
    let source_in_loops = raw_op(plan.copy).operands()[0];
    let in_loops = |op: MlirOperation| is_inside(op, plan.outermost);
    let source = recompute_before(source_in_loops, &substitutes, &in_loops, slot, &mut HashMap::new());
    // SAFETY: live IR of the module being rewritten (crate invariant, support/handles.rs); the clone is this pass's own, inserted once, with a linalg.copy's two operands
    unsafe {
        let copy = mlirOperationClone(plan.copy);
        mlirOperationSetOperand(copy, 0, source);
        mlirOperationSetOperand(copy, 1, slot_operands[count]);
        mlirBlockInsertOwnedOperationBefore(mlirOperationGetBlock(slot), slot, copy);
    }
    erase(slot);
    // The program reads its slot instead of allocating and copying.
    let kernel_side = format!(
        "func.func @template({}) -> {panel_type} {{\n\
         %offset = affine.apply affine_map<({dims}) -> ({})>({})\n\
         %panel = memref.view %packed[%offset][] : {buffer_type} to {panel_type}\n\
         return %panel : {panel_type}\n}}\n",
        join(std::iter::once(format!("%packed: {buffer_type}")).chain(ivs.iter().map(|iv| format!("{iv}: index")))),
        offset_of(&|d| format!("((d{d} - {}) floordiv {})", plan.varying[d].lower, plan.varying[d].step)),
        join(ivs.iter())
    );
    let arguments: Vec<MlirValue> = std::iter::once(packed).chain(plan.varying.iter().map(|d| d.iv)).collect();
    let panel = template::inline_before(context, plan.alloc, &kernel_side, &arguments).map_err(|error| error.0)?[0];
    erase(plan.copy);
    erase_unused(source_in_loops, plan.outermost);
    erase(plan.dealloc);
    let allocated = raw_op(plan.alloc).results()[0];
    replace_all_uses(allocated, panel);
    erase(plan.alloc);
    // Freed after the loops.
    let free =
        format!("func.func @template(%packed: {buffer_type}) {{\nmemref.dealloc %packed : {buffer_type}\nreturn\n}}\n");
    template::inline_before(context, next_of(plan.outermost), &free, &[packed]).map_err(|error| error.0)?;
    Ok(())
}
