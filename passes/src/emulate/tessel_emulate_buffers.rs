//! `tessel-emulate-buffers`: AMD buffer accesses (`amdgpu.raw_buffer_load`
//! and `raw_buffer_store` on a one-dimensional memref, which
//! `tessel-buffer-resources` makes) as code the GPU emulator runs.
//!
//! A buffer instruction checks each element's offset against the buffer's
//! size: elements past the end read as zero and are not written. Here the
//! same check is a mask over the vector's elements, and the access a
//! masked vector load (zeros elsewhere) or store.

use crate::support::handles::{dim_size, rank_of, raw_op, value_type};
use crate::support::ir::{element_name, print_type};
use crate::support::template::{self, Rewrite};
use crate::{PassDefinition, PassError};
use melior::ir::OperationRef;
use mlir_sys::mlirTypeIsAVector;

pub static PASS: PassDefinition = PassDefinition {
    argument: "tessel-emulate-buffers",
    name: "TesselEmulateBuffers",
    description: "Emulate amdgpu.raw_buffer_load/store as bounds-checked masked vector accesses",
    anchor: "builtin.module",
    run,
};

fn run(module: OperationRef<'static, '_>) -> Result<(), PassError> {
    template::rewrite_each(
        module,
        |name| name == "amdgpu.raw_buffer_load" || name == "amdgpu.raw_buffer_store",
        |op, name| emulation(op, name).map(Some),
    )
}

/// The template computing which of a vector's elements, from `%at` on,
/// lie in the buffer (`%mask`) and the index they start at (`%i`).
fn bounds(elements: i64, size: i64) -> String {
    format!(
        "  %i = arith.index_cast %at : i32 to index\n  \
         %step = vector.step : vector<{elements}xindex>\n  \
         %start = vector.broadcast %i : index to vector<{elements}xindex>\n  \
         %each = arith.addi %start, %step : vector<{elements}xindex>\n  \
         %size = arith.constant dense<{size}> : vector<{elements}xindex>\n  \
         %mask = arith.cmpi ult, %each, %size : vector<{elements}xindex>\n"
    )
}

fn emulation(op: mlir_sys::MlirOperation, name: &str) -> Result<Rewrite, String> {
    let raw = raw_op(op);
    let operands = raw.operands();
    let reads = name == "amdgpu.raw_buffer_load";
    let (memref, value) = if reads { (operands[0], None) } else { (operands[1], Some(operands[0])) };
    // The memref (and a stored value), one index: no SGPR offset, no
    // static index offset, a one-dimensional buffer.
    let memref_rank = rank_of(value_type(memref));
    if operands.len() != usize::from(!reads) + 2 || raw.has("indexOffset") || memref_rank != 1 {
        return Err("the emulator runs buffer accesses of one-dimensional buffers at one index, without offsets".into());
    }
    let at = operands[usize::from(!reads) + 1];
    let vector_type = if reads { value_type(raw.results()[0]) } else { value_type(operands[0]) };
    let (vector, buffer) = (print_type(vector_type), print_type(value_type(memref)));
    // SAFETY: types live in the context; the rank is asked of vector types only.
    if !unsafe { mlirTypeIsAVector(vector_type) } || rank_of(vector_type) != 1 {
        return Err(format!("the emulator runs buffer accesses of one-dimensional vectors, not {vector}"));
    }
    let elements = dim_size(vector_type, 0);
    let size = dim_size(value_type(memref), 0);
    let element = element_name(vector_type);
    let zero = if element.starts_with('f') || element.starts_with("bf") { "0.0" } else { "0" };
    let check = bounds(elements, size);
    Ok(match value {
        None => (
            format!(
                "func.func @template(%buffer: {buffer}, %at: i32) -> {vector} {{\n{check}  \
                 %zero = arith.constant dense<{zero}> : vector<{elements}x{element}>\n  \
                 %v = vector.maskedload %buffer[%i], %mask, %zero : {buffer}, vector<{elements}xi1>, {vector} into {vector}\n  \
                 return %v : {vector}\n}}"
            ),
            vec![memref, at],
        ),
        Some(value) => (
            format!(
                "func.func @template(%buffer: {buffer}, %value: {vector}, %at: i32) {{\n{check}  \
                 vector.maskedstore %buffer[%i], %mask, %value : {buffer}, vector<{elements}xi1>, {vector}\n  \
                 return\n}}"
            ),
            vec![memref, value, at],
        ),
    })
}
