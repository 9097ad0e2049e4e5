//! `tessel-contiguous-copies`: a `linalg.copy` between two contiguous
//! windows becomes a `memref.copy`, which `finalize-memref-to-llvm` makes
//! one `memcpy`.
//!
//! A window of a larger array (a TPU DMA's page, a whole-row block) has a
//! strided type, so `tessel-copies-to-linalg` makes its copies loops; LLVM
//! vectorizes those and fully unrolls them when the shape is static. A
//! kernel with dozens of such copies (JAX's paged attention starts 64
//! page copies per step) became hundreds of thousands of instructions and
//! minutes of code generation. A window that is contiguous (static shape,
//! unit innermost stride, each stride the product of the sizes inside it,
//! up to leading unit dims: the layouts upstream lowers to `memcpy`) is
//! one byte range, whatever its offset: a `memcpy` copies it as fast and
//! in one call.
//!
//! Only copies that cannot overlap are rewritten (`memcpy` needs disjoint
//! ranges; the loops they replace read and write in order): the two
//! windows must view different buffers, one of them allocated in the
//! function, so no two arguments that might alias (a Pallas input and
//! the output aliased to it) are involved. Copies carrying attributes
//! (`tessel.packing`) and copies that convert element types stay loops,
//! as every copy does under `tessel.bounds_checks` (`tessel-check-bounds`
//! checks loops' loads and stores, not `memcpy`s).

use crate::support::handles::{raw_op, value_type};
use crate::{
    PassDefinition, PassError,
    support::ir::{disjoint_windows, print_type, static_shape, strides_and_offset},
    support::template,
};
use melior::ir::OperationRef;
use mlir_sys::*;
use tessel_dialects::BOUNDS_CHECKS;

pub static PASS: PassDefinition = PassDefinition {
    argument: "tessel-contiguous-copies",
    name: "TesselContiguousCopies",
    description: "Rewrite linalg.copy between contiguous, disjoint memref windows as memref.copy (a memcpy)",
    anchor: "builtin.module",
    run,
};

fn run(module: OperationRef<'static, '_>) -> Result<(), PassError> {
    if raw_op(module.to_raw()).has(BOUNDS_CHECKS) {
        return Ok(());
    }
    template::rewrite_each(
        module,
        |name| name == "linalg.copy",
        |raw, _| {
            let operands = raw_op(raw).operands();
            // SAFETY: `raw` is a live linalg.copy of the module being rewritten.
            let attributes = unsafe { mlirOperationGetNumDiscardableAttributes(raw) };
            let [source, target] = operands[..] else { return Ok(None) };
            let (source_type, target_type) = (value_type(source), value_type(target));
            if attributes != 0
                || !is_contiguous(source_type)
                || !is_contiguous(target_type)
                || !same_element(source_type, target_type)
                || !disjoint_windows(source, target)
            {
                return Ok(None);
            }
            let (source_text, target_text) = (print_type(source_type), print_type(target_type));
            let text = format!(
                "func.func @template(%source: {source_text}, %target: {target_text}) {{\n\
                 memref.copy %source, %target : {source_text} to {target_text}\n\
                 return\n}}\n"
            );
            Ok(Some((text, operands)))
        },
    )
}

/// Whether `memref` is one byte range: a static, non-empty shape whose
/// strides are row-major contiguous up to leading unit dims (upstream's
/// `isStaticShapeAndContiguousRowMajor`, the layouts it copies by memcpy).
fn is_contiguous(memref: MlirType) -> bool {
    let Some(shape) = static_shape(memref) else { return false };
    let Some((strides, _)) = strides_and_offset(memref) else { return false };
    if shape.contains(&0) {
        return false;
    }
    let mut running = 1;
    let mut dim = shape.len();
    while dim > 0 && strides[dim - 1] == running {
        running *= shape[dim - 1];
        dim -= 1;
    }
    shape[..dim].iter().all(|&size| size == 1)
}

fn same_element(a: MlirType, b: MlirType) -> bool {
    // SAFETY: both are memref types (checked by `is_contiguous`); types are uniqued in the context.
    unsafe { mlirTypeEqual(mlirShapedTypeGetElementType(a), mlirShapedTypeGetElementType(b)) }
}
