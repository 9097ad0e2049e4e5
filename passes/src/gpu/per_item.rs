//! Which values differ between the work-items of a workgroup: the item ids
//! and everything computed from them (SIMT values), as opposed to uniform
//! values every item shares. grid-to-gpu runs code on per-item values on
//! every work-item (and shares the rest as block work); the GPU emulator
//! keeps per-item values per item across barriers.

use crate::support::handles::{operation_ref, raw_op};
use crate::support::ir::{block_arguments, block_operations};
use melior::ir::operation::{OperationLike, WalkOrder, WalkResult};
use mlir_sys::*;
use std::collections::HashSet;

/// Pure arithmetic (`arith`, `affine`, `index` ops): on item ids,
/// cheaper to recompute per work-item than to keep across barriers.
pub fn is_pure_arithmetic(name: &str) -> bool {
    ["arith.", "affine.", "index."].iter().any(|prefix| name.starts_with(prefix))
}

/// The per-item values under some operation.
pub struct PerItem(HashSet<usize>);

impl PerItem {
    /// The values under `root` that depend on `seeds` (the item ids):
    /// results of ops with per-item operands; a loop's `iter_args` and
    /// results when their initial or yielded values are per-item; an
    /// `scf.if`'s results when its condition or a yielded value is.
    pub fn analyze(root: MlirOperation, seeds: &[MlirValue]) -> PerItem {
        let mut values: HashSet<usize> = seeds.iter().map(|value| value.ptr as usize).collect();
        loop {
            let before = values.len();
            operation_ref(root).walk(WalkOrder::PostOrder, |nested| {
                mark(nested.to_raw(), &mut values);
                WalkResult::Advance
            });
            if values.len() == before {
                return PerItem(values);
            }
        }
    }

    pub fn contains(&self, value: MlirValue) -> bool {
        self.0.contains(&(value.ptr as usize))
    }

    /// Does `op`, or an op nested in it, use a per-item value?
    pub fn used_by(&self, op: MlirOperation) -> bool {
        crate::support::ir::any_nested(op, |nested| {
            raw_op(nested).operands().into_iter().any(|value| self.contains(value))
        })
    }
}

/// The operands of the terminator of `block`.
fn yielded(block: MlirBlock) -> Vec<MlirValue> {
    block_operations(block).last().map(|&terminator| raw_op(terminator).operands()).unwrap_or_default()
}

fn mark(op: MlirOperation, values: &mut HashSet<usize>) {
    let raw = raw_op(op);
    let has = |values: &HashSet<usize>, value: MlirValue| values.contains(&(value.ptr as usize));
    let results = raw.results();
    match raw.name().as_str() {
        "scf.for" => {
            // Operands: lower, upper, step, then the initial values.
            let operands = raw.operands();
            let body = raw.region_block(0);
            let arguments = block_arguments(body);
            let out = yielded(body);
            let uniform_bounds = operands[..3].iter().all(|&bound| !has(values, bound));
            for (index, &result) in results.iter().enumerate() {
                if !uniform_bounds || has(values, operands[3 + index]) || has(values, out[index]) {
                    values.insert(result.ptr as usize);
                    values.insert(arguments[1 + index].ptr as usize);
                }
            }
            if !uniform_bounds {
                values.insert(arguments[0].ptr as usize);
            }
        }
        "scf.if" => {
            let condition = raw.operands()[0];
            let branches: Vec<Vec<MlirValue>> = (0..2)
                .map(|region| raw.region_block(region))
                .filter(|block| !block.ptr.is_null())
                .map(yielded)
                .collect();
            for (index, &result) in results.iter().enumerate() {
                if has(values, condition) || branches.iter().any(|out| has(values, out[index])) {
                    values.insert(result.ptr as usize);
                }
            }
        }
        _ => {
            // Its own operands or those of an op nested in it.
            if crate::support::ir::any_nested(op, |inner| {
                raw_op(inner).operands().into_iter().any(|value| has(values, value))
            }) {
                values.extend(results.iter().map(|value| value.ptr as usize));
            }
        }
    }
}
