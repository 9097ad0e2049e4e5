//! `tessel-emulate-subgroups`: the cross-lane reductions of `gpu.launch`
//! kernels (`gpu.subgroup_reduce`) as code the GPU emulator runs.
//!
//! On the GPU the lanes of a cluster exchange values through DPP moves;
//! here, as for the matrix instructions, through memory: every work-item
//! stores its value in an exchange buffer of the workgroup (a slot per
//! item), a barrier, every item folds its cluster's slots in lane order,
//! a barrier (before the buffer is used again). The operation must sit
//! where every work-item reaches it (as on the GPU, where the reduction
//! needs all its lanes); `tessel-emulate-gpu` rejects barriers elsewhere.
//! Float sums may round differently from the GPU's butterfly order, as
//! any reassociation of a `block.reduce` may (its order is unspecified).
//!
//! Runs after `grid-to-gpu` (one-dimensional workgroups) and before
//! `tessel-emulate-gpu`, which then runs the phases between barriers.

use crate::support::handles::{attribute_text, context_of, location_of, operation_ref, raw_op, value_type};
use crate::{
    PassDefinition, PassError,
    emulate::exchange_buffer,
    gpu::grid_to_gpu::DEFAULT_WAVE_SIZE,
    gpu::tessel_cross_lane_reductions::REDUCE_KINDS,
    support::ir::{block_arguments, collect_operations, print_type},
    support::template,
};
use melior::ir::OperationRef;
use mlir_sys::*;
use tessel_dialects::knobs;

pub static PASS: PassDefinition = PassDefinition {
    argument: "tessel-emulate-subgroups",
    name: "TesselEmulateSubgroups",
    description: "Emulate gpu.subgroup_reduce in gpu.launch kernels: lanes exchanged through memory between barriers",
    anchor: "builtin.module",
    run,
};

fn run(module: OperationRef<'static, '_>) -> Result<(), PassError> {
    let wave = knobs::WAVE_SIZE.integer_or(raw_op(module.to_raw()), DEFAULT_WAVE_SIZE);
    for (launch, _) in collect_operations(module, |name| name == "gpu.launch") {
        if let Err((op, message)) = emulate_launch(launch, wave) {
            return Err(PassError::at(location_of(op), message));
        }
    }
    Ok(())
}

/// The arith op folding two values of type `element` for a reduce kind.
fn combiner(kind: &str, element: &str) -> Option<&'static str> {
    let float = element.starts_with('f') || element.starts_with("bf");
    let (_, on_floats, on_integers) = REDUCE_KINDS.iter().find(|(known, ..)| *known == kind)?;
    if float { *on_floats } else { *on_integers }
}

fn emulate_launch(launch: MlirOperation, wave: i64) -> Result<(), (MlirOperation, String)> {
    let reductions = collect_operations(operation_ref(launch), |name| name == "gpu.subgroup_reduce");
    if reductions.is_empty() {
        return Ok(());
    }
    let body = raw_op(launch).region_block(0);
    let arguments = block_arguments(body);
    let (item, items) = (arguments[3], arguments[9]);
    // One exchange buffer per element type, a slot per work-item.
    let mut exchanges: Vec<(String, MlirValue)> = Vec::new();
    for (op, _) in reductions {
        let raw = raw_op(op);
        let value = raw.operands()[0];
        let element = print_type(value_type(value));
        let kind = attribute_text(raw.attribute("op"));
        let kind = kind.trim_start_matches("#gpu<all_reduce_op ").trim_end_matches('>');
        if element.contains('<') {
            return Err((op, format!("the emulator reduces scalars across lanes, not {element}")));
        }
        let Some(fold) = combiner(kind, &element) else {
            return Err((op, format!("the emulator has no '{kind}' subgroup reduction of {element}")));
        };
        let cluster = match raw.integer("cluster_size") {
            0 => wave,
            size => size,
        };
        if raw.has("cluster_stride") && raw.integer("cluster_stride") != 1 {
            return Err((op, "the emulator reduces clusters of consecutive lanes only".into()));
        }
        let memref = format!("memref<?x{element}>");
        let exchange = match exchanges.iter().find(|(known, _)| *known == element) {
            Some((_, buffer)) => *buffer,
            None => {
                let buffer = exchange_buffer(body, items, 1, &element).map_err(|why| (launch, why))?;
                exchanges.push((element.clone(), buffer));
                buffer
            }
        };
        let text = format!(
            "func.func @template(%x: {memref}, %t: index, %v: {element}) -> {element} {{\n\
             memref.store %v, %x[%t] : {memref}\ngpu.barrier\n\
             %c1 = arith.constant 1 : index\n%cluster = arith.constant {cluster} : index\n\
             %lane = arith.remui %t, %cluster : index\n%base = arith.subi %t, %lane : index\n\
             %first = memref.load %x[%base] : {memref}\n\
             %w = scf.for %j = %c1 to %cluster step %c1 iter_args(%acc = %first) -> ({element}) {{\n\
             %s = arith.addi %base, %j : index\n%e = memref.load %x[%s] : {memref}\n\
             %n = {fold} %acc, %e : {element}\nscf.yield %n : {element}\n}}\n\
             gpu.barrier\nreturn %w : {element}\n}}"
        );
        template::replace(context_of(op), op, &text, &[exchange, item, value]).map_err(|error| (op, error.0))?;
    }
    Ok(())
}
