//! block-to-linalg's lowering of semaphores and DMAs, for the programs of
//! one worker: a semaphore is an i32 counter in the worker's semaphore
//! scratch, which no other worker sees, so signals and reads are plain
//! loads and stores, and a wait for more than the count can never be
//! satisfied: it records its site in `WAIT_FAULT` (the JIT reports it,
//! located) instead of hanging. A DMA copies its window when it starts, as
//! JAX's TPU interpreter does in its eager mode, then counts its bytes on
//! its semaphore.
//!
//! A `concurrent` op (a core mesh's, whose cores signal each other's
//! semaphores while they run) updates the count atomically, and its wait
//! spins until the count holds enough and it takes it with a
//! compare-and-swap, pausing between looks (`WAIT_FUNCTIONS`), until the
//! wait timeout passes: then it records its site, negated, in
//! `WAIT_FAULT`, and gives up.

use super::block_to_linalg::{Lowering, Op};
use crate::support::handles::{location_of, value_type};
use crate::support::ir::{ShapedKind, element_bits, join, print_type, shaped_type_text, strides_and_offset};
use crate::support::template::{emit, emit_line};
use tessel_dialects::{WAIT_FAULT, WAIT_FUNCTIONS};

/// Whether `name` is one of the ops lowered here.
pub(super) fn is_semaphore_op(name: &str) -> bool {
    matches!(name, "block.semaphore_signal" | "block.semaphore_wait" | "block.semaphore_read" | "block.dma_start")
}

/// The text of a semaphore ref operand and its index parameters.
pub(super) fn semaphore_params(op: &Op, first: usize, count: usize, params: &mut Vec<String>) -> String {
    params.push(format!("%sem: {}", print_type(value_type(op.operands()[first]))));
    params.extend((0..count).map(|d| format!("%s{d}: index")));
    join((0..count).map(|d| format!("%s{d}")))
}

/// The declarations of the wait functions (module text).
pub(super) fn wait_declarations() -> [String; 2] {
    let [deadline, pause] = WAIT_FUNCTIONS;
    [format!("func.func private @{deadline}() -> i64"), format!("func.func private @{pause}(i64) -> i1")]
}

/// The module text declaring `WAIT_FAULT`, where a failed wait records its
/// site for the JIT to report.
pub(super) fn wait_fault_global() -> String {
    format!("memref.global @{WAIT_FAULT} : memref<i64> = dense<0>")
}

/// Body text recording the fault site `site` (an i64 SSA value that
/// `definition`, text placed after the global is read, may define) in
/// `WAIT_FAULT`: positive for a wait that can never be satisfied, negated
/// for one that timed out.
pub(super) fn record_wait_fault(definition: &str, site: &str) -> String {
    format!(
        "%fault = memref.get_global @{WAIT_FAULT} : memref<i64>\n\
         {definition}memref.store {site}, %fault[] : memref<i64>\n"
    )
}

/// `%<name> = ` the count plus `amount` (text), stored back; atomically for
/// a concurrent op (the old count then).
fn add_to_count(op: &Op, indices: &str, sem: &str, amount: &str) -> String {
    if op.has("concurrent") {
        format!("%old = memref.atomic_rmw addi {amount}, %sem[{indices}] : (i32, {sem}) -> i32\n")
    } else {
        format!(
            "%count = memref.load %sem[{indices}] : {sem}\n\
             %next = arith.addi %count, {amount} : i32\n\
             memref.store %next, %sem[{indices}] : {sem}\n"
        )
    }
}

pub(super) fn signal(op: &Op) -> Lowering {
    let segments = op.segments();
    if segments[3] != 0 {
        return Err("block.semaphore_signal: a signal to another core reaches here only through a core mesh's \
                    grid.call (grid-to-loops)"
            .into());
    }
    let mut params = Vec::new();
    let indices = semaphore_params(op, 0, segments[1], &mut params);
    params.push("%amount: i32".into());
    let sem = print_type(value_type(op.operands()[0]));
    let text =
        format!("func.func @template({}) {{\n{}return\n}}", join(&params), add_to_count(op, &indices, &sem, "%amount"));
    Ok((text, op.operands()))
}

pub(super) fn read(op: &Op) -> Lowering {
    let mut params = Vec::new();
    let indices = semaphore_params(op, 0, op.operands().len() - 1, &mut params);
    let sem = print_type(value_type(op.operands()[0]));
    let count = if op.has("concurrent") {
        format!(
            "%zero = arith.constant 0 : i32\n%count = memref.atomic_rmw addi %zero, %sem[{indices}] : (i32, {sem}) -> i32"
        )
    } else {
        format!("%count = memref.load %sem[{indices}] : {sem}")
    };
    let text = format!("func.func @template({}) -> i32 {{\n{count}\nreturn %count : i32\n}}", join(&params));
    Ok((text, op.operands()))
}

/// The description of a wait's site, for `SEMAPHORE_WAITS`.
pub(super) fn wait_site(op: &Op) -> String {
    format!("block.semaphore_wait at {}", crate::support::diagnostics::location_text(location_of(op.raw())))
}

/// A wait, fault site `site` (counted from 1).
pub(super) fn wait(op: &Op, site: usize) -> Lowering {
    if op.has("concurrent") {
        return concurrent_wait(op, site);
    }
    let mut params = Vec::new();
    let indices = semaphore_params(op, 0, op.operands().len() - 2, &mut params);
    params.push("%amount: i32".into());
    let sem = print_type(value_type(op.operands()[0]));
    let text = format!(
        "{}\n\
         func.func @template({}) {{\n\
         %count = memref.load %sem[{indices}] : {sem}\n\
         %enough = arith.cmpi sge, %count, %amount : i32\n\
         scf.if %enough {{\n\
           %left = arith.subi %count, %amount : i32\n\
           memref.store %left, %sem[{indices}] : {sem}\n\
         }} else {{\n\
           {}\
         }}\n\
         return\n}}",
        wait_fault_global(),
        join(&params),
        record_wait_fault(&format!("%site = arith.constant {site} : i64\n"), "%site")
    );
    Ok((text, op.operands()))
}

/// A concurrent wait (see the module's comment), fault site `site`.
fn concurrent_wait(op: &Op, site: usize) -> Lowering {
    let [deadline, pause] = WAIT_FUNCTIONS;
    let mut params = Vec::new();
    let indices = semaphore_params(op, 0, op.operands().len() - 2, &mut params);
    params.push("%amount: i32".into());
    let sem = print_type(value_type(op.operands()[0]));
    let text = format!(
        "{}\n{}\n\
         func.func @template({}) {{\n\
         %zero = arith.constant 0 : i32\n\
         %false = arith.constant false\n\
         %deadline = func.call @{deadline}() : () -> i64\n\
         scf.while : () -> () {{\n\
           %count = memref.atomic_rmw addi %zero, %sem[{indices}] : (i32, {sem}) -> i32\n\
           %enough = arith.cmpi sge, %count, %amount : i32\n\
           %taken = scf.if %enough -> (i1) {{\n\
             %left = arith.subi %count, %amount : i32\n\
             %old = block.atomic_cas_element %count, %left, %sem[{indices}] : i32, {sem}\n\
             %same = arith.cmpi eq, %old, %count : i32\n\
             scf.yield %same : i1\n\
           }} else {{\n\
             scf.yield %false : i1\n\
           }}\n\
           %again = scf.if %taken -> (i1) {{\n\
             scf.yield %false : i1\n\
           }} else {{\n\
             %alive = func.call @{pause}(%deadline) : (i64) -> i1\n\
             scf.if %alive {{\n\
             }} else {{\n\
               {}\
             }}\n\
             scf.yield %alive : i1\n\
           }}\n\
           scf.condition(%again)\n\
         }} do {{\n\
           scf.yield\n\
         }}\n\
         return\n}}",
        wait_fault_global(),
        wait_declarations().join("\n"),
        join(&params),
        record_wait_fault(&format!("%site = arith.constant -{site} : i64\n"), "%site")
    );
    Ok((text, op.operands()))
}

/// One side of a DMA: its window as a subview `%<side>_view` with its
/// unit dimensions dropped (both sides then have one shape), written into
/// `body`; returns the view's type and rank. The window's offsets are the
/// template's `%<side>o<d>` (none: the whole ref).
pub(super) fn side_view(
    body: &mut String,
    side: &str,
    raw: mlir_sys::MlirType,
    offsets: usize,
    sizes: &[i64],
) -> (String, usize) {
    let rank = sizes.len();
    let element = print_type(crate::support::handles::shaped_element(raw));
    let strides = strides_and_offset(raw).map_or(vec![i64::MIN; rank], |(strides, _)| strides);
    // Unit dimensions go (but one, for a single element).
    let mut kept: Vec<usize> = (0..rank).filter(|&d| sizes[d] != 1).collect();
    if kept.is_empty() {
        kept.push(rank - 1);
    }
    let view = shaped_type_text(
        ShapedKind::Memref,
        &kept.iter().map(|&d| sizes[d]).collect::<Vec<_>>(),
        &element,
        Some(&kept.iter().map(|&d| strides[d]).collect::<Vec<_>>()),
    );
    let at: Vec<String> =
        (0..rank).map(|d| if offsets > 0 { format!("%{side}o{d}") } else { "%c0".to_string() }).collect();
    emit_line!(
        body,
        "%{side}_view = memref.subview %{side}[{}] [{}] [{}] : {} to {view}",
        join(&at),
        join(sizes),
        join(sizes.iter().map(|_| 1)),
        print_type(raw)
    );
    (view, kept.len())
}

/// A DMA's template parts: its parameters, a body defining its two
/// windows as views (`%src_view`, `%dst_view`, unit dims dropped), their
/// types and rank, the element type, the byte count, and its semaphore's
/// index text and type.
pub(super) struct DmaWindows {
    pub(super) params: Vec<String>,
    pub(super) body: String,
    pub(super) src_view: String,
    pub(super) dst_view: String,
    pub(super) rank: usize,
    pub(super) element: String,
    pub(super) bytes: i64,
    pub(super) indices: String,
    pub(super) sem: String,
}

pub(super) fn dma_windows(op: &Op) -> Result<DmaWindows, String> {
    let segments = op.segments();
    let (src_offsets, dst_offsets, sem_indices) = (segments[1], segments[3], segments[5]);
    let operands = op.operands();
    let (src, dst) = (value_type(operands[0]), value_type(operands[1 + src_offsets]));
    let shape = |raw| crate::support::ir::static_shape(raw).unwrap_or_default();
    let src_sizes = if src_offsets > 0 { op.integers("src_sizes") } else { shape(src) };
    let dst_sizes = if dst_offsets > 0 { op.integers("dst_sizes") } else { shape(dst) };
    let mut params = vec![format!("%src: {}", print_type(src))];
    params.extend((0..src_offsets).map(|d| format!("%srco{d}: index")));
    params.push(format!("%dst: {}", print_type(dst)));
    params.extend((0..dst_offsets).map(|d| format!("%dsto{d}: index")));
    let indices = semaphore_params(op, 2 + src_offsets + dst_offsets, sem_indices, &mut params);
    let sem = print_type(value_type(operands[2 + src_offsets + dst_offsets]));
    let mut body = String::from("%c0 = arith.constant 0 : index\n");
    let (src_view, rank) = side_view(&mut body, "src", src, src_offsets, &src_sizes);
    let (dst_view, _) = side_view(&mut body, "dst", dst, dst_offsets, &dst_sizes);
    let element = print_type(crate::support::handles::shaped_element(src));
    let elements: i64 = src_sizes.iter().product();
    let bytes = elements * ((element_bits(crate::support::handles::shaped_element(src)) + 7) / 8);
    if i32::try_from(bytes).is_err() {
        return Err(format!("a DMA of {bytes} bytes overflows its i32 semaphore"));
    }
    Ok(DmaWindows { params, body, src_view, dst_view, rank, element, bytes, indices, sem })
}

pub(super) fn dma_start(op: &Op) -> Lowering {
    let DmaWindows { params, mut body, src_view, dst_view, rank, element, bytes, indices, sem } = dma_windows(op)?;
    if op.has("add") {
        let dims = join((0..rank).map(|d| format!("d{d}")));
        let add = if element.starts_with('f') || element == "bf16" { "arith.addf" } else { "arith.addi" };
        emit!(
            body,
            "linalg.generic {{indexing_maps = [affine_map<({dims}) -> ({dims})>, affine_map<({dims}) -> ({dims})>], \
             iterator_types = [{}]}} ins(%src_view : {src_view}) outs(%dst_view : {dst_view}) {{\n\
             ^bb0(%x: {element}, %y: {element}):\n  %s = {add} %y, %x : {element}\n  linalg.yield %s : {element}\n}}\n",
            join((0..rank).map(|_| "\"parallel\""))
        );
    } else {
        emit_line!(body, "linalg.copy ins(%src_view : {src_view}) outs(%dst_view : {dst_view})");
    }
    emit_line!(body, "%bytes = arith.constant {bytes} : i32");
    body.push_str(&add_to_count(op, &indices, &sem, "%bytes"));
    Ok((format!("func.func @template({}) {{\n{body}return\n}}", join(&params)), op.operands()))
}
