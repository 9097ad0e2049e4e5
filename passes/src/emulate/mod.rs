//! The GPU emulator: launches, matrix-core fragment exchanges and cross-lane
//! reductions as CPU loops, with per-work-item values privatized across
//! barriers.

pub mod privatize;
pub mod tessel_emulate_bounds_checks;
pub mod tessel_emulate_buffers;
pub mod tessel_emulate_gpu;
pub mod tessel_emulate_matrix_cores;
pub mod tessel_emulate_subgroups;

use crate::support::ir::{block_operations, inline_template};
use mlir_sys::{MlirBlock, MlirValue};

/// A `memref<?x{element}>` of `slots` elements per work-item (`items`
/// of them) through which a launch's work-items exchange values: allocated
/// at the start of the launch's `body` and freed at its end, so one per
/// workgroup once the launch runs as loops.
pub(crate) fn exchange_buffer(
    body: MlirBlock,
    items: MlirValue,
    slots: i64,
    element: &str,
) -> Result<MlirValue, String> {
    let operations = block_operations(body);
    let (first, terminator) = (operations[0], *operations.last().expect("a terminator"));
    let memref = format!("memref<?x{element}>");
    let text = format!(
        "func.func @template(%items: index) -> {memref} {{\n%slots = arith.constant {slots} : index\n\
         %n = arith.muli %items, %slots : index\n%x = memref.alloc(%n) : {memref}\nreturn %x : {memref}\n}}"
    );
    let (values, _) = inline_template(first, &text, &[items])?;
    let dealloc = format!("func.func @template(%x: {memref}) {{\nmemref.dealloc %x : {memref}\nreturn\n}}");
    inline_template(terminator, &dealloc, &values)?;
    Ok(values[0])
}
