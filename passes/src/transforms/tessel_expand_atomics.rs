//! `tessel-expand-atomics`: each `block.atomic_cas_element` becomes a
//! `memref.generic_atomic_rmw` that keeps the element unless it equals the
//! expected one bit for bit (floats compare as integers of their width).
//!
//! block-to-linalg lowers `block.atomic_cas` to the region-free
//! `block.atomic_cas_element` because buffer deallocation rejects ops with
//! regions that do not describe their control flow, as
//! `memref.generic_atomic_rmw` does not; this pass runs once buffers are
//! final (after deallocation on the CPU, after bufferization on the GPU).

use crate::support::handles::{raw_op, value_type};
use crate::{
    PassDefinition, PassError,
    support::{
        ir::{element_bits, join, print_type},
        template,
    },
};
use melior::ir::OperationRef;

pub static PASS: PassDefinition = PassDefinition {
    argument: "tessel-expand-atomics",
    name: "TesselExpandAtomics",
    description: "Expand block.atomic_cas_element into memref.generic_atomic_rmw",
    anchor: "builtin.module",
    run,
};

fn run(module: OperationRef<'static, '_>) -> Result<(), PassError> {
    template::rewrite_each(
        module,
        |name| name == "block.atomic_cas_element",
        |raw, _| {
            let op = raw_op(raw);
            let operands = op.operands();
            let element_type = value_type(operands[1]);
            let element = print_type(element_type);
            let buffer = print_type(value_type(operands[2]));
            let indices = operands.len() - 3;
            let index_params = join((0..indices).map(|d| format!("%i{d}: index")));
            let separator = if indices > 0 { ", " } else { "" };
            // Bit-for-bit equality: floats compare as integers of their
            // width (the verifier allows signless integers and floats).
            let (bits, current, expected, compared) = if element.starts_with('i') {
                (String::new(), "%current", "%expected", element.clone())
            } else {
                let int = format!("i{}", element_bits(element_type));
                (
                    format!(
                        "%cb = arith.bitcast %current : {element} to {int}\n\
                         %eb = arith.bitcast %expected : {element} to {int}\n"
                    ),
                    "%cb",
                    "%eb",
                    int,
                )
            };
            let text = format!(
                "func.func @template(%expected: {element}, %value: {element}, %buffer: {buffer}{separator}{index_params}) \
             -> {element} {{\n\
             %old = memref.generic_atomic_rmw %buffer[{}] : {buffer} {{\n\
             ^bb0(%current: {element}):\n{bits}\
             %eq = arith.cmpi eq, {current}, {expected} : {compared}\n\
             %new = arith.select %eq, %value, %current : {element}\n\
             memref.atomic_yield %new : {element}\n}}\n\
             return %old : {element}\n}}",
                join((0..indices).map(|d| format!("%i{d}")))
            );
            Ok(Some((text, operands)))
        },
    )
}
