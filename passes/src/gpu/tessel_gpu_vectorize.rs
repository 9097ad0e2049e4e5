//! `tessel-gpu-vectorize`: element-wise block work on GPUs moves 16 bytes
//! per work-item access.
//!
//! An element-wise op on buffers (`linalg.generic` with only parallel
//! loops, `linalg.copy`, `linalg.fill`) whose innermost extent is a
//! multiple of a 16-byte vector is tiled by one vector along it
//! (`tile_using_forall`, the tile loop turned into the `scf.parallel` that
//! grid-to-gpu spreads over the work-items) and the tile vectorized, so
//! each item reads and writes `vector<4xf32>` (global_load_dwordx4) and
//! neighbouring items neighbouring vectors: coalesced, a quarter of the
//! memory instructions. Ops whose operands do not keep the innermost loop
//! innermost (transposes, broadcasts along it), whose rows are not known
//! to be contiguous, or whose bodies branch or access memory themselves
//! (predicated masked accesses) keep scalar accesses, and so do ops on
//! buffers of sub-byte elements (masks), which LLVM's vectors would read
//! bit-packed.

use crate::{
    PassDefinition, PassError,
    block::block_to_linalg::CONTRACTION,
    support::ir::{collect_operations, element_bits, group_of, set_i64_attribute},
    support::transform,
};
use melior::ir::{OperationRef, operation::OperationLike};
use mlir_sys::*;
use std::fmt::Write;
use tessel_dialects::RawOp;

pub static PASS: PassDefinition = PassDefinition {
    argument: "tessel-gpu-vectorize",
    name: "TesselGpuVectorize",
    description: "Tile element-wise ops by one 16-byte vector per work-item access and vectorize them (GPU)",
    anchor: "builtin.module",
    run,
};

/// Bytes a work-item moves per access.
const VECTOR_BYTES: i64 = 16;

/// The loop extents of an element-wise op on static buffers, if it is one
/// whose every operand keeps the innermost loop innermost.
fn elementwise_extents(op: MlirOperation) -> Option<Vec<i64>> {
    let raw = RawOp(op);
    if !raw.results().is_empty() {
        return None;
    }
    let operands = raw.operands();
    let output = unsafe { mlirValueGetType(*operands.last()?) };
    if !unsafe { mlirTypeIsAMemRef(output) && mlirShapedTypeHasStaticShape(output) } {
        return None;
    }
    let rank = unsafe { mlirShapedTypeGetRank(output) };
    if rank < 1 {
        return None;
    }
    let extents: Vec<i64> = (0..rank as isize).map(|d| unsafe { mlirShapedTypeGetDimSize(output, d) }).collect();
    // Vectors need unit-stride rows in every buffer (a dynamic stride may
    // be anything).
    for &value in &operands {
        let memref = unsafe { mlirValueGetType(value) };
        if !unsafe { mlirTypeIsAMemRef(memref) } {
            continue;
        }
        // Buffers of sub-byte elements (i1 masks, bool arrays) hold a byte
        // per element as scalar code writes them, but LLVM packs a vector
        // of them into bits (`load <4 x i1>` reads 4 bits of one byte): a
        // vector access would read other elements' bytes.
        if element_bits(unsafe { mlirShapedTypeGetElementType(memref) }) % 8 != 0 {
            return None;
        }
        let operand_rank = unsafe { mlirShapedTypeGetRank(memref) } as usize;
        let mut strides = vec![0i64; operand_rank.max(1)];
        let mut offset = 0i64;
        unsafe { mlirMemRefTypeGetStridesAndOffset(memref, strides.as_mut_ptr(), &mut offset) };
        if operand_rank == 0 || strides[operand_rank - 1] != 1 {
            return None;
        }
    }
    if raw.name() == "linalg.generic" {
        let iterators = unsafe { melior::ir::Attribute::from_raw(raw.attribute("iterator_types")) }.to_string();
        if iterators.contains("reduction") || raw.has(CONTRACTION) {
            return None;
        }
        // Bodies with control flow or memory accesses of their own (the
        // predicated loads and stores of masked windows) stay scalar.
        let body = raw.region_block(0);
        let plain = crate::support::ir::block_operations(body).into_iter().all(|nested| {
            let name = RawOp(nested).name();
            let flat = unsafe { mlirOperationGetNumRegions(nested) } == 0;
            flat && !name.starts_with("memref.") && !name.starts_with("vector.")
        });
        if !plain {
            return None;
        }
        // Every map a projected permutation with the innermost loop, when
        // used, as its last result.
        let maps = raw.attribute("indexing_maps");
        let innermost = (rank - 1) as isize;
        for index in 0..unsafe { mlirArrayAttrGetNumElements(maps) } {
            let map = unsafe { mlirAffineMapAttrGetValue(mlirArrayAttrGetElement(maps, index)) };
            if !unsafe { mlirAffineMapIsProjectedPermutation(map) } {
                return None;
            }
            let results = unsafe { mlirAffineMapGetNumResults(map) };
            let position = (0..results).find(|&r| unsafe {
                let expr = mlirAffineMapGetResult(map, r);
                mlirAffineExprIsADim(expr) && mlirAffineDimExprGetPosition(expr) == innermost
            });
            if position.is_some_and(|p| p != results - 1) {
                return None;
            }
        }
    } else if raw.name() == "linalg.copy" {
        let input = unsafe { mlirValueGetType(operands[0]) };
        if !unsafe { mlirTypeIsAMemRef(input) } {
            return None;
        }
    }
    Some(extents)
}

/// Elements per 16-byte vector for the widest element `op` touches.
fn lanes(op: MlirOperation) -> i64 {
    let widest = RawOp(op)
        .operands()
        .iter()
        .filter(|&&value| unsafe { mlirTypeIsAShaped(mlirValueGetType(value)) })
        .map(|&value| element_bits(unsafe { mlirShapedTypeGetElementType(mlirValueGetType(value)) }))
        .max()
        .unwrap_or(32);
    (VECTOR_BYTES * 8 / widest.max(8)).max(1)
}

fn run(module: OperationRef<'static, '_>) -> Result<(), PassError> {
    // Ops grouped by (rank, lanes): one script entry per group.
    let mut groups: Vec<(usize, i64)> = Vec::new();
    let wanted = |name: &str| matches!(name, "linalg.generic" | "linalg.copy" | "linalg.fill");
    for (op, _) in collect_operations(module, wanted) {
        let Some(extents) = elementwise_extents(op) else { continue };
        let lanes = lanes(op);
        if lanes < 2 || extents.last().is_none_or(|&inner| inner % lanes != 0 || inner == lanes) {
            continue;
        }
        let group = group_of(&mut groups, (extents.len(), lanes));
        set_i64_attribute(op, "tessel.vector_group", group as i64);
    }
    if groups.is_empty() {
        return Ok(());
    }
    let any = "!transform.any_op";
    let mut body = String::new();
    for (index, &(rank, lanes)) in groups.iter().enumerate() {
        let sizes: Vec<String> =
            (0..rank).map(|d| if d + 1 == rank { lanes.to_string() } else { "1".into() }).collect();
        write!(
            body,
            "%ops{index} = transform.structured.match ops{{[\"linalg.generic\", \"linalg.copy\", \"linalg.fill\"]}} \
             attributes{{tessel.vector_group = {index} : i64}} in %root : ({any}) -> {any}\n\
             %tiles{index}, %loops{index} = transform.structured.tile_using_forall %ops{index} tile_sizes [{}] \
             : ({any}) -> ({any}, {any})\n\
             transform.structured.vectorize %tiles{index} : {any}\n\
             transform.foreach %loops{index} : {any} {{\n\
             ^bb0(%loop{index}: {any}):\n\
             %parallel{index} = transform.loop.forall_to_parallel %loop{index} : ({any}) -> {any}\n\
             }}\n",
            sizes.join(", ")
        )
        .unwrap();
    }
    if let Err(error) = transform::apply(module.to_raw(), &transform::script(&body)) {
        return Err(PassError::at(module.location(), error.0));
    }
    Ok(())
}
