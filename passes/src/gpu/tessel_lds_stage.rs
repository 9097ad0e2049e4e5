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
//!
//! With `tessel.num_stages = 2` (the GPU's pipelining knob), a rank-2
//! contraction with an even number of chunks is double-buffered instead:
//! two LDS buffers per operand, chunk c + 1 copied into one while chunk c
//! is computed from the other (prologue, steady pairs, epilogue, written
//! out so each buffer is a fixed slot). The copy and the compute of a step
//! touch different slots, so `tessel-elide-barriers` puts them in one
//! phase: the global loads of the next chunk overlap the FMAs of the
//! current one, with one barrier per chunk instead of two. Chunks shrink
//! so the four buffers take at most 32 KiB.

use crate::support::handles::{
    dim_size, location_of, operation_ref, rank_of, raw_op, result_of, shaped_element, value_type,
};
use crate::support::handles::{has_static_shape, is_memref};
use crate::support::template::emit;
use crate::{
    PassDefinition, PassError,
    block::block_to_linalg::CONTRACTION,
    support::ir::{
        collect_operations, element_bytes, fitting, group_of, print_type, set_i64_attribute, strided_view_type,
    },
    support::transform,
};
use melior::ir::{OperationRef, operation::OperationLike};
use mlir_sys::*;
use tessel_dialects::knobs;

pub static PASS: PassDefinition = PassDefinition {
    argument: "tessel-lds-stage",
    name: "TesselLdsStage",
    description: "Stage contraction operands in workgroup memory (LDS) chunk by chunk along k",
    anchor: "builtin.module",
    run,
};

/// k steps per staged chunk when the module does not say.
pub const DEFAULT_LDS_CHUNK: i64 = 16;
/// Marks the k-chunk loops (grid-to-gpu gives their buffers LDS first).
pub const STAGED_LOOP: &str = "tessel.lds_chunks";
/// Marks double buffers (grid-to-gpu gives them LDS first too).
pub const STAGED_BUFFER: &str = "tessel.staged";
/// Bytes of LDS the double buffers of one contraction may take.
const DOUBLE_BUFFER_BYTES: i64 = 32768;

fn run(module: OperationRef<'static, '_>) -> Result<(), PassError> {
    let settings = raw_op(module.to_raw());
    let wanted = knobs::LDS_CHUNK.integer_or(settings, DEFAULT_LDS_CHUNK);
    if wanted < 1 {
        return Err(PassError::at(module.location(), "tessel.lds_chunk must be a positive integer"));
    }
    let stages = knobs::NUM_STAGES.integer_or(settings, 1);
    // Contractions grouped by (rank, chunk): one script entry per group.
    let mut groups: Vec<(i64, i64)> = Vec::new();
    for (raw, _) in collect_operations(module, |name| name == "linalg.generic") {
        let op = raw_op(raw);
        if !op.has(CONTRACTION) {
            continue;
        }
        let lhs = value_type(op.operands()[0]);
        if !is_memref(lhs) || !has_static_shape(lhs) {
            continue;
        }
        let rank = rank_of(lhs);
        let k = dim_size(lhs, (rank as isize - 1) as usize);
        if stages >= 2 && rank == 2 {
            match double_buffer(raw, wanted) {
                Ok(true) => continue,
                Ok(false) => {}
                Err(message) => {
                    return Err(PassError::at(location_of(raw), message));
                }
            }
        }
        let group = group_of(&mut groups, (rank, fitting(k, wanted)));
        set_i64_attribute(raw, "tessel.stage_group", group as i64);
    }
    if groups.is_empty() {
        return Ok(());
    }
    let any = "!transform.any_op";
    let mut body = String::new();
    for (index, &(rank, chunk)) in groups.iter().enumerate() {
        let sizes = if rank == 3 { format!("0, 0, 0, {chunk}") } else { format!("0, 0, {chunk}") };
        emit!(
            body,
            "%dots{index} = transform.structured.match ops{{[\"linalg.generic\"]}} \
             attributes{{tessel.contraction, tessel.stage_group = {index} : i64}} in %root : ({any}) -> {any}\n\
             %chunk{index}, %k{index} = transform.structured.tile_using_for %dots{index} tile_sizes [{sizes}] \
             : ({any}) -> ({any}, {any})\n\
             %staged{index} = transform.structured.promote %chunk{index} {{operands_to_promote = [0, 1]}} \
             : ({any}) -> {any}\n\
             transform.annotate %k{index} \"{STAGED_LOOP}\" : {any}\n"
        );
    }
    if let Err(error) = transform::apply(module.to_raw(), &transform::script(&body)) {
        return Err(PassError::at(module.location(), error.0));
    }
    Ok(())
}

/// Double-buffers the rank-2 contraction `op` (on memrefs); `Ok(false)`
/// when it does not apply (dynamic shapes, fewer than two or an odd
/// number of chunks).
fn double_buffer(op: MlirOperation, wanted: i64) -> Result<bool, String> {
    let operands = raw_op(op).operands();
    let (a, b, c) = (operands[0], operands[1], operands[2]);
    let types = [a, b, c].map(value_type);
    if types.iter().any(|&t| !is_memref(t) || !has_static_shape(t)) {
        return Ok(false);
    }
    let dim = |t: MlirType, d: isize| dim_size(t, (d) as usize);
    let (m, k, n) = (dim(types[0], 0), dim(types[0], 1), dim(types[1], 1));
    let per_step = 2 * (m * element_bytes(types[0]) + n * element_bytes(types[1]));
    let chunk = fitting(k, wanted.min((DOUBLE_BUFFER_BYTES / per_step.max(1)).max(1)));
    let chunks = k / chunk;
    if chunks < 2 || chunks % 2 != 0 {
        return Ok(false);
    }
    let [ta, tb, tc] = types.map(print_type);
    let (sa, sb) = (strided_view_type(types[0], m, chunk), strided_view_type(types[1], chunk, n));
    let ea = print_type(shaped_element(types[0]));
    let eb = print_type(shaped_element(types[1]));
    let (la, lb) = (format!("memref<{m}x{chunk}x{ea}>"), format!("memref<{chunk}x{n}x{eb}>"));
    // Chunk `at` of both operands into buffer `into` (`label` names it).
    let copy = |label: &str, at: &str, into: &str| {
        format!(
            "%sa_{label} = memref.subview %A[%c0, {at}] [{m}, {chunk}] [1, 1] : {ta} to {sa}\n\
             %sb_{label} = memref.subview %B[{at}, %c0] [{chunk}, {n}] [1, 1] : {tb} to {sb}\n\
             linalg.copy ins(%sa_{label} : {sa}) outs(%a{into} : {la})\n\
             linalg.copy ins(%sb_{label} : {sb}) outs(%b{into} : {lb})\n"
        )
    };
    // `gpu.barrier`s stand for the four computes (buffers 0, 1, 0, 1).
    let text = format!(
        "func.func @template(%A: {ta}, %B: {tb}, %C: {tc}) {{\n\
         %c0 = arith.constant 0 : index\n%step = arith.constant {chunk} : index\n\
         %pair = arith.constant {pair} : index\n%steady = arith.constant {steady} : index\n\
         %last = arith.constant {last} : index\n\
         %a0 = memref.alloc() {{alignment = 64 : i64, {STAGED_BUFFER}}} : {la}\n\
         %a1 = memref.alloc() {{alignment = 64 : i64, {STAGED_BUFFER}}} : {la}\n\
         %b0 = memref.alloc() {{alignment = 64 : i64, {STAGED_BUFFER}}} : {lb}\n\
         %b1 = memref.alloc() {{alignment = 64 : i64, {STAGED_BUFFER}}} : {lb}\n\
         {prologue}\
         scf.for %k = %c0 to %steady step %pair {{\n\
         %k1 = arith.addi %k, %step : index\n%k2 = arith.addi %k1, %step : index\n\
         {next}gpu.barrier\n{after}gpu.barrier\n}} {{{STAGED_LOOP}}}\n\
         {epilogue}gpu.barrier\ngpu.barrier\n\
         return\n}}",
        pair = 2 * chunk,
        steady = k - 2 * chunk,
        last = k - chunk,
        prologue = copy("first", "%c0", "0"),
        next = copy("next", "%k1", "1"),
        after = copy("after", "%k2", "0"),
        epilogue = copy("last", "%last", "1"),
    );
    let (_, added) = crate::support::ir::inline_template(op, &text, &[a, b, c])?;
    let mut placeholders = Vec::new();
    let mut buffers = Vec::new();
    for &inserted in &added {
        if raw_op(inserted).name() == "memref.alloc" {
            buffers.push(result_of(inserted, 0));
        }
        operation_ref(inserted).walk(melior::ir::operation::WalkOrder::PreOrder, |nested| {
            if raw_op(nested.to_raw()).name() == "gpu.barrier" {
                placeholders.push(nested.to_raw());
            }
            melior::ir::operation::WalkResult::Advance
        });
    }
    let [a0, a1, b0, b1] = buffers[..] else { return Err("the double-buffer template changed".into()) };
    for (placeholder, (lhs, rhs)) in placeholders.into_iter().zip([(a0, b0), (a1, b1), (a0, b0), (a1, b1)]) {
        // SAFETY: `op` is a live contraction with at least two operands; its clone is owned by no block until inserted before the live `placeholder`, in the placeholder's block.
        unsafe {
            let compute = mlirOperationClone(op);
            mlirOperationSetOperand(compute, 0, lhs);
            mlirOperationSetOperand(compute, 1, rhs);
            mlirBlockInsertOwnedOperationBefore(mlirOperationGetBlock(placeholder), placeholder, compute);
        }
        crate::support::ir::erase(placeholder);
    }
    crate::support::ir::erase(op);
    Ok(true)
}
