//! Looking things up in modules, and facts about block ops that both the
//! lowering and the interpreter need.

use melior::ir::{BlockLike, OperationRef, RegionLike, attribute::StringAttribute, operation::OperationLike};

/// The top-level operation of `module` whose `sym_name` is `name`.
pub fn find_symbol<'c, 'a>(module: &impl OperationLike<'c, 'a>, name: &str) -> Option<OperationRef<'c, 'a>> {
    let block = module.region(0).ok()?.first_block()?;
    let mut op = block.first_operation();
    while let Some(current) = op {
        let symbol = current.attribute("sym_name").ok().and_then(|attribute| StringAttribute::try_from(attribute).ok());
        if symbol.is_some_and(|symbol| symbol.value() == name) {
            return Some(current);
        }
        op = current.next_in_block();
    }
    None
}

/// The `arith` op combining two elements for a `block.reduce` kind (sum,
/// max, min, prod, umax, umin, in ODS order).
pub fn reduce_combiner(kind: i64, float: bool) -> &'static str {
    match (kind, float) {
        (0, true) => "arith.addf",
        (1, true) => "arith.maximumf",
        (2, true) => "arith.minimumf",
        (_, true) => "arith.mulf",
        (0, false) => "arith.addi",
        (1, false) => "arith.maxsi",
        (2, false) => "arith.minsi",
        (4, false) => "arith.maxui",
        (5, false) => "arith.minui",
        (_, false) => "arith.muli",
    }
}

/// The `arith` op combining a `block.atomic_rmw` value into the ref's
/// element for its kind (add, max, min, xchg, and, or, xor, umax, umin, in
/// ODS order); `None` for `xchg`, which stores the value.
pub fn atomic_combiner(kind: i64, float: bool) -> Option<&'static str> {
    Some(match kind {
        0..=2 => reduce_combiner(kind, float),
        3 => return None,
        4 => "arith.andi",
        5 => "arith.ori",
        6 => "arith.xori",
        7 => "arith.maxui",
        _ => "arith.minui",
    })
}
