//! `tessel-emulate-gpu`: runs `gpu.launch` kernels on the CPU, faithfully
//! to the GPU's execution model, so the ROCm pipeline's kernels can be
//! tested on machines without a GPU (`tessel run --device rocm-emulated`).
//!
//! - Workgroups run as the iterations of an `scf.forall` (in parallel, on
//!   the CPU's cores, like the workgroups of a GPU: independent).
//! - Workgroup memory (LDS attributions) is a buffer per workgroup;
//!   private memory (private attributions) one too, with a row per
//!   work-item that its accesses index by the item's id.
//! - Work-items run between barriers: the kernel is split at each
//!   `gpu.barrier` into phases, and each phase's work-item-dependent ops
//!   run in a loop over all work-items before the next phase starts, which
//!   is exactly what a barrier guarantees. Barriers may sit in control flow
//!   that is uniform across the workgroup (not depending on the item id).
//!   Per-item values kept across a barrier (registers: matrix
//!   accumulators, loaded values) live in memory between phases, a slot
//!   per work-item (`privatize`).
//! - `gpu.alloc`/`gpu.dealloc` (global scratch) are host allocations.
//! - `amdgpu.sched_barrier` (a fence for LLVM's instruction scheduler)
//!   means nothing to the CPU: it goes.

use crate::support::handles::{context_of, location_of, next_of, operation_ref, raw_op, result_of, value_type};
use crate::{
    PassDefinition, PassError,
    emulate::privatize::{Workgroup, privatize},
    gpu::per_item::is_pure_arithmetic,
    support::ir::{
        any_nested, block_arguments, block_operations, collect_operations, constant_integer, erase, find_named,
        inline_template, is_inside, move_before, print_type, region_blocks, replace_uses_within, users, uses,
    },
    support::template,
};
use melior::ir::{OperationRef, operation::OperationLike};
use mlir_sys::*;
use std::collections::HashSet;

pub static PASS: PassDefinition = PassDefinition {
    argument: "tessel-emulate-gpu",
    name: "TesselEmulateGpu",
    description: "Run gpu.launch kernels on the CPU: workgroups as parallel loops, work-items split at barriers",
    anchor: "builtin.module",
    run,
};

fn run(module: OperationRef<'static, '_>) -> Result<(), PassError> {
    let fail = |op: MlirOperation, message: String| Err(PassError::at(location_of(op), message));
    for (fence, _) in collect_operations(module, |name| name == "amdgpu.sched_barrier") {
        erase(fence);
    }
    for (launch, _) in collect_operations(module, |name| name == "gpu.launch") {
        if let Err(message) = emulate_launch(launch) {
            return fail(launch, message);
        }
    }
    let memory = |name: &str| name == "gpu.alloc" || name == "gpu.dealloc";
    for (op, name) in collect_operations(module, memory) {
        if let Err(message) = host_memory(op, &name) {
            return fail(op, message);
        }
    }
    Ok(())
}

/// `gpu.alloc`/`gpu.dealloc` (synchronous, no host-shared flag) as memref ones.
fn host_memory(op: MlirOperation, name: &str) -> Result<(), String> {
    let raw = raw_op(op);
    let context = context_of(op);
    if name == "gpu.alloc" {
        if !raw.operands().is_empty() || raw.results().len() != 1 {
            return Err("only synchronous, statically shaped gpu.alloc is emulated".into());
        }
        let memref = print_type(value_type(raw.results()[0]));
        let text = format!(
            "func.func @template() -> {memref} {{\n%m = memref.alloc() {{alignment = 64 : i64}} : {memref}\n\
             return %m : {memref}\n}}"
        );
        template::replace(context, op, &text, &[]).map_err(|error| error.0)
    } else {
        let [memref] = raw.operands()[..] else { return Err("only synchronous gpu.dealloc is emulated".into()) };
        let memref_type = print_type(value_type(memref));
        let text = format!("func.func @template(%m: {memref_type}) {{\nmemref.dealloc %m : {memref_type}\nreturn\n}}");
        template::replace(context, op, &text, &[memref]).map_err(|error| error.0)
    }
}

fn emulate_launch(launch: MlirOperation) -> Result<(), String> {
    let raw = raw_op(launch);
    let segments = raw.segments();
    // asyncDependencies, grid x y z, block x y z, cluster..., dynamic memory.
    if segments.first() != Some(&0) || segments.iter().skip(7).any(|&count| count != 0) || !raw.results().is_empty() {
        return Err("only synchronous launches without clusters or dynamic memory are emulated".into());
    }
    let operands = raw.operands();
    let (grid, items) = (&operands[0..3], &operands[3..6]);
    let body = raw.region_block(0);
    let arguments = block_arguments(body);
    let workgroup_attributions = raw.integer("workgroup_attributions") as usize;
    let (shared, private) = arguments[12..].split_at(workgroup_attributions);
    // Private memory: a buffer per workgroup with a row per work-item.
    let item_count = constant_integer(items[0]);
    if !private.is_empty()
        && (item_count.is_none() || items[1..].iter().any(|&count| constant_integer(count) != Some(1)))
    {
        return Err("private memory is emulated for one-dimensional workgroups of constant size only".into());
    }

    // The workgroups, each with its own workgroup memory.
    let mut text = String::from(
        "func.func @template(%gx: index, %gy: index, %gz: index) {\n\
         scf.forall (%bx, %by, %bz) in (%gx, %gy, %gz) {\n",
    );
    let mut local_types = Vec::new();
    for (index, &attribution) in shared.iter().enumerate() {
        let memref = print_type(value_type(attribution));
        let local = memref.replace(", #gpu.address_space<workgroup>", "");
        text.push_str(&format!("%shared{index} = memref.alloc() {{alignment = 64 : i64}} : {local}\n"));
        local_types.push(local);
    }
    for (index, &attribution) in private.iter().enumerate() {
        let memref = print_type(value_type(attribution));
        let rows = memref.replacen("memref<", &format!("memref<{}x", item_count.unwrap_or(0)), 1);
        let local = rows.replace(", #gpu.address_space<private>", "");
        text.push_str(&format!("%private{index} = memref.alloc() {{alignment = 64 : i64}} : {local}\n"));
        local_types.push(local);
    }
    text.push_str("gpu.barrier\n");
    for (index, local) in local_types.iter().enumerate() {
        let name =
            if index < shared.len() { format!("shared{index}") } else { format!("private{}", index - shared.len()) };
        text.push_str(&format!("memref.dealloc %{name} : {local}\n"));
    }
    text.push_str("}\nreturn\n}");
    let (_, added) = inline_template(launch, &text, grid)?;
    let forall = find_named(&added, "scf.forall").expect("the template has an scf.forall");
    let forall_body = raw_op(forall).region_block(0);
    let workgroup_ids = block_arguments(forall_body);
    let forall_ops = block_operations(forall_body);
    let placeholder = forall_ops[local_types.len()];
    let locals: Vec<MlirValue> = forall_ops[..local_types.len()].iter().map(|&op| result_of(op, 0)).collect();
    let (shared_locals, private_locals) = locals.split_at(shared.len());

    // The kernel body moves in; ids and sizes become values of the loops.
    let mut kernel = block_operations(body);
    kernel.pop(); // gpu.terminator
    move_before(&kernel, placeholder);
    for d in 0..3 {
        // SAFETY: the kernel's block arguments and the values replacing them are live values of the function being rewritten; replacing their uses only rewires operands.
        unsafe {
            mlirValueReplaceAllUsesOfWith(arguments[d], workgroup_ids[d]);
            mlirValueReplaceAllUsesOfWith(arguments[6 + d], grid[d]);
            mlirValueReplaceAllUsesOfWith(arguments[9 + d], items[d]);
        }
    }
    for (&attribution, &local) in shared.iter().zip(shared_locals) {
        retarget_shared(attribution, local)?;
    }
    for (&attribution, &local) in private.iter().zip(private_locals) {
        retarget_private(attribution, local, arguments[3])?;
    }
    erase(placeholder);
    let item_ids = [arguments[3], arguments[4], arguments[5]];
    let end = *block_operations(forall_body).last().expect("the forall's terminator");
    let workgroup = Workgroup { body: forall_body, end, ids: item_ids, counts: [items[0], items[1], items[2]] };
    privatize(forall, &workgroup)?;
    rematerialize_per_item(forall, &item_ids);
    split_at_barriers(forall_body, &item_ids, items)?;
    if let Some(stray) = any_use_left(&item_ids) {
        return Err(format!("'{stray}' uses a work-item id across a barrier"));
    }
    erase(launch);
    Ok(())
}

/// Uses of LDS are `memref.view`s of the attribution, cast to the generic
/// address space (how grid-to-gpu writes them): views of the local buffer.
fn retarget_shared(attribution: MlirValue, local: MlirValue) -> Result<(), String> {
    let local_type = print_type(value_type(local));
    for view in users(attribution) {
        let raw = raw_op(view);
        let casts = users(raw.results()[0]);
        let all_casts = casts.iter().all(|&cast| raw_op(cast).name() == "memref.memory_space_cast");
        if raw.name() != "memref.view" || !all_casts {
            return Err(format!("workgroup memory used by '{}', not by a view cast to generic memory", raw.name()));
        }
        for cast in casts {
            let generic = print_type(value_type(result_of(cast, 0)));
            let operands = raw.operands();
            let text = format!(
                "func.func @template(%local: {local_type}, %offset: index) -> {generic} {{\n\
                 %view = memref.view %local[%offset][] : {local_type} to {generic}\nreturn %view : {generic}\n}}"
            );
            let context = context_of(cast);
            template::replace(context, cast, &text, &[local, operands[1]]).map_err(|error| error.0)?;
        }
        erase(view);
    }
    Ok(())
}

/// Accesses of private memory (loads and stores, scalar or vector, of its
/// cast to generic memory, as grid-to-gpu writes them) go to the item's
/// row of the local buffer.
fn retarget_private(attribution: MlirValue, local: MlirValue, item: MlirValue) -> Result<(), String> {
    let local_type = print_type(value_type(local));
    // Through casts to the generic address space.
    let mut accesses = Vec::new();
    for user in users(attribution) {
        if raw_op(user).name() == "memref.memory_space_cast" {
            accesses.extend(users(result_of(user, 0)));
        } else {
            accesses.push(user);
        }
    }
    for access in accesses {
        let raw = raw_op(access);
        let name = raw.name();
        let operands = raw.operands();
        let (stored, index) = match name.as_str() {
            "memref.load" | "vector.load" => (None, operands[1]),
            "memref.store" | "vector.store" => (Some(operands[0]), operands[2]),
            _ => return Err(format!("private memory used by '{name}', not by a load or store")),
        };
        let value_type_text = print_type(value_type(stored.unwrap_or_else(|| raw.results()[0])));
        let text = template::load_or_store(&local_type, 2, &value_type_text, stored.is_some());
        // Stores take the value first.
        let mut values: Vec<MlirValue> = stored.into_iter().collect();
        values.extend([local, item, index]);
        template::replace(context_of(access), access, &text, &values).map_err(|error| error.0)?;
    }
    for cast in users(attribution) {
        erase(cast);
    }
    Ok(())
}

/// Pure computations on work-item ids (CSE may share one between phases)
/// are recomputed right before each of their users, in the user's phase.
fn rematerialize_per_item(root: MlirOperation, item_ids: &[MlirValue; 3]) {
    let mut per_item: HashSet<usize> = item_ids.iter().map(|value| value.ptr as usize).collect();
    let mut computations = Vec::new();
    operation_ref(root).walk(melior::ir::operation::WalkOrder::PreOrder, |nested| {
        let raw = raw_op(nested.to_raw());
        if is_pure_arithmetic(&raw.name())
            && raw.operands().iter().any(|value| per_item.contains(&(value.ptr as usize)))
        {
            per_item.extend(raw.results().iter().map(|value| value.ptr as usize));
            computations.push(nested.to_raw());
        }
        melior::ir::operation::WalkResult::Advance
    });
    for &op in computations.iter().rev() {
        for (index, value) in raw_op(op).results().into_iter().enumerate() {
            for (user, operand) in uses(value) {
                // SAFETY: `op` is live; its clone is owned by no block until inserted before `user`, a live op; `operand` is the position `uses` found the value at in `user`, and `index` one of `op`'s results.
                unsafe {
                    let clone = mlirOperationClone(op);
                    mlirBlockInsertOwnedOperationBefore(mlirOperationGetBlock(user), user, clone);
                    mlirOperationSetOperand(user, operand as isize, mlirOperationGetResult(clone, index as isize));
                }
            }
        }
        erase(op);
    }
}

/// Splits `block` into phases at barriers; in each phase the ops that
/// depend on the work-item id run in a loop over all work-items.
fn split_at_barriers(block: MlirBlock, item_ids: &[MlirValue; 3], items: &[MlirValue]) -> Result<(), String> {
    let mut per_item: HashSet<usize> = item_ids.iter().map(|value| value.ptr as usize).collect();
    let mut phase = Vec::new();
    for op in block_operations(block) {
        let raw = raw_op(op);
        let name = raw.name();
        if name == "gpu.barrier" {
            run_items(&mut phase, item_ids, items)?;
            erase(op);
        } else if any_nested(op, |nested| raw_op(nested).name() == "gpu.barrier") {
            // Its own operands (bounds, condition) must be uniform; what it
            // nests is split in turn.
            if raw.operands().iter().any(|value| per_item.contains(&(value.ptr as usize))) {
                return Err(format!("a barrier inside '{name}' that depends on the work-item id"));
            }
            run_items(&mut phase, item_ids, items)?;
            for nested in region_blocks(op) {
                split_at_barriers(nested, item_ids, items)?;
            }
        } else if depends_on(op, &per_item) {
            per_item.extend(raw.results().iter().map(|value| value.ptr as usize));
            phase.push(op);
        }
    }
    run_items(&mut phase, item_ids, items)
}

/// Does `op` (or an op nested in it) use a value in `per_item`?
fn depends_on(op: MlirOperation, per_item: &HashSet<usize>) -> bool {
    any_nested(op, |nested| raw_op(nested).operands().iter().any(|value| per_item.contains(&(value.ptr as usize))))
}

/// Wraps a phase's per-item ops in loops over the work-items, placed after
/// the last of them (what they use is defined by then).
fn run_items(phase: &mut Vec<MlirOperation>, item_ids: &[MlirValue; 3], items: &[MlirValue]) -> Result<(), String> {
    let Some(&last) = phase.last() else { return Ok(()) };
    let text = "func.func @template(%nx: index, %ny: index, %nz: index) {\n\
                %c0 = arith.constant 0 : index\n%c1 = arith.constant 1 : index\n\
                scf.for %z = %c0 to %nz step %c1 {\nscf.for %y = %c0 to %ny step %c1 {\n\
                scf.for %x = %c0 to %nx step %c1 {\ngpu.barrier\n}\n}\n}\nreturn\n}";
    let next = next_of(last);
    let (_, added) = inline_template(next, text, items)?;
    let outer = find_named(&added, "scf.for").expect("the template has loops");
    let mut loops = vec![outer];
    for _ in 0..2 {
        let body = raw_op(*loops.last().unwrap()).region_block(0);
        loops.push(find_named(&block_operations(body), "scf.for").expect("nested loops"));
    }
    let innermost = raw_op(loops[2]).region_block(0);
    let placeholder = block_operations(innermost)[0];
    move_before(phase, placeholder);
    erase(placeholder);
    // Loop ivs: z, y, x (outermost first); the ids are x, y, z.
    let ivs: Vec<MlirValue> = loops.iter().map(|&l| block_arguments(raw_op(l).region_block(0))[0]).collect();
    for &op in phase.iter() {
        for (d, &id) in item_ids.iter().enumerate() {
            replace_uses_within(op, id, ivs[2 - d]);
        }
    }
    // A value of one item must not be used outside its phase.
    for &op in phase.iter() {
        for value in raw_op(op).results() {
            for user in users(value) {
                if !is_inside(user, loops[0]) {
                    return Err(format!(
                        "a value of '{}' computed per work-item and used after a barrier is not emulated yet",
                        raw_op(op).name()
                    ));
                }
            }
        }
    }
    phase.clear();
    Ok(())
}

/// An op still using a work-item id (outside every per-item loop).
fn any_use_left(item_ids: &[MlirValue; 3]) -> Option<String> {
    item_ids.iter().flat_map(|&id| users(id)).next().map(|op| raw_op(op).name())
}
