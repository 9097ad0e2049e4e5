//! `tessel-recompute-large-values`: on GPUs, an element-wise value too
//! large for the workgroup's LDS is recomputed by each of its consumers
//! instead of going through global memory between them.
//!
//! A softmax of eight 4096-wide rows computes `e = exp(x - max)` (128 KiB)
//! and uses it twice, in the row sums and in `e / sum`. Kept as a value it
//! needs a buffer; one that large is not LDS but global memory (the output
//! buffer, reused in place): e is written there, read back for the sums
//! and again for the division. Recomputed, each consumer reads x (which it
//! reads anyway, or which is in cache) and applies the few element-wise
//! ops itself: no intermediate buffer at all.
//!
//! For an element-wise `linalg.generic` (parallel loops only, a body of
//! plain arithmetic) whose result takes more than `tessel.workgroup_memory`
//! bytes and has several consumers that can take it in
//! (`linalg-fuse-elementwise-ops`: element-wise generics and reductions,
//! not contractions, whose k loop would recompute it for every output),
//! every such consumer but the first gets its own copy of the element-wise
//! ops the value is computed from; a `linalg.reduce` consumer becomes a
//! `linalg.generic` so the fusion can take the copy in (so does a
//! reduction that is such a value's only consumer: a layernorm's sum of
//! squares). Each copy then has one use and fuses into it. The same ops on
//! the same inputs: the same bits.
//!
//! Runs on tensors, before `linalg-fuse-elementwise-ops`.

use crate::support::handles::{attribute_text, raw_op, result_of, value_type};
use crate::{
    PassDefinition, PassError,
    block::block_to_linalg::CONTRACTION,
    gpu::grid_to_gpu::DEFAULT_WORKGROUP_MEMORY,
    support::ir::{block_operations, collect_operations, recompute_before, set_i64_attribute, static_bytes, uses},
    support::transform,
};
use melior::ir::{OperationRef, operation::OperationLike};
use mlir_sys::*;
use std::collections::HashMap;
use tessel_dialects::knobs;

pub static PASS: PassDefinition = PassDefinition {
    argument: "tessel-recompute-large-values",
    name: "TesselRecomputeLargeValues",
    description: "Recompute element-wise values too large for LDS in each consumer instead of storing them (GPU)",
    anchor: "builtin.module",
    run,
};

/// Marks the `linalg.reduce` consumers to generalize.
const TAKES_COPY: &str = "tessel.takes_recomputed";

/// Is `op` an element-wise `linalg.generic` of plain arithmetic with one
/// result?
fn is_elementwise(op: MlirOperation) -> bool {
    let raw = raw_op(op);
    if raw.name() != "linalg.generic" || raw.has(CONTRACTION) || raw.results().len() != 1 {
        return false;
    }
    if attribute_text(raw.attribute("iterator_types")).contains("reduction") {
        return false;
    }
    block_operations(raw.region_block(0)).into_iter().all(|nested| {
        let name = raw_op(nested).name();
        // SAFETY: live IR of the module being rewritten (crate invariant, support/handles.rs).
        let flat = unsafe { mlirOperationGetNumRegions(nested) } == 0;
        flat && ["arith.", "math.", "linalg.yield"].iter().any(|prefix| name.starts_with(prefix))
    })
}

/// Can `op` take an element-wise producer in (fuse it)?
fn takes_producer(op: MlirOperation) -> bool {
    let raw = raw_op(op);
    match raw.name().as_str() {
        "linalg.reduce" => raw.results().len() == 1,
        "linalg.generic" => !raw.has(CONTRACTION),
        _ => false,
    }
}

/// Bytes of a statically shaped tensor value (0 otherwise).
fn tensor_bytes(value: MlirValue) -> i64 {
    let r#type = value_type(value);
    // SAFETY: types live in the context
    if !unsafe { mlirTypeIsARankedTensor(r#type) } {
        return 0;
    }
    static_bytes(r#type).unwrap_or(0)
}

fn run(module: OperationRef<'static, '_>) -> Result<(), PassError> {
    let budget = knobs::WORKGROUP_MEMORY.integer_or(raw_op(module.to_raw()), DEFAULT_WORKGROUP_MEMORY);
    let copied = |op: MlirOperation| is_elementwise(op) || raw_op(op).name() == "tensor.empty";
    let mut generalize = false;
    for (op, _) in collect_operations(module, |name| name == "linalg.generic") {
        if !is_elementwise(op) {
            continue;
        }
        let value = result_of(op, 0);
        if tensor_bytes(value) <= budget {
            continue;
        }
        let consumers: Vec<(MlirOperation, usize)> =
            uses(value).into_iter().filter(|&(user, _)| takes_producer(user)).collect();
        for &(consumer, position) in consumers.iter().skip(1) {
            let copy = recompute_before(value, &HashMap::new(), &copied, consumer, &mut HashMap::new());
            // SAFETY: live IR of the module being rewritten (crate invariant, support/handles.rs); the position is the use's own.
            unsafe { mlirOperationSetOperand(consumer, position as isize, copy) };
        }
        // A reduction takes the value in only as a generic (also when it
        // is the only consumer: a layernorm's sum of squares).
        for &(consumer, _) in &consumers {
            if raw_op(consumer).name() == "linalg.reduce" {
                set_i64_attribute(consumer, TAKES_COPY, 1);
                generalize = true;
            }
        }
    }
    if !generalize {
        return Ok(());
    }
    let any = "!transform.any_op";
    let script = format!(
        "%reductions = transform.structured.match ops{{[\"linalg.reduce\"]}} attributes{{{TAKES_COPY} = 1 : i64}} in %root \
         : ({any}) -> {any}\n%generic = transform.structured.generalize %reductions : ({any}) -> {any}\n"
    );
    transform::apply(module.to_raw(), &transform::script(&script))
        .map_err(|error| PassError::at(module.location(), error.0))
}
