//! `tessel-widen-bf16`: conversions between bf16 and f32 (scalars or
//! vectors) as integer bit operations, and integers converted to bf16 as
//! integers converted to f32, then narrowed so. LLVM lowers an f32 or
//! integer conversion to bf16 on x86 without AVX-512 BF16 as a call to
//! compiler-rt's `__truncsfbf2`, which the JIT cannot resolve: no bf16
//! result may be left to it.
//!
//! bf16 is the upper half of an f32, so widening is exact as a shift of its
//! bits: bitcast to i16, zero-extend, shift left by 16, bitcast to f32.
//! Narrowing rounds to nearest, ties to even, on the bits (add 0x7FFF plus
//! the lowest kept bit, keep the upper half; NaNs quieted): x86's
//! `vcvtneps2bf16` treats subnormal inputs as zero whatever MXCSR says, so
//! the hardware conversion would give hosts with AVX-512 BF16 other bits
//! than the rest (and than XLA and the interpreter) for tiny values.
//! LLVM's x86 backend aborts on some bf16 `fpext`s (single-element
//! vectors, which register tiles of one column produce), and upstream's
//! `arith-expand{include-bf16}` would also expand `maximumf`/`minimumf`
//! into selects that LLVM no longer recognizes as vectorizable reductions.

use crate::support::handles::is_shaped;
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
    description: "Rewrite bf16 <-> f32 conversions as exact integer bit operations",
    anchor: "builtin.module",
    run,
};

fn run(module: OperationRef<'static, '_>) -> Result<(), PassError> {
    template::rewrite_each(
        module,
        |name| matches!(name, "arith.extf" | "arith.truncf" | "arith.sitofp" | "arith.uitofp"),
        |raw, name| {
            let op = raw_op(raw);
            let (source, target) = (value_type(op.operands()[0]), value_type(op.results()[0]));
            let is = |raw: MlirType, name: &str| print_type(element_type(raw)) == name;
            let widen = name == "arith.extf";
            // An integer converted to bf16 goes through f32 (as LLVM's own
            // lowering and XLA convert it), then narrows on the bits.
            let from_integer = matches!(name, "arith.sitofp" | "arith.uitofp");
            let (narrow, wide) = if widen { (source, target) } else { (target, source) };
            if !is(narrow, "bf16") || !(from_integer || is(wide, "f32")) {
                return Ok(None);
            }
            let (source_text, target_text) = (print_type(source), print_type(target));
            let f32_text = if widen { target_text.clone() } else { target_text.replace("bf16", "f32") };
            let retyped = |element: &str| f32_text.replace("f32", element);
            let (i16_type, i32_type, i1_type) = (retyped("i16"), retyped("i32"), retyped("i1"));
            let shaped = is_shaped(source);
            let constant =
                |value: i64| if shaped { format!("dense<{value}> : {i32_type}") } else { format!("{value} : i32") };
            // The f32 value narrowed: the operand, or the integer converted.
            let (prelude, narrowed) = if from_integer {
                (format!("%w = {name} %x : {source_text} to {f32_text}\n"), "%w")
            } else {
                (String::new(), "%x")
            };
            let body = if widen {
                format!(
                    "%bits = arith.bitcast %x : {source_text} to {i16_type}\n\
                     %wide = arith.extui %bits : {i16_type} to {i32_type}\n\
                     %sixteen = arith.constant {sixteen}\n\
                     %high = arith.shli %wide, %sixteen : {i32_type}\n\
                     %f = arith.bitcast %high : {i32_type} to {target_text}\n",
                    sixteen = constant(16)
                )
            } else {
                format!(
                    "{prelude}%bits = arith.bitcast {narrowed} : {f32_text} to {i32_type}\n\
                     %sixteen = arith.constant {sixteen}\n\
                     %one = arith.constant {one}\n\
                     %half = arith.constant {half}\n\
                     %quiet = arith.constant {quiet}\n\
                     %upper = arith.shrui %bits, %sixteen : {i32_type}\n\
                     %odd = arith.andi %upper, %one : {i32_type}\n\
                     %bias = arith.addi %half, %odd : {i32_type}\n\
                     %biased = arith.addi %bits, %bias : {i32_type}\n\
                     %rounded = arith.shrui %biased, %sixteen : {i32_type}\n\
                     %quieted = arith.ori %upper, %quiet : {i32_type}\n\
                     %nan = arith.cmpf uno, {narrowed}, {narrowed} : {f32_text}\n\
                     %chosen = arith.select %nan, %quieted, %rounded : {i1_type}, {i32_type}\n\
                     %short = arith.trunci %chosen : {i32_type} to {i16_type}\n\
                     %f = arith.bitcast %short : {i16_type} to {target_text}\n",
                    sixteen = constant(16),
                    one = constant(1),
                    half = constant(0x7FFF),
                    quiet = constant(0x40)
                )
            };
            let text = format!(
                "func.func @template(%x: {source_text}) -> {target_text} {{\n{body}return %f : {target_text}\n}}\n"
            );
            Ok(Some((text, op.operands())))
        },
    )
}
