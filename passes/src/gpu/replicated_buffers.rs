//! Replicated buffers of grid-to-gpu: a program's small buffer that only
//! code outside block work writes (a reduction's result: its init and the
//! serial fold of the last few partials) is computed by every work-item
//! into its own private copy, instead of by item 0 into LDS that every item
//! then reads.
//!
//! Item 0's writes need a barrier before the others may read them (and one
//! before, so that item 0 sees the work it folds); every item folding the
//! partials itself, as Triton's reductions do, needs neither: what they
//! read was published by the barrier after the block work that wrote it,
//! and what they write no other item reads. The one-row softmax's max and
//! sum each lose two barriers.
//!
//! A buffer qualifies when it is small (`MAX_REPLICATED_BYTES`), used only
//! by scalar loads and stores and broadcast vector reads, and every store
//! to it lies in code that grid-to-gpu would run on item 0 and that writes
//! no other memory than replicated buffers: the store's outermost ancestor
//! without block work (what `work_items::distribute` treats as one op),
//! reached through loops and conditionals without results, under only
//! loops and conditionals. Every item then runs that code as it runs
//! per-item code, with the same values, so each private copy holds what
//! item 0's LDS copy held.

use crate::gpu::{
    private_buffers::{PRIVATE_SPACE, generic_view, plain_element},
    work_items::is_read_only,
};
use crate::support::handles::{context_of, dim_size, operation_ref, parent_of, rank_of, raw_op, result_of, value_type};
use crate::support::ir::{any_nested, collect_operations, erase, join, print_type, users};
use crate::support::template;
use melior::ir::operation::{OperationLike, WalkOrder, WalkResult};
use mlir_sys::*;
use std::collections::HashSet;

/// At most this many bytes per buffer: the results of a few rows' reductions.
const MAX_REPLICATED_BYTES: i64 = 32;

/// The shape, element type and bytes of a buffer that may be replicated by
/// its uses (before the stores are checked), if it may.
fn shape_of(alloc: MlirOperation) -> Option<(Vec<i64>, MlirType, i64)> {
    let element = plain_element(alloc)?;
    let buffer = result_of(alloc, 0);
    let memref = value_type(buffer);
    let shape = (0..rank_of(memref) as usize).map(|d| dim_size(memref, d)).collect();
    let bytes = crate::support::ir::static_bytes(memref)?;
    let plain = bytes <= MAX_REPLICATED_BYTES && users(buffer).into_iter().all(|user| is_plain_access(user, buffer));
    plain.then_some((shape, element, bytes))
}

/// A scalar load or store of `buffer`, or a read of one element of it
/// broadcast to a vector.
fn is_plain_access(user: MlirOperation, buffer: MlirValue) -> bool {
    let raw = raw_op(user);
    let operands = raw.operands();
    match raw.name().as_str() {
        "memref.load" => operands[0].ptr == buffer.ptr,
        "memref.store" => operands[1].ptr == buffer.ptr && operands[0].ptr != buffer.ptr,
        "vector.transfer_read" => operands[0].ptr == buffer.ptr && is_broadcast(user),
        _ => false,
    }
}

/// Does the `vector.transfer_read` `read` broadcast one element (every
/// result of its permutation map the constant 0)?
fn is_broadcast(read: MlirOperation) -> bool {
    let map = raw_op(read).attribute("permutation_map");
    // SAFETY: the op's attribute lives in the context; the map and its
    // results are read only when the attribute is there, as an affine map.
    unsafe {
        if map.ptr.is_null() || !mlirAttributeIsAAffineMap(map) {
            return false;
        }
        let map = mlirAffineMapAttrGetValue(map);
        (0..mlirAffineMapGetNumResults(map)).all(|k| {
            let result = mlirAffineMapGetResult(map, k);
            mlirAffineExprIsAConstant(result) && mlirAffineConstantExprGetValue(result) == 0
        })
    }
}

/// The buffers of `nest` (among `candidates`, allocations that passed
/// `shape_of`) whose every store may run on every work-item.
pub(super) fn replicable(nest: MlirOperation, candidates: &[MlirOperation]) -> Vec<MlirOperation> {
    let mut kept: HashSet<usize> = candidates.iter().map(|alloc| alloc.ptr as usize).collect();
    // Code storing to one buffer may store to another: drop buffers until
    // every store of every kept one runs in code writing kept ones only.
    loop {
        let before = kept.len();
        let snapshot = kept.clone();
        kept.retain(|&alloc| {
            let buffer = result_of(MlirOperation { ptr: alloc as *mut _ }, 0);
            users(buffer)
                .into_iter()
                .filter(|&user| raw_op(user).name() == "memref.store")
                .all(|store| runs_replicated(store, nest, &snapshot))
        });
        if kept.len() == before {
            break;
        }
    }
    candidates.iter().copied().filter(|alloc| kept.contains(&(alloc.ptr as usize))).collect()
}

fn holds_block_work(op: MlirOperation) -> bool {
    any_nested(op, |nested| raw_op(nested).name() == "scf.parallel")
}

fn is_control_flow_without_results(op: MlirOperation) -> bool {
    let raw = raw_op(op);
    matches!(raw.name().as_str(), "scf.for" | "scf.if") && raw.results().is_empty()
}

/// May `store` run on every item: outside block work, in code that
/// grid-to-gpu shares out as one op writing only buffers of `kept`?
fn runs_replicated(store: MlirOperation, nest: MlirOperation, kept: &HashSet<usize>) -> bool {
    // The outermost ancestor without block work below the nest.
    let mut unit = store;
    loop {
        let parent = parent_of(unit);
        if parent.ptr.is_null() || parent.ptr == nest.ptr || holds_block_work(parent) {
            break;
        }
        if !is_control_flow_without_results(parent) {
            return false;
        }
        unit = parent;
    }
    // Above it, only loops and conditionals up to the nest.
    let mut above = parent_of(unit);
    while !above.ptr.is_null() && above.ptr != nest.ptr {
        if !matches!(raw_op(above).name().as_str(), "scf.for" | "scf.if") {
            return false;
        }
        above = parent_of(above);
    }
    !above.ptr.is_null() && writes_only(unit, kept)
}

/// Does everything `unit` writes go to buffers of `kept`, with nothing
/// per item (a work-item's id) in it?
pub(super) fn writes_only(unit: MlirOperation, kept: &HashSet<usize>) -> bool {
    let mut only = true;
    operation_ref(unit).walk(WalkOrder::PreOrder, |nested| {
        let raw = raw_op(nested.to_raw());
        let name = raw.name();
        let allowed = match name.as_str() {
            "memref.store" => crate::support::ir::defining_op(raw.operands()[1])
                .is_some_and(|alloc| kept.contains(&(alloc.ptr as usize))),
            // A work-item's id or lane (per-item values), a barrier:
            // not code every item runs alike. Program ids are uniform.
            name if name.starts_with("gpu.") => name == "gpu.block_id",
            "vector.transfer_read" | "vector.broadcast" => true,
            _ => is_read_only(&name) || matches!(name.as_str(), "scf.yield" | "scf.reduce"),
        };
        only &= allowed;
        if only { WalkResult::Advance } else { WalkResult::Interrupt }
    });
    only
}

/// The private type of a replicated buffer of `elements` elements.
pub(super) fn private_type(elements: i64, element: MlirType) -> String {
    format!("memref<{elements}x{}, {PRIVATE_SPACE}>", print_type(element))
}

/// Every access of `alloc` (of `shape`, elements `element`) goes to the
/// item's private copy `private` (one dimension, the buffer's elements in
/// row-major order), through the generic address space as the other
/// private buffers'; the allocation goes.
pub(super) fn rewrite(
    alloc: MlirOperation,
    shape: &[i64],
    element: MlirType,
    private: MlirValue,
) -> Result<(), String> {
    let (generic, generic_type) = generic_view(private)?;
    let rank = shape.len();
    let element = print_type(element);
    let parameters: String = (0..rank).map(|d| format!(", %i{d}: index")).collect();
    // The element's position in the private copy.
    let (position, at) = if rank == 0 {
        ("%l = arith.constant 0 : index\n".to_string(), "%l")
    } else if rank == 1 {
        (String::new(), "%i0")
    } else {
        let names = join((0..rank).map(|d| format!("%i{d}")));
        (format!("%l = affine.linearize_index [{names}] by ({}) : index\n", join(shape)), "%l")
    };
    for access in users(result_of(alloc, 0)) {
        let raw = raw_op(access);
        let operands = raw.operands();
        let name = raw.name();
        let (stored, indices) =
            if name == "memref.store" { (Some(operands[0]), &operands[2..]) } else { (None, &operands[1..]) };
        let mut arguments: Vec<MlirValue> = stored.into_iter().collect();
        arguments.push(generic);
        arguments.extend_from_slice(&indices[..rank]);
        let head =
            |results: &str| format!("func.func @template(%m: {generic_type}{parameters}){results} {{\n{position}");
        let text = match name.as_str() {
            "memref.store" => format!(
                "func.func @template(%v: {element}, %m: {generic_type}{parameters}) {{\n{position}\
                 memref.store %v, %m[{at}] : {generic_type}\nreturn\n}}"
            ),
            "memref.load" => format!(
                "{}%v = memref.load %m[{at}] : {generic_type}\nreturn %v : {element}\n}}",
                head(&format!(" -> {element}"))
            ),
            _ => {
                // A broadcast read (shape_of's check).
                let vector = print_type(value_type(result_of(access, 0)));
                format!(
                    "{}%v = memref.load %m[{at}] : {generic_type}\n%b = vector.broadcast %v : {element} to {vector}\n\
                     return %b : {vector}\n}}",
                    head(&format!(" -> {vector}"))
                )
            }
        };
        template::replace(context_of(access), access, &text, &arguments).map_err(|error| error.0)?;
    }
    erase(alloc);
    Ok(())
}

/// The allocations of `nest` that may be replicated, with their shapes,
/// element types and bytes.
pub(super) fn plan(nest: MlirOperation) -> Vec<(MlirOperation, Vec<i64>, MlirType, i64)> {
    let nest_ref = operation_ref(nest);
    let shaped: Vec<(MlirOperation, Vec<i64>, MlirType, i64)> =
        collect_operations(nest_ref, |name| name == "memref.alloc" || name == "memref.alloca")
            .into_iter()
            .filter_map(|(alloc, _)| shape_of(alloc).map(|(shape, element, bytes)| (alloc, shape, element, bytes)))
            .collect();
    let allocs: Vec<MlirOperation> = shaped.iter().map(|(alloc, ..)| *alloc).collect();
    let kept: HashSet<usize> = replicable(nest, &allocs).into_iter().map(|alloc| alloc.ptr as usize).collect();
    shaped.into_iter().filter(|(alloc, ..)| kept.contains(&(alloc.ptr as usize))).collect()
}
