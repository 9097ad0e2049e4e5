//! `tessel-to-cpu`: from grid/block IR to the LLVM dialect for the host.

use melior::{
    Context,
    ir::{BlockLike, Module, attribute::Attribute, operation::{OperationLike, OperationMutLike}},
    pass::PassManager,
    utility::parse_pass_pipeline,
};

/// Why lowering failed; the diagnostics went to the context's handlers.
#[derive(Debug, thiserror::Error)]
pub enum LowerError {
    #[error("invalid pipeline: {0}")]
    Pipeline(String),
    #[error("lowering failed (see the diagnostics above)")]
    Failed,
}

/// The whole CPU pipeline, in order.
pub fn pipeline() -> String {
    [
        // Pallas semantics: check the specs, run the grid as loops over
        // blocks, inline the per-call-site kernels.
        "grid-verify-specs",
        "grid-to-loops",
        "inline",
        "symbol-dce",
        // Kernel bodies: block ops and element-wise tensor math to linalg.
        "block-to-linalg",
        "func.func(convert-elementwise-to-linalg)",
        "linalg-fuse-elementwise-ops",
        // Contractions: register tiles of FMA outer products.
        "tessel-tile",
        "tessel-vectorize",
        "canonicalize",
        "cse",
        // Tensors to buffers, with deallocation.
        "one-shot-bufferize{allow-return-allocs-from-loops=1 bufferize-function-boundaries=1 function-boundary-type-conversion=identity-layout-map}",
        "canonicalize",
        "cse",
        "ownership-based-buffer-deallocation",
        "canonicalize",
        "buffer-deallocation-simplification",
        "bufferization-lower-deallocations",
        "cse",
        "canonicalize",
        // Loops; parallel grid axes onto OpenMP threads.
        "tessel-copies-to-linalg",
        "convert-linalg-to-loops",
        "func.func(convert-vector-to-scf{full-unroll=true})",
        "scf-forall-to-parallel",
        "convert-scf-to-openmp",
        // Down to the LLVM dialect.
        "expand-strided-metadata",
        "lower-affine",
        "convert-vector-to-llvm",
        "finalize-memref-to-llvm",
        "convert-scf-to-cf",
        "convert-math-to-llvm",
        "convert-arith-to-llvm",
        "convert-index-to-llvm",
        "convert-ub-to-llvm",
        "convert-func-to-llvm",
        "convert-cf-to-llvm",
        "convert-openmp-to-llvm",
        "reconcile-unrealized-casts",
    ]
    .map(str::to_string)
    .join(",")
}

/// (name, description, pipeline) of the named pipeline; its passes are
/// added to the module's pass manager it is used in.
pub(crate) fn registration() -> (&'static str, &'static str, String) {
    ("tessel-to-cpu", "Lower Tessel grid/block IR to the LLVM dialect for multi-core CPUs", pipeline())
}

/// How compiled code pads partial blocks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Padding {
    /// Zeros (the padding is unspecified in Pallas).
    #[default]
    Zero,
    /// NaN for floats, the minimum for integers, like the interpreter.
    Poison,
}

/// Lowers `module` in place to the LLVM dialect. Every public function gets
/// a C interface (`_mlir_ciface_<name>`) for callers.
pub fn lower(context: &Context, module: &mut Module, padding: Padding) -> Result<(), LowerError> {
    crate::register_everything();
    if padding == Padding::Poison {
        module.as_operation_mut().set_attribute("tessel.poison", Attribute::unit(context));
    }
    let unit = Attribute::unit(context);
    let body = module.body();
    let mut function = body.first_operation();
    while let Some(op) = function {
        if op.name().as_string_ref().as_str() == Ok("func.func") && !op.has_attribute("sym_visibility") {
            let mut op = unsafe { melior::ir::operation::OperationRefMut::from_raw(op.to_raw()) };
            op.set_attribute("llvm.emit_c_interface", unit);
        }
        function = op.next_in_block();
    }
    let manager = PassManager::new(context);
    parse_pass_pipeline(manager.as_operation_pass_manager(), &format!("builtin.module({})", pipeline()))
        .map_err(|error| LowerError::Pipeline(error.to_string()))?;
    manager.run(module).map_err(|_| LowerError::Failed)
}
