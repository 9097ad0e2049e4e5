//! `tessel-check-ref-accesses`: under `tessel.out_of_bounds_reads` (JAX's
//! `InterpretParams.out_of_bounds_reads`; `tessel run
//! --out-of-bounds-reads`), every access a kernel makes to a ref at
//! offsets is checked against the ref's shape, as JAX's TPU interpreter
//! checks them. It runs on the kernels (the functions `grid.call`s call)
//! before grid-to-loops, where a ref has the shape the kernel sees: its
//! block, its scratch buffer, the whole array of an unblocked operand.
//!
//! An access out of bounds:
//! - a read (`memref.load`, a window's `block.load`): with `raise`, is not
//!   made (it reads zeros) and records its site, which fails the call
//!   with an error naming the access and its line; with `uninitialized`,
//!   reads the fill of `tessel.uninitialized_memory` where it is out (a
//!   window's in-bounds elements read as they are: a masked load) and
//!   records nothing;
//! - a write (`memref.store`, a window's `block.store`): is not made and
//!   records its site in both modes (the interpreter raises for writes);
//! - a DMA (`block.dma_start`) whose source or destination window is out:
//!   records its site and copies the window at offset 0 instead, so that
//!   its semaphore still counts the bytes its wait waits for (the call
//!   fails on the access, not on a wait). An out-of-bounds DMA source is an
//!   error in `uninitialized` mode too (the message says so).
//!
//! A masked access is out of bounds when a lane its mask keeps is (the
//! others may lie anywhere); a masked read out of bounds in `uninitialized`
//! mode reads the fill in every lane. Gathers and scatters are not checked
//! (gathers clamp their positions, JAX's rule).
//! Without the knob, nothing changes.

use super::site;
use crate::support::bounds_checks::{Guarded, guard_op, record_first_fault};
use crate::support::diagnostics::location_text;
use crate::support::handles::{context_of, location_of, raw_op, value_type};
use crate::support::ir::{
    ShapedKind, collect_operations, constant_integer, element_name, join, print_type, shaped_type_text, tensor_shape,
};
use crate::support::template::{self, TemplateError, emit, emit_line};
use crate::support::uninitialized::Fill;
use crate::{PassDefinition, PassError};
use melior::ir::OperationRef;
use mlir_sys::*;
use tessel_dialects::{ACCESS_FAULT, REF_ACCESSES, knobs};

pub static PASS: PassDefinition = PassDefinition {
    argument: "tessel-check-ref-accesses",
    name: "TesselCheckRefAccesses",
    description: "Under tessel.out_of_bounds_reads, check kernels' ref accesses against the refs' shapes",
    anchor: "builtin.module",
    run,
};

/// What an out-of-bounds read does (`tessel.out_of_bounds_reads`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Raise,
    Uninitialized,
}

impl Mode {
    /// What a read out of bounds gives: the fill when the kernel goes on
    /// with it; zeros when the call fails anyway (a zero loop bound ends
    /// loops the fill's integer maximum would keep running).
    fn read_past(self, fill: Fill) -> Fill {
        match self {
            Mode::Raise => Fill::Unset,
            Mode::Uninitialized => fill,
        }
    }
}

/// The accesses checked.
const ACCESSES: &[&str] = &["memref.load", "memref.store", "block.load", "block.store", "block.dma_start"];

/// A window of a ref an access touches: where it starts and its static
/// sizes (1 along dims a scalar index picks).
struct Window {
    memref: MlirValue,
    offsets: Vec<MlirValue>,
    sizes: Vec<i64>,
}

impl Window {
    /// The ref's static shape (`None` for a dynamic dim).
    fn shape(&self) -> Vec<Option<i64>> {
        let r#type = value_type(self.memref);
        // SAFETY: `memref` is a live memref value; its type is shaped.
        let rank = unsafe { mlirShapedTypeGetRank(r#type) };
        (0..rank)
            .map(|d| {
                // SAFETY: as above, `d` below the rank.
                let dim = unsafe { mlirShapedTypeGetDimSize(r#type, d as isize) };
                // SAFETY: a plain query of the dynamic-size sentinel.
                (dim != unsafe { mlirShapedTypeGetDynamicSize() }).then_some(dim)
            })
            .collect()
    }

    /// Whether the window is in bounds for any offsets' values: never
    /// (`None`: checked at run time) unless every offset is a constant.
    fn statically_inside(&self) -> Option<bool> {
        let shape = self.shape();
        let mut inside = true;
        for ((offset, size), dim) in self.offsets.iter().zip(&self.sizes).zip(&shape) {
            let offset = constant_integer(*offset)?;
            inside &= offset >= 0 && offset + size <= (*dim)?;
        }
        Some(inside)
    }

    /// A template computing whether the window is in bounds from its
    /// offsets (`%o<d>`): (parameters, arguments, body, the `i1`'s name).
    fn check(&self) -> (Vec<String>, Vec<MlirValue>, String, String) {
        let ref_type = print_type(value_type(self.memref));
        let mut parameters = vec![format!("%ref: {ref_type}")];
        let mut arguments = vec![self.memref];
        let mut body = String::from("%zero = arith.constant 0 : index\n");
        let mut conditions = Vec::new();
        for (d, ((offset, size), dim)) in self.offsets.iter().zip(&self.sizes).zip(self.shape()).enumerate() {
            parameters.push(format!("%o{d}: index"));
            arguments.push(*offset);
            emit_dim(&mut body, d, dim, &ref_type);
            emit!(
                body,
                "%size{d} = arith.constant {size} : index\n\
                 %end{d} = arith.addi %o{d}, %size{d} : index\n\
                 %low{d} = arith.cmpi sge, %o{d}, %zero : index\n\
                 %high{d} = arith.cmpi sle, %end{d}, %dim{d} : index\n\
                 %ok{d} = arith.andi %low{d}, %high{d} : i1\n"
            );
            conditions.push(format!("%ok{d}"));
        }
        let ok = template::emit_conjunction(&mut body, &conditions, "%all").expect("a window has offsets");
        (parameters, arguments, body, ok)
    }

    /// As `check`, for a masked access: the window's lanes where `mask`
    /// (the access's `i1` tensor of the window's shape) holds must be in
    /// bounds; the others may lie anywhere.
    fn check_masked(&self, mask: MlirValue) -> (Vec<String>, Vec<MlirValue>, String, String) {
        let ref_type = print_type(value_type(self.memref));
        let mask_type = print_type(value_type(mask));
        let mut parameters = vec![format!("%ref: {ref_type}"), format!("%mask: {mask_type}")];
        let mut arguments = vec![self.memref, mask];
        let mut body = String::from(
            "%zero = arith.constant 0 : index\n%one = arith.constant 1 : index\n\
                                     %false = arith.constant false\n%true = arith.constant true\n",
        );
        for (d, (offset, dim)) in self.offsets.iter().zip(self.shape()).enumerate() {
            parameters.push(format!("%o{d}: index"));
            arguments.push(*offset);
            emit_dim(&mut body, d, dim, &ref_type);
        }
        // A loop nest over the lanes, or-ing in each masked-on lane out of
        // bounds.
        let rank = self.sizes.len();
        for (d, size) in self.sizes.iter().enumerate() {
            let carried = if d == 0 { "%false".to_string() } else { format!("%acc{}", d - 1) };
            emit_line!(
                body,
                "%n{d} = arith.constant {size} : index\n\
                 %bad{d} = scf.for %i{d} = %zero to %n{d} step %one iter_args(%acc{d} = {carried}) -> (i1) {{"
            );
        }
        let all = emit_lane_inside(&mut body, rank);
        emit!(
            body,
            "%on = tensor.extract %mask[{lanes}] : {mask_type}\n\
             %out = arith.xori {all}, %true : i1\n\
             %lane_bad = arith.andi %on, %out : i1\n\
             %any = arith.ori %acc{last}, %lane_bad : i1\n\
             scf.yield %any : i1\n",
            lanes = join((0..rank).map(|d| format!("%i{d}"))),
            last = rank - 1,
        );
        for d in (0..rank).rev() {
            if d > 0 {
                emit_line!(body, "}}\nscf.yield %bad{d} : i1");
            } else {
                emit_line!(body, "}}");
            }
        }
        emit_line!(body, "%ok = arith.xori %bad0, %true : i1");
        (parameters, arguments, body, "%ok".to_string())
    }

    /// What the error says of an access of this window: `kind` is "read",
    /// "swap" (a kernel's store, a swap in JAX) or "write" (a DMA's).
    fn describe(&self, kind: &str, what: &str, op: MlirOperation) -> String {
        let verb = match kind {
            "read" => "reading",
            "write" => "writing",
            _ => "swapping",
        };
        let shape: Vec<String> =
            self.shape().iter().map(|dim| dim.map_or("?".to_string(), |d| d.to_string())).collect();
        format!(
            "Out-of-bounds {kind} of {what} {} at {}: {verb} a ({}) window but the ref has shape ({})",
            print_type(value_type(self.memref)),
            location_text(location_of(op)),
            join(&self.sizes),
            join(&shape),
        )
    }
}

fn run(module: OperationRef<'static, '_>) -> Result<(), PassError> {
    let mode = match knobs::OUT_OF_BOUNDS_READS.integer_or(raw_op(module.to_raw()), 0) {
        1 => Mode::Raise,
        2 => Mode::Uninitialized,
        _ => return Ok(()),
    };
    let fill = Fill::of(raw_op(module.to_raw()));
    let mut sites = raw_op(module.to_raw()).strings(REF_ACCESSES);
    let listed = sites.len();
    for function in super::kernels(module) {
        for (op, name) in collect_operations(function, |name| ACCESSES.contains(&name)) {
            check(op, &name, mode, fill, &mut sites).map_err(|error| PassError::at(location_of(op), error.0))?;
        }
    }
    if sites.len() > listed {
        let global = format!("memref.global @{ACCESS_FAULT} : memref<i64> = dense<0>");
        template::define_symbol(context_of(module.to_raw()), module.to_raw(), ACCESS_FAULT, &global)
            .map_err(|message| PassError::at(location_of(module.to_raw()), message))?;
        raw_op(module.to_raw()).set_strings(REF_ACCESSES, &sites);
    }
    Ok(())
}

fn check(op: MlirOperation, name: &str, mode: Mode, fill: Fill, sites: &mut Vec<String>) -> Result<(), TemplateError> {
    let raw = raw_op(op);
    let operands = raw.operands();
    match name {
        "memref.load" | "memref.store" => {
            let store = name == "memref.store";
            let memref = operands[store as usize];
            let offsets = operands[store as usize + 1..].to_vec();
            let window = Window { memref, sizes: vec![1; offsets.len()], offsets };
            if window.offsets.is_empty() || window.statically_inside() == Some(true) {
                return Ok(());
            }
            let (parameters, arguments, body, ok) = window.check();
            let guarded = Guarded { parameters: &parameters, arguments: &arguments, body: &body, ok: &ok };
            if store {
                let site = site(sites, window.describe("swap", "a store to", op));
                return guard_op(op, &guarded, ACCESS_FAULT, site, None);
            }
            let element = print_type(value_type(raw.results()[0]));
            let site = match mode {
                Mode::Raise => site(sites, window.describe("read", "a load from", op)),
                Mode::Uninitialized => 0,
            };
            guard_op(op, &guarded, ACCESS_FAULT, site, Some(&mode.read_past(fill).constant(&element)))
        }
        "block.load" | "block.store" => {
            let store = name == "block.store";
            let segments = raw.segments();
            // load: ref, offsets, mask, other, indices; store: value, ref,
            // offsets, mask, indices.
            let first = store as usize;
            let (offsets, masked, indexed) =
                (segments[first + 1], segments[first + 2] == 1, *segments.last().unwrap_or(&0) == 1);
            if offsets == 0 || indexed {
                return Ok(());
            }
            let mask = masked.then(|| operands[first + 1 + offsets]);
            let block = if store { value_type(operands[0]) } else { value_type(raw.results()[0]) };
            let window = Window {
                memref: operands[first],
                offsets: operands[first + 1..first + 1 + offsets].to_vec(),
                sizes: tensor_shape(block),
            };
            if window.statically_inside() == Some(true) {
                return Ok(());
            }
            if !store && mode == Mode::Uninitialized && mask.is_none() {
                return masked_load(op, &window, block, fill);
            }
            // (A masked load in uninitialized mode with a masked-on lane out
            // of bounds reads the fill in every lane: coarser than the
            // interpreter, which fills those lanes only.)
            let (parameters, arguments, body, ok) = match mask {
                Some(mask) => window.check_masked(mask),
                None => window.check(),
            };
            let guarded = Guarded { parameters: &parameters, arguments: &arguments, body: &body, ok: &ok };
            if store {
                let kind = if mask.is_some() { "masked swap" } else { "swap" };
                let site = site(sites, window.describe(kind, "a store to", op));
                return guard_op(op, &guarded, ACCESS_FAULT, site, None);
            }
            if mode == Mode::Uninitialized {
                return guard_op(op, &guarded, ACCESS_FAULT, 0, Some(&splat(fill, block)));
            }
            let site = site(sites, window.describe("read", "a load from", op));
            guard_op(op, &guarded, ACCESS_FAULT, site, Some(&splat(mode.read_past(fill), block)))
        }
        _ => dma(op, mode, sites),
    }
}

/// `%dim<d>`: the ref's extent along `d` (`dim`, or read from `%ref`).
fn emit_dim(body: &mut String, d: usize, dim: Option<i64>, ref_type: &str) {
    match dim {
        Some(dim) => emit_line!(body, "%dim{d} = arith.constant {dim} : index"),
        None => emit_line!(body, "%d{d} = arith.constant {d} : index\n%dim{d} = memref.dim %ref, %d{d} : {ref_type}"),
    }
}

/// Whether the window's lane `%i<d>` (offsets `%o<d>`, extents `%dim<d>`)
/// is inside the ref, as an `i1` name.
fn emit_lane_inside(body: &mut String, rank: usize) -> String {
    let mut inside = Vec::new();
    for d in 0..rank {
        // Unsigned: a position before the ref is a huge one.
        emit_line!(body, "%p{d} = arith.addi %o{d}, %i{d} : index\n%in{d} = arith.cmpi ult, %p{d}, %dim{d} : index");
        inside.push(format!("%in{d}"));
    }
    template::emit_conjunction(body, &inside, "%inall").expect("a window has dims")
}

/// `dense<fill> : tensor<..>`, an `arith.constant` operand filling
/// `tensor` with `fill`.
fn splat(fill: Fill, tensor: MlirType) -> String {
    let scalar = fill.constant(&element_name(tensor));
    let value = scalar.split(" : ").next().unwrap_or("0");
    format!("dense<{value}> : {}", print_type(tensor))
}

/// Replaces a window's `block.load` by the same load masked to the
/// window's elements inside the ref, the others reading `fill`.
fn masked_load(op: MlirOperation, window: &Window, block: MlirType, fill: Fill) -> Result<(), TemplateError> {
    let ref_type = print_type(value_type(window.memref));
    let block_type = print_type(block);
    let element = element_name(block);
    let rank = window.sizes.len();
    let mut body = String::new();
    for (d, dim) in window.shape().into_iter().enumerate() {
        emit_dim(&mut body, d, dim, &ref_type);
    }
    let indices = join((0..rank).map(|d| format!("%i{d}: index")));
    let mut generated = String::new();
    let all = emit_lane_inside(&mut generated, rank);
    let mask_type = shaped_type_text(ShapedKind::Tensor, &window.sizes, "i1", None);
    let text = format!(
        "func.func @template(%ref: {ref_type}, {offsets}) -> {block_type} {{\n{body}\
         %mask = tensor.generate {{\n^bb0({indices}):\n{generated}tensor.yield {all} : i1\n}} : {mask_type}\n\
         %other = arith.constant {other}\n\
         %r = block.load %ref[{names}] [{sizes}] mask %mask other %other : {ref_type} -> {block_type}\n\
         return %r : {block_type}\n}}",
        offsets = join((0..rank).map(|d| format!("%o{d}: index"))),
        other = fill.constant(&element),
        names = join((0..rank).map(|d| format!("%o{d}"))),
        sizes = join(&window.sizes),
    );
    let mut arguments = vec![window.memref];
    arguments.extend(&window.offsets);
    template::replace(context_of(op), op, &text, &arguments)
}

/// Checks a DMA's windows: one out of bounds records its site and is
/// copied at offset 0 instead (its semaphore still counts its bytes).
fn dma(op: MlirOperation, mode: Mode, sites: &mut Vec<String>) -> Result<(), TemplateError> {
    let raw = raw_op(op);
    let operands = raw.operands();
    let segments = raw.segments();
    // src, src_offsets, dst, dst_offsets, sem, sem_indices.
    let (src_offsets, dst_offsets) = (segments[1], segments[3]);
    let side = |start: usize, count: usize, sizes: &str| Window {
        memref: operands[start],
        offsets: operands[start + 1..start + 1 + count].to_vec(),
        sizes: raw.integers(sizes),
    };
    let src = side(0, src_offsets, "src_sizes");
    let dst = side(1 + src_offsets, dst_offsets, "dst_sizes");
    let mut clamped = operands.clone();
    for (window, start, kind) in [(&src, 1, "read"), (&dst, 2 + src_offsets, "write")] {
        if window.offsets.is_empty() || window.statically_inside() == Some(true) {
            continue;
        }
        for (size, dim) in window.sizes.iter().zip(window.shape()) {
            if dim.is_some_and(|dim| *size > dim) {
                return Err(TemplateError(format!("a DMA window of {size} along a dim of {dim:?} elements")));
            }
        }
        let what = if kind == "read" { "a DMA source" } else { "a DMA destination" };
        let mut text = window.describe(kind, what, op);
        if kind == "read" && mode == Mode::Uninitialized {
            text.push_str(
                " (Tessel raises for out-of-bounds DMA reads even when out_of_bounds_reads is uninitialized)",
            );
        }
        let site = site(sites, text);
        let (parameters, arguments, mut body, ok) = window.check();
        let rank = window.offsets.len();
        emit!(
            body,
            "%out = arith.xori {ok}, %true : i1\nscf.if %out {{\n{}}}\n",
            record_first_fault(ACCESS_FAULT, site)
        );
        for d in 0..rank {
            emit_line!(body, "%s{d} = arith.select {ok}, %o{d}, %zero : index");
        }
        let text = format!(
            "memref.global @{ACCESS_FAULT} : memref<i64> = dense<0>\n\
             func.func @template({}) -> ({}) {{\n%true = arith.constant true\n{body}return {} : {}\n}}",
            parameters.join(", "),
            join(vec!["index"; rank]),
            join((0..rank).map(|d| format!("%s{d}"))),
            join(vec!["index"; rank]),
        );
        let offsets = template::inline_before(context_of(op), op, &text, &arguments)?;
        clamped[start..start + rank].copy_from_slice(&offsets);
    }
    raw.set_operands(&clamped, &segments);
    Ok(())
}
