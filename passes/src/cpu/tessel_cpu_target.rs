//! `tessel-cpu-target`: the CPU target knobs, applied to the lowered code.
//!
//! - `tessel.num_threads = N : i64` (the tuner's LOCAL knob): how many
//!   threads share a grid's programs. Every `omp.parallel` without a
//!   thread count gets `num_threads(N)` (default: OpenMP's, one thread
//!   per core).
//! - `tessel.vector_bits = B : i64` (128, 256 or 512): the vector width
//!   LLVM generates code for. Every function gets the LLVM attributes
//!   `prefer-vector-width=B` (the loop vectorizer's width) and
//!   `min-legal-vector-width=0`, which together make the x86 backend split
//!   wider vector operations (the contractions' register tiles) into
//!   B-bit ones. Default: the host's widest vectors.
//!
//! Runs after `convert-scf-to-openmp`, before the conversion to the LLVM
//! dialect (which carries `passthrough` attributes to the LLVM functions,
//! and OpenMP's outlined functions inherit them). Neither knob changes a
//! result: contractions keep their FMA order at any width.

use crate::support::handles::{location_of, raw_op};
use crate::{PassDefinition, PassError, support::ir::collect_operations};
use melior::{
    StringRef,
    ir::{OperationRef, operation::OperationLike},
};
use mlir_sys::*;
use tessel_dialects::knobs;

pub static PASS: PassDefinition = PassDefinition {
    argument: "tessel-cpu-target",
    name: "TesselCpuTarget",
    description: "Apply the CPU target knobs: OpenMP thread count (tessel.num_threads), vector width (tessel.vector_bits)",
    anchor: "builtin.module",
    run,
};

/// Where `omp.parallel`'s thread count is among its operand groups
/// (allocate, allocators, if, num_threads, private, reduction).
const NUM_THREADS_GROUP: usize = 3;

fn run(module: OperationRef<'static, '_>) -> Result<(), PassError> {
    let settings = raw_op(module.to_raw());
    let threads = knobs::NUM_THREADS.integer_or(settings, 0);
    let bits = knobs::VECTOR_BITS.integer_or(settings, 0);
    if threads < 0 || !matches!(bits, 0 | 128 | 256 | 512) {
        return Err(PassError::at(
            module.location(),
            "tessel.num_threads must be positive and tessel.vector_bits 128, 256 or 512",
        ));
    }
    if threads > 0 {
        for (parallel, _) in collect_operations(module, |name| name == "omp.parallel") {
            if let Err(message) = set_thread_count(parallel, threads) {
                return Err(PassError::at(location_of(parallel), message));
            }
        }
    }
    if bits > 0 {
        let text = format!("[[\"prefer-vector-width\", \"{bits}\"], [\"min-legal-vector-width\", \"0\"]]");
        let attribute =
            // SAFETY: the module is live (crate invariant); the attribute text is well formed by construction (a list of two string pairs), so the parse gives a non-null attribute.
            unsafe { mlirAttributeParseGet(mlirOperationGetContext(module.to_raw()), StringRef::new(&text).to_raw()) };
        for (function, _) in collect_operations(module, |name| name == "func.func") {
            // SAFETY: `function` is a live func.func of the module and `attribute` the non-null attribute parsed above.
            unsafe { mlirOperationSetAttributeByName(function, StringRef::new("passthrough").to_raw(), attribute) };
        }
    }
    Ok(())
}

/// Gives `parallel` (an `omp.parallel`) `num_threads(threads)`, unless it
/// has a thread count already.
fn set_thread_count(parallel: MlirOperation, threads: i64) -> Result<(), String> {
    let raw = raw_op(parallel);
    let mut segments = raw.segments();
    if segments.len() <= NUM_THREADS_GROUP {
        return Err("an omp.parallel of unexpected form".into());
    }
    if segments[NUM_THREADS_GROUP] > 0 {
        return Ok(());
    }
    let text = format!("func.func @template() -> i32 {{\n%n = arith.constant {threads} : i32\nreturn %n : i32\n}}");
    let (values, _) = crate::support::ir::inline_template(parallel, &text, &[])?;
    let mut operands = raw.operands();
    let at: usize = segments[..NUM_THREADS_GROUP].iter().sum();
    operands.insert(at, values[0]);
    segments[NUM_THREADS_GROUP] = 1;
    raw.set_operands(&operands, &segments);
    Ok(())
}
