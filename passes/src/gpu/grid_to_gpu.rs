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
//!   stop at 65535) and delinearized back into program ids. Sizes given
//!   as values (dynamic `scf.forall` bounds) are multiplied at run time.
//! - Local buffers (padded blocks, scratch, temporaries) -> the workgroup's
//!   memory: each `memref.alloc` becomes a view of one workgroup arena in
//!   LDS while it fits (`tessel.workgroup_memory` bytes, 64 KiB on every
//!   supported chip), else of a global scratch buffer with one slice per
//!   workgroup, allocated around the launch. A buffer each element of
//!   which only one work-item touches goes to the items' private memory
//!   instead (a `private` attribution: registers; `private_buffers.rs`),
//!   and so does a small buffer only code outside block work writes (a
//!   reduction's result), which every item then computes itself
//!   (`replicated_buffers.rs`).
//! - Block work -> work-items: each `scf.parallel` (an element-wise or
//!   reduction loop nest over a block) runs as one strided loop over its
//!   linearized iterations, item `t` taking iterations t, t + T, t + 2T ...
//!   (T = `tessel.num_warps` x `tessel.wave_size`), so neighbouring items
//!   touch neighbouring elements (coalesced); a barrier follows it.
//! - Other writes outside block work (a scalar store, a sequential
//!   reduction loop) run on work-item 0 between barriers, so every item
//!   sees them. Control flow around block work (the loops of arbitrary
//!   axes, bounds checks) depends only on program ids: uniform, so it may
//!   hold barriers. So does control flow that writes and yields buffers
//!   (a one-element block's loops folded away): every item runs it, its
//!   writes on item 0 inside; a conditional's results become selects.

use crate::support::handles::{location_of, operation_ref, raw_op, replace_all_uses, result_of};
use crate::support::template::emit_line;
use crate::{
    PassDefinition, PassError,
    gpu::{
        per_item::PerItem,
        private_buffers::{PrivateBuffer, plan as plan_private_buffers},
        tessel_elide_barriers::drop_adjacent_barriers,
        work_items::{Items, bind_thread_ids, distribute},
        workgroup_arena::{place_buffer, plan_arena},
    },
    grid::grid_to_loops::ARBITRARY_AXIS,
    support::ir::{
        block_arguments, block_operations, collect_operations, erase, find_named, inline_template, join, move_before,
    },
};
use melior::ir::{OperationRef, operation::OperationLike};
use mlir_sys::*;
use tessel_dialects::{DYNAMIC, knobs};

pub static PASS: PassDefinition = PassDefinition {
    argument: "grid-to-gpu",
    name: "GridToGpu",
    description: "Map grid programs to gpu.launch workgroups and their block work to work-items",
    anchor: "builtin.module",
    run,
};

pub const DEFAULT_NUM_WARPS: i64 = 4;
pub const DEFAULT_WAVE_SIZE: i64 = 64;
pub const DEFAULT_WORKGROUP_MEMORY: i64 = 65536;

/// Work-items per workgroup for the module's settings (waves x wave size).
pub fn workgroup_items(module: OperationRef<'static, '_>) -> i64 {
    let settings = raw_op(module.to_raw());
    knobs::NUM_WARPS.integer_or(settings, DEFAULT_NUM_WARPS) * knobs::WAVE_SIZE.integer_or(settings, DEFAULT_WAVE_SIZE)
}

fn run(module: OperationRef<'static, '_>) -> Result<(), PassError> {
    let settings = raw_op(module.to_raw());
    let threads = workgroup_items(module);
    let memory = knobs::WORKGROUP_MEMORY.integer_or(settings, DEFAULT_WORKGROUP_MEMORY);
    if !(1..=1024).contains(&threads) || memory < 0 {
        return Err(PassError::at(module.location(), "a workgroup needs 1 to 1024 work-items and non-negative memory"));
    }
    let mut nests = Vec::new();
    for (function, _) in collect_operations(module, |name| name == "func.func") {
        let body = raw_op(function).region_block(0);
        if !body.ptr.is_null() {
            program_nests(body, &mut nests);
        }
    }
    for nest in nests {
        // Taken first: a failed mapping may already have moved the nest's
        // ops into a launch and erased it.
        let location = location_of(nest);
        if let Err(message) = map_programs(nest, threads, memory) {
            return Err(PassError::at(location, message));
        }
    }
    Ok(())
}

/// The program nests of `body`, each to become one launch: a grid's
/// parallel programs (`scf.forall`), or an ordered (arbitrary) axis run by
/// one workgroup. An ordered axis around parallel programs (an output
/// revisited along an outer axis) stays a loop on the host around ordered
/// launches of the programs.
fn program_nests(body: MlirBlock, nests: &mut Vec<MlirOperation>) {
    for op in block_operations(body) {
        let raw = raw_op(op);
        match raw.name().as_str() {
            "scf.forall" => nests.push(op),
            "scf.for" if raw.has(ARBITRARY_AXIS) => {
                let inner = raw.region_block(0);
                if block_operations(inner).into_iter().any(|nested| raw_op(nested).name() == "scf.forall") {
                    program_nests(inner, nests);
                } else {
                    nests.push(op);
                }
            }
            _ => {}
        }
    }
}

/// The launch for one program nest; the nest's ops move into it.
fn map_programs(nest: MlirOperation, threads: i64, budget: i64) -> Result<(), String> {
    let raw = raw_op(nest);
    let is_forall = raw.name() == "scf.forall";
    // Grid sizes, `DYNAMIC` for the forall's dynamic upper bounds (values
    // from grid.call's `grid [%n, ..]`).
    let (grid, dynamic): (Vec<i64>, Vec<MlirValue>) = if is_forall {
        let (lower, upper, step) =
            (raw.integers("staticLowerBound"), raw.integers("staticUpperBound"), raw.integers("staticStep"));
        if lower.iter().any(|&l| l != 0) || step.iter().any(|&s| s != 1) || upper.iter().any(|&u| u < 0 && u != DYNAMIC)
        {
            return Err("the programs' loop must run from 0 with step 1".into());
        }
        // Operands: dynamic lower bounds, upper bounds, steps, outputs.
        let segments = raw.segments();
        let upper_values = raw.operands()[segments[0]..segments[0] + segments[1]].to_vec();
        (upper, upper_values)
    } else {
        (Vec::new(), Vec::new())
    };
    let static_programs: i64 = grid.iter().filter(|&&size| size != DYNAMIC).product();
    if static_programs > u32::MAX as i64 {
        return Err(format!("{static_programs} programs exceed the 2^32 - 1 workgroups of a launch"));
    }
    // Buffers only one item touches each element of go to the items'
    // private memory, the others to the workgroup's.
    let privates = plan_private_buffers(nest, threads);
    let arena = plan_arena(nest, budget, &privates)?;
    let scratch_type = if dynamic.is_empty() {
        format!("memref<{}xi8>", arena.scratch_bytes * static_programs)
    } else {
        "memref<?xi8>".to_string()
    };
    let shared_type = format!("memref<{}xi8, #gpu.address_space<workgroup>>", arena.shared_bytes);

    // The launch, with an LDS arena and global scratch when needed; the
    // program count is the static sizes' product times the dynamic ones.
    let parameters = join((0..dynamic.len()).map(|k| format!("%u{k}: index")));
    let mut text =
        format!("func.func @template({parameters}) {{\n%programs0 = arith.constant {static_programs} : index\n");
    for k in 0..dynamic.len() {
        emit_line!(text, "%programs{} = arith.muli %programs{k}, %u{k} : index", k + 1);
    }
    let programs = format!("%programs{}", dynamic.len());
    if arena.scratch_bytes > 0 {
        if dynamic.is_empty() {
            emit_line!(text, "%scratch = gpu.alloc () : {scratch_type}");
        } else {
            emit_line!(
                text,
                "%slice = arith.constant {} : index\n%bytes = arith.muli {programs}, %slice : index\n\
                 %scratch = gpu.alloc (%bytes) : {scratch_type}",
                arena.scratch_bytes
            );
        }
    }
    emit_line!(
        text,
        "%one = arith.constant 1 : index\n\
         %threads = arith.constant {threads} : index\n\
         gpu.launch blocks(%bx, %by, %bz) in (%gx = {programs}, %gy = %one, %gz = %one) \
         threads(%tx, %ty, %tz) in (%sx = %threads, %sy = %one, %sz = %one)"
    );
    if arena.shared_bytes > 0 {
        emit_line!(text, "workgroup(%shared : {shared_type})");
    }
    if !privates.is_empty() {
        let attributions =
            privates.iter().enumerate().map(|(k, buffer)| format!("%private{k} : {}", buffer.private_type));
        emit_line!(text, "private({})", join(attributions));
    }
    text.push_str("{\ngpu.barrier\ngpu.terminator\n}\n");
    if arena.scratch_bytes > 0 {
        emit_line!(text, "gpu.dealloc %scratch : {scratch_type}");
    }
    text.push_str("return\n}\n");
    let (_, added) = inline_template(nest, &text, &dynamic)?;
    let launch = find_named(&added, "gpu.launch").expect("the template has a launch");
    let scratch = find_named(&added, "gpu.alloc").map(|alloc| result_of(alloc, 0));
    let body = raw_op(launch).region_block(0);
    let arguments = block_arguments(body);
    let (workgroup, item) = (arguments[0], arguments[3]);
    let shared = (arena.shared_bytes > 0).then(|| arguments[12]);
    let private_memory = &arguments[12 + usize::from(shared.is_some())..];
    let placeholder = block_operations(body)[0];

    // Program ids from the linear workgroup id.
    let program_ids: Vec<MlirValue> = match grid.len() {
        0 => Vec::new(),
        1 => vec![workgroup],
        rank => {
            let indices = join(vec!["index"; rank]);
            // The basis: sizes, or the dynamic ones' values `%u<k>`.
            let mut next_dynamic = 0..;
            let basis = join(grid.iter().map(|&size| {
                if size == DYNAMIC {
                    format!("%u{}", next_dynamic.next().expect("unbounded"))
                } else {
                    size.to_string()
                }
            }));
            let text = format!(
                "func.func @template(%w: index{}) -> ({indices}) {{\n\
                 %p:{rank} = affine.delinearize_index %w into ({basis}) : {indices}\nreturn {} : {indices}\n}}",
                (0..dynamic.len()).map(|k| format!(", %u{k}: index")).collect::<String>(),
                join((0..rank).map(|d| format!("%p#{d}")))
            );
            let arguments: Vec<MlirValue> = std::iter::once(workgroup).chain(dynamic.iter().copied()).collect();
            inline_template(placeholder, &text, &arguments)?.0
        }
    };

    // The nest's work moves into the workgroup.
    if is_forall {
        let forall_body = raw.region_block(0);
        let mut work = block_operations(forall_body);
        work.pop(); // scf.forall.in_parallel
        move_before(&work, placeholder);
        for (iv, &id) in block_arguments(forall_body).into_iter().zip(&program_ids) {
            replace_all_uses(iv, id);
        }
        erase(nest);
    } else {
        // SAFETY: `nest` and `placeholder` are live ops (crate invariant); the move relinks `nest` before `placeholder`, which is erased only afterwards.
        unsafe { mlirOperationMoveBefore(nest, placeholder) };
    }
    erase(placeholder);

    for placement in &arena.slots {
        place_buffer(placement, shared, scratch, workgroup, arena.scratch_bytes)?;
    }
    // Private buffers' allocations wait outside the launch (their views
    // are not work to share) until their accesses have been rewritten.
    for alloc in privates.iter().filter_map(PrivateBuffer::alloc) {
        move_before(&[alloc], launch);
    }
    bind_thread_ids(launch, [arguments[3], arguments[4], arguments[5]]);
    let per_item = PerItem::analyze(launch, &[arguments[3], arguments[4], arguments[5]]);
    let replicated = privates.iter().filter_map(PrivateBuffer::replicated).map(|alloc| alloc.ptr as usize).collect();
    let items = Items { item, threads, per_item, replicated, trip_counters: Default::default() };
    distribute(body, &items)?;
    for (buffer, &memory) in privates.iter().zip(private_memory) {
        buffer.rewrite(memory, &items.trip_counters.borrow())?;
    }
    drop_adjacent_barriers(launch);
    sink_globals(launch, body);
    Ok(())
}

/// Globals the kernel reads (constant tensors, the bounds-check flag) are
/// referenced from inside the launch, so outlining gives the device module
/// its own copy instead of passing a host pointer.
fn sink_globals(launch: MlirOperation, body: MlirBlock) {
    let first = block_operations(body)[0];
    let launch_ref = operation_ref(launch);
    for (op, _) in collect_operations(launch_ref, |_| true) {
        for (position, operand) in raw_op(op).operands().into_iter().enumerate() {
            let Some(definition) = crate::support::ir::defining_op(operand) else { continue };
            if raw_op(definition).name() != "memref.get_global" || crate::support::ir::is_inside(definition, launch) {
                continue;
            }
            // SAFETY: `definition` is live; its clone is owned by no block until inserted before `first` in `body`; `position` is the operand position of `op` found to hold the cloned value.
            unsafe {
                let clone = mlirOperationClone(definition);
                mlirBlockInsertOwnedOperationBefore(body, first, clone);
                mlirOperationSetOperand(op, position as isize, result_of(clone, 0));
            }
        }
    }
}
