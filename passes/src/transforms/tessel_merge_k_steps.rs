//! `tessel-merge-k-steps`: a contraction accumulated across an arbitrary
//! grid axis becomes one contraction over all of its k.
//!
//! The Pallas idiom for K on the grid — `(i, j, k)` programs, the output
//! block zeroed at the first k and `acc += a @ b` at every one — is, after
//! grid-to-loops, an arbitrary-axis `scf.for` over the k blocks whose body
//! takes the k-th column block of A and row block of B and accumulates
//! their contraction into the same output block. Computed loop trip by
//! loop trip on a GPU, each trip's chunk pipeline starts over: the first
//! chunk's loads are waited for at every grid step (and the prefetch of
//! the last chunk has nothing to overlap). Where the body is only that —
//! views of A at `[r, g * bk]` and of B at `[g * bk, c]` (`g` the loop's
//! induction variable, `bk` their k extent; `r` or `c` a constant where
//! the grid has one block that way), the output view not varying
//! with `g`, the first trip's fill of it, the contraction, and pure index
//! arithmetic — the loop goes: the contraction reads A's `[r, 0]` and B's
//! `[0, c]` views of all `G * bk` k (`G` the trips), after the fill.
//!
//! A last-trip epilogue may follow the contraction: `scf.if g == G - 1`
//! computing from the output block into a buffer it yields (the else
//! branch yields the output view), copied to the output view (Pallas'
//! `k == last ? relu(dot + bias) : dot`), or — as bufferization leaves it
//! where the epilogue writes the output view in place — an `scf.if` with
//! no results and no else branch. Merged, it runs once after the
//! contraction over all k, where the last trip ran it; the other trips'
//! copies of the output onto itself go. What it reads from the loop must
//! not vary with `g`.
//!
//! The same loop before bufferization (the CPU pipeline, where register
//! tiles are made on tensors) reads the views through
//! `bufferization.to_tensor`s and stores the contraction's sum to the
//! output view (`materialize_in_destination`): merged, the contraction
//! reads tensors of the whole-k views, its init the fill of its output's
//! tensor (a tensor fill, bufferized into the output view as the
//! memory fill was, which register tiles can start from in registers),
//! and its sum stored once — the register tiles keep their
//! accumulators across what were grid steps instead of loading and
//! storing them at each (the 2048 matmul: 37.1-37.9 -> 36.0-36.2 ms on
//! Zen 5). There the last trip's `scf.if` yields the epilogue's value or
//! the sum, and that is stored; merged, it runs once on a condition that
//! holds, with what only it reads (the bias block's view, tensor and
//! broadcast) moved out of the loop with it. It must not read the output
//! (its tensor or its memory): at the last trip that held the sum of the
//! trips before, which merged would be the fill. Merged, k may be deep
//! enough for `tessel-tile` to split it for the caches (`cpu/caches.rs`);
//! AVX2 code merged measured 3-5% faster on Zen 4 (2048 matmul 91-98 ->
//! 87-94 ms, with bias and relu 94-100 -> 90-91, 1024 matmul 11.7-12.2 ->
//! 11.3-11.6; on Zen 5 it had measured 3-4% slower, on a noisier host).
//!
//! A and B must be other memory than the output (distinct function
//! arguments do not alias, Tessel's rule throughout). The sums are the
//! same in the same order (k ascending, block after
//! block, one multiply-add per step), so every result keeps its bits; the
//! k-chunk pipeline (`pipeline_schedule`) then runs across what were grid
//! steps. Runs before `tessel-matrix-cores` in the ROCm pipeline, before
//! `tessel-tile` in the CPU one.

use crate::gpu::tessel_resident_accumulators::{first_iteration_fill, runs_on_trip};
use crate::grid::grid_to_loops::ARBITRARY_AXIS;
use crate::support::handles::{attribute_text, dim_size, operation_ref, raw_op, result_of, shaped_element, value_type};
use crate::support::ir::{
    ShapedKind, any_nested, block_operations, collect_operations, constant_integer, defining_op, erase,
    inline_template, is_inside, move_before, print_type, shaped_type_text, strided_view_type, view_root,
};
use crate::{PassDefinition, PassError, block::block_to_linalg::CONTRACTION};
use melior::ir::OperationRef;
use melior::ir::operation::{OperationLike, WalkOrder, WalkResult};
use mlir_sys::*;

/// The CPU pipeline's views as tensors, and their stores.
const TO_TENSOR: &str = "bufferization.to_tensor";
const STORE: &str = "bufferization.materialize_in_destination";

pub static PASS: PassDefinition = PassDefinition {
    argument: "tessel-merge-k-steps",
    name: "TesselMergeKSteps",
    description: "Merge a contraction accumulated across an arbitrary grid axis into one over all of its k",
    anchor: "builtin.module",
    run,
};

fn run(module: OperationRef<'static, '_>) -> Result<(), PassError> {
    for (op, _) in collect_operations(module, |name| name == "scf.for") {
        if let Some(merge) = matched(op) {
            merge.apply(op).map_err(|message| PassError::at(crate::support::handles::location_of(op), message))?;
        }
    }
    Ok(())
}

/// A loop whose trips accumulate one contraction's k blocks.
struct Merge {
    contraction: MlirOperation,
    /// The views of A and B the contraction reads, and the output's.
    views: [MlirOperation; 3],
    /// On tensors: the `to_tensor`s of the three views and the store of
    /// the sum to the output view.
    tensors: Option<([MlirOperation; 3], MlirOperation)>,
    /// The first trip's fill of the output view (under `scf.if g == 0`).
    fill: Option<MlirOperation>,
    /// The last trip's epilogue.
    epilogue: Option<Epilogue>,
    /// A's row offset and B's column offset (the k offsets are the loop's).
    row: Offset,
    column: Offset,
    /// Trips and each trip's k.
    trips: i64,
    block_k: i64,
}

/// A last trip's epilogue: its `scf.if` and the copy (on buffers) or store
/// (on tensors) of its result to the output view; none where it writes the
/// output view in place (on buffers, an `scf.if` without results).
#[derive(Clone, Copy)]
struct Epilogue {
    branching: MlirOperation,
    copy: Option<MlirOperation>,
}

impl Epilogue {
    /// Its ops in the loop body: the `scf.if`, then the copy or store.
    fn ops(&self) -> Vec<MlirOperation> {
        std::iter::once(self.branching).chain(self.copy).collect()
    }
}

/// The loop's merge, when its body is only what the module comment says.
fn matched(op: MlirOperation) -> Option<Merge> {
    let raw = raw_op(op);
    let operands = raw.operands();
    if !raw.has(ARBITRARY_AXIS)
        || operands.len() != 3
        || !raw.results().is_empty()
        || constant_integer(operands[0]) != Some(0)
        || constant_integer(operands[2]) != Some(1)
    {
        return None;
    }
    let trips = constant_integer(operands[1])?;
    let body = raw.region_block(0);
    // SAFETY: live IR of the module being rewritten (crate invariant, support/handles.rs); the loop body has its induction variable as argument 0
    let induction = unsafe { mlirBlockGetArgument(body, 0) };
    let ops = block_operations(body);
    let contractions: Vec<_> = ops.iter().copied().filter(|&o| raw_op(o).has(CONTRACTION)).collect();
    let [contraction] = contractions[..] else { return None };
    let contraction_operands = raw_op(contraction).operands();
    if contraction_operands.len() != 3 {
        return None;
    }
    // On buffers (the ROCm pipeline) the operands are views; on tensors
    // (the CPU pipeline, before bufferization) `to_tensor`s of views, the
    // result stored to the output view.
    let to_tensors =
        [0, 1, 2].map(|index| defining_op(contraction_operands[index]).filter(|&op| raw_op(op).name() == TO_TENSOR));
    let tensors = match to_tensors {
        [Some(a), Some(b), Some(c)] => Some([a, b, c]),
        [None, None, None] => None,
        _ => return None,
    };
    let viewed = |index: usize| match tensors {
        Some(tensors) => raw_op(tensors[index]).operands()[0],
        None => contraction_operands[index],
    };
    let views = [0, 1, 2].map(|index| defining_op(viewed(index)));
    let [Some(view_a), Some(view_b), Some(view_c)] = views else { return None };
    if views.iter().flatten().any(|&view| raw_op(view).name() != "memref.subview") {
        return None;
    }
    // The k offset: `g * bk` of A's second and B's first index. A's row
    // and B's column offsets are constants where the grid has one block
    // that way.
    let block_k = dim_size(value_type(contraction_operands[0]), 1);
    let [Some([row, Offset::Value(k_offset)]), Some([Offset::Value(b_k_offset), column])] =
        [view_a, view_b].map(view_offsets)
    else {
        return None;
    };
    let (a_operands, b_operands) = (raw_op(view_a).operands(), raw_op(view_b).operands());
    if b_k_offset.ptr != k_offset.ptr || !is_k_step(k_offset, induction, block_k) {
        return None;
    }
    // Sources, A's row offset, B's column offset and the whole output
    // view do not vary with the loop; the views are unit-strided.
    let invariant = |value: MlirValue| !depends_on(value, induction, op);
    let whole_k = trips * block_k;
    let sources_fit =
        dim_size(value_type(a_operands[0]), 1) >= whole_k && dim_size(value_type(b_operands[0]), 0) >= whole_k;
    // The output is not memory A or B are read from (a grid call passing
    // one array as input and output): merged, reads of later k blocks
    // would come before earlier steps' writes.
    let output_root = view_root(viewed(2)).ptr;
    let apart = view_root(a_operands[0]).ptr != output_root && view_root(b_operands[0]).ptr != output_root;
    // The contraction's body uses nothing the loop computes (it moves out).
    let body_from_loop = any_nested(contraction, |nested| {
        nested.ptr != contraction.ptr
            && raw_op(nested)
                .operands()
                .into_iter()
                .filter_map(defining_op)
                .any(|definition| is_inside(definition, op) && !is_inside(definition, contraction))
    });
    if !apart
        || block_k <= 0
        || body_from_loop
        || ![a_operands[0], b_operands[0]]
            .into_iter()
            .chain([row, column].iter().filter_map(Offset::value))
            .all(invariant)
        || !raw_op(view_c).operands().into_iter().all(invariant)
        || [view_a, view_b].iter().any(|&view| raw_op(view).integers("static_strides") != [1, 1])
        || !sources_fit
    {
        return None;
    }
    // The last trip's epilogue, if any: it must come after the contraction
    // (merged, it runs after all of k).
    let sum = raw_op(contraction).results().first().copied();
    let epilogue = last_trip_epilogue(&ops, induction, trips, viewed(2), sum.filter(|_| tensors.is_some()), op)
        // SAFETY: live ops of the loop body (crate invariant, support/handles.rs).
        .filter(|epilogue| unsafe { mlirOperationIsBeforeInBlock(contraction, epilogue.branching) });
    // On tensors: the store of the sum (or of the epilogue's value) to the
    // output view; the sum's only other uses are in the epilogue.
    let store = match (tensors, epilogue, sum) {
        (None, _, _) => None,
        (Some(_), Some(Epilogue { branching, copy: Some(store) }), Some(sum)) => {
            let in_branching = crate::support::ir::users(sum).into_iter().all(|user| is_inside(user, branching));
            if !in_branching {
                return None;
            }
            Some(store)
        }
        (Some(_), Some(Epilogue { copy: None, .. }), _) => return None,
        (Some(_), None, Some(sum)) => {
            let [(store, 0)] = crate::support::ir::uses(sum)[..] else { return None };
            if !is_store_to(store, viewed(2), &ops) {
                return None;
            }
            Some(store)
        }
        (Some(_), _, None) => return None,
    };
    // Everything else: pure index arithmetic, the first trip's fill, the
    // last trip's epilogue.
    let mut fill = None;
    let in_epilogue =
        |other: MlirOperation| epilogue.is_some_and(|epilogue| epilogue.ops().iter().any(|op| op.ptr == other.ptr));
    let feeding =
        epilogue.map_or_else(Vec::new, |epilogue| epilogue_feeders(&ops, epilogue.branching, contraction, output_root));
    let feeds_epilogue = |other: MlirOperation| feeding.iter().any(|fed| fed.ptr == other.ptr);
    // On tensors the last trip's epilogue runs before that trip's store:
    // the output it could read (its tensor, or its memory) holds the sum
    // of the trips before, which merged would be the fill. Not merged then.
    if let (Some(to_tensors), Some(Epilogue { branching, .. })) = (tensors, epilogue) {
        let output_tensor = raw_op(to_tensors[2]).results()[0];
        if [branching].iter().chain(&feeding).any(|&op| reads_output(op, output_tensor, output_root)) {
            return None;
        }
    }
    for &other in &ops {
        if in_epilogue(other) {
            continue;
        }
        let name = raw_op(other).name();
        let allowed = other.ptr == contraction.ptr
            || views.iter().flatten().any(|view| view.ptr == other.ptr)
            || tensors.iter().flatten().any(|tensor| tensor.ptr == other.ptr)
            || store.is_some_and(|store| store.ptr == other.ptr)
            || feeds_epilogue(other)
            || name == "scf.yield"
            || name == "affine.apply"
            || name == "arith.constant"
            || (name.starts_with("arith.") && raw_op(other).results().len() == 1 && is_index_or_bool(other));
        if allowed {
            continue;
        }
        if name == "scf.if" && fill.is_none() {
            let (_, found) = first_iteration_fill(other, induction, 0)?;
            // It fills the output, and moves before the loop: its value may
            // not vary in it.
            if raw_op(found).operands()[1].ptr != viewed(2).ptr || !invariant(raw_op(found).operands()[0]) {
                return None;
            }
            // Before the contraction (and the output's tensor): merged, it
            // fills the output first.
            let reader = tensors.map_or(contraction, |tensors| tensors[2]);
            // SAFETY: live ops of the loop body (crate invariant, support/handles.rs).
            if !unsafe { mlirOperationIsBeforeInBlock(other, reader) } {
                return None;
            }
            fill = Some(found);
            continue;
        }
        return None;
    }
    Some(Merge {
        contraction,
        views: [view_a, view_b, view_c],
        tensors: tensors.zip(store),
        fill,
        epilogue,
        row,
        column,
        trips,
        block_k,
    })
}

/// An offset of a view: an SSA value or a constant.
#[derive(Clone, Copy)]
enum Offset {
    Value(MlirValue),
    Fixed(i64),
}

impl Offset {
    fn value(&self) -> Option<MlirValue> {
        match *self {
            Offset::Value(value) => Some(value),
            Offset::Fixed(_) => None,
        }
    }

    /// The offset as `%name` in a template: an argument (pushed to `args`)
    /// or a constant defined by the returned line.
    fn in_template(&self, name: &str, args: &mut Vec<MlirValue>, params: &mut Vec<String>) -> String {
        match *self {
            Offset::Value(value) => {
                args.push(value);
                params.push(format!("%{name}: index"));
                String::new()
            }
            Offset::Fixed(offset) => format!("%{name} = arith.constant {offset} : index\n"),
        }
    }
}

/// The two offsets of a 2-d `memref.subview` with static sizes and strides.
fn view_offsets(view: MlirOperation) -> Option<[Offset; 2]> {
    let raw = raw_op(view);
    let operands = raw.operands();
    let mut dynamic = operands.iter().skip(1);
    let offsets: Vec<Offset> = raw
        .integers("static_offsets")
        .into_iter()
        .map(|offset| {
            if offset == i64::MIN {
                dynamic.next().map(|&value| Offset::Value(value))
            } else {
                Some(Offset::Fixed(offset))
            }
        })
        .collect::<Option<_>>()?;
    // No dynamic sizes or strides follow.
    if dynamic.next().is_some() {
        return None;
    }
    offsets.try_into().ok()
}

/// The ops among `ops` whose values only the epilogue `branching` reads
/// (the bias block's view, its tensor, its broadcast), directly or through
/// each other: they move out of the loop with it (their not varying with
/// it is checked there). Reads are of memory other than the output (whose
/// root is `output_root`), the only memory the loop writes.
fn epilogue_feeders(
    ops: &[MlirOperation],
    branching: MlirOperation,
    contraction: MlirOperation,
    output_root: *const std::ffi::c_void,
) -> Vec<MlirOperation> {
    let mut feeding: Vec<MlirOperation> = Vec::new();
    for &other in ops.iter().rev() {
        let raw = raw_op(other);
        let only_for_epilogue = raw.results().into_iter().all(|result| {
            crate::support::ir::users(result)
                .into_iter()
                .all(|user| is_inside(user, branching) || feeding.iter().any(|fed| fed.ptr == user.ptr))
        });
        let pure_or_other_memory = crate::support::ir::is_memory_effect_free(other)
            || (raw.name() == TO_TENSOR && view_root(raw.operands()[0]).ptr != output_root);
        if other.ptr != branching.ptr
            && other.ptr != contraction.ptr
            && !raw.results().is_empty()
            && only_for_epilogue
            && pure_or_other_memory
        {
            feeding.push(other);
        }
    }
    feeding
}

/// Does `op` (or an op nested in it) read the output: its tensor
/// `output_tensor`, or a view of its memory (root `output_root`)?
fn reads_output(op: MlirOperation, output_tensor: MlirValue, output_root: *const std::ffi::c_void) -> bool {
    any_nested(op, |nested| {
        raw_op(nested)
            .operands()
            .into_iter()
            .any(|value| value.ptr == output_tensor.ptr || view_root(value).ptr == output_root)
    })
}

/// Is `store` among `ops` and a store (`materialize_in_destination`) to
/// the output view?
fn is_store_to(store: MlirOperation, output: MlirValue, ops: &[MlirOperation]) -> bool {
    let stored = raw_op(store);
    stored.name() == STORE && stored.operands()[1].ptr == output.ptr && ops.iter().any(|o| o.ptr == store.ptr)
}

/// The last trip's epilogue among the loop body's `ops`, if it has one (see
/// the module comment; `sum` is the contraction's value on tensors).
fn last_trip_epilogue(
    ops: &[MlirOperation],
    induction: MlirValue,
    trips: i64,
    output: MlirValue,
    sum: Option<MlirValue>,
    loop_op: MlirOperation,
) -> Option<Epilogue> {
    let branching = ops.iter().copied().find(|&other| {
        let raw = raw_op(other);
        raw.name() == "scf.if" && raw.results().len() <= 1 && runs_on_trip(other, induction, trips - 1)
    })?;
    // What the then branch reads from the loop does not vary with it (the
    // sum aside: merged, it is the sum over all of k).
    let varies = read_from_loop(branching, loop_op)
        .into_iter()
        .filter(|value| sum.is_none_or(|sum| value.ptr != sum.ptr))
        .any(|value| depends_on(value, induction, loop_op));
    if varies {
        return None;
    }
    let Some(&result) = raw_op(branching).results().first() else {
        // On buffers, written in place: no else branch to run on the
        // other trips.
        let else_empty = crate::support::ir::region_blocks(branching)
            .get(1)
            .is_none_or(|&block| block_operations(block).iter().all(|&op| raw_op(op).name() == "scf.yield"));
        return (sum.is_none() && else_empty).then_some(Epilogue { branching, copy: None });
    };
    // Its one use: the copy or store to the output view, after it.
    let [(copy, 0)] = crate::support::ir::uses(result)[..] else { return None };
    let copy_op = raw_op(copy);
    // SAFETY: live ops of the loop body (crate invariant, support/handles.rs).
    let copy_after = || unsafe { mlirOperationIsBeforeInBlock(branching, copy) };
    let copies = match sum {
        None => copy_op.name() == "memref.copy" && copy_op.operands()[1].ptr == output.ptr,
        Some(_) => is_store_to(copy, output, ops),
    };
    if !copies || !ops.iter().any(|o| o.ptr == copy.ptr) || !copy_after() {
        return None;
    }
    // The else branch yields what is stored unchanged: the output view
    // (cast) on buffers, the sum on tensors.
    let else_ops = block_operations(*crate::support::ir::region_blocks(branching).get(1)?);
    let unchanged = match (sum, &else_ops[..]) {
        (None, [cast, _yield]) => {
            raw_op(*cast).name() == "memref.cast" && raw_op(*cast).operands()[0].ptr == output.ptr
        }
        (Some(sum), [yielded]) => raw_op(*yielded).operands().first().is_some_and(|value| value.ptr == sum.ptr),
        _ => false,
    };
    unchanged.then_some(Epilogue { branching, copy: Some(copy) })
}

/// The values the ops inside `branching` read (its own condition aside)
/// that are defined in `loop_op` outside it.
fn read_from_loop(branching: MlirOperation, loop_op: MlirOperation) -> Vec<MlirValue> {
    let mut values = Vec::new();
    operation_ref(branching).walk(WalkOrder::PreOrder, |nested| {
        if nested.to_raw().ptr == branching.ptr {
            return WalkResult::Advance;
        }
        values.extend(raw_op(nested.to_raw()).operands().into_iter().filter(|&value| {
            defining_op(value)
                .is_some_and(|definition| is_inside(definition, loop_op) && !is_inside(definition, branching))
        }));
        WalkResult::Advance
    });
    values
}

/// Is `value` `g * bk` of the induction variable `g`?
fn is_k_step(value: MlirValue, induction: MlirValue, block_k: i64) -> bool {
    let Some(apply) = defining_op(value) else { return false };
    let raw = raw_op(apply);
    raw.name() == "affine.apply"
        && raw.operands().len() == 1
        && raw.operands()[0].ptr == induction.ptr
        && attribute_text(raw.attribute("map")) == format!("affine_map<(d0) -> (d0 * {block_k})>")
}

/// Does `value` depend on `induction` (through ops inside `loop_op`)?
fn depends_on(value: MlirValue, induction: MlirValue, loop_op: MlirOperation) -> bool {
    if value.ptr == induction.ptr {
        return true;
    }
    match defining_op(value) {
        Some(op) if is_inside(op, loop_op) => {
            raw_op(op).operands().into_iter().any(|operand| depends_on(operand, induction, loop_op))
        }
        _ => false,
    }
}

/// Does the op compute an index or an i1 (pure index arithmetic)?
fn is_index_or_bool(op: MlirOperation) -> bool {
    let text = print_type(value_type(raw_op(op).results()[0]));
    text == "index" || text == "i1"
}

impl Merge {
    /// Views of all of k before the loop, the fill and the contraction
    /// there, the loop gone.
    fn apply(&self, loop_op: MlirOperation) -> Result<(), String> {
        let [view_a, view_b, view_c] = self.views;
        let (a, b) = (raw_op(view_a).operands(), raw_op(view_b).operands());
        // The invariant index arithmetic the views use, then the output
        // view, move before the loop.
        let mut hoisted = Vec::new();
        let fill_value = self.fill.map(|fill| raw_op(fill).operands()[0]);
        let offsets = [self.row, self.column].into_iter().filter_map(|offset| offset.value());
        for value in offsets.chain(raw_op(view_c).operands()).chain(fill_value) {
            collect_definitions(value, loop_op, &mut hoisted);
        }
        hoisted.push(view_c);
        move_before(&hoisted, loop_op);
        let whole_k = self.trips * self.block_k;
        let (a_type, b_type) = (value_type(a[0]), value_type(b[0]));
        let (rows, columns) = (
            dim_size(value_type(raw_op(view_a).results()[0]), 0),
            dim_size(value_type(raw_op(view_b).results()[0]), 1),
        );
        let (view_a_type, view_b_type) =
            (strided_view_type(a_type, rows, whole_k), strided_view_type(b_type, whole_k, columns));
        let (ta, tb) = (print_type(a_type), print_type(b_type));
        let (mut args, mut params) = (vec![a[0], b[0]], vec![format!("%A: {ta}"), format!("%B: {tb}")]);
        let row = self.row.in_template("r", &mut args, &mut params);
        let column = self.column.in_template("c", &mut args, &mut params);
        // On tensors, the contraction reads the whole views' tensors.
        let (results, returned) = match self.tensors {
            None => {
                (format!("{view_a_type}, {view_b_type}"), format!("return %a, %b : {view_a_type}, {view_b_type}\n"))
            }
            Some(([to_tensor_a, to_tensor_b, _], _)) => {
                let tensor = |rows: i64, columns: i64, of: MlirType| {
                    shaped_type_text(ShapedKind::Tensor, &[rows, columns], &print_type(shaped_element(of)), None)
                };
                let (tensor_a, tensor_b) = (tensor(rows, whole_k, a_type), tensor(whole_k, columns, b_type));
                let restrict =
                    |to_tensor: MlirOperation| if raw_op(to_tensor).has("restrict") { " restrict" } else { "" };
                let (restrict_a, restrict_b) = (restrict(to_tensor_a), restrict(to_tensor_b));
                (
                    format!("{tensor_a}, {tensor_b}"),
                    format!(
                        "%ta = bufferization.to_tensor %a{restrict_a} : {view_a_type} to {tensor_a}\n\
                         %tb = bufferization.to_tensor %b{restrict_b} : {view_b_type} to {tensor_b}\n\
                         return %ta, %tb : {tensor_a}, {tensor_b}\n"
                    ),
                )
            }
        };
        let text = format!(
            "func.func @template({}) -> ({results}) {{\n\
             %c0 = arith.constant 0 : index\n{row}{column}\
             %a = memref.subview %A[%r, %c0] [{rows}, {whole_k}] [1, 1] : {ta} to {view_a_type}\n\
             %b = memref.subview %B[%c0, %c] [{whole_k}, {columns}] [1, 1] : {tb} to {view_b_type}\n\
             {returned}}}",
            params.join(", ")
        );
        let (whole, _) = inline_template(loop_op, &text, &args)?;
        match (self.fill, self.tensors) {
            // On tensors, the fill of the output view becomes a fill of its
            // tensor, the contraction's init (bufferized in place into the
            // same view): register tiles then start from the fill value in
            // registers (`filled_tiles.rs`, the epilogue's fusion) instead
            // of filling the block in memory and loading it back.
            (Some(fill), Some(([_, _, to_tensor_c], _)))
                if raw_op(self.contraction).operands().last().map(|init| init.ptr)
                    == Some(result_of(to_tensor_c, 0).ptr) =>
            {
                move_before(&[to_tensor_c], loop_op);
                let (value, output) = (raw_op(fill).operands()[0], result_of(to_tensor_c, 0));
                let (element, tensor) = (print_type(value_type(value)), print_type(value_type(output)));
                let text = format!(
                    "func.func @template(%v: {element}, %t: {tensor}) -> {tensor} {{\n\
                     %f = linalg.fill ins(%v : {element}) outs(%t : {tensor}) -> {tensor}\n\
                     return %f : {tensor}\n}}"
                );
                let (filled, _) = inline_template(loop_op, &text, &[value, output])?;
                let init = raw_op(self.contraction).operands().len() - 1;
                // SAFETY: live IR of the module being rewritten (crate invariant, support/handles.rs); the contraction's last operand is its init, replaced by a tensor of the same type
                unsafe { mlirOperationSetOperand(self.contraction, init as isize, filled[0]) };
                erase(fill);
            }
            (fill, tensors) => {
                if let Some(fill) = fill {
                    move_before(&[fill], loop_op);
                }
                // The output's tensor reads it after the fill.
                if let Some(([_, _, to_tensor_c], _)) = tensors {
                    move_before(&[to_tensor_c], loop_op);
                }
            }
        }
        move_before(&[self.contraction], loop_op);
        if let (Some((_, store)), None) = (self.tensors, self.epilogue) {
            move_before(&[store], loop_op);
        }
        if let Some(epilogue) = self.epilogue {
            let branching = epilogue.branching;
            // What it reads from the loop first (not varying with it), then
            // the epilogue, on a condition that holds: it runs where the
            // last trip ran it, after all of k.
            let mut definitions = Vec::new();
            let sum = raw_op(self.contraction).results().first().map(|sum| sum.ptr);
            for value in read_from_loop(branching, loop_op).into_iter().filter(|value| Some(value.ptr) != sum) {
                collect_definitions(value, loop_op, &mut definitions);
            }
            definitions.retain(|definition| definition.ptr != view_c.ptr);
            move_before(&definitions, loop_op);
            let (always, _) = inline_template(
                loop_op,
                "func.func @template() -> i1 {\n%true = arith.constant true\nreturn %true : i1\n}",
                &[],
            )?;
            // SAFETY: live IR of the module being rewritten (crate invariant, support/handles.rs); operand 0 of an `scf.if` is its i1 condition
            unsafe { mlirOperationSetOperand(branching, 0, always[0]) };
            move_before(&epilogue.ops(), loop_op);
        }
        // SAFETY: live IR of the module being rewritten (crate invariant, support/handles.rs); the contraction's operands 0 and 1 are its inputs, replaced by views of the same memory and element type, whose shapes agree with its indexing maps (k = whole_k on both)
        unsafe {
            mlirOperationSetOperand(self.contraction, 0, whole[0]);
            mlirOperationSetOperand(self.contraction, 1, whole[1]);
        }
        erase(loop_op);
        Ok(())
    }
}

/// The ops inside `loop_op` defining `value`, operands first.
fn collect_definitions(value: MlirValue, loop_op: MlirOperation, into: &mut Vec<MlirOperation>) {
    let Some(op) = defining_op(value) else { return };
    if !is_inside(op, loop_op) || into.iter().any(|known| known.ptr == op.ptr) {
        return;
    }
    for operand in raw_op(op).operands() {
        collect_definitions(operand, loop_op, into);
    }
    into.push(op);
}
