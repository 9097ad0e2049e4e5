//! Register-tile accumulators carried by the k loop in vectors of
//! power-of-two lengths (`tessel-vectorize`).
//!
//! A tile's accumulator is read and written once per k step until the
//! hoisting makes it the k loop's iteration argument. Its rows are
//! `tile_n` elements long; where that is not a power of two (a 4 x 24 tile
//! of AVX2's 8-lane vectors, 8 x 48 of AVX-512's 16), the loop would carry
//! `<24 x float>` values across its back edge, and LLVM passes a vector of
//! a length that is not a power of two between blocks as scalars: every
//! k step then takes the tile apart element by element through the stack
//! (measured: a 4 x 48 tile ran the 2048 matmul 40x slower than 4 x 64).
//!
//! Before the hoisting, each such accumulator transfer (a read of the k
//! loop's iteration tensor, the write into it) becomes one transfer per
//! piece of each row: whole vectors of the target's width, then the
//! remainder in descending powers of two (24 on AVX2: 8 + 8 + 8; on
//! AVX-512: 16 + 8). The hoisting then carries the pieces, and the tile
//! is assembled and taken apart only inside the loop body, where LLVM
//! keeps it in registers. The same elements are read, computed and
//! written: results keep their bits.

use crate::PassError;
use crate::cpu::tessel_tile::REDUCTION_LOOP;
use crate::support::handles::{argument_owner, dim_size, rank_of, raw_op, value_type};
use crate::support::ir::{element_bits, element_type, join, print_type};
use crate::support::template::{self, emit_line};
use melior::ir::OperationRef;
use mlir_sys::*;

/// Splits the accumulator transfers of every marked k loop whose rows are
/// not a power of two long into pieces of at most `vector_bits`.
pub fn split(module: OperationRef<'static, '_>, vector_bits: i64) -> Result<(), PassError> {
    template::rewrite_each(
        module,
        |name| name == "vector.transfer_read" || name == "vector.transfer_write",
        |op, name| {
            let read = name == "vector.transfer_read";
            let transfer = raw_op(op);
            let operands = transfer.operands();
            let (vector, tensor) = if read {
                (value_type(transfer.results()[0]), operands[0])
            } else {
                (value_type(operands[0]), operands[1])
            };
            let Some(shape) = accumulator_shape(op, vector, tensor) else { return Ok(None) };
            let element = element_type(vector);
            let lanes = (vector_bits / element_bits(element).max(1)).max(1);
            let pieces = pieces(*shape.last().expect("a vector has dimensions"), lanes);
            let source_rank = rank_of(value_type(tensor)) as usize;
            let indices = if read { &operands[1..1 + source_rank] } else { &operands[2..2 + source_rank] };
            let mut args = vec![tensor];
            args.extend_from_slice(indices);
            let template = if read {
                args.push(operands[1 + source_rank]);
                read_template(&shape, &pieces, vector, value_type(tensor))
            } else {
                args.insert(0, operands[0]);
                write_template(&shape, &pieces, vector, value_type(tensor))
            };
            Ok(Some((template, args)))
        },
    )
}

/// The shape of `op`'s vector when it is the accumulator transfer of a
/// marked k loop (its tensor the loop's iteration argument; one or two
/// dimensions, minor identity map, in bounds, unmasked) with rows that are
/// not a power of two long.
fn accumulator_shape(op: MlirOperation, vector: MlirType, tensor: MlirValue) -> Option<Vec<i64>> {
    let (owner, position) = argument_owner(tensor)?;
    let owner = raw_op(owner);
    if owner.name() != "scf.for" || !owner.has(REDUCTION_LOOP) || position == 0 {
        return None;
    }
    let raw = raw_op(op);
    let rank = rank_of(vector);
    let source_rank = rank_of(value_type(tensor));
    let has_mask = raw.segments().get(3).is_some_and(|&count| count > 0);
    if !(1..=2).contains(&rank) || source_rank < rank || has_mask {
        return None;
    }
    // SAFETY: attributes of a live op, read as their kinds only when present.
    let regular = unsafe {
        let map = raw.attribute("permutation_map");
        let in_bounds = raw.attribute("in_bounds");
        let map_ok = map.ptr.is_null() || mlirAffineMapIsMinorIdentity(mlirAffineMapAttrGetValue(map));
        let bounds_ok = !in_bounds.ptr.is_null()
            && mlirAttributeIsAArray(in_bounds)
            && (0..mlirArrayAttrGetNumElements(in_bounds))
                .all(|k| mlirBoolAttrGetValue(mlirArrayAttrGetElement(in_bounds, k)));
        map_ok && bounds_ok
    };
    let shape: Vec<i64> = (0..rank as usize).map(|k| dim_size(vector, k)).collect();
    let row = *shape.last()?;
    (regular && row > 0 && !(row as u64).is_power_of_two()).then_some(shape)
}

/// A row of `length` elements as `(offset, size)` pieces: whole vectors of
/// `lanes`, then the rest in descending powers of two.
fn pieces(length: i64, lanes: i64) -> Vec<(i64, i64)> {
    let mut pieces = Vec::new();
    let mut offset = 0;
    while offset < length {
        let left = length - offset;
        let size = if left >= lanes { lanes } else { 1 << (63 - (left as u64).leading_zeros()) };
        pieces.push((offset, size));
        offset += size;
    }
    pieces
}

/// Each (row, piece) of `shape`, with the row's index (none for a vector of
/// one dimension).
fn each_piece<'a>(shape: &'a [i64], pieces: &'a [(i64, i64)]) -> impl Iterator<Item = (Option<i64>, i64, i64)> + 'a {
    let rows: Vec<Option<i64>> = if shape.len() == 2 { (0..shape[0]).map(Some).collect() } else { vec![None] };
    rows.into_iter().flat_map(move |row| pieces.iter().map(move |&(offset, size)| (row, offset, size)))
}

/// The template's index names for a piece at `row`, `offset` (the last
/// one or two indices shifted).
fn piece_indices(text: &mut String, source_rank: usize, row: Option<i64>, offset: i64, name: &str) -> String {
    let mut indices: Vec<String> = (0..source_rank).map(|k| format!("%i{k}")).collect();
    let mut shift = |position: usize, by: i64, label: &str| {
        emit_line!(text, "%{name}_{label}_by = arith.constant {by} : index");
        emit_line!(text, "%{name}_{label} = arith.addi %i{position}, %{name}_{label}_by : index");
        indices[position] = format!("%{name}_{label}");
    };
    shift(source_rank - 1, offset, "column");
    if let Some(row) = row {
        shift(source_rank - 2, row, "row");
    }
    join(indices)
}

fn index_arguments(source_rank: usize) -> String {
    join((0..source_rank).map(|k| format!("%i{k}: index")))
}

fn read_template(shape: &[i64], pieces: &[(i64, i64)], vector: MlirType, tensor: MlirType) -> String {
    let (vector_text, tensor_text) = (print_type(vector), print_type(tensor));
    let element = print_type(element_type(vector));
    let source_rank = rank_of(tensor) as usize;
    let mut text = format!(
        "func.func @template(%t: {tensor_text}, {}, %pad: {element}) -> {vector_text} {{\n\
         %v0 = vector.broadcast %pad : {element} to {vector_text}\n",
        index_arguments(source_rank)
    );
    let mut last = 0;
    for (k, (row, offset, size)) in each_piece(shape, pieces).enumerate() {
        let indices = piece_indices(&mut text, source_rank, row, offset, &format!("p{k}"));
        let offsets = row.map_or(format!("[{offset}]"), |row| format!("[{row}, {offset}]"));
        emit_line!(
            text,
            "%p{k} = vector.transfer_read %t[{indices}], %pad {{in_bounds = [true]}} : {tensor_text}, vector<{size}x{element}>"
        );
        emit_line!(
            text,
            "%v{} = vector.insert_strided_slice %p{k}, %v{k} {{offsets = {offsets}, strides = [1]}} \
             : vector<{size}x{element}> into {vector_text}",
            k + 1
        );
        last = k + 1;
    }
    emit_line!(text, "return %v{last} : {vector_text}\n}}");
    text
}

fn write_template(shape: &[i64], pieces: &[(i64, i64)], vector: MlirType, tensor: MlirType) -> String {
    let (vector_text, tensor_text) = (print_type(vector), print_type(tensor));
    let element = print_type(element_type(vector));
    let row_length = *shape.last().expect("a vector has dimensions");
    let source_rank = rank_of(tensor) as usize;
    let mut text = format!(
        "func.func @template(%v: {vector_text}, %t0: {tensor_text}, {}) -> {tensor_text} {{\n",
        index_arguments(source_rank)
    );
    let mut last = 0;
    for (k, (row, offset, size)) in each_piece(shape, pieces).enumerate() {
        let indices = piece_indices(&mut text, source_rank, row, offset, &format!("p{k}"));
        let row_value = match row {
            Some(row) => {
                emit_line!(
                    text,
                    "%r{k} = vector.extract %v[{row}] : vector<{row_length}x{element}> from {vector_text}"
                );
                format!("%r{k}")
            }
            None => "%v".to_string(),
        };
        emit_line!(
            text,
            "%p{k} = vector.extract_strided_slice {row_value} {{offsets = [{offset}], sizes = [{size}], strides = [1]}} \
             : vector<{row_length}x{element}> to vector<{size}x{element}>"
        );
        emit_line!(
            text,
            "%t{} = vector.transfer_write %p{k}, %t{k}[{indices}] {{in_bounds = [true]}} \
             : vector<{size}x{element}>, {tensor_text}",
            k + 1
        );
        last = k + 1;
    }
    emit_line!(text, "return %t{last} : {tensor_text}\n}}");
    text
}

#[cfg(test)]
mod tests {
    use super::pieces;

    #[test]
    fn rows_split_into_vectors_then_powers_of_two() {
        assert_eq!(pieces(24, 8), vec![(0, 8), (8, 8), (16, 8)]);
        assert_eq!(pieces(24, 16), vec![(0, 16), (16, 8)]);
        assert_eq!(pieces(20, 16), vec![(0, 16), (16, 4)]);
        assert_eq!(pieces(7, 16), vec![(0, 4), (4, 2), (6, 1)]);
        assert_eq!(pieces(48, 16), vec![(0, 16), (16, 16), (32, 16)]);
    }
}
