//! Scalar semantics of the upstream `arith` and `math` ops, element by
//! element, as MLIR defines them.

use super::value::{Num, normalize};
use crate::ElementType;

/// The bits of an element of `element`'s type.
pub(super) fn bits(element: ElementType) -> u32 {
    match element.signless() {
        ElementType::I1 => 1,
        ElementType::I8 => 8,
        ElementType::I16 | ElementType::F16 | ElementType::BF16 => 16,
        ElementType::I32 | ElementType::F32 => 32,
        _ => 64,
    }
}

/// The value as an unsigned integer of the element's width.
fn unsigned(element: ElementType, value: i64) -> u64 {
    let width = bits(element);
    if width == 64 { value as u64 } else { (value as u64) & ((1u64 << width) - 1) }
}

/// arith.maximumf / minimumf: NaN-propagating, -0 below +0.
fn maximum(a: f64, b: f64, max: bool) -> f64 {
    if a.is_nan() || b.is_nan() {
        return f64::NAN;
    }
    if a == b {
        // Only zeros of different signs compare equal yet differ.
        return if max == a.is_sign_positive() { a } else { b };
    }
    if (a > b) == max { a } else { b }
}

/// `cmpi` predicates in ODS order: eq ne slt sle sgt sge ult ule ugt uge.
fn compare_integers(predicate: i64, element: ElementType, a: i64, b: i64) -> Option<bool> {
    let (ua, ub) = (unsigned(element, a), unsigned(element, b));
    Some(match predicate {
        0 => a == b,
        1 => a != b,
        2 => a < b,
        3 => a <= b,
        4 => a > b,
        5 => a >= b,
        6 => ua < ub,
        7 => ua <= ub,
        8 => ua > ub,
        9 => ua >= ub,
        _ => return None,
    })
}

/// `cmpf` predicates in ODS order: false oeq ogt oge olt ole one ord ueq
/// ugt uge ult ule une uno true.
fn compare_floats(predicate: i64, a: f64, b: f64) -> Option<bool> {
    let unordered = a.is_nan() || b.is_nan();
    Some(match predicate {
        0 => false,
        1 => !unordered && a == b,
        2 => !unordered && a > b,
        3 => !unordered && a >= b,
        4 => !unordered && a < b,
        5 => !unordered && a <= b,
        6 => !unordered && a != b,
        7 => !unordered,
        8 => unordered || a == b,
        9 => unordered || a > b,
        10 => unordered || a >= b,
        11 => unordered || a < b,
        12 => unordered || a <= b,
        13 => unordered || a != b,
        14 => unordered,
        15 => true,
        _ => return None,
    })
}

/// Evaluates op `name` on one element. `input` is the operands' element
/// type (the first operand's), `output` the result's; `predicate` is the
/// comparison predicate when there is one. `Err` names what is not
/// supported or undefined.
pub fn evaluate(
    name: &str,
    input: ElementType,
    output: ElementType,
    predicate: i64,
    args: &[Num],
) -> Result<Num, String> {
    let f = |i: usize| args[i].f();
    // Signed integer views: i1's true is -1 to the signed ops (MLIR's
    // extsi, maxsi and slt read it so), though stored as 1.
    let i = |k: usize| if bits(input) == 1 { -(args[k].i() & 1) } else { args[k].i() };
    let u = |k: usize| unsigned(input, args[k].i());
    // Integer division is total, as XLA and tessel-total-division define
    // it: x / 0 = -1 (all ones), x % 0 = x (INT_MIN / -1 wraps to INT_MIN,
    // INT_MIN % -1 is 0). `index` division by zero stays an error: it only
    // computes addresses and launch sizes, where it is a bug.
    let by_zero = |k: usize| -> Result<bool, String> {
        match (args[k].i(), input) {
            (0, ElementType::Index) => Err("integer division by zero".to_string()),
            (divisor, _) => Ok(divisor == 0),
        }
    };
    let value = match name {
        "arith.addf" => Num::F(f(0) + f(1)),
        "arith.subf" => Num::F(f(0) - f(1)),
        "arith.mulf" => Num::F(f(0) * f(1)),
        "arith.divf" => Num::F(f(0) / f(1)),
        "arith.remf" => Num::F(f(0) % f(1)),
        "arith.negf" => Num::F(-f(0)),
        "arith.maximumf" => Num::F(maximum(f(0), f(1), true)),
        "arith.minimumf" => Num::F(maximum(f(0), f(1), false)),
        "arith.maxnumf" => Num::F(f(0).max(f(1))),
        "arith.minnumf" => Num::F(f(0).min(f(1))),
        "arith.addi" => Num::I(i(0).wrapping_add(i(1))),
        "arith.subi" => Num::I(i(0).wrapping_sub(i(1))),
        "arith.muli" => Num::I(i(0).wrapping_mul(i(1))),
        "arith.divsi" | "arith.divui" | "arith.floordivsi" | "arith.ceildivsi" if by_zero(1)? => Num::I(-1),
        "arith.remsi" | "arith.remui" if by_zero(1)? => Num::I(i(0)),
        "arith.divsi" => Num::I(i(0).wrapping_div(i(1))),
        "arith.remsi" => Num::I(i(0).wrapping_rem(i(1))),
        "arith.divui" => Num::I((u(0) / u(1)) as i64),
        "arith.remui" => Num::I((u(0) % u(1)) as i64),
        "arith.floordivsi" => {
            let (q, r) = (i(0).wrapping_div(i(1)), i(0).wrapping_rem(i(1)));
            Num::I(if r != 0 && ((r < 0) != (i(1) < 0)) { q - 1 } else { q })
        }
        "arith.ceildivsi" => {
            let (q, r) = (i(0).wrapping_div(i(1)), i(0).wrapping_rem(i(1)));
            Num::I(if r != 0 && ((r > 0) == (i(1) > 0)) { q + 1 } else { q })
        }
        "arith.maxsi" => Num::I(i(0).max(i(1))),
        "arith.minsi" => Num::I(i(0).min(i(1))),
        "arith.maxui" => Num::I(u(0).max(u(1)) as i64),
        "arith.minui" => Num::I(u(0).min(u(1)) as i64),
        "arith.andi" => Num::I(i(0) & i(1)),
        "arith.ori" => Num::I(i(0) | i(1)),
        "arith.xori" => Num::I(i(0) ^ i(1)),
        "arith.shli" => Num::I(if u(1) >= bits(input) as u64 { 0 } else { i(0) << u(1) }),
        "arith.shrsi" => Num::I(i(0) >> u(1).min(63)),
        "arith.shrui" => Num::I(if u(1) >= 64 { 0 } else { (u(0) >> u(1)) as i64 }),
        "arith.cmpi" => Num::I(compare_integers(predicate, input, i(0), i(1)).ok_or("unknown cmpi predicate")? as i64),
        "arith.cmpf" => Num::I(compare_floats(predicate, f(0), f(1)).ok_or("unknown cmpf predicate")? as i64),
        "arith.index_cast" | "arith.extsi" | "arith.trunci" => Num::I(i(0)),
        "arith.index_castui" | "arith.extui" => Num::I(u(0) as i64),
        "arith.sitofp" => Num::F(i(0) as f64),
        "arith.uitofp" => Num::F(u(0) as f64),
        "arith.fptosi" | "arith.fptoui" => Num::I(f(0) as i64),
        "arith.extf" | "arith.truncf" => Num::F(f(0)),
        "math.exp" => Num::F(f(0).exp()),
        "math.exp2" => Num::F(f(0).exp2()),
        "math.expm1" => Num::F(f(0).exp_m1()),
        "math.log" => Num::F(f(0).ln()),
        "math.log2" => Num::F(f(0).log2()),
        "math.log10" => Num::F(f(0).log10()),
        "math.log1p" => Num::F(f(0).ln_1p()),
        "math.sqrt" => Num::F(f(0).sqrt()),
        "math.rsqrt" => Num::F(1.0 / f(0).sqrt()),
        "math.tanh" => Num::F(f(0).tanh()),
        "math.erf" => Num::F(libm::erf(f(0))),
        "math.erfc" => Num::F(libm::erfc(f(0))),
        "math.cbrt" => Num::F(f(0).cbrt()),
        "math.sin" => Num::F(f(0).sin()),
        "math.cos" => Num::F(f(0).cos()),
        "math.tan" => Num::F(f(0).tan()),
        "math.atan" => Num::F(f(0).atan()),
        "math.absf" => Num::F(f(0).abs()),
        "math.absi" => Num::I(i(0).wrapping_abs()),
        "math.floor" => Num::F(f(0).floor()),
        "math.ceil" => Num::F(f(0).ceil()),
        "math.round" => Num::F(f(0).round()),
        "math.roundeven" => Num::F(f(0).round_ties_even()),
        "math.trunc" => Num::F(f(0).trunc()),
        "math.powf" => Num::F(f(0).powf(f(1))),
        "math.copysign" => Num::F(f(0).copysign(f(1))),
        "math.fma" => Num::F(f(0).mul_add(f(1), f(2))),
        _ => return Err(format!("the interpreter does not support '{name}'")),
    };
    Ok(normalize(output, value))
}

/// Ops evaluated element by element (scalars or same-shaped tensors).
pub fn is_elementwise(name: &str) -> bool {
    (name.starts_with("arith.") && !matches!(name, "arith.constant" | "arith.select" | "arith.bitcast"))
        || name.starts_with("math.")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eval(name: &str, element: ElementType, args: &[Num]) -> Num {
        evaluate(name, element, element, 0, args).unwrap()
    }

    #[test]
    fn integer_ops_wrap_and_round_like_mlir() {
        assert_eq!(eval("arith.addi", ElementType::I8, &[Num::I(127), Num::I(1)]), Num::I(-128));
        assert_eq!(eval("arith.floordivsi", ElementType::I32, &[Num::I(-7), Num::I(2)]), Num::I(-4));
        assert_eq!(eval("arith.ceildivsi", ElementType::I32, &[Num::I(-7), Num::I(2)]), Num::I(-3));
        assert_eq!(eval("arith.ceildivsi", ElementType::I32, &[Num::I(7), Num::I(2)]), Num::I(4));
        assert_eq!(eval("arith.divui", ElementType::I8, &[Num::I(-1), Num::I(2)]), Num::I(127));
        // Division is total on integers (x / 0 = -1, x % 0 = x), not on index.
        assert_eq!(eval("arith.divsi", ElementType::I32, &[Num::I(7), Num::I(0)]), Num::I(-1));
        assert_eq!(eval("arith.divui", ElementType::I8, &[Num::I(7), Num::I(0)]), Num::I(-1));
        assert_eq!(eval("arith.remsi", ElementType::I32, &[Num::I(-7), Num::I(0)]), Num::I(-7));
        assert_eq!(eval("arith.floordivsi", ElementType::I32, &[Num::I(-7), Num::I(0)]), Num::I(-1));
        let lowest = i64::from(i32::MIN);
        assert_eq!(eval("arith.divsi", ElementType::I32, &[Num::I(lowest), Num::I(-1)]), Num::I(lowest));
        assert_eq!(eval("arith.remsi", ElementType::I32, &[Num::I(lowest), Num::I(-1)]), Num::I(0));
        assert!(evaluate("arith.divsi", ElementType::Index, ElementType::Index, 0, &[Num::I(1), Num::I(0)]).is_err());
        assert_eq!(
            evaluate("arith.cmpi", ElementType::I8, ElementType::I1, 6, &[Num::I(-1), Num::I(1)]).unwrap(),
            Num::I(0)
        );
    }

    #[test]
    fn float_ops_round_to_their_type() {
        let third = eval("arith.divf", ElementType::F32, &[Num::F(1.0), Num::F(3.0)]);
        assert_eq!(third, Num::F((1.0f32 / 3.0f32) as f64));
        let max = eval("arith.maximumf", ElementType::F32, &[Num::F(f64::NAN), Num::F(1.0)]);
        assert!(max.f().is_nan());
        assert_eq!(
            eval("arith.maximumf", ElementType::F32, &[Num::F(-0.0), Num::F(0.0)]).f().to_bits(),
            0.0f64.to_bits()
        );
        assert_eq!(
            evaluate("arith.cmpf", ElementType::F32, ElementType::I1, 11, &[Num::F(f64::NAN), Num::F(0.0)]).unwrap(),
            Num::I(1)
        );
    }
}
