//! `tessel-batch-loads`: a work-item issues several iterations' loads
//! before it waits for any.
//!
//! grid-to-gpu runs a work-item's share of block work (iterations
//! item, item + T, ...) as a loop of constant trip count. Short ones LLVM
//! unrolls completely, and their loads issue together; longer ones
//! (softmax's normalization of eight 4096-wide rows: 32 vectors per item)
//! stay loops, and LLVM keeps each iteration's loads after the previous
//! iteration's stores — it cannot tell the buffers apart — so the item
//! waits for memory once per iteration. grid-to-gpu marks those loops
//! `tessel.batch_loads = U` (its smallest batch); block work's own long
//! loops that read global memory (a row reduction's walk along its row)
//! are found here. Each such loop's short nested loops unroll completely,
//! then the loop unrolls (upstream's `transform.loop.unroll`) by as many
//! iterations as fit a register budget for the reads (`BATCH_DWORDS`,
//! counted from one iteration's reads), and every read of memory the loop
//! body does not write moves, with the index arithmetic it needs, to the
//! top of the body, in order, followed by a scheduling barrier: a batch's
//! loads in flight at once, one wait per batch. Reads of LDS alone do not
//! wait long enough to batch more than grid-to-gpu asked.
//!
//! Reads move above writes only when they touch different memory
//! (`memory_roots`: distinct memref arguments do not alias, LDS slots by
//! offset; anything untraced conflicts with everything), so every value is
//! computed as before. Bodies with barriers, or reads nested in control
//! flow, stay as they are.

use crate::gpu::memory_roots::{Effects, Root, conflicts, is_read};
use crate::support::handles::{dim_size, next_of, operation_ref, rank_of, raw_op, shaped_element, value_type};
use crate::support::template::emit_line;
use crate::{
    PassDefinition, PassError,
    support::ir::{
        any_nested, block_operations, collect_operations, constant_integer, defining_op, element_bits, enclosing,
        inline_template, is_memory_effect_free, set_i64_attribute,
    },
    support::transform,
};
use melior::{
    StringRef,
    ir::{OperationRef, operation::OperationLike},
};
use mlir_sys::*;
use std::collections::HashSet;

pub static PASS: PassDefinition = PassDefinition {
    argument: "tessel-batch-loads",
    name: "TesselBatchLoads",
    description: "Unroll marked per-item loops and issue their reads of unwritten memory first (GPU)",
    anchor: "builtin.module",
    run,
};

/// Marks a per-item loop to unroll by the attribute's value, its reads
/// then issued together (set by grid-to-gpu).
pub const BATCH_LOADS: &str = "tessel.batch_loads";

/// The unrolled loop stays a loop: LLVM unrolling it further (completely,
/// when few trips are left) would keep every iteration's values live at
/// once (an attention kernel's 128 items on RDNA 3 spilled), and its loop
/// vectorizer's interleaving (two trips in one, each's loads beside their
/// uses) would undo the batch's order.
const NO_FURTHER_UNROLLING: &str = "#llvm.loop_annotation<vectorize = #llvm.loop_vectorize<disable = true>, \
     interleave = #llvm.loop_interleave<count = 1>, unroll = #llvm.loop_unroll<disable = true>>";

/// Registers (dwords per lane) one batch's reads may fill. Measured on the
/// examples (benchmarks/amdgpu, every chip): 64 keeps every kernel free of
/// spills (the eight-row softmax at 99-203 VGPRs) and cuts its round
/// trips to memory from 25 to 8 on CDNA, a sum's from 9 to 5 per program;
/// 96 spills the softmax on RDNA 3.
const BATCH_DWORDS: i64 = 64;

/// The most iterations one batch holds.
const MAX_BATCH: i64 = 16;

/// Loops of up to this many trips LLVM unrolls completely itself (their
/// loads issue together); loops nested in a batched one, up to this many
/// iterations in all, are unrolled completely first (so their reads move).
const SHORT_TRIPS: i64 = 8;

/// Finds a loop for `unroll`.
const UNROLL_ID: &str = "tessel.unroll_id";

/// Ops that touch no memory (values, views, item ids) and have no regions
/// (whose captured values the backward slice would not follow): a read's
/// operands may be computed earlier along with it.
fn is_pure(op: MlirOperation) -> bool {
    // SAFETY: live IR of the module being rewritten (crate invariant, support/handles.rs)
    is_memory_effect_free(op) && unsafe { mlirOperationGetNumRegions(op) } == 0
}

/// Adds `op` and the ops of `body` its operands come from, recursively, to
/// `slice`; false if one of them is not pure (the read cannot move).
fn backward_slice(op: MlirOperation, body: &HashSet<usize>, slice: &mut Vec<MlirOperation>) -> bool {
    for value in raw_op(op).operands() {
        let Some(definition) = defining_op(value) else { continue };
        if !body.contains(&(definition.ptr as usize)) || slice.iter().any(|done| done.ptr == definition.ptr) {
            continue;
        }
        if !is_pure(definition) || !backward_slice(definition, body, slice) {
            return false;
        }
        slice.push(definition);
    }
    true
}

/// The reads in the body of `for_op` of memory the body does not write,
/// each with the pure computation of its operands in the body (which moves
/// with it); None when the body has a barrier (nothing moves across one).
fn movable_reads(for_op: MlirOperation, launch: MlirOperation) -> Option<Vec<(MlirOperation, Vec<MlirOperation>)>> {
    let operations = block_operations(raw_op(for_op).region_block(0));
    if operations.iter().any(|&op| any_nested(op, |nested| raw_op(nested).name() == "gpu.barrier")) {
        return None;
    }
    let mut effects = Effects::default();
    for &op in &operations {
        effects.extend(Effects::of(op, launch));
    }
    let members: HashSet<usize> = operations.iter().map(|op| op.ptr as usize).collect();
    let mut movable = Vec::new();
    for &op in &operations {
        if !is_read(op) {
            continue;
        }
        let read = Effects::of(op, launch);
        if read.reads.iter().any(|&root| effects.writes.iter().any(|&written| conflicts(root, written))) {
            continue;
        }
        let mut slice = Vec::new();
        if backward_slice(op, &members, &mut slice) {
            movable.push((op, slice));
        }
    }
    Some(movable)
}

/// Moves the reads of memory the body of `for_op` does not write (and
/// their operands' computations) to the top of the body, in order.
fn hoist_reads(for_op: MlirOperation, launch: MlirOperation) -> Result<(), String> {
    let Some(reads) = movable_reads(for_op, launch) else { return Ok(()) };
    let mut moving: HashSet<usize> = HashSet::new();
    for (read, slice) in reads {
        moving.extend(slice.iter().map(|op| op.ptr as usize));
        moving.insert(read.ptr as usize);
    }
    // Moved ops gather, in their order, before the first op that stays.
    let operations = block_operations(raw_op(for_op).region_block(0));
    let mut anchor = operations[0];
    for op in operations {
        if !moving.contains(&(op.ptr as usize)) {
            continue;
        }
        if op.ptr == anchor.ptr {
            anchor = next_of(op);
            continue;
        }
        // SAFETY: live IR of the module being rewritten (crate invariant, support/handles.rs); `op` and `anchor` are in the same block, and every in-body operand of `op` was moved before it
        unsafe { mlirOperationMoveBefore(op, anchor) };
    }
    if !moving.is_empty() && raw_op(anchor).name() != "scf.yield" {
        inline_template(anchor, SCHEDULING_BARRIER, &[]).map(|_| ())
    } else {
        Ok(())
    }
}

/// Keeps LLVM's instruction scheduler from sinking a batch's loads back
/// towards their uses (it does, to lower register pressure, and each load
/// it sinks past a wait costs a round trip to memory).
const SCHEDULING_BARRIER: &str = "func.func @template() {\namdgpu.sched_barrier allow = <none>\nreturn\n}";

/// The trip count of an `scf.for` with constant bounds.
fn constant_trips(for_op: MlirOperation) -> Option<i64> {
    let operands = raw_op(for_op).operands();
    let (lower, upper, step) =
        (constant_integer(operands[0])?, constant_integer(operands[1])?, constant_integer(operands[2])?);
    (step > 0).then(|| ((upper - lower).max(0) + step - 1) / step)
}

/// The loops nested in `for_op` (not itself) with their own trips, deepest
/// first, when every one has constant bounds and no nest of them runs
/// more than `SHORT_TRIPS` iterations in all (they unroll completely).
fn short_nested_loops(for_op: MlirOperation) -> Option<Vec<(MlirOperation, i64)>> {
    let mut loops = Vec::new();
    for (nested, _) in collect_operations(operation_ref(for_op), |name| name == "scf.for") {
        if nested.ptr == for_op.ptr {
            continue;
        }
        let trips = constant_trips(nested)?;
        let mut nest = trips;
        let mut outer = enclosing(nested, |op| raw_op(op).name() == "scf.for");
        while let Some(loop_op) = outer.filter(|op| op.ptr != for_op.ptr) {
            nest *= constant_trips(loop_op)?;
            outer = enclosing(loop_op, |op| raw_op(op).name() == "scf.for");
        }
        if nest > SHORT_TRIPS {
            return None;
        }
        // Post-order: inner loops come before the loops around them.
        loops.push((nested, trips));
    }
    Some(loops)
}

/// The dwords (registers per lane) the value `read` loads takes; a
/// transfer's broadcast dimensions load nothing more.
fn read_dwords(read: MlirOperation) -> i64 {
    let raw = raw_op(read);
    let result = value_type(raw.results()[0]);
    // SAFETY: types and attributes of a live op, read after their kinds are checked
    let (element, elements) = unsafe {
        if !mlirTypeIsAVector(result) {
            (result, 1)
        } else {
            let map = raw.attribute("permutation_map");
            let broadcast = |dimension: isize| {
                !map.ptr.is_null()
                    && mlirAttributeIsAAffineMap(map)
                    && mlirAffineExprIsAConstant(mlirAffineMapGetResult(mlirAffineMapAttrGetValue(map), dimension))
            };
            let loaded = (0..rank_of(result))
                .filter(|&dimension| !broadcast(dimension as isize))
                .map(|dimension| dim_size(result, dimension as usize))
                .product::<i64>();
            (shaped_element(result), loaded)
        }
    };
    ((elements * element_bits(element) + 31) / 32).max(1)
}

/// The dwords one iteration of `for_op` reads into registers with the
/// reads that may move, the same read (op, operands) counted once as LLVM
/// will load it once and reads the same on every trip (operands from
/// outside the loop: a row's max) not at all, when one of them reads global
/// memory (LDS reads return soon enough without batching more); None
/// otherwise.
fn global_batch_dwords(for_op: MlirOperation, launch: MlirOperation) -> Option<i64> {
    let reads = movable_reads(for_op, launch)?;
    let body = raw_op(for_op).region_block(0);
    let mut seen: HashSet<(String, Vec<usize>)> = HashSet::new();
    let (mut dwords, mut global) = (0, false);
    for (read, slice) in reads {
        let raw = raw_op(read);
        let operands = raw.operands();
        // SAFETY: live values of the module being rewritten (crate invariant, support/handles.rs)
        let from_body = |value: MlirValue| unsafe {
            mlirValueIsABlockArgument(value) && mlirBlockArgumentGetOwner(value).ptr == body.ptr
        };
        let invariant = slice.is_empty() && !operands.iter().any(|&value| from_body(value));
        if invariant || !seen.insert((raw.name(), operands.iter().map(|value| value.ptr as usize).collect())) {
            continue;
        }
        dwords += read_dwords(read);
        global |= Effects::of(read, launch).reads.iter().any(|&root| is_global(root));
    }
    global.then_some(dwords)
}

/// Global memory: a kernel argument's, or a global's.
fn is_global(root: Root) -> bool {
    matches!(root, Root::Argument(_) | Root::Global)
}

/// Iterations per batch of a loop of `trips` each reading `dwords`: the
/// most (a divisor of the trips, at most `MAX_BATCH`) whose reads fit
/// `BATCH_DWORDS`, and at least `floor` (grid-to-gpu's choice for a
/// work-item's loop). The loop keeps two trips at least: unrolled
/// completely, it would be gone, and LLVM would order its reads as it
/// likes.
fn batch_size(trips: i64, dwords: i64, floor: i64) -> i64 {
    let fitting = (2..=MAX_BATCH.min(trips / 2)).rev().find(|&size| trips % size == 0 && size * dwords <= BATCH_DWORDS);
    fitting.unwrap_or(1).max(floor)
}

/// Does `for_op` read global memory (a kernel argument's) that it does not
/// write? Only such reads wait long enough to gain from batching.
fn reads_unwritten_global_memory(for_op: MlirOperation, launch: MlirOperation) -> bool {
    let effects = Effects::of(for_op, launch);
    effects.reads.iter().any(|&root| is_global(root) && !effects.writes.iter().any(|&written| conflicts(root, written)))
}

/// A loop whose reads this pass batches.
struct Candidate {
    for_op: MlirOperation,
    launch: MlirOperation,
    trips: i64,
    /// grid-to-gpu's batch for a work-item's loop (1 for the others).
    floor: i64,
    /// Its short nested loops with their trips (unrolled first).
    nested: Vec<(MlirOperation, i64)>,
}

/// The loops to batch: the work-items' loops grid-to-gpu marked, and the
/// longer constant-trip loops in block work (a row reduction's loop over
/// its row) whose nested loops are short (they unroll completely), with no
/// barrier inside.
fn candidates(module: OperationRef<'static, '_>) -> Vec<Candidate> {
    let mut found = Vec::new();
    for (for_op, _) in collect_operations(module, |name| name == "scf.for") {
        let Some(launch) = enclosing(for_op, |op| raw_op(op).name() == "gpu.launch") else { continue };
        let raw = raw_op(for_op);
        let Some(trips) = constant_trips(for_op) else { continue };
        if raw.has(BATCH_LOADS) {
            let nested = short_nested_loops(for_op).unwrap_or_default();
            found.push(Candidate { for_op, launch, trips, floor: raw.integer(BATCH_LOADS), nested });
            continue;
        }
        let marked = |op: MlirOperation| raw_op(op).has(BATCH_LOADS);
        if trips <= SHORT_TRIPS
            || enclosing(for_op, marked).is_some()
            || any_nested(for_op, |op| op.ptr != for_op.ptr && marked(op))
            || any_nested(for_op, |op| raw_op(op).name() == "gpu.barrier")
            || !reads_unwritten_global_memory(for_op, launch)
        {
            continue;
        }
        let Some(nested) = short_nested_loops(for_op) else { continue };
        found.push(Candidate { for_op, launch, trips, floor: 1, nested });
    }
    found
}

/// Applies `transform.loop.unroll` to each loop with its factor, in order,
/// each found through a temporary attribute.
fn unroll(module: OperationRef<'static, '_>, loops: &[(MlirOperation, i64)]) -> Result<(), PassError> {
    if loops.is_empty() {
        return Ok(());
    }
    let any = "!transform.any_op";
    let mut body = String::new();
    for (index, &(for_op, factor)) in loops.iter().enumerate() {
        set_i64_attribute(for_op, UNROLL_ID, index as i64);
        emit_line!(
            body,
            "%loop{index} = transform.structured.match ops{{[\"scf.for\"]}} attributes{{{UNROLL_ID} = {index} : i64}} \
             in %root : ({any}) -> {any}\ntransform.loop.unroll %loop{index} {{factor = {factor}}} : {any}"
        );
    }
    transform::apply(module.to_raw(), &transform::script(&body))
        .map_err(|error| PassError::at(module.location(), error.0))
}

fn run(module: OperationRef<'static, '_>) -> Result<(), PassError> {
    let candidates = candidates(module);
    // A batch's reads must not sit in nested loops: those unroll first
    // (completely; a loop of one trip is inlined, of none left alone).
    let inner: Vec<(MlirOperation, i64)> = candidates
        .iter()
        .flat_map(|candidate| candidate.nested.iter().copied())
        .filter(|&(_, trips)| trips >= 1)
        .collect();
    unroll(module, &inner)?;
    let mut batched = Vec::new();
    for candidate in candidates {
        // A marked loop whose reads cannot move, or read LDS only, unrolls
        // by its mark.
        let size = match global_batch_dwords(candidate.for_op, candidate.launch) {
            Some(dwords) => batch_size(candidate.trips, dwords, candidate.floor),
            None => candidate.floor,
        };
        if size >= 2 {
            batched.push((candidate, size));
        }
    }
    let loops: Vec<(MlirOperation, i64)> = batched.iter().map(|(candidate, size)| (candidate.for_op, *size)).collect();
    unroll(module, &loops)?;
    for (candidate, _) in &batched {
        hoist_reads(candidate.for_op, candidate.launch)
            .map_err(|error| PassError::at(operation_ref(candidate.for_op).location(), error))?;
        // SAFETY: live IR of the module being rewritten (crate invariant, support/handles.rs); the attribute text parses in the op's context (the LLVM dialect is loaded)
        unsafe {
            for name in [BATCH_LOADS, UNROLL_ID] {
                mlirOperationRemoveAttributeByName(candidate.for_op, StringRef::new(name).to_raw());
            }
            let context = mlirOperationGetContext(candidate.for_op);
            let annotation = mlirAttributeParseGet(context, StringRef::new(NO_FURTHER_UNROLLING).to_raw());
            mlirOperationSetAttributeByName(candidate.for_op, StringRef::new("loop_annotation").to_raw(), annotation);
        }
    }
    Ok(())
}
