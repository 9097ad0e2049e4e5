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
//! bit-packed. A tile's leading unit dimensions are dropped
//! (`vector<1x4xi32>` -> `vector<4xi32>`): the LLVM conversions lower
//! some ops (`math.absi`) on one-dimensional vectors only.

use crate::support::handles::{attribute_text, dim_size, is_memref, rank_of, raw_op, shaped_element, value_type};
use crate::support::handles::{has_static_shape, is_shaped};
use crate::support::template::emit;
use crate::{
    PassDefinition, PassError,
    block::block_to_linalg::CONTRACTION,
    gpu::grid_to_gpu::workgroup_items,
    support::ir::{
        collect_operations, defining_op, element_bits, element_bytes, group_of, set_i64_attribute, static_bytes,
        view_root,
    },
    support::transform,
};
use melior::ir::{OperationRef, operation::OperationLike};
use mlir_sys::*;

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
    let raw = raw_op(op);
    if !raw.results().is_empty() {
        return None;
    }
    let operands = raw.operands();
    let output = value_type(*operands.last()?);
    if !is_memref(output) || !has_static_shape(output) {
        return None;
    }
    let rank = rank_of(output);
    if rank < 1 {
        return None;
    }
    let extents: Vec<i64> = (0..rank as isize).map(|d| dim_size(output, (d) as usize)).collect();
    // Vectors need unit-stride rows in every buffer (a dynamic stride may
    // be anything).
    for &value in &operands {
        let memref = value_type(value);
        if !is_memref(memref) {
            continue;
        }
        // Buffers of sub-byte elements (i1 masks, bool arrays) hold a byte
        // per element as scalar code writes them, but LLVM packs a vector
        // of them into bits (`load <4 x i1>` reads 4 bits of one byte): a
        // vector access would read other elements' bytes.
        if element_bits(shaped_element(memref)) % 8 != 0 {
            return None;
        }
        let operand_rank = rank_of(memref) as usize;
        let mut strides = vec![0i64; operand_rank.max(1)];
        let mut offset = 0i64;
        // SAFETY: `memref` is checked above to be a memref type of rank
        // `operand_rank`, and `strides` has room for that many strides.
        unsafe { mlirMemRefTypeGetStridesAndOffset(memref, strides.as_mut_ptr(), &mut offset) };
        if operand_rank == 0 || strides[operand_rank - 1] != 1 {
            return None;
        }
    }
    if raw.name() == "linalg.generic" {
        let iterators = attribute_text(raw.attribute("iterator_types"));
        if iterators.contains("reduction") || raw.has(CONTRACTION) {
            return None;
        }
        // Bodies with control flow or memory accesses of their own (the
        // predicated loads and stores of masked windows) stay scalar.
        let body = raw.region_block(0);
        let plain = crate::support::ir::block_operations(body).into_iter().all(|nested| {
            let name = raw_op(nested).name();
            // SAFETY: live IR of the module being rewritten (crate invariant, support/handles.rs); indices stay below the counts they are taken from
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
        // SAFETY: attributes and affine maps of live ops (crate invariant, support/handles.rs); an attribute is read as an affine map only where the op's verifier guarantees one, and positions stay below the map's result count
        for index in 0..unsafe { mlirArrayAttrGetNumElements(maps) } {
            // SAFETY: attributes and affine maps of live ops (crate invariant, support/handles.rs); an attribute is read as an affine map only where the op's verifier guarantees one, and positions stay below the map's result count
            let map = unsafe { mlirAffineMapAttrGetValue(mlirArrayAttrGetElement(maps, index)) };
            // SAFETY: attributes and affine maps of live ops (crate invariant, support/handles.rs); an attribute is read as an affine map only where the op's verifier guarantees one, and positions stay below the map's result count
            if !unsafe { mlirAffineMapIsProjectedPermutation(map) } {
                return None;
            }
            // SAFETY: attributes and affine maps of live ops (crate invariant, support/handles.rs); an attribute is read as an affine map only where the op's verifier guarantees one, and positions stay below the map's result count
            let results = unsafe { mlirAffineMapGetNumResults(map) };
            // SAFETY: attributes and affine maps of live ops (crate invariant, support/handles.rs); an attribute is read as an affine map only where the op's verifier guarantees one, and positions stay below the map's result count
            let position = (0..results).find(|&r| unsafe {
                let expr = mlirAffineMapGetResult(map, r);
                mlirAffineExprIsADim(expr) && mlirAffineDimExprGetPosition(expr) == innermost
            });
            if position.is_some_and(|p| p != results - 1) {
                return None;
            }
        }
    } else if raw.name() == "linalg.copy" {
        let input = value_type(operands[0]);
        if !is_memref(input) {
            return None;
        }
    }
    Some(extents)
}

/// Elements per 16-byte vector for the widest element `op` touches.
fn lanes(op: MlirOperation) -> i64 {
    let widest = raw_op(op)
        .operands()
        .iter()
        .filter(|&&value| is_shaped(value_type(value)))
        .map(|&value| element_bits(shaped_element(value_type(value))))
        .max()
        .unwrap_or(32);
    (VECTOR_BYTES * 8 / widest.max(8)).max(1)
}

/// Does `op` write a buffer the program allocates (LDS, or a work-item's
/// registers) that has at most one element per work-item? Vectors gain
/// nothing there — every item runs one iteration at most either way — and
/// scalar work gives element t to item t, as the block work accumulating
/// into such a buffer touches it (a row reduction's partials: item t's
/// partial t), so grid-to-gpu can keep it in the items' registers instead
/// of LDS, with no barrier between its initialization and its use.
fn fills_small_local_buffer(op: MlirOperation, threads: i64) -> bool {
    let Some(&output) = raw_op(op).operands().last() else { return false };
    let allocated = defining_op(view_root(output)).is_some_and(|root| raw_op(root).name() == "memref.alloc");
    allocated
        && static_bytes(value_type(output)).is_some_and(|bytes| bytes <= threads * element_bytes(value_type(output)))
}

fn run(module: OperationRef<'static, '_>) -> Result<(), PassError> {
    let threads = workgroup_items(module);
    // Ops grouped by (rank, lanes): one script entry per group.
    let mut groups: Vec<(usize, i64)> = Vec::new();
    let wanted = |name: &str| matches!(name, "linalg.generic" | "linalg.copy" | "linalg.fill");
    for (op, _) in collect_operations(module, wanted) {
        let Some(extents) = elementwise_extents(op) else { continue };
        if fills_small_local_buffer(op, threads) {
            continue;
        }
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
        emit!(
            body,
            "%ops{index} = transform.structured.match ops{{[\"linalg.generic\", \"linalg.copy\", \"linalg.fill\"]}} \
             attributes{{tessel.vector_group = {index} : i64}} in %root : ({any}) -> {any}\n\
             %tiles{index}, %loops{index} = transform.structured.tile_using_forall %ops{index} tile_sizes [{}] \
             : ({any}) -> ({any}, {any})\n\
             transform.structured.vectorize %tiles{index} : {any}\n\
             transform.apply_patterns to %loops{index} {{\n\
             transform.apply_patterns.vector.cast_away_vector_leading_one_dim\n\
             }} : {any}\n\
             transform.foreach %loops{index} : {any} {{\n\
             ^bb0(%loop{index}: {any}):\n\
             %parallel{index} = transform.loop.forall_to_parallel %loop{index} : ({any}) -> {any}\n\
             }}\n",
            sizes.join(", ")
        );
    }
    if let Err(error) = transform::apply(module.to_raw(), &transform::script(&body)) {
        return Err(PassError::at(module.location(), error.0));
    }
    Ok(())
}
