//! `tessel-widen-bf16`: `arith.extf` from bf16 (scalars or vectors) as
//! integer bit operations.
//!
//! bf16 is the upper half of an f32, so widening is exact as a shift of its
//! bits: bitcast to i16, zero-extend, shift left by 16, bitcast to f32.
//! LLVM's x86 backend aborts on some bf16 `fpext`s (single-element
//! vectors, which register tiles of one column produce), and upstream's
//! `arith-expand{include-bf16}` would also expand `maximumf`/`minimumf`
//! into selects that LLVM no longer recognizes as vectorizable reductions.

use crate::support::handles::{raw_op, value_type};
use crate::{
    PassDefinition, PassError,
    support::ir::{element_type, print_type},
    support::template,
};
use melior::ir::OperationRef;
use mlir_sys::*;

pub static PASS: PassDefinition = PassDefinition {
    argument: "tessel-widen-bf16",
    name: "TesselWidenBF16",
    description: "Rewrite arith.extf from bf16 as exact integer bit operations",
    anchor: "builtin.module",
    run,
};

fn run(module: OperationRef<'static, '_>) -> Result<(), PassError> {
    template::rewrite_each(
        module,
        |name| name == "arith.extf",
        |raw, _| {
            let op = raw_op(raw);
            let (source, target) = (value_type(op.operands()[0]), value_type(op.results()[0]));
            let is = |raw: MlirType, name: &str| print_type(element_type(raw)) == name;
            if !is(source, "bf16") || !is(target, "f32") {
                return Ok(None);
            }
            let (source_text, target_text) = (print_type(source), print_type(target));
            let retyped = |element: &str| source_text.replace("bf16", element);
            let (i16_type, i32_type) = (retyped("i16"), retyped("i32"));
            // SAFETY: types live in the context; shape and layout queries run on shaped (memref) types, as checked or as the op's verifier guarantees
            let shaped = unsafe { mlirTypeIsAShaped(source) };
            let sixteen = if shaped { format!("dense<16> : {i32_type}") } else { "16 : i32".to_string() };
            let text = format!(
                "func.func @template(%x: {source_text}) -> {target_text} {{\n\
             %bits = arith.bitcast %x : {source_text} to {i16_type}\n\
             %wide = arith.extui %bits : {i16_type} to {i32_type}\n\
             %sixteen = arith.constant {sixteen}\n\
             %high = arith.shli %wide, %sixteen : {i32_type}\n\
             %f = arith.bitcast %high : {i32_type} to {target_text}\n\
             return %f : {target_text}\n}}\n"
            );
            Ok(Some((text, op.operands())))
        },
    )
}
