//! `tessel-lds-stage`: on GPUs, a contraction reads its operands from
//! workgroup memory (LDS), a chunk of k at a time.
//!
//! Runs on buffers, before loops. The contraction (block.dot's
//! `linalg.generic`, marked `tessel.contraction`) is tiled along k in
//! chunks of `tessel.lds_chunk` steps (default 16, shrunk to a divisor of
//! k) and both operands' chunks are promoted to local buffers: the
//! workgroup copies each chunk once, with coalesced loads, into buffers
//! that grid-to-gpu places in LDS, and every work-item then reads its
//! rows and columns from there instead of from global memory (k-chunk
//! loops: copy A and B chunks, barrier, compute, barrier). Each output
//! still sums over k in order, one fused multiply-add per step.

use crate::{
    PassDefinition, emit_error,
    ir::{collect_operations, fitting, group_of, set_i64_attribute},
    transform,
};
use melior::{
    ir::{OperationRef, operation::OperationLike},
    pass::ExternalPass,
};
use mlir_sys::*;
use std::fmt::Write;
use tessel_dialects::RawOp;

pub static PASS: PassDefinition = PassDefinition {
    argument: "tessel-lds-stage",
    name: "TesselLdsStage",
    description: "Stage contraction operands in workgroup memory (LDS) chunk by chunk along k",
    anchor: "builtin.module",
    run,
};

/// Module attribute: k steps per staged chunk.
pub const LDS_CHUNK: &str = "tessel.lds_chunk";
pub const DEFAULT_LDS_CHUNK: i64 = 16;
/// Marks the k-chunk loops (grid-to-gpu gives their buffers LDS first).
pub const STAGED_LOOP: &str = "tessel.lds_chunks";

fn run(module: OperationRef<'static, '_>, pass: ExternalPass<'_>) {
    let settings = RawOp(module.to_raw());
    let wanted = if settings.has(LDS_CHUNK) { settings.integer(LDS_CHUNK) } else { DEFAULT_LDS_CHUNK };
    if wanted < 1 {
        emit_error(module.location(), "tessel-lds-stage: tessel.lds_chunk must be a positive integer");
        pass.signal_failure();
        return;
    }
    // Contractions grouped by (rank, chunk): one script entry per group.
    let mut groups: Vec<(i64, i64)> = Vec::new();
    for (raw, _) in collect_operations(module, |name| name == "linalg.generic") {
        let op = RawOp(raw);
        if !op.has("tessel.contraction") {
            continue;
        }
        let lhs = unsafe { mlirValueGetType(op.operands()[0]) };
        if !unsafe { mlirTypeIsAMemRef(lhs) && mlirShapedTypeHasStaticShape(lhs) } {
            continue;
        }
        let rank = unsafe { mlirShapedTypeGetRank(lhs) } as i64;
        let k = unsafe { mlirShapedTypeGetDimSize(lhs, rank as isize - 1) };
        let group = group_of(&mut groups, (rank, fitting(k, wanted)));
        set_i64_attribute(raw, "tessel.stage_group", group as i64);
    }
    if groups.is_empty() {
        return;
    }
    let any = "!transform.any_op";
    let mut body = String::new();
    for (index, &(rank, chunk)) in groups.iter().enumerate() {
        let sizes = if rank == 3 { format!("0, 0, 0, {chunk}") } else { format!("0, 0, {chunk}") };
        write!(
            body,
            "%dots{index} = transform.structured.match ops{{[\"linalg.generic\"]}} \
             attributes{{tessel.contraction, tessel.stage_group = {index} : i64}} in %root : ({any}) -> {any}\n\
             %chunk{index}, %k{index} = transform.structured.tile_using_for %dots{index} tile_sizes [{sizes}] \
             : ({any}) -> ({any}, {any})\n\
             %staged{index} = transform.structured.promote %chunk{index} {{operands_to_promote = [0, 1]}} \
             : ({any}) -> {any}\n\
             transform.annotate %k{index} \"{STAGED_LOOP}\" : {any}\n"
        )
        .unwrap();
    }
    if let Err(error) = transform::apply(module.to_raw(), &transform::script(&body)) {
        emit_error(module.location(), &format!("tessel-lds-stage: {}", error.0));
        pass.signal_failure();
    }
}
