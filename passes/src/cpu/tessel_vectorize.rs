//! `tessel-vectorize`: register tiles of contractions to FMA outer products.
//!
//! The ops `tessel-tile` marked `tessel.vectorize` (one k step of a
//! `tile_m x tile_n` tile) are vectorized; the multiply-reduce becomes a
//! `vector.contract`, lowered to outer products and those to `vector.fma`
//! (a broadcast element of A times a row of B, added to a row of the
//! accumulator: one fused multiply-add per element and k step, the meaning
//! of `block.dot`), written as `math.fma` so it stays fused on every
//! target. Finally the accumulator tile's
//! read and write are hoisted out of the k loop marked
//! `tessel.reduction_loop`, so it stays in registers for the whole loop
//! (rows that are not a power of two long carried as pieces that are:
//! `accumulator_pieces.rs`).
//!
//! Tiles of 8-bit contractions in `tessel-vnni`'s forms become `vpdpbusd`s
//! or `vpmaddwd`s by template instead (`tessel_vnni::register_tile`), their
//! accumulator hoisted the same way.

use crate::support::handles::context_of;
use crate::support::handles::{raw_op, value_type};
use crate::{
    PassDefinition, PassError,
    cpu::accumulator_pieces,
    cpu::cpu_model::CpuModel,
    cpu::tessel_tile::REDUCTION_LOOP,
    cpu::tessel_vnni::{self, Form},
    support::ir::print_type,
    support::template,
    support::transform,
};
use melior::ir::{OperationRef, operation::OperationLike};
use tessel_dialects::knobs;

pub static PASS: PassDefinition = PassDefinition {
    argument: "tessel-vectorize",
    name: "TesselVectorize",
    description: "Vectorize register tiles marked by tessel-tile into FMA outer products (8-bit forms: vpdpbusd, vpmaddwd)",
    anchor: "builtin.module",
    run,
};

/// Vectorize the marked tiles; contractions to outer products to FMAs.
fn script() -> String {
    let vectorize = "%tiles = transform.structured.match ops{[\"linalg.generic\", \"linalg.fill\"]} \
                     attributes{tessel.vectorize} in %root \
                     : (!transform.any_op) -> !transform.any_op\n\
                     transform.structured.vectorize %tiles : !transform.any_op\n";
    let to_contractions: &[&str] = &["vector.reduction_to_contract", "vector.transfer_permutation_patterns"];
    let to_fmas: &[&str] = &[
        "vector.lower_contraction lowering_strategy = \"outerproduct\"",
        "vector.lower_outerproduct",
        "canonicalization",
    ];
    format!("{vectorize}{}", transform::patterns(&[to_contractions, to_fmas]))
}

/// The accumulators out of the k loops (their pieces' indices folded to
/// constants first, so each piece's read and write match).
fn hoisting() -> String {
    format!("{}{}", transform::patterns(&[&["canonicalization"]]), transform::hoist(REDUCTION_LOOP))
}

fn run(module: OperationRef<'static, '_>) -> Result<(), PassError> {
    // Tiles in tessel-vnni's forms: vpdpbusd or vpmaddwd by template.
    let vector_bits = knobs::VECTOR_BITS.integer_or(raw_op(module.to_raw()), CpuModel::host().vector_bits);
    let mut intrinsics = Vec::new();
    template::rewrite_each(
        module,
        |name| name == "linalg.generic",
        |raw, _| {
            let op = raw_op(raw);
            let Some(form) = Form::of(raw).filter(|_| op.has("tessel.vectorize")) else { return Ok(None) };
            let operands = op.operands();
            let [a, b, c] = [0, 1, 2].map(|index| value_type(operands[index]));
            let (template, intrinsic) = tessel_vnni::register_tile(form, a, b, c, vector_bits);
            intrinsics.extend(intrinsic);
            Ok(Some((template, operands)))
        },
    )?;
    for intrinsic in intrinsics {
        template::define_symbol(context_of(module.to_raw()), module.to_raw(), &intrinsic.name, &intrinsic.declaration)
            .map_err(|error| PassError::at(module.location(), error))?;
    }
    let apply = |body: String| {
        transform::apply(module.to_raw(), &transform::script(&body))
            .map_err(|error| PassError::at(module.location(), error.0))
    };
    apply(script())?;
    accumulator_pieces::split(module, vector_bits)?;
    apply(hoisting())?;
    // `vector.fma` becomes `llvm.intr.fmuladd`, which may round twice where
    // the target lacks FMA; `math.fma` is `llvm.intr.fma`, always fused, so
    // every target computes the same bits as the interpreter.
    template::rewrite_each(
        module,
        |name| name == "vector.fma",
        |raw, _| {
            let operands = raw_op(raw).operands();
            let vector = print_type(value_type(operands[0]));
            let text = format!(
                "func.func @template(%a: {vector}, %b: {vector}, %c: {vector}) -> {vector} {{\n\
             %r = math.fma %a, %b, %c : {vector}\nreturn %r : {vector}\n}}\n"
            );
            Ok(Some((text, operands)))
        },
    )
}
