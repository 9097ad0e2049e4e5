//! `tessel-prefetch`: software prefetching along the ordered loops of
//! arbitrary grid axes, `num_stages` blocks deep. (It was called
//! `tessel-pipeline`, a name easily taken for the `tessel-to-*` pipelines;
//! the old flag stays as a deprecated alias for one release.)
//!
//! With S stages, while the program at step k computes, the blocks that
//! step k + S - 1 will read are prefetched into the caches, a cache line at
//! a time (`memref.prefetch`; the CPU has no asynchronous copy engine to
//! fill a second buffer, so the "stage" is the cache). The loop becomes
//!
//!   prologue:     prefetch the blocks of steps 0 .. S-2
//!   steady state: for k in [0, n - S + 1): prefetch step k + S - 1; step k
//!   epilogue:     for k in [n - S + 1, n): step k
//!
//! Only blocks that move along the axis are prefetched (an output block
//! revisited along it stays where it is), and only whole blocks viewed in
//! place (`memref.subview`; partial blocks are copied by grid-to-loops
//! anyway). `tessel.num_stages = N : i64` on the module sets S (the
//! tuner's knob; 1, the default, disables the pass); loops with fewer than S
//! steps are left alone. Runs after grid-to-loops, before inlining.

use crate::support::handles::{context_of, dim_size, location_of, next_of, rank_of, raw_op, result_of, value_type};
use crate::support::ir::defining_op;
use crate::support::template::emit_line;
use crate::{
    PassAlias, PassDefinition, PassError,
    grid::grid_to_loops::ARBITRARY_AXIS,
    support::ir::{collect_operations, constant_value, element_bytes, print_type, recompute_before},
    support::template,
};
use melior::{
    StringRef,
    ir::{OperationRef, operation::OperationLike},
};
use mlir_sys::*;
use tessel_dialects::knobs;

pub static PASS: PassDefinition = PassDefinition {
    argument: "tessel-prefetch",
    name: "TesselPrefetch",
    description: "Software-pipeline arbitrary-axis loops: prefetch the blocks of step k + num_stages - 1 during step k",
    anchor: "builtin.module",
    run,
};

/// The pass under its old name, kept for one release so existing pipeline
/// strings keep working.
pub static DEPRECATED_ALIAS: PassAlias = PassAlias {
    argument: "tessel-pipeline",
    description: "Deprecated alias of tessel-prefetch (removed in the next release)",
    of: &PASS,
};

/// Stages when the module does not say: 1 (off). On this machine the
/// hardware prefetchers already stream the blocks' rows; 2 and 3 stages
/// measured within the noise on the 2048 matmul, so the pass is the
/// tuner's knob rather than a default.
pub const DEFAULT_STAGES: i64 = 1;

fn run(module: OperationRef<'static, '_>) -> Result<(), PassError> {
    let stages = match raw_op(module.to_raw()).attribute(knobs::NUM_STAGES.attribute) {
        attribute if attribute.ptr.is_null() => DEFAULT_STAGES,
        // SAFETY: live IR (crate invariant, support/handles.rs); a value is read only after its kind is checked
        attribute if unsafe { mlirAttributeIsAInteger(attribute) } => unsafe { mlirIntegerAttrGetValueInt(attribute) },
        _ => 0,
    };
    if stages < 1 {
        return Err(PassError::at(module.location(), "tessel.num_stages must be a positive integer"));
    }
    if stages == 1 {
        return Ok(());
    }
    for (raw, _) in collect_operations(module, |name| name == "scf.for") {
        if !raw_op(raw).has(ARBITRARY_AXIS) {
            continue;
        }
        if let Err(message) = pipeline_loop(raw, stages) {
            return Err(PassError::at(location_of(raw), message));
        }
    }
    Ok(())
}

fn constant_index(value: MlirValue) -> Option<i64> {
    let attribute = constant_value(value)?;
    // SAFETY: live IR (crate invariant, support/handles.rs); a value is read only after its kind is checked
    unsafe { mlirAttributeIsAInteger(attribute).then(|| mlirIntegerAttrGetValueInt(attribute)) }
}

/// The loop body's block.
fn body_of(for_op: MlirOperation) -> MlirBlock {
    raw_op(for_op).region_block(0)
}

/// Defined by an op directly in `block`?
fn defined_in(value: MlirValue, block: MlirBlock) -> Option<MlirOperation> {
    // SAFETY: live IR of the module being rewritten (crate invariant, support/handles.rs)
    defining_op(value).filter(|&owner| unsafe { mlirOperationGetBlock(owner) }.ptr == block.ptr)
}

/// Does `value` (an offset computed in the loop body) change with the
/// induction variable?
fn depends_on(value: MlirValue, iv: MlirValue, body: MlirBlock) -> bool {
    if value.ptr == iv.ptr {
        return true;
    }
    let Some(op) = defined_in(value, body) else { return false };
    let raw = raw_op(op);
    if raw.name() == "affine.apply" {
        // Every grid id is an operand of the index maps' applies; only the
        // ones the map's result uses matter.
        // SAFETY: attributes and affine maps of live ops (crate invariant, support/handles.rs); an attribute is read as an affine map only where the op's verifier guarantees one, and positions stay below the map's result count
        let map = unsafe { mlirAffineMapAttrGetValue(raw.attribute("map")) };
        // SAFETY: attributes and affine maps of live ops (crate invariant, support/handles.rs); an attribute is read as an affine map only where the op's verifier guarantees one, and positions stay below the map's result count
        let result = unsafe { mlirAffineMapGetResult(map, 0) };
        return raw.operands().iter().enumerate().any(|(position, &operand)| {
            // SAFETY: attributes and affine maps of live ops (crate invariant, support/handles.rs); an attribute is read as an affine map only where the op's verifier guarantees one, and positions stay below the map's result count
            let used = unsafe { mlirAffineExprIsFunctionOfDim(result, position as isize) };
            used && depends_on(operand, iv, body)
        });
    }
    raw.operands().iter().any(|&operand| depends_on(operand, iv, body))
}

/// Clones the ops of `body` that `value` is computed from (the induction
/// variable replaced by `iv_value`) before `anchor`; returns the new value.
fn recompute(
    value: MlirValue,
    iv: MlirValue,
    iv_value: MlirValue,
    body: MlirBlock,
    anchor: MlirOperation,
) -> MlirValue {
    let substitutes = std::collections::HashMap::from([(iv.ptr as usize, iv_value)]);
    // SAFETY: live IR of the module being rewritten (crate invariant, support/handles.rs)
    let in_body = |op: MlirOperation| unsafe { mlirOperationGetBlock(op) }.ptr == body.ptr;
    recompute_before(value, &substitutes, &in_body, anchor, &mut std::collections::HashMap::new())
}

/// `%v = arith.constant N : index` before `anchor`.
fn index_constant(anchor: MlirOperation, value: i64) -> Result<MlirValue, String> {
    let text =
        format!("func.func @template() -> index {{\n%v = arith.constant {value} : index\nreturn %v : index\n}}\n");
    let context = context_of(anchor);
    Ok(template::inline_before(context, anchor, &text, &[]).map_err(|e| e.0)?[0])
}

/// `%v = %iv + distance` before `anchor`.
fn ahead(anchor: MlirOperation, iv: MlirValue, distance: i64) -> Result<MlirValue, String> {
    let text = format!(
        "func.func @template(%iv: index) -> index {{\n%d = arith.constant {distance} : index\n\
         %v = arith.addi %iv, %d : index\nreturn %v : index\n}}\n"
    );
    let context = context_of(anchor);
    Ok(template::inline_before(context, anchor, &text, &[iv]).map_err(|e| e.0)?[0])
}

/// Prefetches every cache line of the block `view` (a strided memref)
/// before `anchor`: loops over all but the last dimension, and a cache
/// line's worth of elements at a time along the last.
fn prefetch_block(anchor: MlirOperation, view: MlirValue) -> Result<(), String> {
    let view_type = value_type(view);
    let rank = rank_of(view_type) as usize;
    let shape: Vec<i64> = (0..rank).map(|d| dim_size(view_type, (d as isize) as usize)).collect();
    let line = (64 / element_bytes(view_type)).max(1);
    let text_type = print_type(view_type);
    let mut body = String::from("%c0 = arith.constant 0 : index\n");
    for (d, &size) in shape.iter().enumerate() {
        let step = if d + 1 == rank { line } else { 1 };
        emit_line!(body, "%n{d} = arith.constant {size} : index\n%s{d} = arith.constant {step} : index");
        emit_line!(body, "scf.for %i{d} = %c0 to %n{d} step %s{d} {{");
    }
    let indices = (0..rank).map(|d| format!("%i{d}")).collect::<Vec<_>>().join(", ");
    emit_line!(body, "memref.prefetch %view[{indices}], read, locality<3>, data : {text_type}");
    body.push_str(&"}\n".repeat(rank));
    let text = format!("func.func @template(%view: {text_type}) {{\n{body}return\n}}\n");
    let context = context_of(anchor);
    template::inline_before(context, anchor, &text, &[view]).map(|_| ()).map_err(|e| e.0)
}

fn pipeline_loop(for_op: MlirOperation, stages: i64) -> Result<(), String> {
    let operands = raw_op(for_op).operands();
    let (Some(lower), Some(upper), Some(step)) =
        (constant_index(operands[0]), constant_index(operands[1]), constant_index(operands[2]))
    else {
        return Ok(());
    };
    let trips = if step > 0 { (upper - lower).max(0) / step } else { 0 };
    let distance = stages - 1;
    if trips < stages {
        return Ok(());
    }
    let body = body_of(for_op);
    // SAFETY: live IR of the module being rewritten (crate invariant, support/handles.rs); indices stay below the counts they are taken from
    let iv = unsafe { mlirBlockGetArgument(body, 0) };
    // The blocks that move along the axis, viewed in place.
    let mut moving = Vec::new();
    // SAFETY: live IR of the module being rewritten (crate invariant, support/handles.rs); indices stay below the counts they are taken from
    let mut op = unsafe { mlirBlockGetFirstOperation(body) };
    while !op.ptr.is_null() {
        let raw = raw_op(op);
        if raw.name() == "memref.subview" && raw.operands().iter().skip(1).any(|&offset| depends_on(offset, iv, body)) {
            moving.push(op);
        }
        op = next_of(op);
    }
    if moving.is_empty() {
        return Ok(());
    }
    // SAFETY: `for_op` is a live scf.for (operands 0 and 1 its bounds); its clone is owned by no block until inserted after it; the string attributes are made in its context; `body` is the loop's live body.
    unsafe {
        // Epilogue: the last S - 1 steps, without prefetches.
        let split = index_constant(for_op, upper - distance * step)?;
        let epilogue = mlirOperationClone(for_op);
        mlirBlockInsertOwnedOperationAfter(mlirOperationGetBlock(for_op), for_op, epilogue);
        mlirOperationSetOperand(epilogue, 0, split);
        mlirOperationSetOperand(for_op, 1, split);
        let mark = |op: MlirOperation, phase: &str| {
            let context = mlirOperationGetContext(op);
            let attribute = mlirStringAttrGet(context, StringRef::new(phase).to_raw());
            mlirOperationSetAttributeByName(op, StringRef::new("tessel.pipeline").to_raw(), attribute);
        };
        mark(for_op, "steady");
        mark(epilogue, "epilogue");
        // Prologue: the blocks of the first S - 1 steps.
        for d in 0..distance {
            let k = index_constant(for_op, lower + d * step)?;
            for &view in &moving {
                let block = recompute(result_of(view, 0), iv, k, body, for_op);
                prefetch_block(for_op, block)?;
            }
        }
        // Steady state: step k prefetches the blocks of step k + S - 1.
        let first = mlirBlockGetFirstOperation(body);
        let next = ahead(first, iv, distance * step)?;
        for &view in &moving {
            let block = recompute(result_of(view, 0), iv, next, body, first);
            prefetch_block(first, block)?;
        }
    }
    Ok(())
}
