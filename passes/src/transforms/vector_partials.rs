//! tessel-split-reductions' partials read in 16-byte vectors.
//!
//! Upstream's inner-parallel split gives partial p the elements p, p + P,
//! p + 2P, ...: neighbouring work-items read neighbouring elements, one
//! scalar load each. When the reduced dimension is the innermost one (rows
//! contiguous in memory) and a vector of V elements (16 bytes) divides it
//! P x V times, partial p instead folds the vectors p, p + P, ... — the
//! elements (s x P + p) x V + v — over two reduction dimensions (s, v):
//! neighbouring items still read neighbouring 16-byte vectors, and LLVM
//! merges a vector's V loads into one (`global_load_dwordx4`). These are
//! also the positions the element-wise phases give each work-item
//! (tessel-gpu-vectorize: item t's vectors t, t + T, ...).
//!
//! The reduction (a `linalg.generic`, inputs projected, one reduction
//! dimension) becomes
//!
//! ```text
//! partial[..., p] = fold over (s, v) of body(inputs[..., (s*P + p)*V + v])   (from the neutral element)
//! result[...]     = fold over p of partial[..., p]                          (from the reduction's init)
//! ```
//!
//! the inputs that use the reduced dimension viewed as [..., S, P, V]
//! (`tensor.expand_shape`), the partial a clone of the reduction with new
//! maps, the combine a generic of the combiner alone, marked
//! `tessel.split_combine` for the steps that fold it across lanes.

use crate::support::handles::{
    attribute_text, context_of, dim_size, rank_of, raw_op, replace_all_uses, shaped_element, value_type,
};
use crate::support::ir::{block_arguments, defining_op, element_bytes, inline_template, join, print_type};
use crate::support::template::emit_line;
use melior::StringRef;
use mlir_sys::*;

/// Marks the combine of vector partials with its split group.
pub(super) const SPLIT_COMBINE: &str = "tessel.split_combine";

/// Bytes a work-item reads per access.
const VECTOR_BYTES: i64 = 16;

/// The neutral element of `combiner` on `element` (MLIR attribute text),
/// for the combiners whose partials this splits.
fn neutral(combiner: &str, element: &str) -> Option<String> {
    let float = |f16: &str, bf16: &str, f32: &str, f64: &str| {
        let bits = match element {
            "f16" => f16,
            "bf16" => bf16,
            "f32" => f32,
            "f64" => f64,
            _ => return None,
        };
        Some(format!("{bits} : {element}"))
    };
    let integer = element.starts_with('i').then(|| element[1..].parse::<u32>().ok()).flatten();
    match (combiner, integer) {
        // -0.0: the one float x + n == x for every x (0.0 + -0.0 is 0.0).
        ("arith.addf", None) => float("0x8000", "0x8000", "0x80000000", "0x8000000000000000"),
        ("arith.mulf", None) => float("0x3C00", "0x3F80", "0x3F800000", "0x3FF0000000000000"),
        ("arith.maximumf", None) => float("0xFC00", "0xFF80", "0xFF800000", "0xFFF0000000000000"),
        ("arith.minimumf", None) => float("0x7C00", "0x7F80", "0x7F800000", "0x7FF0000000000000"),
        ("arith.addi" | "arith.ori" | "arith.xori" | "arith.maxui", Some(_)) => Some(format!("0 : {element}")),
        ("arith.muli", Some(_)) => Some(format!("1 : {element}")),
        ("arith.andi" | "arith.minui", Some(_)) => Some(format!("-1 : {element}")),
        ("arith.maxsi", Some(bits)) => Some(format!("{} : {element}", -(1i128 << (bits - 1)))),
        ("arith.minsi", Some(bits)) => Some(format!("{} : {element}", (1i128 << (bits - 1)) - 1)),
        _ => None,
    }
}

/// The affine map text `(d0, ..., d{dims-1}) -> (results)`.
fn map_text(dims: usize, results: &[String]) -> String {
    format!("affine_map<({}) -> ({})>", join((0..dims).map(|d| format!("d{d}"))), join(results))
}

/// Splits `reduction` (a `linalg.generic` or `linalg.reduce`: iteration
/// `extents`, reducing the innermost dimension) into `partials` vector
/// partials per result and a combine marked with `group`, replacing its
/// uses (the caller erases it). False, changing nothing the caller keeps,
/// where it does not apply (vectors that do not divide the rows, inputs
/// with other rows, a combiner without a neutral element here).
pub(super) fn split_in_vectors(reduction: MlirOperation, extents: &[i64], partials: i64, group: usize) -> bool {
    let raw = raw_op(reduction);
    let rank = extents.len();
    let operands = raw.operands();
    let (inputs, init) = (&operands[..operands.len() - 1], operands[operands.len() - 1]);
    let generic = raw.name() == "linalg.generic";
    if inputs.is_empty() || raw.results().len() != 1 || (!generic && inputs.len() != 1) {
        return false;
    }
    let element_type = value_type(raw.results()[0]);
    let element = shaped_element(element_type);
    let row_bytes = element_bytes(shaped_element(value_type(inputs[0]))).max(1);
    let lanes = VECTOR_BYTES / row_bytes;
    let extent = extents[rank - 1];
    if lanes < 2 || extent % (partials * lanes) != 0 {
        return false;
    }
    let steps = extent / (partials * lanes);
    // The combiner: the op yielding the accumulator.
    let body = raw.region_block(0);
    // SAFETY: a linalg.generic's or linalg.reduce's body ends with its linalg.yield.
    let terminator = unsafe { mlirBlockGetTerminator(body) };
    let Some(combiner) = raw_op(terminator).operands().first().and_then(|&value| defining_op(value)) else {
        return false;
    };
    // It must fold the body's value into the accumulator (the output's
    // block argument), as the combine below does with two partials.
    let Some(&accumulator) = block_arguments(body).last() else { return false };
    if !raw_op(combiner).operands().iter().any(|value| value.ptr == accumulator.ptr) {
        return false;
    }
    let combiner_name = raw_op(combiner).name();
    let element_name = print_type(element);
    let Some(neutral) = neutral(&combiner_name, &element_name) else { return false };
    let fastmath = raw_op(combiner).attribute("fastmath");
    let flags = if fastmath.ptr.is_null() { String::new() } else { format!(" fastmath<{}>", fastmath_flags(fastmath)) };

    // The inputs' maps: each keeps its results, the reduced dimension (the
    // last result where used) expanded into (s, p, v); iteration dims
    // (..., p, s, v), p parallel.
    let (p, s, v) = (rank - 1, rank, rank + 1);
    let mut expanded: Vec<usize> = Vec::new();
    let mut input_maps: Vec<String> = Vec::new();
    for (index, &input) in inputs.iter().enumerate() {
        // A linalg.reduce reads its input with the identity.
        let results: Vec<usize> =
            if generic { map_dims(raw.attribute("indexing_maps"), index) } else { (0..rank).collect() };
        if results.contains(&usize::MAX) {
            return false;
        }
        let mut texts: Vec<String> = results.iter().map(|&d| format!("d{d}")).collect();
        if let Some(position) = results.iter().position(|&d| d == rank - 1) {
            let input_type = value_type(input);
            let same_rows = position + 1 == results.len()
                && rank_of(input_type) as usize == results.len()
                && dim_size(input_type, position) == extent
                && element_bytes(shaped_element(input_type)) == row_bytes;
            if !same_rows {
                return false;
            }
            texts.pop();
            texts.extend([format!("d{s}"), format!("d{p}"), format!("d{v}")]);
            expanded.push(index);
        }
        input_maps.push(map_text(rank + 2, &texts));
    }
    let outer: Vec<String> = (0..rank - 1).map(|d| format!("d{d}")).collect();
    let partial_map = map_text(rank + 2, &[outer.clone(), vec![format!("d{p}")]].concat());
    // As the generic's attribute (the clone's) and as its assembly writes
    // them (the template's).
    let kind = |d: usize| if d < rank { "parallel" } else { "reduction" };
    let iterators = join((0..rank + 2).map(|d| format!("#linalg.iterator_type<{}>", kind(d))));
    let iterator_names = join((0..rank + 2).map(|d| format!("\"{}\"", kind(d))));
    let dims_text = |dims: &[i64]| dims.iter().map(i64::to_string).collect::<Vec<_>>().join("x");
    let partial_type = format!("tensor<{}x{element_name}>", dims_text(&[&extents[..rank - 1], &[partials]].concat()));

    // Before the reduction: the expanded inputs, the partials' init and,
    // for a linalg.reduce, the partial reduction (its combiner).
    let mut template = String::from("func.func @template(");
    template.push_str(&join(expanded.iter().map(|&i| format!("%in{i}: {}", print_type(value_type(inputs[i]))))));
    let mut expansions = String::new();
    let mut expanded_types = Vec::new();
    for &i in &expanded {
        let input_type = value_type(inputs[i]);
        let input_rank = rank_of(input_type) as usize;
        let sizes: Vec<i64> =
            (0..input_rank - 1).map(|d| dim_size(input_type, d)).chain([steps, partials, lanes]).collect();
        let expanded_type = format!("tensor<{}x{}>", dims_text(&sizes), print_type(shaped_element(input_type)));
        let mut groups: Vec<String> = (0..input_rank - 1).map(|d| format!("[{d}]")).collect();
        groups.push(format!("[{}, {}, {}]", input_rank - 1, input_rank, input_rank + 1));
        emit_line!(
            expansions,
            "%e{i} = tensor.expand_shape %in{i} [{}] output_shape [{}] : {} into {expanded_type}",
            join(groups),
            join(&sizes),
            print_type(input_type)
        );
        expanded_types.push(expanded_type);
    }
    // A generic's partial is its clone (below): the template returns the
    // partials' init in its place.
    let partial_value = if generic { "%fill" } else { "%partial" };
    let returned = join(expanded.iter().map(|i| format!("%e{i}")).chain([partial_value.to_string()]));
    let result_types = join(expanded_types.iter().cloned().chain([partial_type.clone()]));
    emit_line!(
        template,
        ") -> ({result_types}) {{\n{expansions}%empty = tensor.empty() : {partial_type}\n\
         %neutral = arith.constant {neutral}\n\
         %fill = linalg.fill ins(%neutral : {element_name}) outs(%empty : {partial_type}) -> {partial_type}"
    );
    if !generic {
        emit_line!(
            template,
            "%partial = linalg.generic {{indexing_maps = [{}, {partial_map}], iterator_types = [{iterator_names}]}} \
             ins(%e0 : {}) outs(%fill : {partial_type}) {{\n\
             ^bb0(%a: {element_name}, %b: {element_name}):\n%c = {combiner_name} %a, %b{flags} : {element_name}\n\
             linalg.yield %c : {element_name}\n}} -> {partial_type}",
            input_maps[0],
            expanded_types[0]
        );
    }
    emit_line!(template, "return {returned} : {result_types}\n}}");
    let args: Vec<MlirValue> = expanded.iter().map(|&i| inputs[i]).collect();
    let Ok((values, _)) = inline_template(reduction, &template, &args) else { return false };
    let partial = if generic {
        clone_as_partial(reduction, &values, &expanded, &input_maps, &partial_map, &iterators, &partial_type)
    } else {
        values[expanded.len()]
    };

    // The combine: the partials folded into the reduction's init.
    let result_type = print_type(element_type);
    let combine = format!(
        "func.func @template(%partial: {partial_type}, %init: {result_type}) -> {result_type} {{\n\
         %r = linalg.generic {{indexing_maps = [{}, {}], iterator_types = [{}]}} \
         ins(%partial : {partial_type}) outs(%init : {result_type}) attrs = {{{SPLIT_COMBINE} = {group} : i64}} {{\n\
         ^bb0(%a: {element_name}, %b: {element_name}):\n\
         %c = {combiner_name} %a, %b{flags} : {element_name}\nlinalg.yield %c : {element_name}\n}} -> {result_type}\n\
         return %r : {result_type}\n}}",
        map_text(rank, &[outer.clone(), vec![format!("d{}", rank - 1)]].concat()),
        map_text(rank, &outer),
        join((0..rank).map(|d| if d + 1 < rank { "\"parallel\"" } else { "\"reduction\"" })),
    );
    let Ok((combined, _)) = inline_template(reduction, &combine, &[partial, init]) else { return false };
    replace_all_uses(raw.results()[0], combined[0]);
    true
}

/// The dims of operand `index`'s map among `maps` (usize::MAX for a
/// result that is not a dim).
fn map_dims(maps: MlirAttribute, index: usize) -> Vec<usize> {
    // SAFETY: a linalg.generic's indexing_maps holds one affine map per operand (its verifier's guarantee); positions stay below the map's result count.
    unsafe {
        let map = mlirAffineMapAttrGetValue(mlirArrayAttrGetElement(maps, index as isize));
        (0..mlirAffineMapGetNumResults(map))
            .map(|position| {
                let expr = mlirAffineMapGetResult(map, position);
                if mlirAffineExprIsADim(expr) { mlirAffineDimExprGetPosition(expr) as usize } else { usize::MAX }
            })
            .collect()
    }
}

/// The generic `reduction` cloned before itself as the partial reduction:
/// the expanded inputs (`values`, for operands `expanded`) and the
/// partials' init (`values`' last) as operands, the new maps and
/// iterators; returns its result.
fn clone_as_partial(
    reduction: MlirOperation,
    values: &[MlirValue],
    expanded: &[usize],
    input_maps: &[String],
    partial_map: &str,
    iterators: &str,
    partial_type: &str,
) -> MlirValue {
    let inputs = input_maps.len();
    // SAFETY: live IR (crate invariant, support/handles.rs); the clone is inserted before the original, its operands and attributes replaced with values and attributes of matching kinds, and its result retyped to the partials' tensor before any use.
    unsafe {
        let clone = mlirOperationClone(reduction);
        mlirBlockInsertOwnedOperationBefore(mlirOperationGetBlock(reduction), reduction, clone);
        for (k, &i) in expanded.iter().enumerate() {
            mlirOperationSetOperand(clone, i as isize, values[k]);
        }
        mlirOperationSetOperand(clone, inputs as isize, values[expanded.len()]);
        let context = context_of(reduction);
        let parse = |text: &str| mlirAttributeParseGet(context, StringRef::new(text).to_raw());
        let all_maps = format!("[{}]", join(input_maps.iter().cloned().chain([partial_map.to_string()])));
        mlirOperationSetAttributeByName(clone, StringRef::new("indexing_maps").to_raw(), parse(&all_maps));
        mlirOperationSetAttributeByName(
            clone,
            StringRef::new("iterator_types").to_raw(),
            parse(&format!("[{iterators}]")),
        );
        // The clone is not a split candidate itself.
        mlirOperationRemoveAttributeByName(clone, StringRef::new("tessel.split_group").to_raw());
        let result = mlirOperationGetResult(clone, 0);
        mlirValueSetType(result, mlirTypeParseGet(context, StringRef::new(partial_type).to_raw()));
        result
    }
}

/// The flags of a `#arith.fastmath<...>` attribute, as written in
/// `fastmath<...>`.
fn fastmath_flags(attribute: MlirAttribute) -> String {
    let text = attribute_text(attribute);
    text.trim_start_matches("#arith.fastmath<").trim_end_matches('>').to_string()
}
