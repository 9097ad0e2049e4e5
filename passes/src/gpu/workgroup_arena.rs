//! The workgroup arena of grid-to-gpu: every local buffer of a program nest
//! (padded blocks, scratch, temporaries, staged contraction chunks) gets a
//! slot in the workgroup's LDS while it fits, else in a global scratch
//! buffer with one slice per workgroup; a buffer a loop carries to its next
//! iteration gets two slots it alternates between.

use crate::gpu::private_buffers::PrivateBuffer;
use crate::grid::grid_to_loops::kernel_version;
use crate::support::handles::has_static_shape;
use crate::support::handles::{context_of, operation_ref, parent_of, raw_op, result_of, value_type};
use crate::support::ir::{block_arguments, block_operations, collect_operations, erase, print_type, static_bytes};
use mlir_sys::*;

/// Alignment of every buffer in a workgroup's arena (what bufferization
/// asks of its allocations).
const ALIGNMENT: i64 = 64;

/// Where a local buffer lives.
#[derive(Clone, Copy)]
pub(super) enum Slot {
    /// At this byte offset of the workgroup's LDS arena.
    Shared(i64),
    /// At this byte offset of the workgroup's slice of global scratch.
    Scratch(i64),
}

/// A local buffer's place: its slot, and for a buffer a loop carries to
/// its next iteration (bufferized `iter_args`), the loop and the distance
/// to its second slot: iterations alternate between the two, so the
/// buffer being made never overwrites the one the previous iteration left.
pub(super) struct Placement {
    alloc: MlirOperation,
    slot: Slot,
    alternating: Option<(MlirOperation, i64)>,
}

/// The workgroup memory of one program nest: a slot per local buffer.
pub(super) struct Arena {
    pub(super) slots: Vec<Placement>,
    pub(super) shared_bytes: i64,
    /// Bytes per workgroup of global scratch.
    pub(super) scratch_bytes: i64,
}

fn round_up(value: i64, multiple: i64) -> i64 {
    (value + multiple - 1) / multiple * multiple
}

/// Places the nest's local buffers (all but those of `privates`), in
/// program order, in LDS while they fit. The buffers of a kernel's two
/// versions share their slots: a program runs one version or the other,
/// and the staged one's padded blocks must not cost the whole blocks'
/// version its occupancy.
pub(super) fn plan_arena(nest: MlirOperation, budget: i64, privates: &[PrivateBuffer]) -> Result<Arena, String> {
    let nest_ref = operation_ref(nest);
    let mut arena = Arena { slots: Vec::new(), shared_bytes: 0, scratch_bytes: 0 };
    let mut allocs = collect_operations(nest_ref, |name| name == "memref.alloc" || name == "memref.alloca");
    allocs.retain(|(alloc, _)| !privates.iter().filter_map(PrivateBuffer::alloc).any(|local| local.ptr == alloc.ptr));
    // Buffers outside the versions first, then each version's from the
    // same start; chunks staged for contractions (tessel-lds-stage) are
    // read most: within each, they get LDS first.
    allocs.sort_by_key(|(alloc, _)| (kernel_version(*alloc), !is_staged(*alloc)));
    let mut version_start: Option<(i64, i64)> = None;
    let mut version_ends = (0, 0);
    let mut current_version = None;
    for (alloc, _) in allocs {
        let version = kernel_version(alloc);
        if version != current_version && version.is_some() {
            // A version starts where the buffers outside them end.
            let start = *version_start.get_or_insert((arena.shared_bytes, arena.scratch_bytes));
            version_ends = (version_ends.0.max(arena.shared_bytes), version_ends.1.max(arena.scratch_bytes));
            (arena.shared_bytes, arena.scratch_bytes) = start;
        }
        current_version = version;
        let memref = value_type(result_of(alloc, 0));
        if !has_static_shape(memref) {
            return Err(format!(
                "a local buffer of dynamic shape ({}) cannot live in workgroup memory",
                print_type(memref)
            ));
        }
        let mut bytes = static_bytes(memref)
            .ok_or_else(|| format!("a local buffer of {} is too large to address", print_type(memref)))?;
        let alternating = carried_by(alloc)?.map(|loop_op| (loop_op, round_up(bytes, ALIGNMENT)));
        if let Some((_, distance)) = alternating {
            bytes += distance;
        }
        let shared = round_up(arena.shared_bytes, ALIGNMENT);
        let slot = if shared + bytes <= budget {
            arena.shared_bytes = shared + bytes;
            Slot::Shared(shared)
        } else {
            let scratch = round_up(arena.scratch_bytes, ALIGNMENT);
            arena.scratch_bytes = scratch + bytes;
            Slot::Scratch(scratch)
        };
        arena.slots.push(Placement { alloc, slot, alternating });
    }
    arena.shared_bytes = arena.shared_bytes.max(version_ends.0);
    arena.scratch_bytes = round_up(arena.scratch_bytes.max(version_ends.1), ALIGNMENT);
    Ok(arena)
}

/// Is `alloc` a chunk staged by tessel-lds-stage (in its k-chunk loop)?
fn is_staged(alloc: MlirOperation) -> bool {
    let parent = parent_of(alloc);
    raw_op(parent).has(crate::gpu::tessel_lds_stage::STAGED_LOOP)
        || raw_op(alloc).has(crate::gpu::tessel_lds_stage::STAGED_BUFFER)
}

/// The values a region's terminator passes on (`scf.yield`'s operands,
/// `scf.condition`'s after its condition).
fn passed_on(block: MlirBlock) -> Vec<MlirValue> {
    let Some(&terminator) = block_operations(block).last() else { return Vec::new() };
    let operands = raw_op(terminator).operands();
    if raw_op(terminator).name() == "scf.condition" { operands[1..].to_vec() } else { operands }
}

/// Whether an `scf.while` buffer is safe in one slot: the region receiving
/// `alloc`'s buffer (the other one of the loop) never passes that argument
/// straight back, so the buffer's previous contents are dead whenever the
/// alloc makes it anew. (Bufferization copies a carried buffer in the
/// `before` region, which gives exactly this.)
fn while_buffer_is_safe(alloc: MlirOperation, loop_op: MlirOperation) -> bool {
    let buffer = result_of(alloc, 0);
    let [before, after] = [0, 1].map(|region| raw_op(loop_op).region_block(region));
    // SAFETY: live IR of the module being rewritten (crate invariant, support/handles.rs); indices stay below the counts they are taken from
    let in_before = unsafe { mlirOperationGetBlock(alloc).ptr == before.ptr };
    let (own, other) = if in_before { (before, after) } else { (after, before) };
    passed_on(own).into_iter().enumerate().filter(|&(_, value)| value.ptr == buffer.ptr).all(|(position, _)| {
        let Some(&argument) = block_arguments(other).get(position) else { return false };
        !passed_on(other).iter().any(|value| value.ptr == argument.ptr)
    })
}

/// Ops that run one of their regions and pass its values on as results.
fn is_conditional(op: MlirOperation) -> bool {
    matches!(raw_op(op).name().as_str(), "scf.if" | "scf.index_switch")
}

/// Whether `value` is passed on by the terminator of `owner`'s own region
/// (to its next iteration), directly or as the result of conditionals
/// (`scf.if`, `scf.index_switch`) that yield it.
fn reaches_terminator_of(value: MlirValue, owner: MlirOperation) -> bool {
    crate::support::ir::users(value).into_iter().any(|user| {
        if !matches!(raw_op(user).name().as_str(), "scf.yield" | "scf.condition") {
            return false;
        }
        let yielded_by = parent_of(user);
        if yielded_by.ptr == owner.ptr {
            return true;
        }
        is_conditional(yielded_by)
            && raw_op(user)
                .operands()
                .into_iter()
                .zip(raw_op(yielded_by).results())
                .any(|(operand, result)| operand.ptr == value.ptr && reaches_terminator_of(result, owner))
    })
}

/// The loop that carries `alloc`'s buffer to its next iteration, if any.
/// (A conditional that yields the buffer only forwards it: the loop that
/// matters is the nearest enclosing op that is not a conditional; a
/// program nest carries nothing from one program to the next.)
fn carried_by(alloc: MlirOperation) -> Result<Option<MlirOperation>, String> {
    let buffer = result_of(alloc, 0);
    let parent = parent_of(alloc);
    let mut owner = parent;
    while is_conditional(owner) {
        owner = parent_of(owner);
    }
    if !reaches_terminator_of(buffer, owner) {
        return Ok(None);
    }
    match raw_op(owner).name().as_str() {
        "scf.while" if owner.ptr == parent.ptr => {
            if while_buffer_is_safe(alloc, owner) {
                Ok(None)
            } else {
                Err("a buffer an 'scf.while' passes straight back to the region that made it cannot be placed in \
                     workgroup memory yet"
                    .into())
            }
        }
        "scf.for" => {
            // The loop's results must not flow into another loop's next
            // iteration.
            for result in raw_op(owner).results() {
                if crate::support::ir::users(result).into_iter().any(|user| raw_op(user).name() == "scf.yield") {
                    return Err("buffers carried through nested loops cannot be placed in workgroup memory yet".into());
                }
            }
            Ok(Some(owner))
        }
        other => Err(format!("a local buffer carried by '{other}' cannot be placed in workgroup memory yet")),
    }
}

/// Replaces a local buffer by a view of its slot.
pub(super) fn place_buffer(
    placement: &Placement,
    shared: Option<MlirValue>,
    scratch: Option<MlirValue>,
    workgroup: MlirValue,
    scratch_bytes: i64,
) -> Result<(), String> {
    let alloc = placement.alloc;
    // The arena outlives every buffer in it: no deallocation.
    for user in crate::support::ir::users(result_of(alloc, 0)) {
        if raw_op(user).name() == "memref.dealloc" {
            erase(user);
        }
    }
    let memref = print_type(value_type(result_of(alloc, 0)));
    // A carried buffer's slot alternates with the iteration's parity.
    let (mut alternate, mut alternate_args) = ("%second = arith.constant 0 : index\n".to_string(), Vec::new());
    if let Some((loop_op, distance)) = placement.alternating {
        let operands = raw_op(loop_op).operands();
        let iv = block_arguments(raw_op(loop_op).region_block(0))[0];
        alternate = format!(
            "%from = arith.subi %iv, %lb : index\n%k = arith.divui %from, %step : index\n\
             %two = arith.constant 2 : index\n%parity = arith.remui %k, %two : index\n\
             %distance = arith.constant {distance} : index\n%second = arith.muli %parity, %distance : index\n"
        );
        alternate_args = vec![iv, operands[0], operands[2]];
    }
    let loop_parameters = if alternate_args.is_empty() { "" } else { ", %iv: index, %lb: index, %step: index" };
    let (text, mut args) = match placement.slot {
        Slot::Shared(offset) => {
            let shared = shared.expect("an LDS arena");
            let shared_type = print_type(value_type(shared));
            let in_lds = format!("{}, #gpu.address_space<workgroup>>", memref.trim_end_matches('>'));
            (
                format!(
                    "func.func @template(%shared: {shared_type}{loop_parameters}) -> {memref} {{\n{alternate}\
                     %first = arith.constant {offset} : index\n%offset = arith.addi %first, %second : index\n\
                     %view = memref.view %shared[%offset][] : {shared_type} to {in_lds}\n\
                     %generic = memref.memory_space_cast %view : {in_lds} to {memref}\n\
                     return %generic : {memref}\n}}"
                ),
                vec![shared],
            )
        }
        Slot::Scratch(offset) => {
            let scratch = scratch.expect("global scratch");
            let scratch_type = print_type(value_type(scratch));
            (
                format!(
                    "func.func @template(%scratch: {scratch_type}, %w: index{loop_parameters}) -> {memref} {{\n{alternate}\
                     %slice = arith.constant {scratch_bytes} : index\n\
                     %first = arith.constant {offset} : index\n\
                     %within = arith.addi %first, %second : index\n\
                     %base = arith.muli %w, %slice : index\n\
                     %offset = arith.addi %base, %within : index\n\
                     %view = memref.view %scratch[%offset][] : {scratch_type} to {memref}\n\
                     return %view : {memref}\n}}"
                ),
                vec![scratch, workgroup],
            )
        }
    };
    args.extend(alternate_args);
    let context = context_of(alloc);
    crate::support::template::replace(context, alloc, &text, &args).map_err(|error| error.0)
}
