//! `block-to-linalg`: block ops to linalg, tensor, memref and bufferization
//! ops, ready for one-shot bufferization.
//!
//! - `block.load` copies the ref (or a `memref.subview` window of it) into a
//!   fresh buffer viewed as a tensor: later stores to the ref cannot change
//!   a loaded value. Loads grid-to-loops marked `tessel.read_only` (refs
//!   nothing writes during the call) read the ref in place, and those marked
//!   `tessel.in_place` (an accumulator stored back once) are updated where
//!   they live (see in_place.rs). A mask selects
//!   `other` where it is false.
//! - A gather or scatter (`block.load .. gather`, `block.store .. scatter`)
//!   is a `linalg.generic` over the block reading (writing) the ref at the
//!   index tensor's positions, clamped into the ref (dropped outside it).
//! - `block.store` of a whole-ref `block.load` right before it (JAX's
//!   `o_ref[...] = acc_ref[...]`) is a `memref.copy` of the one ref into
//!   the other: nothing runs between the snapshot and its store.
//! - `block.store` materializes the value in the ref (or window); a mask
//!   first merges the value with the ref's current contents; a splat
//!   constant is a `linalg.fill`.
//! - A masked load or store of a window (`pl.ds`: a dynamic offset, so the
//!   window may reach past the ref, the mask guarding the rest) is
//!   predicated: a `linalg.generic` over the window whose body reads
//!   (writes) an element only where the mask holds (`scf.if`), so nothing
//!   out of bounds is touched and masked-off elements are left alone — on
//!   GPUs each work-item's access is predicated.
//! - `block.dot` is a `linalg.generic` contraction marked
//!   `tessel.contraction` (loops i, j, k), accumulating into zeros or `acc`,
//!   operands widened to the result type first.
//! - `block.reduce` is `linalg.reduce` from the combiner's identity.
//! - `block.broadcast` and `block.iota` are `linalg.generic`s; a
//!   `tensor.splat` is a `linalg.fill`, which element-wise fusion folds into
//!   its consumers.
//! - `block.atomic_rmw` / `block.atomic_cas` are loops of `memref.atomic_rmw` /
//!   `block.atomic_cas_element`, masked by `scf.if`, old values collected.

use super::{dma_on_wait, predicated, prints, semaphores};
use crate::support::handles::{context_of, location_of, next_of, rank_of, raw_op, value_type};
use crate::support::ir::defining_op;
use crate::support::template::{emit, emit_line};
use crate::support::uninitialized::Fill;
use crate::{
    PassDefinition, PassError,
    grid::in_place,
    support::ir::{
        ShapedKind, collect_operations, constant_integer, constant_value, erase, identity_map, join, map_dims,
        parallel_iterators, print_type, shaped_type_text, strides_and_offset, uses,
    },
    support::template,
};
use melior::ir::OperationRef;
use mlir_sys::*;

pub static PASS: PassDefinition = PassDefinition {
    argument: "block-to-linalg",
    name: "BlockToLinalg",
    description: "Lower block ops to linalg, tensor, memref and bufferization ops",
    anchor: "builtin.module",
    run,
};

/// The marker on a contraction's `linalg.generic` (block.dot), by which
/// the tiling, widening, matrix-core and staging passes recognise it.
pub const CONTRACTION: &str = "tessel.contraction";

/// The operand types (A, B, accumulator) of `op` when it is a contraction
/// block-to-linalg wrote (marked, two inputs, one init, one result).
pub fn contraction_operand_types(op: mlir_sys::MlirOperation) -> Option<Vec<mlir_sys::MlirType>> {
    let op = crate::support::handles::raw_op(op);
    if !op.has(CONTRACTION) || op.operands().len() != 3 || op.results().len() != 1 {
        return None;
    }
    Some(op.operands().iter().map(|&value| crate::support::handles::value_type(value)).collect())
}

/// Whether the block op's operand segments after the first `leading` are
/// all empty: no offsets, mask, padding or indices.
fn plain(op: &Op, leading: usize) -> bool {
    op.segments().iter().skip(leading).all(|&size| size == 0)
}

/// Replaces each `block.store (block.load r), s` of whole refs, the load
/// right before the store and used only there, by `memref.copy r, s`.
fn copies_between_refs(module: OperationRef<'static, '_>) -> Result<(), PassError> {
    for (store, _) in collect_operations(module, |name| name == "block.store") {
        let op = raw_op(store);
        let value = op.operands()[0];
        let Some(load) = defining_op(value) else { continue };
        let loaded = raw_op(load);
        if loaded.name() != "block.load"
            || !plain(&loaded, 1)
            || !plain(&op, 2)
            || next_of(load).ptr != store.ptr
            || uses(value).len() != 1
        {
            continue;
        }
        let (source, target) = (loaded.operands()[0], op.operands()[1]);
        let text = format!(
            "func.func @template(%source: {s}, %target: {t}) {{\n\
             memref.copy %source, %target : {s} to {t}\nreturn\n}}",
            s = print_type(value_type(source)),
            t = print_type(value_type(target))
        );
        template::replace(context_of(store), store, &text, &[source, target])
            .map_err(|error| PassError::at(location_of(store), error.0))?;
        erase(load);
    }
    Ok(())
}

fn run(module: OperationRef<'static, '_>) -> Result<(), PassError> {
    copies_between_refs(module)?;
    let poison = Fill::of(raw_op(module.to_raw()));
    // The semaphore waits' sites, for the fault their failure records.
    let mut waits = raw_op(module.to_raw()).strings(tessel_dialects::SEMAPHORE_WAITS);
    let mut concurrent_waits = false;
    // DMAs that copy on waits (`--dma-mode on_wait`), and their element
    // types, whose start functions the module declares.
    let on_wait = knobs::DMA_MODE.integer_or(raw_op(module.to_raw()), 0) == 1;
    let mut dma_elements = std::collections::BTreeSet::new();
    let listed = waits.len();
    // A GPU's workgroups have no worker semaphores yet (the chip knob
    // marks the ROCm pipelines).
    let for_gpu = raw_op(module.to_raw()).has(knobs::CHIP.attribute);
    // The print sites' formats, for whoever formats the printed values.
    let mut formats = raw_op(module.to_raw()).strings(tessel_dialects::PRINT_FORMATS);
    let mut value_types = raw_op(module.to_raw()).strings(tessel_dialects::PRINT_TYPES);
    let printed = formats.len();
    template::rewrite_each(
        module,
        |name| name.starts_with("block.") || name == "tensor.splat",
        |operation, name| {
            let op = raw_op(operation);
            if name == "tensor.splat" {
                return Ok(splat(&op));
            }
            if for_gpu && semaphores::is_semaphore_op(name) {
                return Err(format!("{name}: semaphores and DMAs run on the CPU only, not on AMD GPUs yet"));
            }
            if for_gpu && name == "block.print" {
                return Err("block.print: printing from kernels runs on the CPU only, not on AMD GPUs yet".into());
            }
            match name {
                "block.load" => load(&op, poison),
                "block.store" => store(&op),
                "block.dot" => dot(&op),
                "block.reduce" => reduce(&op),
                "block.broadcast" => broadcast(&op),
                "block.iota" => iota(&op),
                "block.atomic_rmw" => atomic_rmw(&op),
                "block.atomic_cas" => atomic_cas(&op),
                "block.semaphore_signal" => semaphores::signal(&op),
                "block.semaphore_read" => semaphores::read(&op),
                "block.semaphore_wait" => {
                    waits.push(semaphores::wait_site(&op));
                    if on_wait {
                        dma_on_wait::wait(&op, waits.len())
                    } else {
                        concurrent_waits |= op.has("concurrent");
                        semaphores::wait(&op, waits.len())
                    }
                }
                "block.dma_start" if on_wait => dma_on_wait::dma_start(&op, &mut dma_elements),
                "block.dma_start" => semaphores::dma_start(&op),
                "block.print" => {
                    let format = op.string("format").unwrap_or_default();
                    let site = if op.has(tessel_dialects::PRINT_SITE) {
                        op.integer(tessel_dialects::PRINT_SITE).max(0) as usize
                    } else {
                        formats.len()
                    };
                    if formats.len() <= site {
                        formats.resize(site + 1, String::new());
                    }
                    value_types.resize(formats.len(), String::new());
                    formats[site] = format;
                    value_types[site] = prints::value_types(&op);
                    prints::print(&op, site)
                }
                other => Err(format!("no lowering for {other}")),
            }
            .map(Some)
        },
    )?;
    if waits.len() > listed {
        record_waits(module, &waits, concurrent_waits)?;
    }
    if on_wait && (waits.len() > listed || !dma_elements.is_empty()) {
        for (name, declaration) in dma_on_wait::declarations(&dma_elements) {
            template::define_symbol(context_of(module.to_raw()), module.to_raw(), &name, &declaration)
                .map_err(|message| PassError::at(location_of(module.to_raw()), message))?;
        }
    }
    if formats.len() > printed {
        record_prints(module, &formats, &value_types)?;
    }
    Ok(())
}

/// Declares the print functions and lists the print sites' formats and
/// value types on `module` (`PRINT_FORMATS`, `PRINT_TYPES`).
fn record_prints(module: OperationRef<'static, '_>, formats: &[String], types: &[String]) -> Result<(), PassError> {
    let context = context_of(module.to_raw());
    for (name, declaration) in tessel_dialects::PRINT_FUNCTIONS.into_iter().zip(prints::declarations()) {
        template::define_symbol(context, module.to_raw(), name, &declaration)
            .map_err(|message| PassError::at(location_of(module.to_raw()), message))?;
    }
    raw_op(module.to_raw()).set_strings(tessel_dialects::PRINT_FORMATS, formats);
    raw_op(module.to_raw()).set_strings(tessel_dialects::PRINT_TYPES, types);
    Ok(())
}

/// Lists the semaphore waits' sites on `module` (`SEMAPHORE_WAITS`).
fn record_waits(module: OperationRef<'static, '_>, waits: &[String], concurrent: bool) -> Result<(), PassError> {
    let context = context_of(module.to_raw());
    template::define_symbol(context, module.to_raw(), tessel_dialects::WAIT_FAULT, &semaphores::wait_fault_global())
        .map_err(|message| PassError::at(location_of(module.to_raw()), message))?;
    // The concurrent waits' functions, which the JIT provides.
    for (name, declaration) in
        tessel_dialects::WAIT_FUNCTIONS.into_iter().zip(semaphores::wait_declarations()).filter(|_| concurrent)
    {
        template::define_symbol(context, module.to_raw(), name, &declaration)
            .map_err(|message| PassError::at(location_of(module.to_raw()), message))?;
    }
    raw_op(module.to_raw()).set_strings(tessel_dialects::SEMAPHORE_WAITS, waits);
    Ok(())
}

pub(super) use tessel_dialects::RawOp as Op;
use tessel_dialects::{AtomicKind, Identity, ReduceKind, knobs};

/// A shaped type, printed and taken apart.
pub(super) struct Shaped {
    pub(super) text: String,
    pub(super) shape: Vec<i64>,
    pub(super) element: String,
    pub(super) raw: MlirType,
}

fn shaped(raw: MlirType) -> Shaped {
    Shaped {
        text: print_type(raw),
        shape: (0..rank_of(raw) as usize).map(|d| crate::support::handles::dim_size(raw, d)).collect(),
        element: print_type(crate::support::handles::shaped_element(raw)),
        raw,
    }
}

/// The shaped type of operand `i` / of the (first) result.
pub(super) fn operand_type(op: &Op, i: usize) -> Shaped {
    shaped(value_type(op.operands()[i]))
}

pub(super) fn result_type(op: &Op) -> Shaped {
    shaped(value_type(op.results()[0]))
}

fn is_float(element: &str) -> bool {
    element.starts_with('f') || element == "bf16"
}

pub(super) fn tensor_text(shape: &[i64], element: &str) -> String {
    shaped_type_text(ShapedKind::Tensor, shape, element, None)
}

pub(super) fn buffer_text(shape: &[i64], element: &str) -> String {
    shaped_type_text(ShapedKind::Memref, shape, element, None)
}

/// Whether the window of `sizes` at the op's offsets (operands `first`..
/// `first + count`) lies inside a ref of `shape` for certain: constant
/// offsets, static sizes. Such a masked access cannot touch memory outside
/// the ref, so it needs no per-element predication: the whole window is
/// read and the mask selects (a vectorizable select instead of a branch per
/// element). Triton-style kernels mask power-of-two windows that often fit.
fn window_inside(op: &Op, first: usize, count: usize, sizes: &[i64], shape: &[i64]) -> bool {
    let operands = op.operands();
    (0..count).all(|d| match (constant_integer(operands[first + d]), sizes.get(d), shape.get(d)) {
        (Some(offset), Some(&size), Some(&dim)) => offset >= 0 && dim >= 0 && size >= 0 && offset + size <= dim,
        _ => false,
    })
}

/// `%view` = the window of `%ref` at `%o<d>` with `sizes`, or `%ref` itself.
fn window(out: &mut String, r#ref: &Shaped, sizes: Option<&[i64]>) -> (String, String) {
    let Some(sizes) = sizes else {
        return ("%ref".into(), r#ref.text.clone());
    };
    let rank = r#ref.shape.len();
    let strides = strides_and_offset(r#ref.raw).map_or(vec![0; rank], |(strides, _)| strides);
    let view = shaped_type_text(ShapedKind::Memref, sizes, &r#ref.element, Some(&strides));
    emit_line!(
        out,
        "%view = memref.subview %ref[{}] [{}] [{}] : {} to {view}",
        join((0..rank).map(|d| format!("%o{d}"))),
        join(sizes),
        join(sizes.iter().map(|_| 1)),
        r#ref.text
    );
    ("%view".into(), view)
}

pub(super) type Lowering = Result<template::Rewrite, String>;

/// Whether tessel-true-masks found the access's mask true everywhere: it
/// is a plain one.
fn mask_is_true(op: &Op) -> bool {
    op.has(crate::cpu::tessel_true_masks::MASK_TRUE)
}

fn load(op: &Op, poison: Fill) -> Lowering {
    let segments = op.segments();
    let (offsets, mut has_mask, mut has_other) = (segments[1], segments[2] == 1, segments[3] == 1);
    if segments.get(4) == Some(&1) {
        return predicated::indexed_access(op, poison);
    }
    let mut operands = op.operands();
    if has_mask && mask_is_true(op) {
        // (`other` is never read.)
        operands.truncate(1 + offsets);
        (has_mask, has_other) = (false, false);
    }
    if has_mask && offsets > 0 && !window_inside(op, 1, offsets, &op.integers("sizes"), &operand_type(op, 0).shape) {
        return predicated::predicated_load(op, poison);
    }
    let r#ref = operand_type(op, 0);
    let result = result_type(op);
    let mut params = vec![format!("%ref: {}", r#ref.text)];
    params.extend((0..offsets).map(|d| format!("%o{d}: index")));
    let mask_type = tensor_text(&result.shape, "i1");
    if has_mask {
        params.push(format!("%mask: {mask_type}"));
    }
    if has_other {
        params.push(format!("%other: {}", result.element));
    }
    let mut body = String::new();
    let sizes = (offsets > 0).then(|| op.integers("sizes"));
    let (source, source_type) = window(&mut body, &r#ref, sizes.as_deref());
    if op.has(in_place::READ_ONLY) {
        // Nothing writes the ref while the kernel runs: read it in place.
        emit_line!(body, "%t = bufferization.to_tensor {source} restrict : {source_type} to {}", result.text);
    } else if op.has(in_place::IN_PLACE) {
        // An accumulator stored back once: update the block where it lives.
        emit_line!(body, "%t = bufferization.to_tensor {source} restrict writable : {source_type} to {}", result.text);
    } else {
        let buffer = buffer_text(&result.shape, &result.element);
        emit!(
            body,
            "%buf = memref.alloc() : {buffer}\n\
             memref.copy {source}, %buf : {source_type} to {buffer}\n\
             %t = bufferization.to_tensor %buf restrict writable : {buffer} to {}\n",
            result.text
        );
    }
    let value = if has_other {
        emit!(
            body,
            "%fill = tensor.splat %other : {result}\n%r = arith.select %mask, %t, %fill : {mask_type}, {result}\n",
            result = result.text
        );
        "%r"
    } else {
        "%t"
    };
    let text = format!(
        "func.func @template({}) -> {result} {{\n{body}return {value} : {result}\n}}",
        join(&params),
        result = result.text
    );
    Ok((text, operands))
}

fn store(op: &Op) -> Lowering {
    let segments = op.segments();
    let (offsets, mut has_mask) = (segments[2], segments[3] == 1);
    if segments.get(4) == Some(&1) {
        // Stores have no padding value to choose.
        return predicated::indexed_access(op, Fill::Unset);
    }
    let mut operands = op.operands();
    if has_mask && mask_is_true(op) {
        operands.truncate(2 + offsets);
        has_mask = false;
    }
    if has_mask && offsets > 0 && !window_inside(op, 2, offsets, &operand_type(op, 0).shape, &operand_type(op, 1).shape)
    {
        return predicated::predicated_store(op);
    }
    let value = operand_type(op, 0);
    let r#ref = operand_type(op, 1);
    let mut params = vec![format!("%value: {}", value.text), format!("%ref: {}", r#ref.text)];
    params.extend((0..offsets).map(|d| format!("%o{d}: index")));
    let mask_type = tensor_text(&value.shape, "i1");
    if has_mask {
        params.push(format!("%mask: {mask_type}"));
    }
    let mut body = String::new();
    let (target, target_type) = window(&mut body, &r#ref, (offsets > 0).then_some(&value.shape[..]));
    if let (false, Some(scalar)) = (has_mask, splat_constant(op.operands()[0])) {
        // Storing a splat constant fills the target: no constant buffer to
        // copy from.
        emit!(
            body,
            "%scalar = arith.constant {scalar}\n\
             linalg.fill ins(%scalar : {e}) outs({target} : {target_type})\n",
            e = value.element
        );
        return Ok((format!("func.func @template({}) {{\n{body}return\n}}", join(&params)), operands));
    }
    if has_mask {
        // Merged where the block lives: an element-wise select over the
        // target that keeps masked-off elements (no buffer allocated per
        // program: freed blocks handed back to the system cost page faults
        // in every program on some allocators' threads).
        let rank = value.shape.len();
        let map = identity_map(rank);
        emit!(
            body,
            "%values = bufferization.to_buffer %value read_only : {t} to {vb}\n\
             %masks = bufferization.to_buffer %mask read_only : {mask_type} to {mb}\n\
             linalg.generic {{indexing_maps = [{map}, {map}, {map}], iterator_types = [{iterators}]}} \
             ins(%values, %masks : {vb}, {mb}) outs({target} : {target_type}) {{\n\
             ^bb0(%x: {e}, %m: i1, %old: {e}):\n\
             %merged = arith.select %m, %x, %old : {e}\n\
             linalg.yield %merged : {e}\n}}\n",
            t = value.text,
            vb = buffer_text(&value.shape, &value.element),
            mb = buffer_text(&value.shape, "i1"),
            iterators = parallel_iterators(rank),
            e = value.element
        );
    } else {
        emit_line!(
            body,
            "bufferization.materialize_in_destination %value in restrict writable {target} : ({}, {target_type}) -> ()",
            value.text
        );
    }
    Ok((format!("func.func @template({}) {{\n{body}return\n}}", join(&params)), operands))
}

/// The element of a splat `arith.constant` tensor, printed with its type.
fn splat_constant(value: MlirValue) -> Option<String> {
    let attribute = constant_value(value)?;
    // SAFETY: attributes live in the context; each is read as the kind the op's verifier (or a check here) guarantees
    unsafe {
        (mlirAttributeIsADenseElements(attribute) && mlirDenseElementsAttrIsSplat(attribute))
            .then(|| melior::ir::Attribute::from_raw(mlirDenseElementsAttrGetSplatValue(attribute)).to_string())
    }
}

fn zero(element: &str) -> String {
    if is_float(element) { format!("0.0 : {element}") } else { format!("0 : {element}") }
}

fn dot(op: &Op) -> Lowering {
    let (lhs, rhs, result) = (operand_type(op, 0), operand_type(op, 1), result_type(op));
    let has_acc = op.operands().len() == 3;
    let r = &result.text;
    let mut params = vec![format!("%a: {}", lhs.text), format!("%b: {}", rhs.text)];
    let mut body = String::new();
    // A transposed operand is transposed back into a block of its own
    // first: the register-tile kernels (CPU outer products, matrix cores
    // through LDS) read B in rows along N and A along K, so one contiguous
    // copy per block is what they would want anyway, and every later pass
    // sees the canonical contraction.
    let mut canonical = |name: &str, operand: &Shaped, transposed: bool| -> (String, String) {
        if !transposed {
            return (format!("%{name}"), operand.text.clone());
        }
        let rank = operand.shape.len();
        let mut shape = operand.shape.clone();
        shape.swap(rank - 2, rank - 1);
        let text = tensor_text(&shape, &operand.element);
        let permutation = join((0..rank - 2).chain([rank - 1, rank - 2]));
        emit_line!(
            body,
            "%{name}_empty = tensor.empty() : {text}\n\
             %{name}_t = linalg.transpose ins(%{name} : {}) outs(%{name}_empty : {text}) permutation = [{permutation}]",
            operand.text
        );
        (format!("%{name}_t"), text)
    };
    let (a, a_type) = canonical("a", &lhs, op.has("transpose_lhs"));
    let (b, b_type) = canonical("b", &rhs, op.has("transpose_rhs"));
    // An accumulator that is a splat constant (`acc` of zeros, Pallas'
    // `jnp.zeros` before a dot) is a fill, like none: bufferized, a
    // constant would be a buffer copied into the result's (on GPUs a copy
    // one work-item makes byte by byte).
    let splat_acc = if has_acc { splat_constant(op.operands()[2]) } else { None };
    let init = if has_acc && splat_acc.is_none() {
        params.push(format!("%acc: {r}"));
        "%acc"
    } else {
        emit!(
            body,
            "%zero = arith.constant {}\n%empty = tensor.empty() : {r}\n\
             %init = linalg.fill ins(%zero : {e}) outs(%empty : {r}) -> {r}\n",
            splat_acc.clone().unwrap_or_else(|| zero(&result.element)),
            e = result.element
        );
        "%init"
    };
    // The canonical contraction, loops (batch,) i, j, k: `tessel-tile` and
    // `tessel-vectorize` recognise it by the `tessel.contraction` marker and
    // turn it into register tiles of FMA outer products. Each result element
    // sums over k in order, one fused multiply-add per step (the meaning
    // every schedule keeps).
    let (maps, iterators) = if lhs.shape.len() == 3 {
        (
            "affine_map<(b, i, j, k) -> (b, i, k)>, affine_map<(b, i, j, k) -> (b, k, j)>, affine_map<(b, i, j, k) -> (b, i, j)>",
            "\"parallel\", \"parallel\", \"parallel\", \"reduction\"",
        )
    } else {
        (
            "affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (k, j)>, affine_map<(i, j, k) -> (i, j)>",
            "\"parallel\", \"parallel\", \"reduction\"",
        )
    };
    // Narrower operands widen to the result type before multiplying.
    let (input, output) = (&lhs.element, &result.element);
    let widen = |value: &str| -> String {
        if input == output {
            String::new()
        } else if is_float(output) {
            format!("%{value}w = arith.extf %{value} : {input} to {output}\n")
        } else {
            format!("%{value}w = arith.extsi %{value} : {input} to {output}\n")
        }
    };
    let wide = |value: &str| if input == output { format!("%{value}") } else { format!("%{value}w") };
    let (multiply, add) = if is_float(output) { ("arith.mulf", "arith.addf") } else { ("arith.muli", "arith.addi") };
    emit!(
        body,
        "%c = linalg.generic {{indexing_maps = [{maps}], iterator_types = [{iterators}], tessel.contraction}} \
         ins({a}, {b} : {a_type}, {b_type}) outs({init} : {r}) {{\n\
         ^bb0(%x: {input}, %y: {input}, %sum: {output}):\n{}{}\
         %p = {multiply} {}, {} : {output}\n\
         %s = {add} %sum, %p : {output}\n\
         linalg.yield %s : {output}\n}} -> {r}\n",
        widen("x"),
        widen("y"),
        wide("x"),
        wide("y"),
    );
    let mut operands = op.operands();
    operands.truncate(if splat_acc.is_some() { 2 } else { operands.len() });
    Ok((format!("func.func @template({}) -> {r} {{\n{body}return %c : {r}\n}}", join(&params)), operands))
}

/// A combiner's identity as `value : type` for `element`.
fn identity(identity: Identity, element: &str) -> String {
    let (negative_infinity, positive_infinity) = match element {
        "f64" => ("0xFFF0000000000000", "0x7FF0000000000000"),
        "f16" => ("0xFC00", "0x7C00"),
        "bf16" => ("0xFF80", "0x7F80"),
        _ => ("0xFF800000", "0x7F800000"),
    };
    let bits: u32 = if element == "index" { 64 } else { element[1..].parse().unwrap_or(64) };
    // i1's signed range is [-1, 0].
    let (signed_min, signed_max) =
        if bits == 1 { (-1i128, 0i128) } else { (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1) };
    let text = match (identity, is_float(element)) {
        (Identity::Zero, _) => return zero(element),
        (Identity::One, true) => "1.0".to_string(),
        (Identity::One, false) => "1".to_string(),
        (Identity::Lowest, true) => negative_infinity.to_string(),
        (Identity::Highest, true) => positive_infinity.to_string(),
        (Identity::Lowest, false) => signed_min.to_string(),
        (Identity::Highest, false) => signed_max.to_string(),
        (Identity::UnsignedLowest, _) => "0".to_string(),
        // All ones: the largest unsigned value.
        (Identity::UnsignedHighest, _) => "-1".to_string(),
    };
    format!("{text} : {element}")
}

fn reduce(op: &Op) -> Lowering {
    let (input, result) = (operand_type(op, 0), result_type(op));
    let kind = ReduceKind::of(*op).ok_or("block.reduce: unknown kind")?;
    let (e, r) = (&result.element, &result.text);
    let combine = kind
        .combiner()
        .op(is_float(e))
        .ok_or_else(|| format!("block.reduce: '{}' is not defined on {e}", kind.keyword()))?;
    let text = format!(
        "func.func @template(%in: {i}) -> {r} {{\n\
         %id = arith.constant {id}\n\
         %empty = tensor.empty() : {r}\n\
         %init = linalg.fill ins(%id : {e}) outs(%empty : {r}) -> {r}\n\
         %red = linalg.reduce ins(%in : {i}) outs(%init : {r}) dimensions = [{dims}]\n\
           (%x: {e}, %acc: {e}) {{\n\
             %y = {combine} %x, %acc{flags} : {e}\n\
             linalg.yield %y : {e}\n\
           }}\n\
         return %red : {r}\n}}",
        i = input.text,
        id = identity(kind.identity(), e),
        dims = join(op.integers("dims")),
        // The order of a float reduction is unspecified (as jnp.sum's):
        // reassociation lets LLVM vectorize it.
        flags = if is_float(e) { " fastmath<reassoc>" } else { "" },
    );
    Ok((text, op.operands()))
}

/// A `tensor.splat` of a statically shaped tensor as a `linalg.fill`:
/// element-wise fusion folds a fill into the `linalg.generic`s that read it
/// (the scalar used in their bodies), where a splat would be materialized
/// as a buffer and read back, element by element (softmax's `x - max` and
/// `e / sum` read a whole row of copies of one scalar). Dynamic shapes are
/// left alone.
fn splat(op: &Op) -> Option<template::Rewrite> {
    let result = result_type(op);
    if result.shape.iter().any(|&extent| extent < 0) {
        return None;
    }
    let (e, r) = (&result.element, &result.text);
    let text = format!(
        "func.func @template(%value: {e}) -> {r} {{\n\
         %empty = tensor.empty() : {r}\n\
         %filled = linalg.fill ins(%value : {e}) outs(%empty : {r}) -> {r}\n\
         return %filled : {r}\n}}"
    );
    Some((text, op.operands()))
}

fn broadcast(op: &Op) -> Lowering {
    let (input, result) = (operand_type(op, 0), result_type(op));
    let added = op.integers("dims");
    let rank = result.shape.len();
    let mut input_exprs = Vec::new();
    let mut input_dim = 0;
    for d in 0..rank {
        if added.contains(&(d as i64)) {
            continue;
        }
        let stretched = input.shape[input_dim] == 1 && result.shape[d] != 1;
        input_exprs.push(if stretched { "0".to_string() } else { format!("d{d}") });
        input_dim += 1;
    }
    let (e, r) = (&result.element, &result.text);
    let text = format!(
        "func.func @template(%in: {i}) -> {r} {{\n\
         %empty = tensor.empty() : {r}\n\
         %out = linalg.generic {{indexing_maps = [affine_map<({dims}) -> ({ins})>, affine_map<({dims}) -> ({dims})>], \
         iterator_types = [{parallel}]}} ins(%in : {i}) outs(%empty : {r}) {{\n\
         ^bb0(%x: {e}, %unused: {e}):\n  linalg.yield %x : {e}\n}} -> {r}\n\
         return %out : {r}\n}}",
        i = input.text,
        dims = map_dims(rank),
        ins = join(&input_exprs),
        parallel = parallel_iterators(rank),
    );
    Ok((text, op.operands()))
}

fn iota(op: &Op) -> Lowering {
    let result = result_type(op);
    let rank = result.shape.len();
    let (e, r) = (&result.element, &result.text);
    let cast = if e == "index" {
        "%v = arith.addi %i, %i0 : index\n".to_string()
    } else {
        format!("%v = arith.index_cast %i : index to {e}\n")
    };
    let text = format!(
        "func.func @template() -> {r} {{\n\
         %i0 = arith.constant 0 : index\n\
         %empty = tensor.empty() : {r}\n\
         %out = linalg.generic {{indexing_maps = [{identity}], iterator_types = [{parallel}]}} \
         outs(%empty : {r}) {{\n\
         ^bb0(%unused: {e}):\n  %i = linalg.index {dim} : index\n  {cast}  linalg.yield %v : {e}\n}} -> {r}\n\
         return %out : {r}\n}}",
        identity = identity_map(rank),
        parallel = parallel_iterators(rank),
        dim = op.integer("dim"),
    );
    Ok((text, vec![]))
}

fn atomic_rmw(op: &Op) -> Lowering {
    atomic(op, false)
}

fn atomic_cas(op: &Op) -> Lowering {
    atomic(op, true)
}

/// `block.atomic_rmw` and `block.atomic_cas`: a loop nest over the block, one
/// `memref.atomic_rmw` (or, for a compare-and-swap, a
/// `block.atomic_cas_element`) per element, each under `scf.if` of its mask
/// lane; the old elements, when the op returns them, are collected in a
/// buffer of their own (zero where masked off).
fn atomic(op: &Op, cas: bool) -> Lowering {
    let segments = op.segments();
    let first = cas as usize;
    let (offsets, has_mask) = (segments[first + 2], segments[first + 3] == 1);
    let value = operand_type(op, first);
    let r#ref = operand_type(op, first + 1);
    let returns_old = !op.results().is_empty();
    let float = is_float(&value.element);
    // A compare-and-swap has no kind; every atomic_rmw kind names its
    // memref.atomic_rmw kind in the enum table, or is refused.
    let kind = if cas {
        ""
    } else {
        let kind = AtomicKind::of(*op).ok_or("block.atomic_rmw: unknown kind")?;
        kind.memref_kind(float)
            .ok_or_else(|| format!("block.atomic_rmw: '{}' is not defined on {}", kind.keyword(), value.element))?
    };
    let rank = value.shape.len();
    let mut params = Vec::new();
    if cas {
        params.push(format!("%compare: {}", value.text));
    }
    params.extend([format!("%value: {}", value.text), format!("%ref: {}", r#ref.text)]);
    params.extend((0..offsets).map(|d| format!("%o{d}: index")));
    let mask_type = tensor_text(&value.shape, "i1");
    if has_mask {
        params.push(format!("%mask: {mask_type}"));
    }
    let values = buffer_text(&value.shape, &value.element);
    let e = &value.element;
    let mut body = format!(
        "%c0 = arith.constant 0 : index\n%c1 = arith.constant 1 : index\n\
         %values = bufferization.to_buffer %value read_only : {} to {values}\n",
        value.text
    );
    if cas {
        emit_line!(body, "%compares = bufferization.to_buffer %compare read_only : {} to {values}", value.text);
    }
    if has_mask {
        emit_line!(
            body,
            "%masks = bufferization.to_buffer %mask read_only : {mask_type} to {}",
            buffer_text(&value.shape, "i1")
        );
    }
    if returns_old {
        emit_line!(
            body,
            "%olds = memref.alloc() : {values}\n%zero = arith.constant {}\n\
             linalg.fill ins(%zero : {e}) outs(%olds : {values})",
            zero(e)
        );
    }
    for (d, size) in value.shape.iter().enumerate() {
        emit_line!(body, "%n{d} = arith.constant {size} : index\nscf.for %i{d} = %c0 to %n{d} step %c1 {{");
    }
    let indices = join((0..rank).map(|d| format!("%i{d}")));
    let targets: Vec<String> = (0..rank)
        .map(|d| {
            if offsets > 0 {
                emit_line!(body, "%j{d} = arith.addi %o{d}, %i{d} : index");
                format!("%j{d}")
            } else {
                format!("%i{d}")
            }
        })
        .collect();
    emit_line!(body, "%x = memref.load %values[{indices}] : {values}");
    let mut update = if cas {
        // Expanded to memref.generic_atomic_rmw after deallocation
        // (tessel-expand-atomics).
        format!(
            "%expected = memref.load %compares[{indices}] : {values}\n\
             %old = block.atomic_cas_element %expected, %x, %ref[{}] : {e}, {}\n",
            join(&targets),
            r#ref.text
        )
    } else {
        format!("%old = memref.atomic_rmw {kind} %x, %ref[{}] : ({e}, {}) -> {e}\n", join(&targets), r#ref.text)
    };
    if returns_old {
        emit_line!(update, "memref.store %old, %olds[{indices}] : {values}");
    }
    if has_mask {
        emit!(
            body,
            "%m = memref.load %masks[{indices}] : {}\nscf.if %m {{\n{update}}}\n",
            buffer_text(&value.shape, "i1")
        );
    } else {
        body.push_str(&update);
    }
    body.push_str(&"}\n".repeat(rank));
    let (result, ret) = if returns_old {
        emit_line!(body, "%result = bufferization.to_tensor %olds restrict writable : {values} to {}", value.text);
        (format!(" -> {}", value.text), format!("return %result : {}", value.text))
    } else {
        (String::new(), "return".to_string())
    };
    Ok((format!("func.func @template({}){result} {{\n{body}{ret}\n}}", join(&params)), op.operands()))
}
