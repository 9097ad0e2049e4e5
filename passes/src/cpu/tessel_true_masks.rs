//! `tessel-true-masks`: marks the `block.load`s and `block.store`s whose
//! masks hold everywhere (`tessel.mask_true`); block-to-linalg lowers them
//! as plain accesses. CPU only: the GPU emulator does not handle every
//! unmasked form yet.
//!
//! Triton-style kernels pad blocks to powers of two and mask the padding
//! (`mask = iota < n`); when the block is exactly `n` long the mask is
//! true everywhere, and a masked access is a plain one. Dropping such masks
//! saves the select of a load and, for stores, the read of the target the
//! merge needs: the first read of a freshly allocated output (XLA allocates
//! one per call) maps the zero page, and the write then replaces it, a
//! TLB shootdown per page across the threads.
//!
//! Recognized: splat `true` constants; `arith.andi` of two such masks or
//! `arith.ori` with one; `block.broadcast` of one; and `arith.cmpi` between
//! a `block.iota` (values 0..n-1 along its dim) and a splat integer
//! constant that the predicate accepts at both ends of that range.

use crate::support::handles::{raw_op, set_unit_attribute, value_type};
use crate::support::ir::{collect_operations, constant_integer, defining_op};
use crate::{PassDefinition, PassError};
use melior::ir::OperationRef;
use mlir_sys::*;

pub static PASS: PassDefinition = PassDefinition {
    argument: "tessel-true-masks",
    name: "TesselTrueMasks",
    description: "Mark block loads and stores whose masks hold everywhere as plain accesses (CPU)",
    anchor: "builtin.module",
    run,
};

/// The unit attribute on an access whose mask holds everywhere.
pub const MASK_TRUE: &str = "tessel.mask_true";

fn run(module: OperationRef<'static, '_>) -> Result<(), PassError> {
    for (raw, name) in collect_operations(module, |name| name == "block.load" || name == "block.store") {
        let op = raw_op(raw);
        let segments = op.segments();
        // ref (+ value for stores), offsets, then the mask if any.
        let first = usize::from(name == "block.store");
        if segments.get(first + 2) == Some(&1) && always_true(op.operands()[first + 1 + segments[first + 1]]) {
            set_unit_attribute(raw, MASK_TRUE);
        }
    }
    Ok(())
}

/// The integer of a splat constant tensor (`arith.constant dense<c>` or
/// `tensor.splat` of an `arith.constant c`).
fn splat_integer(value: MlirValue) -> Option<i64> {
    let op = raw_op(defining_op(value)?);
    match op.name().as_str() {
        "arith.constant" => constant_integer(value),
        "tensor.splat" => constant_integer(op.operands()[0]),
        _ => None,
    }
}

/// The largest value of a `block.iota` (its dim's size - 1).
fn iota_last(value: MlirValue) -> Option<i64> {
    let op = raw_op(defining_op(value)?);
    if op.name() != "block.iota" {
        return None;
    }
    let dim = op.integer("dim");
    let ty = value_type(value);
    // SAFETY: a block.iota result is a ranked tensor (its verifier); `dim` is below its rank
    let size = unsafe { mlirShapedTypeGetDimSize(ty, dim as isize) };
    (size > 0).then_some(size - 1)
}

/// `arith.cmpi` predicates (the enum's values) holding for every x in
/// [0, last] against the constant `c` (`iota <pred> c`).
fn holds(predicate: i64, last: i64, c: i64) -> bool {
    match predicate {
        1 => c < 0 || c > last, // ne
        2 | 6 => last < c,      // slt, ult (the iota is non-negative)
        3 | 7 => last <= c,     // sle, ule
        4 => c < 0,             // sgt: 0 > c
        5 => c <= 0,            // sge
        8 => false,             // ugt: 0 > c never (unsigned)
        9 => c == 0,            // uge
        _ => false,             // eq
    }
}

/// The predicate with its operands swapped (`c <pred> iota` as
/// `iota <swapped> c`).
fn swapped(predicate: i64) -> i64 {
    match predicate {
        2 => 4,
        3 => 5,
        4 => 2,
        5 => 3,
        6 => 8,
        7 => 9,
        8 => 6,
        9 => 7,
        other => other,
    }
}

/// Whether the i1 tensor `mask` is true everywhere, by construction.
fn always_true(mask: MlirValue) -> bool {
    always_true_within(mask, 8)
}

fn always_true_within(mask: MlirValue, depth: usize) -> bool {
    let Some(op) = defining_op(mask) else { return false };
    if depth == 0 {
        return false;
    }
    let op = raw_op(op);
    let operands = op.operands();
    match op.name().as_str() {
        "arith.constant" | "tensor.splat" => splat_integer(mask).is_some_and(|c| c != 0),
        "arith.andi" => operands.iter().all(|&m| always_true_within(m, depth - 1)),
        "arith.ori" => operands.iter().any(|&m| always_true_within(m, depth - 1)),
        "block.broadcast" => always_true_within(operands[0], depth - 1),
        "arith.cmpi" => {
            let predicate = op.integer("predicate");
            let (lhs, rhs) = (operands[0], operands[1]);
            match (iota_last(lhs), splat_integer(rhs), iota_last(rhs), splat_integer(lhs)) {
                (Some(last), Some(c), _, _) => holds(predicate, last, c),
                (_, _, Some(last), Some(c)) => holds(swapped(predicate), last, c),
                _ => false,
            }
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn predicates_hold_at_both_ends_of_the_range() {
        // iota over 0..=15 against 16: slt/ult/sle/ule/ne hold, eq/sgt do not.
        for (predicate, expected) in [(0, false), (1, true), (2, true), (3, true), (4, false), (6, true), (7, true)] {
            assert_eq!(holds(predicate, 15, 16), expected, "predicate {predicate}");
        }
        // Against 15 only sle/ule hold (15 < 15 fails at the top).
        assert!(!holds(2, 15, 15) && holds(3, 15, 15));
        // 16 > iota is iota < 16.
        assert!(holds(swapped(4), 15, 16));
        assert!(!holds(swapped(4), 15, 15));
    }
}
