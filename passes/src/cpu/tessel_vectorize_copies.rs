//! `tessel-vectorize-copies`: strided copies move rows as vectors.
//!
//! A `linalg.copy` between windows that are not one byte range (a B panel
//! packed by `tessel-tile`, 16 floats out of every 2048-float row; a block
//! gathered into scratch) stays after `tessel-contiguous-copies`, and
//! `convert-linalg-to-loops` makes it scalar loops. LLVM does not
//! vectorize those: inside an OpenMP region's outlined function it cannot
//! tell the source from the destination, so every element is its own load
//! and store (the 2048 matmul's packing, 16 MiB, ran 16 `vmovss` pairs per
//! 64-byte row: 4% of the kernel's time).
//!
//! Where the two windows cannot overlap (different buffers, one allocated
//! in the function: `disjoint_windows`), both have a static shape, one
//! element type and unit innermost strides, the copy is tiled into pieces
//! of one row (up to `MAX_PIECE_BYTES` of it) and each piece vectorized
//! (`transform.structured.tile_using_for` + `transform.structured.vectorize`):
//! a `vector.transfer_read` and `transfer_write` per piece, full-width loads
//! and stores. Every element is copied once, from a buffer nothing writes
//! during the copy, so the result is the same bytes. Copies under
//! `tessel.bounds_checks` stay loops (`tessel-check-bounds` checks loads
//! and stores of loops).

use crate::support::handles::{raw_op, shaped_element, value_type};
use crate::support::ir::{
    collect_operations, disjoint_windows, element_bits, fitting, group_of, set_i64_attribute, static_shape,
    strides_and_offset,
};
use crate::support::transform;
use crate::{PassDefinition, PassError};
use melior::ir::{OperationRef, operation::OperationLike};
use mlir_sys::*;
use tessel_dialects::BOUNDS_CHECKS;

pub static PASS: PassDefinition = PassDefinition {
    argument: "tessel-vectorize-copies",
    name: "TesselVectorizeCopies",
    description: "Copy rows of strided, disjoint memref windows as vectors (linalg.copy tiled into row pieces, vectorized)",
    anchor: "builtin.module",
    run,
};

/// The marker naming a copy's group (copies of one rank and piece share
/// a transform step).
const GROUP: &str = "tessel.vectorize_copy";

/// The longest piece of a row one transfer moves: four 512-bit registers
/// (a longer row is several pieces; a static copy's vectors are unrolled,
/// so this bounds the code per piece).
const MAX_PIECE_BYTES: i64 = 256;

fn run(module: OperationRef<'static, '_>) -> Result<(), PassError> {
    if raw_op(module.to_raw()).has(BOUNDS_CHECKS) {
        return Ok(());
    }
    // (rank, piece) of each group; piece 0: whole rows.
    let mut groups: Vec<(usize, i64)> = Vec::new();
    for (copy, _) in collect_operations(module, |name| name == "linalg.copy") {
        if let Some((shape, bits)) = row_copy(copy) {
            let row = shape[shape.len() - 1];
            let piece = fitting(row, (MAX_PIECE_BYTES * 8 / bits.max(8)).max(1));
            let group = group_of(&mut groups, (shape.len(), if piece == row { 0 } else { piece }));
            set_i64_attribute(copy, GROUP, group as i64);
        }
    }
    if groups.is_empty() {
        return Ok(());
    }
    let any = "!transform.any_op";
    let mut body = String::new();
    for (index, &(rank, piece)) in groups.iter().enumerate() {
        body.push_str(&format!(
            "%copies{index} = transform.structured.match ops{{[\"linalg.copy\"]}} \
             attributes{{{GROUP} = {index} : i64}} in %root : ({any}) -> {any}\n"
        ));
        // One loop per outer dimension, and one over the pieces of a row
        // where a row is more than one piece (tile size 0: not tiled).
        let loops = rank - usize::from(piece == 0);
        if loops == 0 {
            body.push_str(&format!("%pieces{index} = transform.cast %copies{index} : {any} to {any}\n"));
        } else {
            let sizes: Vec<String> =
                (0..rank).map(|dim| if dim + 1 == rank { piece.to_string() } else { "1".into() }).collect();
            body.push_str(&format!(
                "%pieces{index}, %loops{index}:{loops} = transform.structured.tile_using_for %copies{index} \
                 tile_sizes [{}] : ({any}) -> ({any}, {})\n",
                sizes.join(", "),
                vec![any; loops].join(", ")
            ));
        }
        // Canonicalized where they are: transfers of static pieces at
        // index 0 marked in bounds (no checks when lowered), the
        // destination's read that vectorizing a copy makes dropped.
        body.push_str(&format!(
            "%scope{index} = transform.get_parent_op %pieces{index} {{deduplicate}} : ({any}) -> {any}\n\
             transform.structured.vectorize %pieces{index} : {any}\n\
             transform.apply_patterns to %scope{index} {{\n\
               transform.apply_patterns.canonicalization\n\
             }} : {any}\n"
        ));
    }
    transform::apply(module.to_raw(), &transform::script(&body))
        .map_err(|error| PassError::at(module.location(), error.0))
}

/// The shape and element bits of the copy `copy` when it moves rows this
/// pass vectorizes:
/// static memref windows of one int or float element type of whole bytes,
/// unit innermost strides, rows of two or more elements, that cannot
/// overlap.
fn row_copy(copy: MlirOperation) -> Option<(Vec<i64>, i64)> {
    let operands = raw_op(copy).operands();
    let [source, target] = operands[..] else { return None };
    let (source_type, target_type) = (value_type(source), value_type(target));
    let shape = static_shape(source_type)?;
    // SAFETY: both are memref types (`static_shape` checked them); types are uniqued in the context.
    let (same_type, numeric) = unsafe {
        let element = mlirShapedTypeGetElementType(source_type);
        (
            mlirTypeEqual(element, mlirShapedTypeGetElementType(target_type)),
            mlirTypeIsAFloat(element) || mlirTypeIsAInteger(element),
        )
    };
    // Whole bytes only: a vector of i1 (or i4) is packed bits to LLVM,
    // while the buffer holds a byte per element.
    let bits = element_bits(shaped_element(source_type));
    let unit_rows = |memref| strides_and_offset(memref).is_some_and(|(strides, _)| strides.last() == Some(&1));
    (static_shape(target_type).as_ref() == Some(&shape)
        && same_type
        && numeric
        && bits >= 8
        && shape.last().is_some_and(|&row| row >= 2)
        && unit_rows(source_type)
        && unit_rows(target_type)
        && disjoint_windows(source, target))
    .then_some((shape, bits))
}
