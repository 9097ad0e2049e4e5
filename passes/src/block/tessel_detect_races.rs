//! `tessel-detect-races`: under `tessel.detect_races` (JAX's
//! `InterpretParams(detect_races=True)`; `tessel run --detect-races`), the
//! kernels' DMAs, accesses and semaphores are reported to the runtime's
//! race detector (runtime/src/race_detection.rs), which reports an access
//! overlapping a DMA still in flight, or another core's access that no
//! semaphore orders before it, where either writes. It runs on the
//! kernels (functions with block ops) after grid-to-loops, where a core
//! mesh's semaphore ops name the very counter they signal or wait on (a
//! peer core's for `core`), and before block-to-linalg, where DMAs and
//! semaphore ops are still ops of their own:
//! - before a `block.dma_start`: its two windows and its semaphore
//!   (`RACE_FUNCTIONS`' `dma_<element>`);
//! - before a `memref.load`/`memref.store` (one element) and a
//!   `block.load`/`block.store` (its window; a masked access's whole
//!   window, a gather's or scatter's whole ref): the window and whether it
//!   writes (`access_<element>`);
//! - after a `block.semaphore_wait` (a DMA's wait, `pl.semaphore_wait`):
//!   its semaphore (`wait`), which ends the DMAs that completed on it and
//!   brings in what its signallers saw;
//! - before a `block.semaphore_signal`: its semaphore (`signal`).
//!
//! A kernel called on a core mesh's cores (from a forall marked
//! `tessel.cores`) reports its accesses as `shared`: the runtime keeps them
//! to compare the cores'. Each site is listed in `tessel.race_sites` (what
//! it is, its line) for the report. Element types outside `DMA_ELEMENTS`
//! are not watched. Without the knob, nothing changes: the kernel is the
//! same code.

use super::dma_on_wait::{emit_unranked_windows, semaphore_view};
use super::semaphores::{DmaWindows, dma_windows, semaphore_params, side_view};
use super::site;
use crate::support::diagnostics::location_text;
use crate::support::handles::{context_of, location_of, next_of, operation_ref, raw_op, shaped_element, value_type};
use crate::support::ir::{collect_operations, element_bits, join, print_type, tensor_shape};
use crate::support::template::{self, TemplateError, emit_line};
use crate::{PassDefinition, PassError};
use melior::ir::{OperationRef, operation::OperationLike};
use mlir_sys::*;
use std::collections::BTreeSet;
use tessel_dialects::{DMA_ELEMENTS, RACE_FUNCTIONS, RACE_SITES, knobs};

pub static PASS: PassDefinition = PassDefinition {
    argument: "tessel-detect-races",
    name: "TesselDetectRaces",
    description: "Under tessel.detect_races, report kernels' DMAs and accesses to the runtime's race detector",
    anchor: "builtin.module",
    run,
};

/// The ops watched.
const WATCHED: &[&str] = &[
    "memref.load",
    "memref.store",
    "block.load",
    "block.store",
    "block.dma_start",
    "block.semaphore_wait",
    "block.semaphore_signal",
];

fn run(module: OperationRef<'static, '_>) -> Result<(), PassError> {
    if knobs::DETECT_RACES.integer_or(raw_op(module.to_raw()), 0) != 1 {
        return Ok(());
    }
    let mut sites = raw_op(module.to_raw()).strings(RACE_SITES);
    let mut declarations = BTreeSet::new();
    let on_cores = core_kernels(module);
    for (function, _) in collect_operations(module, |name| name == "func.func") {
        let ops = collect_operations(operation_ref(function), |name| WATCHED.contains(&name));
        if !ops.iter().any(|(_, name)| name.starts_with("block.")) {
            continue;
        }
        let shared = raw_op(function).string("sym_name").is_some_and(|name| on_cores.contains(&name));
        for (op, name) in ops {
            let watch = Watch { sites: &mut sites, declared: &mut declarations, shared };
            instrument(op, &name, watch).map_err(|error| PassError::at(location_of(op), error.0))?;
        }
    }
    for (name, declaration) in declarations {
        template::define_symbol(context_of(module.to_raw()), module.to_raw(), &name, &declaration)
            .map_err(|message| PassError::at(location_of(module.to_raw()), message))?;
    }
    raw_op(module.to_raw()).set_strings(RACE_SITES, &sites);
    Ok(())
}

/// The declarations of the functions (name, text).
type Declarations = BTreeSet<(String, String)>;

/// Where an op's report goes: the sites, the functions declared, and
/// whether its kernel runs on a core mesh's cores.
struct Watch<'a> {
    sites: &'a mut Vec<String>,
    declared: &'a mut Declarations,
    shared: bool,
}

/// The functions called from a core mesh's forall (`tessel.cores`).
fn core_kernels(module: OperationRef<'static, '_>) -> Vec<String> {
    let mut callees = Vec::new();
    for (forall, _) in collect_operations(module, |name| name == "scf.forall") {
        if raw_op(forall).has(crate::cpu::tessel_core_threads::CORES) {
            for (call, _) in collect_operations(operation_ref(forall), |name| name == "func.call") {
                if let Ok(callee) = operation_ref(call).attribute("callee") {
                    callees.push(callee.to_string().trim_start_matches('@').to_string());
                }
            }
        }
    }
    callees
}

fn instrument(op: MlirOperation, name: &str, watch: Watch) -> Result<(), TemplateError> {
    let raw = raw_op(op);
    let operands = raw.operands();
    let at = location_text(location_of(op));
    match name {
        "memref.load" | "memref.store" => {
            let store = name == "memref.store";
            let memref = operands[store as usize];
            let offsets = &operands[store as usize + 1..];
            let what = if store { "the store to" } else { "the load from" };
            let window = Window { memref, offsets: offsets.to_vec(), sizes: vec![1; offsets.len()] };
            access(op, &window, store, format!("{what} {} at {at}", print_type(value_type(memref))), watch)
        }
        "block.load" | "block.store" => {
            let store = name == "block.store";
            let segments = raw.segments();
            // load: ref, offsets, mask, other, indices; store: value, ref,
            // offsets, mask, indices.
            let first = store as usize;
            let (count, indexed) = (segments[first + 1], *segments.last().unwrap_or(&0) == 1);
            let memref = operands[first];
            let block = if store { value_type(operands[0]) } else { value_type(raw.results()[0]) };
            let window = if count == 0 || indexed {
                Window { memref, offsets: Vec::new(), sizes: Vec::new() }
            } else {
                let sizes = tensor_shape(block);
                Window { memref, offsets: operands[first + 1..first + 1 + count].to_vec(), sizes }
            };
            let what = if store { "the store to" } else { "the load from" };
            access(op, &window, store, format!("{what} {} at {at}", print_type(value_type(memref))), watch)
        }
        "block.dma_start" => dma(op, format!("the DMA started at {at}"), watch),
        "block.semaphore_signal" => semaphore(op, false, watch.declared),
        _ => semaphore(op, true, watch.declared),
    }
}

/// A window an access touches: `offsets` and static `sizes` into
/// `memref` (none of either: the whole ref).
struct Window {
    memref: MlirValue,
    offsets: Vec<MlirValue>,
    sizes: Vec<i64>,
}

/// The watched element type of `memref` (its `DMA_ELEMENTS` name and byte
/// size), if it is one.
fn watched_element(memref: MlirType) -> Option<(String, i64)> {
    let element = shaped_element(memref);
    let name = print_type(element);
    DMA_ELEMENTS.contains(&name.as_str()).then(|| (name, (element_bits(element) + 7) / 8))
}

/// Reports an access of `window` (a write when `write`) before `op`.
fn access(op: MlirOperation, window: &Window, write: bool, text: String, watch: Watch) -> Result<(), TemplateError> {
    let memref_type = value_type(window.memref);
    let Some((element, bytes)) = watched_element(memref_type) else { return Ok(()) };
    let ref_type = print_type(memref_type);
    let mut params = vec![format!("%ref: {ref_type}")];
    params.extend((0..window.offsets.len()).map(|d| format!("%refo{d}: index")));
    let mut body = String::new();
    let (view, view_type) = if window.offsets.is_empty() {
        ("%ref", ref_type.clone())
    } else {
        ("%ref_view", side_view(&mut body, "ref", memref_type, window.offsets.len(), &window.sizes).0)
    };
    let function = format!("{}{element}", RACE_FUNCTIONS[1]);
    let signature = format!("(memref<*x{element}>, i64, i1, i64, i1) -> ()");
    let declaration = format!("func.func private @{function}{}", signature.replace(" -> ()", ""));
    watch.declared.insert((function.clone(), declaration));
    let site = site(watch.sites, text);
    emit_line!(
        body,
        "%ref_any = memref.cast {view} : {view_type} to memref<*x{element}>\n\
         %bytes = arith.constant {bytes} : i64\n\
         %write = arith.constant {write}\n\
         %site = arith.constant {site} : i64\n\
         %shared = arith.constant {shared}\n\
         func.call @{function}(%ref_any, %bytes, %write, %site, %shared) : {signature}",
        shared = watch.shared
    );
    let text = format!(
        "func.func private @{function}{}\nfunc.func @template({}) {{\n{body}return\n}}",
        signature.replace(" -> ()", ""),
        join(&params)
    );
    let mut arguments = vec![window.memref];
    arguments.extend(&window.offsets);
    template::inline_before(context_of(op), op, &text, &arguments).map(|_| ())
}

/// Reports a DMA's start (its windows and semaphore) before it.
fn dma(op: MlirOperation, text: String, watch: Watch) -> Result<(), TemplateError> {
    let raw = raw_op(op);
    let Some((_, element_bytes)) = watched_element(value_type(raw.operands()[0])) else { return Ok(()) };
    let DmaWindows { params, mut body, src_view, dst_view, element, indices, sem, .. } =
        dma_windows(&raw).map_err(TemplateError)?;
    let segments = raw.segments();
    let sem_operand = raw.operands()[2 + segments[1] + segments[3]];
    semaphore_view(&mut body, &sem, value_type(sem_operand), &indices, segments[5]);
    let function = format!("{}{element}", RACE_FUNCTIONS[0]);
    let signature = format!("(memref<*x{element}>, memref<*x{element}>, memref<*xi32>, i64, i64, i1)");
    let declaration = format!("func.func private @{function}{signature}");
    watch.declared.insert((function.clone(), declaration.clone()));
    let site = site(watch.sites, text);
    emit_unranked_windows(&mut body, &src_view, &dst_view, &element);
    emit_line!(
        body,
        "%bytes = arith.constant {element_bytes} : i64\n\
         %site = arith.constant {site} : i64\n\
         %shared = arith.constant {shared}\n\
         func.call @{function}(%src_any, %dst_any, %sem_one, %bytes, %site, %shared) : {signature} -> ()",
        shared = watch.shared
    );
    let text = format!("{declaration}\nfunc.func @template({}) {{\n{body}return\n}}", join(&params));
    template::inline_before(context_of(op), op, &text, &raw.operands()).map(|_| ())
}

/// Reports a wait's semaphore after it (`after`), or a signal's before it.
fn semaphore(op: MlirOperation, after: bool, declared: &mut Declarations) -> Result<(), TemplateError> {
    let raw = raw_op(op);
    let operands = raw.operands();
    // A wait: sem, indices, amount; a signal: sem, indices, amount, core
    // (grid-to-loops folds a core mesh's core into the indices).
    let count = if after { operands.len() - 2 } else { raw.segments()[1] };
    let mut params = Vec::new();
    let indices = semaphore_params(&raw, 0, count, &mut params);
    let sem = print_type(value_type(operands[0]));
    let mut body = String::new();
    semaphore_view(&mut body, &sem, value_type(operands[0]), &indices, count);
    let function = RACE_FUNCTIONS[if after { 2 } else { 3 }];
    let declaration = format!("func.func private @{function}(memref<*xi32>)");
    declared.insert((function.to_string(), declaration.clone()));
    emit_line!(body, "func.call @{function}(%sem_one) : (memref<*xi32>) -> ()");
    let text = format!("{declaration}\nfunc.func @template({}) {{\n{body}return\n}}", join(&params));
    let anchor = if after { next_of(op) } else { op };
    template::inline_before(context_of(op), anchor, &text, &operands[..=count]).map(|_| ())
}
