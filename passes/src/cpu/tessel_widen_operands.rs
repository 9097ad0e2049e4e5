//! `tessel-widen-operands`: on CPUs, a contraction of narrow operands
//! (f16, bf16, 8- and 16-bit integers) into a wider result reads operands
//! widened once, ahead of the contraction.
//!
//! block.dot widens each operand to the result type before multiplying.
//! Inside the register-tiled contraction that means converting a vector of
//! narrow elements per k step, which LLVM's x86 backend handles badly (no
//! native f16 arithmetic, sign-extended i8 columns scalarized): the 1024
//! f16 matmul ran at 14 GFLOP/s. Here the A and B blocks are widened by
//! element-wise ops first (O(m·k + k·n) conversions against O(m·n·k)
//! multiply-adds, vectorized on their own) and the contraction becomes the
//! result type's own (f32 or i32 register tiles). The conversions are
//! exact and the products the same values, so every result keeps its bits.
//!
//! Runs on tensors, before `tessel-tile` (CPU pipeline only: GPUs read
//! narrow operands straight into their matrix instructions).

use crate::support::handles::is_ranked_tensor;
use crate::support::handles::{attribute_text, rank_of, raw_op};
use crate::{
    PassDefinition, PassError,
    block::block_to_linalg::contraction_operand_types,
    cpu::tessel_vnni::Form,
    support::ir::{element_name, identity_map, parallel_iterators, print_type},
    support::template,
};
use melior::ir::OperationRef;
use mlir_sys::*;

pub static PASS: PassDefinition = PassDefinition {
    argument: "tessel-widen-operands",
    name: "TesselWidenOperands",
    description: "Widen the narrow operands of contractions once, ahead of the contraction (CPU)",
    anchor: "builtin.module",
    run,
};

fn run(module: OperationRef<'static, '_>) -> Result<(), PassError> {
    template::rewrite_each(
        module,
        |name| name == "linalg.generic",
        |raw, _| {
            let Some(types) = contraction_operand_types(raw) else { return Ok(None) };
            // tessel-vnni's forms read their narrow operands as they are.
            if Form::of(raw).is_some() {
                return Ok(None);
            }
            let op = raw_op(raw);
            if types.iter().any(|&t| !is_ranked_tensor(t)) {
                return Ok(None);
            }
            let (input, output) = (element_name(types[0]), element_name(types[2]));
            if input == output || element_name(types[1]) != input {
                return Ok(None);
            }
            let float = output.starts_with('f');
            let extend = if float { "arith.extf" } else { "arith.extsi" };
            let (multiply, add) = if float { ("arith.mulf", "arith.addf") } else { ("arith.muli", "arith.addi") };
            // Only block.dot's widening multiply-add, as block-to-linalg writes it.
            let body = crate::support::ir::body_names(raw);
            if body != [extend, extend, multiply, add, "linalg.yield"] {
                return Ok(None);
            }
            // The wide type of an operand: its shape, the result's element.
            let wide = |t: MlirType| {
                let text = print_type(t);
                format!("{}x{output}>", text.rsplit_once('x').map_or(text.as_str(), |(shape, _)| shape))
            };
            let [ta, tb, tc] = [types[0], types[1], types[2]].map(print_type);
            let (wa, wb) = (wide(types[0]), wide(types[1]));
            let rank = rank_of(types[0]) as usize;
            let (identity, parallel) = (identity_map(rank), parallel_iterators(rank));
            let widen = |name: &str, from: &str, narrow: &str, to: &str| {
                format!(
                    "%{name}e = tensor.empty() : {to}\n\
                 %{name}w = linalg.generic {{indexing_maps = [{identity}, {identity}], iterator_types = [{parallel}]}} \
                 ins(%{name} : {narrow}) outs(%{name}e : {to}) {{\n\
                 ^bb0(%x: {from}, %unused: {output}):\n%w = {extend} %x : {from} to {output}\nlinalg.yield %w : {output}\n\
                 }} -> {to}\n"
                )
            };
            let maps = attribute_text(op.attribute("indexing_maps"));
            // Iterator kinds print as `#linalg.iterator_type<..>`; the generic
            // form takes strings.
            // SAFETY: live IR of the module being rewritten (crate invariant, support/handles.rs); indices stay below the counts they are taken from
            let iterators = unsafe { melior::ir::Attribute::from_raw(op.attribute("iterator_types")) }
                .to_string()
                .replace("#linalg.iterator_type<parallel>", "\"parallel\"")
                .replace("#linalg.iterator_type<reduction>", "\"reduction\"");
            let text = format!(
                "func.func @template(%a: {ta}, %b: {tb}, %c: {tc}) -> {tc} {{\n{}{}\
             %r = linalg.generic {{indexing_maps = {maps}, iterator_types = {iterators}, tessel.contraction}} \
             ins(%aw, %bw : {wa}, {wb}) outs(%c : {tc}) {{\n\
             ^bb0(%x: {output}, %y: {output}, %s: {output}):\n\
             %p = {multiply} %x, %y : {output}\n%t = {add} %s, %p : {output}\nlinalg.yield %t : {output}\n\
             }} -> {tc}\nreturn %r : {tc}\n}}",
                widen("a", &input, &ta, &wa),
                widen("b", &input, &tb, &wb),
            );
            Ok(Some((text, op.operands())))
        },
    )
}
