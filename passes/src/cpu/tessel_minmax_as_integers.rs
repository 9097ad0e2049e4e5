//! `tessel-minmax-as-integers`: float max/min reductions computed as
//! integer max/min of order-preserving keys.
//!
//! `arith.maximumf`/`minimumf` propagate NaN and order -0 below +0. x86 has
//! no instruction with those semantics before AVX10.2, so LLVM lowers each
//! vector step to a sign test into a mask register, two blends, a compare
//! for NaN and the max itself, a chain of mask-register ops per
//! accumulator: in JAX's row softmax the row max took 30-46% of the kernel
//! (a 2-core Zen 4), more than the exponentials.
//!
//! A float's bits `b`, read as a signed integer and flipped to
//! `b ^ ((b >> (w-1)) & MAGNITUDE)` (negatives' magnitude bits inverted),
//! order exactly as the floats do, -0 just below +0 and NaNs beyond ±inf
//! (by their sign). So a `linalg.reduce` whose combiner is `maximumf`
//! (`minimumf`) of `f32`/`f64` elements becomes one reduction of two
//! integer accumulators: `maxsi` (`minsi`) of the keys, and `maxui` of the
//! magnitudes `b & MAGNITUDE`, which exceed +inf's bits only if a NaN was
//! seen. The result is the key flipped back, or NaN when one was seen:
//! the same value as the float reduction in any order (the keys' order is
//! total), with integer ops of one cycle's latency in the vector loop.
//!
//! The init (the reduction's identity or a running value) is folded in by
//! starting the accumulators at its key and magnitude. NaN results are the
//! quiet NaN with a positive sign (maximumf leaves the payload unspecified).

use crate::support::handles::{dim_size, rank_of, raw_op, value_type};
use crate::support::ir::{
    ShapedKind, body_names, defining_op, element_bits, element_type, join, map_dims, print_type, shaped_type_text,
};
use crate::support::template::{self, emit_line};
use crate::{PassDefinition, PassError};
use melior::ir::OperationRef;
use mlir_sys::*;

pub static PASS: PassDefinition = PassDefinition {
    argument: "tessel-minmax-as-integers",
    name: "TesselMinmaxAsIntegers",
    description: "Compute float max/min reductions (NaN-propagating) as integer max/min of order-preserving keys",
    anchor: "builtin.module",
    run,
};

fn run(module: OperationRef<'static, '_>) -> Result<(), PassError> {
    template::rewrite_each(module, |name| name == "linalg.reduce", |op, _| Ok(rewrite(op)))
}

/// Whether the reduction keeps the largest (`maximumf`) or the smallest
/// (`minimumf`) element.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Extreme {
    Max,
    Min,
}

/// The extreme a `linalg.reduce` of one float input computes, when its body
/// is exactly `maximumf`/`minimumf` of its two arguments.
fn extreme_of(op: MlirOperation) -> Option<Extreme> {
    let reduce = raw_op(op);
    if reduce.operands().len() != 2 || reduce.results().len() != 1 {
        return None;
    }
    let extreme = match body_names(op).as_slice() {
        [combiner, yield_] if yield_ == "linalg.yield" && combiner == "arith.maximumf" => Extreme::Max,
        [combiner, yield_] if yield_ == "linalg.yield" && combiner == "arith.minimumf" => Extreme::Min,
        _ => return None,
    };
    // The combiner must combine the element with the accumulator (not,
    // say, the element with itself).
    let body = reduce.region_block(0);
    // SAFETY: live IR of the module being rewritten (crate invariant, support/handles.rs); the body has its two block arguments (the verifier's) and a terminator
    let (element, accumulator, terminator) =
        unsafe { (mlirBlockGetArgument(body, 0), mlirBlockGetArgument(body, 1), mlirBlockGetTerminator(body)) };
    let combiner = defining_op(raw_op(terminator).operands()[0])?;
    let operands = raw_op(combiner).operands();
    let pair = [operands[0].ptr, operands[1].ptr];
    (pair == [element.ptr, accumulator.ptr] || pair == [accumulator.ptr, element.ptr]).then_some(extreme)
}

/// The template replacing `op`, if it is a float max/min reduction of
/// static shape.
fn rewrite(op: MlirOperation) -> Option<template::Rewrite> {
    let extreme = extreme_of(op)?;
    let reduce = raw_op(op);
    let (input, init) = (reduce.operands()[0], reduce.operands()[1]);
    let (input_type, init_type) = (value_type(input), value_type(init));
    let element = element_type(input_type);
    // SAFETY: types live in the context; shape queries run on the ranked tensors checked first
    let static_tensors = unsafe {
        [input_type, init_type].iter().all(|&t| mlirTypeIsARankedTensor(t) && mlirShapedTypeHasStaticShape(t))
    };
    // SAFETY: a type of the context, asked its kind.
    let is_float = unsafe { mlirTypeIsAF32(element) || mlirTypeIsAF64(element) };
    if !static_tensors || !is_float {
        return None;
    }
    let bits = element_bits(element);
    let reduced: Vec<usize> = reduce.integers("dimensions").iter().map(|&d| d as usize).collect();
    let rank = rank_of(input_type) as usize;
    let extents: Vec<i64> = (0..rank).map(|d| dim_size(input_type, d)).collect();
    let kept: Vec<i64> = (0..rank).filter(|d| !reduced.contains(d)).map(|d| extents[d]).collect();
    let text = template_text(extreme, bits, &print_type(element), &extents, &reduced, &kept);
    Some((text, vec![input, init]))
}

/// Integer constants of a `bits`-wide float: (magnitude mask, +inf's bits,
/// the quiet NaN's bits), as signed decimal text.
fn constants(bits: i64) -> (String, String, String) {
    if bits == 64 {
        (i64::MAX.to_string(), 0x7ff0_0000_0000_0000i64.to_string(), 0x7ff8_0000_0000_0000i64.to_string())
    } else {
        (i32::MAX.to_string(), 0x7f80_0000i32.to_string(), 0x7fc0_0000i32.to_string())
    }
}

/// `@template(%x, %init)`: keys and magnitudes of the init, one reduction
/// of both over `%x`, and the decoded result.
fn template_text(extreme: Extreme, bits: i64, float: &str, extents: &[i64], reduced: &[usize], kept: &[i64]) -> String {
    let int = format!("i{bits}");
    let (magnitude, infinity, nan) = constants(bits);
    let shape = |dims: &[i64], element: &str| shaped_type_text(ShapedKind::Tensor, dims, element, None);
    let (input, out, out_int) = (shape(extents, float), shape(kept, float), shape(kept, &int));
    let rank = extents.len();
    let kept_dims: Vec<String> = (0..rank).filter(|d| !reduced.contains(d)).map(|d| format!("d{d}")).collect();
    let all = format!("affine_map<({}) -> ({})>", map_dims(rank), map_dims(rank));
    let projected = format!("affine_map<({}) -> ({})>", map_dims(rank), join(&kept_dims));
    let same = format!("affine_map<({}) -> ({})>", map_dims(kept.len()), map_dims(kept.len()));
    let iterators = join((0..rank).map(|d| if reduced.contains(&d) { "\"reduction\"" } else { "\"parallel\"" }));
    let kept_iterators = join((0..kept.len()).map(|_| "\"parallel\""));
    let (key_combiner, shift) = (if extreme == Extreme::Max { "arith.maxsi" } else { "arith.minsi" }, bits - 1);
    // The key of the float `%{v}`'s bits, as `%{v}_key`, and its magnitude
    // as `%{v}_magnitude`.
    let key = |v: &str| {
        format!(
            "%{v}_bits = arith.bitcast %{v} : {float} to {int}\n\
             %{v}_sign = arith.shrsi %{v}_bits, %shift : {int}\n\
             %{v}_flip = arith.andi %{v}_sign, %magnitude : {int}\n\
             %{v}_key = arith.xori %{v}_bits, %{v}_flip : {int}\n\
             %{v}_magnitude = arith.andi %{v}_bits, %magnitude : {int}\n"
        )
    };
    let mut text = String::new();
    emit_line!(text, "func.func @template(%x: {input}, %init: {out}) -> {out} {{");
    emit_line!(text, "%shift = arith.constant {shift} : {int}");
    emit_line!(text, "%magnitude = arith.constant {magnitude} : {int}");
    emit_line!(text, "%infinity = arith.constant {infinity} : {int}");
    emit_line!(text, "%nan_bits = arith.constant {nan} : {int}");
    emit_line!(text, "%nan = arith.bitcast %nan_bits : {int} to {float}");
    emit_line!(text, "%keys0 = tensor.empty() : {out_int}");
    emit_line!(text, "%magnitudes0 = tensor.empty() : {out_int}");
    emit_line!(
        text,
        "%keys, %magnitudes = linalg.generic {{indexing_maps = [{same}, {same}, {same}], iterator_types = \
         [{kept_iterators}]}} ins(%init : {out}) outs(%keys0, %magnitudes0 : {out_int}, {out_int}) {{\n\
         ^bb0(%v: {float}, %unused_key: {int}, %unused_magnitude: {int}):\n{}\
         linalg.yield %v_key, %v_magnitude : {int}, {int}\n}} -> ({out_int}, {out_int})",
        key("v")
    );
    emit_line!(
        text,
        "%key, %seen = linalg.generic {{indexing_maps = [{all}, {projected}, {projected}], iterator_types = \
         [{iterators}]}} ins(%x : {input}) outs(%keys, %magnitudes : {out_int}, {out_int}) {{\n\
         ^bb0(%v: {float}, %key_acc: {int}, %magnitude_acc: {int}):\n{}\
         %next_key = {key_combiner} %v_key, %key_acc : {int}\n\
         %next_magnitude = arith.maxui %v_magnitude, %magnitude_acc : {int}\n\
         linalg.yield %next_key, %next_magnitude : {int}, {int}\n}} -> ({out_int}, {out_int})",
        key("v")
    );
    emit_line!(
        text,
        "%result = linalg.generic {{indexing_maps = [{same}, {same}, {same}], iterator_types = [{kept_iterators}]}} \
         ins(%key, %seen : {out_int}, {out_int}) outs(%init : {out}) {{\n\
         ^bb0(%k: {int}, %m: {int}, %unused: {float}):\n\
         %k_sign = arith.shrsi %k, %shift : {int}\n\
         %k_flip = arith.andi %k_sign, %magnitude : {int}\n\
         %k_bits = arith.xori %k, %k_flip : {int}\n\
         %value = arith.bitcast %k_bits : {int} to {float}\n\
         %is_nan = arith.cmpi ugt, %m, %infinity : {int}\n\
         %r = arith.select %is_nan, %nan, %value : {float}\n\
         linalg.yield %r : {float}\n}} -> {out}"
    );
    emit_line!(text, "return %result : {out}\n}}");
    text
}
