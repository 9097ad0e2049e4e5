//! grid-to-loops' core meshes (`grid.call ... cores`): the leading axis'
//! programs are TensorCores that run at once and signal each other.
//!
//! - Each core's semaphores are a row of one call-wide buffer
//!   (`memref<N x ...xi32>`, zeroed before the cores start), so a core can
//!   reach another's: the specialized kernel takes the whole buffer, and
//!   its semaphore ops index it by their own core (the core axis' program
//!   id) or, for `block.semaphore_signal ... core %c`, by `%c`.
//! - Every semaphore op of the call becomes `concurrent` (atomic counts;
//!   waits that spin until another core signals, bounded by the wait
//!   timeout).
//! - `shared` scratch (`pltpu.VMEM_SHARED`) is one buffer for the call
//!   (also without cores); the other scratch is each core's own.
//! - The core axis' forall is marked for `tessel-core-threads` (a thread
//!   per core); the rest of the grid runs in order within each core.

use crate::support::handles::{operation_ref, raw_op, set_unit_attribute};
use crate::support::ir::collect_operations;
use crate::support::template::emit_line;
use mlir_sys::*;
use tessel_dialects::AxisSemantics;

pub use crate::cpu::tessel_core_threads::CORES;

/// The semaphore ops and the position of their semaphore ref among their
/// operands.
const SEMAPHORE_OPS: &[&str] =
    &["block.semaphore_signal", "block.semaphore_wait", "block.semaphore_read", "block.dma_start"];

/// The semantics of a core mesh's grid: the cores at once, each running
/// the rest of the grid in order (as a TPU core runs its grid).
pub fn core_semantics(semantics: &mut [AxisSemantics]) {
    if let Some((first, rest)) = semantics.split_first_mut() {
        *first = AxisSemantics::Parallel;
        rest.fill(AxisSemantics::Arbitrary);
    }
}

/// The type of a core mesh's call-wide semaphore buffer for the
/// per-core semaphore type `per_core` (`memref<2xi32>` -> `memref<4x2xi32>`).
pub fn all_cores_type(per_core: &str, cores: i64) -> Result<String, String> {
    per_core
        .strip_prefix("memref<")
        .map(|rest| format!("memref<{cores}x{rest}"))
        .ok_or_else(|| format!("semaphore scratch of unexpected type {per_core}"))
}

/// Allocates the scratch one buffer serves the whole call with
/// (`call_wide`: positions and types), before the loop nest; semaphores
/// among them (`semaphores`) start at zero (`zero_semaphores`).
pub fn allocate_call_wide(body: &mut String, call_wide: &[(usize, String)], semaphores: &[usize], on_wait: bool) {
    for (k, r#type) in call_wide {
        emit_line!(body, "%scratch{k} = memref.alloc() : {type}");
        if semaphores.contains(k) {
            zero_semaphores(body, *k, r#type, on_wait);
        }
    }
}

/// Zeroes semaphore scratch `%scratch<k>` of type `type` where a worker
/// (or a core mesh) starts; with DMAs that copy on waits, the copies still
/// queued on semaphores at these addresses (a finished worker's, never
/// waited for) are dropped: they never copy, as in JAX's interpreter.
pub fn zero_semaphores(body: &mut String, k: usize, r#type: &str, on_wait: bool) {
    emit_line!(body, "%zero{k} = arith.constant 0 : i32\nlinalg.fill ins(%zero{k} : i32) outs(%scratch{k} : {type})");
    if on_wait {
        let forget = tessel_dialects::DMA_FUNCTIONS[2];
        emit_line!(
            body,
            "%any{k} = memref.cast %scratch{k} : {type} to memref<*xi32>\n\
             func.call @{forget}(%any{k}) : (memref<*xi32>) -> ()"
        );
    }
}

/// The declaration of the function `zero_semaphores` calls.
pub fn forget_declaration() -> String {
    format!("func.func private @{}(memref<*xi32>)", tessel_dialects::DMA_FUNCTIONS[2])
}

/// The operand position of the semaphore ref of `op` (one of
/// `SEMAPHORE_OPS`).
fn semaphore_operand(op: MlirOperation) -> usize {
    let raw = raw_op(op);
    if raw.name() == "block.dma_start" {
        let segments = raw.segments();
        segments[..4].iter().sum()
    } else {
        0
    }
}

/// In `kernel` (specialized for a call with `cores`): indexes the
/// semaphore ops on the call-wide semaphore buffers (kernel arguments
/// `semaphore_arguments`) by core, the running one's being argument
/// `core_argument`, and makes every semaphore op concurrent.
pub fn address_semaphores(
    kernel: MlirOperation,
    semaphore_arguments: &[usize],
    core_argument: usize,
) -> Result<(), (MlirOperation, String)> {
    // SAFETY: live IR of the module being rewritten (crate invariant, support/handles.rs); the kernel has a body with its arguments (specialize_kernel checked).
    let entry = unsafe { mlirRegionGetFirstBlock(mlirOperationGetFirstRegion(kernel)) };
    // SAFETY: as above; `core_argument` is below the argument count (the program ids were added).
    let argument = |index: usize| unsafe { mlirBlockGetArgument(entry, index as isize) };
    let buffers: Vec<MlirValue> = semaphore_arguments.iter().map(|&index| argument(index)).collect();
    let own_core = argument(core_argument);
    for (op, _) in collect_operations(operation_ref(kernel), |name| SEMAPHORE_OPS.contains(&name)) {
        let raw = raw_op(op);
        let mut operands = raw.operands();
        let at = semaphore_operand(op);
        let targeted = raw.name() == "block.semaphore_signal" && raw.segments()[3] == 1;
        if buffers.iter().any(|buffer| buffer.ptr == operands[at].ptr) {
            // The core goes first among the semaphore's indices: another
            // core's for a targeted signal (its `core` operand), else this one's.
            let core = if targeted { operands.pop().expect("a targeted signal has its core") } else { own_core };
            operands.insert(at + 1, core);
            let mut segments = raw.segments();
            match raw.name().as_str() {
                "block.semaphore_signal" => segments = vec![1, segments[1] + 1, 1, 0],
                "block.dma_start" => segments[5] += 1,
                _ => {}
            }
            raw.set_operands(&operands, &segments);
        } else if targeted {
            return Err((op, "a signal to another core's semaphore needs one of the call's semaphore scratch".into()));
        }
        set_unit_attribute(op, "concurrent");
    }
    Ok(())
}

/// Refuses, located, a signal to another core in `kernel`, specialized for
/// a call without `cores`.
pub fn refuse_core_signals(kernel: MlirOperation) -> Result<(), (MlirOperation, String)> {
    for (op, _) in collect_operations(operation_ref(kernel), |name| name == "block.semaphore_signal") {
        if raw_op(op).segments()[3] == 1 {
            return Err((
                op,
                "a signal to another core (`core`) needs a call over a core mesh (`grid.call ... cores`)".into(),
            ));
        }
    }
    Ok(())
}
