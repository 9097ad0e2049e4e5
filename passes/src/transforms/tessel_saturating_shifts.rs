//! `tessel-saturating-shifts`: integer shifts defined for every amount, as
//! XLA defines them: shifting by the bit width or more (the amount read as
//! unsigned, so negative amounts too) gives 0 for `arith.shli` and
//! `arith.shrui`, and the sign (all zeros or all ones) for `arith.shrsi`.
//!
//! arith makes such shifts poison. x86's vector shifts happen to saturate,
//! its scalar shifts take the amount modulo the width, and LLVM may fold a
//! poison shift to anything; the interpreter saturates. Each shift on
//! integers (scalars, vectors or tensors; not `index`) by an amount that
//! is not a constant below the width is rewritten to select the defined
//! result (a right shift by width - 1 for the arithmetic one), so every
//! path computes the same numbers. The shifts it wrote carry
//! `tessel.saturated` and are left alone when it runs again.
//!
//! Every pipeline runs it beside `tessel-total-division`, before kernel
//! bodies become loops.

use crate::support::handles::{raw_op, value_type};
use crate::support::ir::{constant_integer, element_bits, element_type, print_type};
use crate::support::template::{self, condition_type, integer_constant};
use crate::{PassDefinition, PassError};
use melior::ir::OperationRef;
use mlir_sys::{MlirType, mlirTypeIsAIndex};

pub static PASS: PassDefinition = PassDefinition {
    argument: "tessel-saturating-shifts",
    name: "TesselSaturatingShifts",
    description: "Define integer shifts by the bit width or more as XLA does (0, or the sign)",
    anchor: "builtin.module",
    run,
};

/// The marker of a shift this pass guarded.
const SATURATED: &str = "tessel.saturated";

const SHIFTS: [&str; 3] = ["arith.shli", "arith.shrui", "arith.shrsi"];

fn run(module: OperationRef<'static, '_>) -> Result<(), PassError> {
    template::rewrite_each(
        module,
        |name| SHIFTS.contains(&name),
        |raw, name| {
            let op = raw_op(raw);
            let operands = op.operands();
            let r#type = value_type(operands[0]);
            // SAFETY: a live type of the module being rewritten.
            let index = unsafe { mlirTypeIsAIndex(element_type(r#type)) };
            if index || op.has(SATURATED) {
                return Ok(None);
            }
            let bits = element_bits(element_type(r#type));
            if constant_integer(operands[1]).is_some_and(|amount| (0..bits).contains(&amount)) {
                return Ok(None);
            }
            Ok(Some((saturating(name, r#type, bits), operands)))
        },
    )
}

/// The template computing the shift `name` with the defined results.
fn saturating(name: &str, r#type: MlirType, bits: i64) -> String {
    let t = print_type(r#type);
    let b1 = condition_type(r#type);
    let mut text = format!(
        "func.func @template(%a: {t}, %b: {t}) -> {t} {{\n\
         %width = {}\n%too_far = arith.cmpi uge, %b, %width : {t}\n",
        integer_constant(bits, r#type)
    );
    if name == "arith.shrsi" {
        // By width - 1, every bit is the sign: what any larger shift gives.
        text.push_str(&format!(
            "%last = {}\n%amount = arith.select %too_far, %last, %b : {b1}, {t}\n\
             %result = arith.shrsi %a, %amount {{{SATURATED}}} : {t}\n",
            integer_constant(bits - 1, r#type)
        ));
    } else {
        text.push_str(&format!(
            "%zero = {}\n%amount = arith.select %too_far, %zero, %b : {b1}, {t}\n\
             %shifted = {name} %a, %amount {{{SATURATED}}} : {t}\n\
             %result = arith.select %too_far, %zero, %shifted : {b1}, {t}\n",
            integer_constant(0, r#type)
        ));
    }
    text.push_str(&format!("return %result : {t}\n}}"));
    text
}
