//! `tessel-past-end-views`: the programs with partial blocks run the whole
//! blocks' kernel version too, where buffer accesses make that exact.
//!
//! grid-to-loops runs a GPU kernel with partial blocks in two versions
//! (`tessel.staged_version`): views of the arrays for the programs whose
//! blocks are all whole, padded copies in workgroup memory for the others,
//! filled and written back element by element. With 255 work-groups on a
//! chip of 304 CUs every program runs at once and the one staged edge
//! block sets the kernel's time: wave 0 of the element-wise kernel's last
//! work-group executed 13,648 instructions in 1071 round trips to memory,
//! the others 819 in 16.
//!
//! Where only the arrays' outermost dimension has partial blocks (the
//! clipped part of a block lies past the array's end), grid-to-loops
//! marks the `scf.if` `tessel.past_end_views` (not with `tessel.poison`:
//! the padding read there is zero). Past the end, a buffer access reads
//! zeros (the default padding) and writes nothing (Pallas drops the
//! out-of-bounds part of a block's writes), exactly what the staged copy
//! gives. So when every global array the whole version touches will be
//! addressed through buffer resources — each is a global memref
//! `tessel-buffer-resources` can address, every access of it in the
//! program nest outside the staged version is a vector access it makes a
//! buffer access (`buffer_access`), and its byte size is a multiple of 16
//! (no vector straddles the end) — every program takes the whole version:
//! the condition becomes `true` and canonicalization drops the staged one
//! before grid-to-gpu places its buffers.

use crate::gpu::tessel_buffer_resources::vector_accesses;
use crate::grid::grid_to_loops::{KernelVersion, PAST_END_VIEWS, STAGED_VERSION, kernel_version};
use crate::support::handles::{context_of, is_memref, location_of, operation_ref, raw_op, value_type};
use crate::support::ir::{VIEWS, collect_operations, defining_op, enclosing, is_inside, static_bytes, view_root};
use crate::support::template;
use crate::{PassDefinition, PassError};
use melior::ir::OperationRef;
use mlir_sys::*;

pub static PASS: PassDefinition = PassDefinition {
    argument: "tessel-past-end-views",
    name: "TesselPastEndViews",
    description: "Run partial blocks on views past the array's end where buffer accesses make that exact (GPU)",
    anchor: "builtin.module",
    run,
};

fn run(module: OperationRef<'static, '_>) -> Result<(), PassError> {
    for (version, _) in collect_operations(module, |name| name == "scf.if") {
        let op = raw_op(version);
        if !op.has(STAGED_VERSION) || !op.has(PAST_END_VIEWS) || !whole_version_is_exact(version) {
            continue;
        }
        let text = "func.func @template() -> i1 {\n%all = arith.constant true\nreturn %all : i1\n}";
        let always = template::inline_before(context_of(version), version, text, &[])
            .map_err(|error| PassError::at(location_of(version), error.0))?[0];
        // SAFETY: live IR of the module being rewritten (crate invariant,
        // support/handles.rs); an scf.if's operand 0 is its condition.
        unsafe { mlirOperationSetOperand(version, 0, always) };
    }
    Ok(())
}

/// Whether every global array the whole version (`version`'s then region)
/// touches will be addressed through buffer resources, so that a view
/// past its end reads zeros and writes nothing.
fn whole_version_is_exact(version: MlirOperation) -> bool {
    // The program nest: the outermost op around the version in its function.
    let mut nest = version;
    while let Some(parent) = enclosing(nest, |_| true).filter(|&parent| raw_op(parent).name() != "func.func") {
        nest = parent;
    }
    let mut roots: Vec<MlirValue> = Vec::new();
    for (op, name) in collect_operations(operation_ref(version), |name| !VIEWS.contains(&name)) {
        if kernel_version(op) != Some(KernelVersion::Whole) || name == "scf.yield" {
            continue;
        }
        for operand in raw_op(op).operands().into_iter().filter(|&value| is_memref(value_type(value))) {
            let root = view_root(operand);
            // Workgroup memory made inside the nest is the program's own.
            let local = defining_op(root).is_some_and(|definition| is_inside(definition, nest));
            if !local && !roots.iter().any(|known| known.ptr == root.ptr) {
                roots.push(root);
            }
        }
    }
    roots.into_iter().all(|root| {
        // Every access of it in the nest outside the staged version is
        // one tessel-buffer-resources makes a buffer access.
        static_bytes(value_type(root)).is_some_and(|bytes| bytes % 16 == 0) && vector_accesses(root, nest).is_some()
    })
}
