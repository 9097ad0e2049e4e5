//! `tessel-total-division`: integer division and remainder defined for
//! every operand, as XLA defines them: `x / 0` is -1 (all ones), `x % 0`
//! is `x`, `INT_MIN / -1` is `INT_MIN` and `INT_MIN % -1` is 0.
//!
//! arith leaves those cases undefined, and the targets disagree on them:
//! x86's `idiv` raises SIGFPE (the process running the kernel dies), the
//! AMD GPU's expansion returns whatever its reciprocal gives, the
//! interpreter stops. Each `arith.divsi`, `divui`, `remsi`, `remui`,
//! `floordivsi` and `ceildivsi` on integers (scalars, vectors or tensors;
//! not `index`, which only addresses) divides by 1 where the divisor is 0
//! (or -1 against `INT_MIN`) and then selects the defined result, so every
//! path computes the same numbers. Divisions by a constant that is
//! neither 0 nor -1 are left alone (they are always defined), as are the
//! guarded ones this pass wrote (`tessel.total`), so it can run twice.
//!
//! Every pipeline runs it right after `tessel-strip-signedness` (and
//! `tessel-saturating-shifts` after it), before kernel bodies become loops.

use crate::support::handles::{raw_op, value_type};
use crate::support::ir::{constant_integer, element_bits, element_type, print_type};
use crate::support::template::{self, condition_type, integer_constant};
use crate::{PassDefinition, PassError};
use melior::ir::OperationRef;
use mlir_sys::{MlirType, mlirTypeIsAIndex};

pub static PASS: PassDefinition = PassDefinition {
    argument: "tessel-total-division",
    name: "TesselTotalDivision",
    description: "Define integer division by zero and INT_MIN / -1 as XLA does (x / 0 = -1, x % 0 = x)",
    anchor: "builtin.module",
    run,
};

/// The marker of a division this pass guarded.
const GUARDED: &str = "tessel.total";

const DIVISIONS: [&str; 6] =
    ["arith.divsi", "arith.divui", "arith.remsi", "arith.remui", "arith.floordivsi", "arith.ceildivsi"];

fn run(module: OperationRef<'static, '_>) -> Result<(), PassError> {
    template::rewrite_each(
        module,
        |name| DIVISIONS.contains(&name),
        |raw, name| {
            let op = raw_op(raw);
            let operands = op.operands();
            let r#type = value_type(operands[0]);
            // SAFETY: a live type of the module being rewritten.
            let index = unsafe { mlirTypeIsAIndex(element_type(r#type)) };
            if index || op.has(GUARDED) {
                return Ok(None);
            }
            let signed = name.ends_with("si");
            if constant_integer(operands[1]).is_some_and(|d| d != 0 && !(signed && d == -1)) {
                return Ok(None);
            }
            Ok(Some((guarded(name, r#type, signed), operands)))
        },
    )
}

/// The template computing `name` with the defined results.
fn guarded(name: &str, r#type: MlirType, signed: bool) -> String {
    let t = print_type(r#type);
    let b1 = condition_type(r#type);
    let bits = element_bits(element_type(r#type));
    let is_division = !name.contains("rem");
    let mut text = format!(
        "func.func @template(%a: {t}, %b: {t}) -> {t} {{\n\
         %zero = {}\n%one = {}\n%all_ones = {}\n%by_zero = arith.cmpi eq, %b, %zero : {t}\n",
        integer_constant(0, r#type),
        integer_constant(1, r#type),
        integer_constant(-1, r#type)
    );
    let undefined = if signed {
        // INT_MIN of the width, as the signed number its bits are.
        let lowest = if bits >= 64 { i64::MIN } else { -(1i64 << (bits - 1)) };
        text.push_str(&format!(
            "%lowest = {}\n\
             %a_lowest = arith.cmpi eq, %a, %lowest : {t}\n%b_minus_one = arith.cmpi eq, %b, %all_ones : {t}\n\
             %overflow = arith.andi %a_lowest, %b_minus_one : {b1}\n\
             %undefined = arith.ori %by_zero, %overflow : {b1}\n",
            integer_constant(lowest, r#type)
        ));
        "%undefined"
    } else {
        "%by_zero"
    };
    // Dividing by 1 gives INT_MIN / -1's INT_MIN and INT_MIN % -1's 0;
    // only a zero divisor's result is selected afterwards.
    let when_zero = if is_division { "%all_ones" } else { "%a" };
    text.push_str(&format!(
        "%divisor = arith.select {undefined}, %one, %b : {b1}, {t}\n\
         %quotient = {name} %a, %divisor {{{GUARDED}}} : {t}\n\
         %result = arith.select %by_zero, {when_zero}, %quotient : {b1}, {t}\n\
         return %result : {t}\n}}"
    ));
    text
}
