//! `grid-to-gpu`: the programs of a grid become the workgroups of one
//! `gpu.launch`, and each program's block work is shared by the
//! workgroup's work-items.
//!
//! Runs on bufferized, loop-level IR (after `convert-linalg-to-parallel-loops`),
//! where a grid call is a program nest at the top of its function: an
//! `scf.forall` over the parallel axes from grid-to-loops, or an ordered
//! `scf.for` when every axis is arbitrary. Then:
//!
//! - Programs -> workgroups: the grid is folded into one linear workgroup
//!   id (any number of axes; x allows 2^32 - 1 workgroups where y and z
//!   stop at 65535) and delinearized back into program ids.
//! - Local buffers (padded blocks, scratch, temporaries) -> the workgroup's
//!   memory: each `memref.alloc` becomes a view of one workgroup arena in
//!   LDS while it fits (`tessel.workgroup_memory` bytes, 64 KiB on every
//!   supported chip), else of a global scratch buffer with one slice per
//!   workgroup, allocated around the launch.
//! - Block work -> work-items: each `scf.parallel` (an element-wise or
//!   reduction loop nest over a block) runs as one strided loop over its
//!   linearized iterations, item `t` taking iterations t, t + T, t + 2T ...
//!   (T = `tessel.num_warps` x `tessel.wave_size`), so neighbouring items
//!   touch neighbouring elements (coalesced); a barrier follows it.
//! - Other writes outside block work (a scalar store, a sequential
//!   reduction loop) run on work-item 0 between barriers, so every item
//!   sees them. Control flow around block work (the loops of arbitrary
//!   axes, bounds checks) depends only on program ids: uniform, so it may
//!   hold barriers.

use crate::{
    PassDefinition, emit_error,
    grid_to_loops::ARBITRARY_AXIS,
    ir::{
        any_nested, block_arguments, block_operations, collect_operations, element_bits, erase, find_named,
        inline_template, join, move_before, print_type, region_blocks,
    },
    per_item::PerItem,
};
use melior::{
    ir::{OperationRef, operation::OperationLike},
    pass::ExternalPass,
};
use mlir_sys::*;
use std::fmt::Write;
use tessel_dialects::RawOp;

pub static PASS: PassDefinition = PassDefinition {
    argument: "grid-to-gpu",
    name: "GridToGpu",
    description: "Map grid programs to gpu.launch workgroups and their block work to work-items",
    anchor: "builtin.module",
    run,
};

/// Module attribute: wavefronts per workgroup (default 4).
pub const NUM_WARPS: &str = "tessel.num_warps";
/// Module attribute: work-items per wavefront (64 on CDNA, 32 on RDNA).
pub const WAVE_SIZE: &str = "tessel.wave_size";
/// Module attribute: bytes of workgroup memory (LDS) a workgroup may use.
pub const WORKGROUP_MEMORY: &str = "tessel.workgroup_memory";

pub const DEFAULT_NUM_WARPS: i64 = 4;
pub const DEFAULT_WAVE_SIZE: i64 = 64;
pub const DEFAULT_WORKGROUP_MEMORY: i64 = 65536;

/// Alignment of every buffer in a workgroup's arena (what bufferization
/// asks of its allocations).
const ALIGNMENT: i64 = 64;

fn run(module: OperationRef<'static, '_>, pass: ExternalPass<'_>) {
    let settings = RawOp(module.to_raw());
    let threads = settings.integer_or(NUM_WARPS, DEFAULT_NUM_WARPS) * settings.integer_or(WAVE_SIZE, DEFAULT_WAVE_SIZE);
    let memory = settings.integer_or(WORKGROUP_MEMORY, DEFAULT_WORKGROUP_MEMORY);
    if !(1..=1024).contains(&threads) || memory < 0 {
        emit_error(module.location(), "grid-to-gpu: a workgroup needs 1 to 1024 work-items and non-negative memory");
        pass.signal_failure();
        return;
    }
    let mut nests = Vec::new();
    for (function, _) in collect_operations(module, |name| name == "func.func") {
        let body = RawOp(function).region_block(0);
        if !body.ptr.is_null() {
            program_nests(body, &mut nests);
        }
    }
    for nest in nests {
        // Taken first: a failed mapping may already have moved the nest's
        // ops into a launch and erased it.
        let location = unsafe { OperationRef::from_raw(nest) }.location();
        if let Err(message) = map_programs(nest, threads, memory) {
            emit_error(location, &format!("grid-to-gpu: {message}"));
            pass.signal_failure();
            return;
        }
    }
}

/// The program nests of `body`, each to become one launch: a grid's
/// parallel programs (`scf.forall`), or an ordered (arbitrary) axis run by
/// one workgroup. An ordered axis around parallel programs (an output
/// revisited along an outer axis) stays a loop on the host around ordered
/// launches of the programs.
fn program_nests(body: MlirBlock, nests: &mut Vec<MlirOperation>) {
    for op in block_operations(body) {
        let raw = RawOp(op);
        match raw.name().as_str() {
            "scf.forall" => nests.push(op),
            "scf.for" if raw.has(ARBITRARY_AXIS) => {
                let inner = raw.region_block(0);
                if block_operations(inner).into_iter().any(|nested| RawOp(nested).name() == "scf.forall") {
                    program_nests(inner, nests);
                } else {
                    nests.push(op);
                }
            }
            _ => {}
        }
    }
}

/// Where a local buffer lives.
#[derive(Clone, Copy)]
enum Slot {
    /// At this byte offset of the workgroup's LDS arena.
    Shared(i64),
    /// At this byte offset of the workgroup's slice of global scratch.
    Scratch(i64),
}

/// A local buffer's place: its slot, and for a buffer a loop carries to
/// its next iteration (bufferized `iter_args`), the loop and the distance
/// to its second slot: iterations alternate between the two, so the
/// buffer being made never overwrites the one the previous iteration left.
struct Placement {
    alloc: MlirOperation,
    slot: Slot,
    alternating: Option<(MlirOperation, i64)>,
}

/// The workgroup memory of one program nest: a slot per local buffer.
struct Arena {
    slots: Vec<Placement>,
    shared_bytes: i64,
    /// Bytes per workgroup of global scratch.
    scratch_bytes: i64,
}

fn round_up(value: i64, multiple: i64) -> i64 {
    (value + multiple - 1) / multiple * multiple
}

/// Places the nest's local buffers, in program order, in LDS while they fit.
fn plan_arena(nest: MlirOperation, budget: i64) -> Result<Arena, String> {
    let nest_ref = unsafe { OperationRef::from_raw(nest) };
    let mut arena = Arena { slots: Vec::new(), shared_bytes: 0, scratch_bytes: 0 };
    let mut allocs = collect_operations(nest_ref, |name| name == "memref.alloc" || name == "memref.alloca");
    // Chunks staged for contractions (tessel-lds-stage) are read most:
    // they get LDS first.
    allocs.sort_by_key(|(alloc, _)| !is_staged(*alloc));
    for (alloc, _) in allocs {
        let memref = unsafe { mlirValueGetType(mlirOperationGetResult(alloc, 0)) };
        if !unsafe { mlirShapedTypeHasStaticShape(memref) } {
            return Err(format!(
                "a local buffer of dynamic shape ({}) cannot live in workgroup memory",
                print_type(memref)
            ));
        }
        let rank = unsafe { mlirShapedTypeGetRank(memref) };
        let elements: i64 = (0..rank).map(|d| unsafe { mlirShapedTypeGetDimSize(memref, d as isize) }).product();
        let mut bytes = elements * ((element_bits(unsafe { mlirShapedTypeGetElementType(memref) }) + 7) / 8);
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
    arena.scratch_bytes = round_up(arena.scratch_bytes, ALIGNMENT);
    Ok(arena)
}

/// Is `alloc` a chunk staged by tessel-lds-stage (in its k-chunk loop)?
fn is_staged(alloc: MlirOperation) -> bool {
    let parent = unsafe { mlirOperationGetParentOperation(alloc) };
    RawOp(parent).has(crate::lds_stage::STAGED_LOOP) || RawOp(alloc).has(crate::lds_stage::STAGED_BUFFER)
}

/// The values a region's terminator passes on (`scf.yield`'s operands,
/// `scf.condition`'s after its condition).
fn passed_on(block: MlirBlock) -> Vec<MlirValue> {
    let Some(&terminator) = block_operations(block).last() else { return Vec::new() };
    let operands = RawOp(terminator).operands();
    if RawOp(terminator).name() == "scf.condition" { operands[1..].to_vec() } else { operands }
}

/// Whether an `scf.while` buffer is safe in one slot: the region receiving
/// `alloc`'s buffer (the other one of the loop) never passes that argument
/// straight back, so the buffer's previous contents are dead whenever the
/// alloc makes it anew. (Bufferization copies a carried buffer in the
/// `before` region, which gives exactly this.)
fn while_buffer_is_safe(alloc: MlirOperation, loop_op: MlirOperation) -> bool {
    let buffer = unsafe { mlirOperationGetResult(alloc, 0) };
    let [before, after] = [0, 1].map(|region| RawOp(loop_op).region_block(region));
    let in_before = unsafe { mlirOperationGetBlock(alloc).ptr == before.ptr };
    let (own, other) = if in_before { (before, after) } else { (after, before) };
    passed_on(own).into_iter().enumerate().filter(|&(_, value)| value.ptr == buffer.ptr).all(|(position, _)| {
        let Some(&argument) = block_arguments(other).get(position) else { return false };
        !passed_on(other).iter().any(|value| value.ptr == argument.ptr)
    })
}

/// Ops that run one of their regions and pass its values on as results.
fn is_conditional(op: MlirOperation) -> bool {
    matches!(RawOp(op).name().as_str(), "scf.if" | "scf.index_switch")
}

/// Whether `value` is passed on by the terminator of `owner`'s own region
/// (to its next iteration), directly or as the result of conditionals
/// (`scf.if`, `scf.index_switch`) that yield it.
fn reaches_terminator_of(value: MlirValue, owner: MlirOperation) -> bool {
    crate::ir::users(value).into_iter().any(|user| {
        if !matches!(RawOp(user).name().as_str(), "scf.yield" | "scf.condition") {
            return false;
        }
        let yielded_by = unsafe { mlirOperationGetParentOperation(user) };
        if yielded_by.ptr == owner.ptr {
            return true;
        }
        is_conditional(yielded_by)
            && RawOp(user)
                .operands()
                .into_iter()
                .zip(RawOp(yielded_by).results())
                .any(|(operand, result)| operand.ptr == value.ptr && reaches_terminator_of(result, owner))
    })
}

/// The loop that carries `alloc`'s buffer to its next iteration, if any.
/// (A conditional that yields the buffer only forwards it: the loop that
/// matters is the nearest enclosing op that is not a conditional; a
/// program nest carries nothing from one program to the next.)
fn carried_by(alloc: MlirOperation) -> Result<Option<MlirOperation>, String> {
    let buffer = unsafe { mlirOperationGetResult(alloc, 0) };
    let parent = unsafe { mlirOperationGetParentOperation(alloc) };
    let mut owner = parent;
    while is_conditional(owner) {
        owner = unsafe { mlirOperationGetParentOperation(owner) };
    }
    if !reaches_terminator_of(buffer, owner) {
        return Ok(None);
    }
    match RawOp(owner).name().as_str() {
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
            for result in RawOp(owner).results() {
                if crate::ir::users(result).into_iter().any(|user| RawOp(user).name() == "scf.yield") {
                    return Err("buffers carried through nested loops cannot be placed in workgroup memory yet".into());
                }
            }
            Ok(Some(owner))
        }
        other => Err(format!("a local buffer carried by '{other}' cannot be placed in workgroup memory yet")),
    }
}

/// The launch for one program nest; the nest's ops move into it.
fn map_programs(nest: MlirOperation, threads: i64, budget: i64) -> Result<(), String> {
    let raw = RawOp(nest);
    let is_forall = raw.name() == "scf.forall";
    let grid = if is_forall {
        let (lower, upper, step) =
            (raw.integers("staticLowerBound"), raw.integers("staticUpperBound"), raw.integers("staticStep"));
        if lower.iter().any(|&l| l != 0) || step.iter().any(|&s| s != 1) || upper.iter().any(|&u| u < 0) {
            return Err("the programs' loop must run from 0 with step 1 over a static grid".into());
        }
        upper
    } else {
        Vec::new()
    };
    let programs: i64 = grid.iter().product();
    if programs > u32::MAX as i64 {
        return Err(format!("{programs} programs exceed the 2^32 - 1 workgroups of a launch"));
    }
    let arena = plan_arena(nest, budget)?;
    let scratch_type = format!("memref<{}xi8>", arena.scratch_bytes * programs);
    let shared_type = format!("memref<{}xi8, #gpu.address_space<workgroup>>", arena.shared_bytes);

    // The launch, with an LDS arena and global scratch when needed.
    let mut text = String::from("func.func @template() {\n");
    if arena.scratch_bytes > 0 {
        writeln!(text, "%scratch = gpu.alloc () : {scratch_type}").unwrap();
    }
    writeln!(
        text,
        "%programs = arith.constant {programs} : index\n%one = arith.constant 1 : index\n\
         %threads = arith.constant {threads} : index\n\
         gpu.launch blocks(%bx, %by, %bz) in (%gx = %programs, %gy = %one, %gz = %one) \
         threads(%tx, %ty, %tz) in (%sx = %threads, %sy = %one, %sz = %one)"
    )
    .unwrap();
    if arena.shared_bytes > 0 {
        writeln!(text, "workgroup(%shared : {shared_type})").unwrap();
    }
    text.push_str("{\ngpu.barrier\ngpu.terminator\n}\n");
    if arena.scratch_bytes > 0 {
        writeln!(text, "gpu.dealloc %scratch : {scratch_type}").unwrap();
    }
    text.push_str("return\n}\n");
    let (_, added) = inline_template(nest, &text, &[])?;
    let launch = find_named(&added, "gpu.launch").expect("the template has a launch");
    let scratch = find_named(&added, "gpu.alloc").map(|alloc| unsafe { mlirOperationGetResult(alloc, 0) });
    let body = RawOp(launch).region_block(0);
    let arguments = block_arguments(body);
    let (workgroup, item) = (arguments[0], arguments[3]);
    let shared = (arena.shared_bytes > 0).then(|| arguments[12]);
    let placeholder = block_operations(body)[0];

    // Program ids from the linear workgroup id.
    let program_ids: Vec<MlirValue> = match grid.len() {
        0 => Vec::new(),
        1 => vec![workgroup],
        rank => {
            let indices = join(vec!["index"; rank]);
            let text = format!(
                "func.func @template(%w: index) -> ({indices}) {{\n\
                 %p:{rank} = affine.delinearize_index %w into ({}) : {indices}\nreturn {} : {indices}\n}}",
                join(&grid),
                join((0..rank).map(|d| format!("%p#{d}")))
            );
            inline_template(placeholder, &text, &[workgroup])?.0
        }
    };

    // The nest's work moves into the workgroup.
    if is_forall {
        let forall_body = raw.region_block(0);
        let mut work = block_operations(forall_body);
        work.pop(); // scf.forall.in_parallel
        move_before(&work, placeholder);
        for (iv, &id) in block_arguments(forall_body).into_iter().zip(&program_ids) {
            unsafe { mlirValueReplaceAllUsesOfWith(iv, id) };
        }
        erase(nest);
    } else {
        unsafe { mlirOperationMoveBefore(nest, placeholder) };
    }
    erase(placeholder);

    for placement in &arena.slots {
        place_buffer(placement, shared, scratch, workgroup, arena.scratch_bytes)?;
    }
    bind_thread_ids(launch, [arguments[3], arguments[4], arguments[5]]);
    let per_item = PerItem::analyze(launch, &[arguments[3], arguments[4], arguments[5]]);
    let items = Items { item, threads, per_item };
    distribute(body, &items)?;
    remove_redundant_barriers(launch);
    sink_globals(launch, body);
    Ok(())
}

/// Globals the kernel reads (constant tensors, the bounds-check flag) are
/// referenced from inside the launch, so outlining gives the device module
/// its own copy instead of passing a host pointer.
fn sink_globals(launch: MlirOperation, body: MlirBlock) {
    let first = block_operations(body)[0];
    let launch_ref = unsafe { OperationRef::from_raw(launch) };
    for (op, _) in collect_operations(launch_ref, |_| true) {
        for (position, operand) in RawOp(op).operands().into_iter().enumerate() {
            if !unsafe { mlirValueIsAOpResult(operand) } {
                continue;
            }
            let definition = unsafe { mlirOpResultGetOwner(operand) };
            if RawOp(definition).name() != "memref.get_global" || crate::ir::is_inside(definition, launch) {
                continue;
            }
            unsafe {
                let clone = mlirOperationClone(definition);
                mlirBlockInsertOwnedOperationBefore(body, first, clone);
                mlirOperationSetOperand(op, position as isize, mlirOperationGetResult(clone, 0));
            }
        }
    }
}

/// Replaces a local buffer by a view of its slot.
fn place_buffer(
    placement: &Placement,
    shared: Option<MlirValue>,
    scratch: Option<MlirValue>,
    workgroup: MlirValue,
    scratch_bytes: i64,
) -> Result<(), String> {
    let alloc = placement.alloc;
    // The arena outlives every buffer in it: no deallocation.
    for user in crate::ir::users(unsafe { mlirOperationGetResult(alloc, 0) }) {
        if RawOp(user).name() == "memref.dealloc" {
            erase(user);
        }
    }
    let memref = print_type(unsafe { mlirValueGetType(mlirOperationGetResult(alloc, 0)) });
    // A carried buffer's slot alternates with the iteration's parity.
    let (mut alternate, mut alternate_args) = ("%second = arith.constant 0 : index\n".to_string(), Vec::new());
    if let Some((loop_op, distance)) = placement.alternating {
        let operands = RawOp(loop_op).operands();
        let iv = block_arguments(RawOp(loop_op).region_block(0))[0];
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
            let shared_type = print_type(unsafe { mlirValueGetType(shared) });
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
            let scratch_type = print_type(unsafe { mlirValueGetType(scratch) });
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
    let context = unsafe { mlirOperationGetContext(alloc) };
    crate::template::replace(context, alloc, &text, &args).map_err(|error| error.0)
}

/// Per-lane code (tessel-matrix-cores' fragments and matrix instructions)
/// reads `gpu.thread_id`: inside the launch, that is the work-item's id.
fn bind_thread_ids(launch: MlirOperation, ids: [MlirValue; 3]) {
    let launch_ref = unsafe { OperationRef::from_raw(launch) };
    for (op, _) in collect_operations(launch_ref, |name| name == "gpu.thread_id") {
        let dimension = unsafe { melior::ir::Attribute::from_raw(RawOp(op).attribute("dimension")) }.to_string();
        let id = if dimension.contains('y') {
            ids[1]
        } else if dimension.contains('z') {
            ids[2]
        } else {
            ids[0]
        };
        unsafe { mlirValueReplaceAllUsesOfWith(mlirOperationGetResult(op, 0), id) };
        erase(op);
    }
}

/// How block work is shared: item ids and their count, and which values
/// are per item (code on them runs on every item).
struct Items {
    item: MlirValue,
    threads: i64,
    per_item: PerItem,
}

/// Ops that neither write memory nor synchronize (their nested ops aside):
/// every work-item may run them.
fn is_read_only(name: &str) -> bool {
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
    any_nested(op, |nested| !is_read_only(&RawOp(nested).name()))
}

fn is_terminator(name: &str) -> bool {
    matches!(name, "scf.yield" | "scf.condition" | "gpu.terminator" | "scf.reduce")
}

/// Shares the work of `block` (uniform code) among the work-items. Code on
/// per-item values (SIMT code) runs on every item as it is, a barrier
/// after each run of it.
fn distribute(block: MlirBlock, items: &Items) -> Result<(), String> {
    let mut writes_of_one = Vec::new();
    let mut last_per_item = None;
    for op in block_operations(block) {
        let raw = RawOp(op);
        let name = raw.name();
        if is_terminator(&name) {
            continue;
        }
        let holds_block_work = any_nested(op, |nested| RawOp(nested).name() == "scf.parallel");
        if name == "scf.parallel" {
            end_per_item(&mut last_per_item)?;
            on_first_item(&mut writes_of_one, items)?;
            distribute_parallel(op, items)?;
        } else if holds_block_work && matches!(name.as_str(), "scf.for" | "scf.if" | "scf.while" | "scf.index_switch") {
            end_per_item(&mut last_per_item)?;
            on_first_item(&mut writes_of_one, items)?;
            for nested in region_blocks(op) {
                distribute(nested, items)?;
            }
        } else if holds_block_work {
            return Err(format!("block work nested in '{name}' cannot be shared among work-items"));
        } else if items.per_item.used_by(op) {
            on_first_item(&mut writes_of_one, items)?;
            last_per_item = Some(op);
        } else if writes(op) {
            end_per_item(&mut last_per_item)?;
            if raw.results().iter().any(|&result| !crate::ir::users(result).is_empty()) {
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

/// A barrier after the last op of a run of per-item code (what the items
/// read or wrote is then safe for the work after it).
fn end_per_item(last: &mut Option<MlirOperation>) -> Result<(), String> {
    let Some(op) = last.take() else { return Ok(()) };
    let next = unsafe { mlirOperationGetNextInBlock(op) };
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
    let placeholder = block_operations(RawOp(guard).region_block(0))[0];
    // The closing barrier must follow the ops: move it after the last one.
    let closing = *added.last().expect("the template's last barrier");
    move_before(ops, placeholder);
    erase(placeholder);
    unsafe { mlirOperationMoveAfter(closing, guard) };
    ops.clear();
    Ok(())
}

/// `scf.parallel` -> a loop of item `t` over linear iterations t, t + T, ...
fn distribute_parallel(parallel: MlirOperation, items: &Items) -> Result<(), String> {
    let raw = RawOp(parallel);
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
        write!(text, ", %lb{d}: index, %ub{d}: index, %st{d}: index").unwrap();
    }
    writeln!(text, ") -> ({}) {{\n%total0 = arith.constant 1 : index", indices(rank)).unwrap();
    for d in 0..rank {
        writeln!(
            text,
            "%d{d} = arith.subi %ub{d}, %lb{d} : index\n%n{d} = arith.ceildivsi %d{d}, %st{d} : index\n\
             %total{} = arith.muli %total{d}, %n{d} : index",
            d + 1
        )
        .unwrap();
    }
    writeln!(
        text,
        "%threads = arith.constant {} : index\nscf.for %l = %t to %total{rank} step %threads {{\ngpu.barrier\n}}\n\
         gpu.barrier\nreturn {} : {}\n}}",
        items.threads,
        join((0..rank).map(|d| format!("%n{d}"))),
        indices(rank)
    )
    .unwrap();
    let args: Vec<MlirValue> =
        std::iter::once(items.item).chain((0..rank).flat_map(|d| [lower[d], upper[d], steps[d]])).collect();
    let (trips, added) = inline_template(parallel, &text, &args)?;
    let strided = find_named(&added, "scf.for").expect("the template has a loop");
    let loop_body = RawOp(strided).region_block(0);
    let linear = block_arguments(loop_body)[0];
    let placeholder = block_operations(loop_body)[0];

    // Induction variables from the linear iteration, the last one fastest.
    let mut ivs = String::from("func.func @template(%l: index");
    for d in 0..rank {
        write!(ivs, ", %lb{d}: index, %st{d}: index, %n{d}: index").unwrap();
    }
    writeln!(ivs, ") -> ({}) {{", indices(rank)).unwrap();
    let positions: Vec<String> = if rank == 1 {
        vec!["%l".into()]
    } else {
        let basis: Vec<String> = (0..rank).map(|d| format!("%n{d}")).collect();
        writeln!(ivs, "%i:{rank} = affine.delinearize_index %l into ({}) : {}", join(basis), indices(rank)).unwrap();
        (0..rank).map(|d| format!("%i#{d}")).collect()
    };
    for (d, position) in positions.iter().enumerate() {
        writeln!(ivs, "%s{d} = arith.muli {position}, %st{d} : index\n%iv{d} = arith.addi %lb{d}, %s{d} : index")
            .unwrap();
    }
    writeln!(ivs, "return {} : {}\n}}", join((0..rank).map(|d| format!("%iv{d}"))), indices(rank)).unwrap();
    let args: Vec<MlirValue> =
        std::iter::once(linear).chain((0..rank).flat_map(|d| [lower[d], steps[d], trips[d]])).collect();
    let (values, _) = inline_template(placeholder, &ivs, &args)?;

    let parallel_body = raw.region_block(0);
    let mut work = block_operations(parallel_body);
    work.pop(); // scf.reduce
    move_before(&work, placeholder);
    for (iv, value) in block_arguments(parallel_body).into_iter().zip(values) {
        unsafe { mlirValueReplaceAllUsesOfWith(iv, value) };
    }
    erase(placeholder);
    erase(parallel);
    Ok(())
}

/// Drops barriers right after another barrier or at the kernel's end.
fn remove_redundant_barriers(launch: MlirOperation) {
    let mut redundant = Vec::new();
    for (barrier, _) in collect_operations(unsafe { OperationRef::from_raw(launch) }, |name| name == "gpu.barrier") {
        let next = unsafe { mlirOperationGetNextInBlock(barrier) };
        let next_name = RawOp(next).name();
        let at_end =
            next_name == "gpu.terminator" && unsafe { mlirOperationGetParentOperation(barrier) }.ptr == launch.ptr;
        if next_name == "gpu.barrier" || at_end {
            redundant.push(barrier);
        }
    }
    for barrier in redundant {
        erase(barrier);
    }
}
