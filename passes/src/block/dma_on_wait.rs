//! block-to-linalg's lowering of DMAs and waits under `tessel.dma_mode =
//! on_wait` (JAX's `InterpretParams(dma_execution_mode="on_wait")`, its
//! interpreter's default): a DMA's start only queues its copy on its
//! semaphore (`DMA_FUNCTIONS`' `start_<element>`, with unranked views of
//! its two windows and of the semaphore); a wait — a DMA's or
//! `pl.semaphore_wait` — runs the copies pending on its semaphore, the last
//! queued first, until the count holds what it waits for (`wait`). So the
//! source is read when the copy runs, a DMA is only done once waited for,
//! and one never waited for never copies, as in JAX's interpreter. The
//! runtime keeps the queues (runtime/src/dma_queue.rs).

use super::block_to_linalg::{Lowering, Op};
use super::semaphores::{DmaWindows, dma_windows, record_wait_fault, semaphore_params, wait_fault_global};
use crate::support::handles::value_type;
use crate::support::ir::{join, print_type, strides_and_offset};
use crate::support::template::emit_line;
use std::collections::BTreeSet;
use tessel_dialects::{DMA_ELEMENTS, DMA_FUNCTIONS};

/// The declarations of the functions the lowered ops call, for the DMAs'
/// element types `elements`.
pub(super) fn declarations(elements: &BTreeSet<String>) -> Vec<(String, String)> {
    let mut declared: Vec<(String, String)> = elements.iter().map(|element| start_declaration(element)).collect();
    declared.push(wait_declaration());
    declared
}

/// The name and declaration of the function starting DMAs of `element`.
fn start_declaration(element: &str) -> (String, String) {
    let name = format!("{}{element}", DMA_FUNCTIONS[0]);
    let text =
        format!("func.func private @{name}(memref<*x{element}>, memref<*x{element}>, memref<*xi32>, i64, i32, i1)");
    (name, text)
}

/// The name and declaration of the function a wait calls.
fn wait_declaration() -> (String, String) {
    let wait = DMA_FUNCTIONS[1];
    (wait.to_string(), format!("func.func private @{wait}(memref<*xi32>, i32, i1) -> i32"))
}

/// `%sem_one`: the semaphore at `indices` as an unranked one-element view.
pub(super) fn semaphore_view(body: &mut String, sem: &str, sem_raw: mlir_sys::MlirType, indices: &str, rank: usize) {
    if rank == 0 {
        emit_line!(body, "%sem_one = memref.cast %sem : {sem} to memref<*xi32>");
        return;
    }
    let strides = strides_and_offset(sem_raw).map_or(vec!["?".to_string(); rank], |(strides, _)| {
        strides.iter().map(|s| if *s == i64::MIN { "?".to_string() } else { s.to_string() }).collect()
    });
    let ones = join((0..rank).map(|_| 1));
    let view = format!(
        "memref<{}xi32, strided<[{}], offset: ?>>",
        join((0..rank).map(|_| "1")).replace(", ", "x"),
        join(&strides)
    );
    emit_line!(
        body,
        "%sem_view = memref.subview %sem[{indices}] [{ones}] [{ones}] : {sem} to {view}\n\
         %sem_one = memref.cast %sem_view : {view} to memref<*xi32>"
    );
}

/// `%src_any`, `%dst_any`: a DMA's windows (`%src_view`, `%dst_view` of
/// types `src_view`, `dst_view`) as unranked memrefs of `element`, as the
/// runtime's functions take them.
pub(super) fn emit_unranked_windows(body: &mut String, src_view: &str, dst_view: &str, element: &str) {
    emit_line!(
        body,
        "%src_any = memref.cast %src_view : {src_view} to memref<*x{element}>\n\
         %dst_any = memref.cast %dst_view : {dst_view} to memref<*x{element}>"
    );
}

/// A DMA's start: its copy queued on its semaphore.
pub(super) fn dma_start(op: &Op, elements: &mut BTreeSet<String>) -> Lowering {
    let DmaWindows { params, mut body, src_view, dst_view, element, bytes, indices, sem, .. } = dma_windows(op)?;
    let code = DMA_ELEMENTS
        .iter()
        .position(|&name| name == element)
        .ok_or_else(|| format!("block.dma_start: DMAs of {element} do not run on waits (--dma-mode on_wait)"))?;
    let segments = op.segments();
    let sem_operand = op.operands()[2 + segments[1] + segments[3]];
    semaphore_view(&mut body, &sem, value_type(sem_operand), &indices, segments[5]);
    let start = format!("{}{element}", DMA_FUNCTIONS[0]);
    emit_unranked_windows(&mut body, &src_view, &dst_view, &element);
    emit_line!(
        body,
        "%bytes = arith.constant {bytes} : i64\n\
         %element = arith.constant {code} : i32\n\
         %add = arith.constant {} \n\
         func.call @{start}(%src_any, %dst_any, %sem_one, %bytes, %element, %add) \
         : (memref<*x{element}>, memref<*x{element}>, memref<*xi32>, i64, i32, i1) -> ()",
        op.has("add")
    );
    let (_, declaration) = start_declaration(&element);
    elements.insert(element);
    let text = format!("{declaration}\nfunc.func @template({}) {{\n{body}return\n}}", join(&params));
    Ok((text, op.operands()))
}

/// A wait, fault site `site`: the runtime runs the semaphore's pending
/// copies until its count suffices; a failure records the site (negated
/// for a timeout) in `WAIT_FAULT`.
pub(super) fn wait(op: &Op, site: usize) -> Lowering {
    let [_, wait, _] = DMA_FUNCTIONS;
    let operands = op.operands();
    let mut params = Vec::new();
    let count = operands.len() - 2;
    let indices = semaphore_params(op, 0, count, &mut params);
    params.push("%amount: i32".into());
    let sem = print_type(value_type(operands[0]));
    let mut body = String::new();
    semaphore_view(&mut body, &sem, value_type(operands[0]), &indices, count);
    emit_line!(
        body,
        "%concurrent = arith.constant {}\n\
         %status = func.call @{wait}(%sem_one, %amount, %concurrent) : (memref<*xi32>, i32, i1) -> i32\n\
         %ok = arith.constant 0 : i32\n\
         %failed = arith.cmpi ne, %status, %ok : i32\n\
         scf.if %failed {{\n\
           %timeout = arith.constant 2 : i32\n\
           %timed_out = arith.cmpi eq, %status, %timeout : i32\n\
           %never = arith.constant {site} : i64\n\
           %late = arith.constant -{site} : i64\n\
           %site = arith.select %timed_out, %late, %never : i64\n\
           {}\
         }}",
        op.has("concurrent"),
        record_wait_fault("", "%site")
    );
    let text = format!(
        "{}\n{}\nfunc.func @template({}) {{\n{body}return\n}}",
        wait_fault_global(),
        wait_declaration().1,
        join(&params)
    );
    Ok((text, operands))
}
