//! The per-target pipelines, each visible in one function, registered as
//! named pipelines (`tessel-to-cpu`, `tessel-to-rocm`) so `tessel-opt` and pipeline strings
//! reach them too.

#![deny(clippy::undocumented_unsafe_blocks)]

pub mod cpu;
pub mod emit;
pub mod rocm;

use melior::{Context, StringRef, ir::Module, pass::PassManager, utility::parse_pass_pipeline};
use std::sync::Once;
use tessel_dialects::ffi;

/// Why lowering failed; the diagnostics went to the context's handlers.
#[derive(Debug, thiserror::Error)]
pub enum LowerError {
    #[error("invalid pipeline: {0}")]
    Pipeline(String),
    #[error("lowering failed (see the diagnostics above)")]
    Failed,
    #[error("nothing to compile for the GPU: the module calls no kernel over a grid (grid.call)")]
    NoKernels,
    /// An internal failure: grid calls that made no launch would run as
    /// host code on the "emulated GPU".
    #[error(
        "the ROCm pipeline made no GPU launch of the module's {0} grid call(s): nothing would run on the emulated GPU"
    )]
    NoLaunch(usize),
}

/// What a program means, before either target lowers it (the first passes
/// of every pipeline): the specs checked, signedness dropped, and integer
/// division and shifts defined for every operand (XLA's results where
/// arith has none).
pub const SEMANTICS: &str = "grid-verify-specs,tessel-strip-signedness,tessel-total-division,tessel-saturating-shifts";

/// Tensors to buffers as every target does it: inits CSE merged one per
/// use again (or a result stored to a ref would share its buffer with
/// another op's); values stored to a ref built in it
/// (`eliminate-empty-tensors`), and the ref's tensors one value again, so
/// one-shot analysis sees those writes alias the ref's reads; then one-shot
/// bufferization, where loops may return fresh buffers and function
/// arguments are plain memrefs.
pub const TO_BUFFERS: &str = "tessel-unshare-inits,eliminate-empty-tensors,tessel-share-ref-tensors,\
     one-shot-bufferize{allow-return-allocs-from-loops=1 bufferize-function-boundaries=1 \
     function-boundary-type-conversion=identity-layout-map}";

/// The pass-pipeline string of named stages, in order.
pub fn join_stages<S: AsRef<str>>(stages: &[(&str, impl AsRef<[S]>)]) -> String {
    stages.iter().flat_map(|(_, passes)| passes.as_ref().iter().map(|pass| pass.as_ref())).collect::<Vec<_>>().join(",")
}

/// The name of a grid order (`--grid-order`, the tuner's JSON):
/// programs of consecutive parallel axes row-major (the last axis
/// fastest) or column-major.
pub fn grid_order_name(column_major: bool) -> &'static str {
    if column_major { "column-major" } else { "row-major" }
}

/// Registers upstream passes, Tessel's passes and Tessel's named pipelines
/// (idempotent).
pub fn register_everything() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        melior::utility::register_all_passes();
        tessel_passes::register_passes();
        for (name, description, pipeline) in [cpu::registration(), rocm::registration()] {
            // SAFETY: the three strings outlive the call (the registry
            // copies them); registration runs once, under `ONCE`.
            unsafe {
                ffi::tesselRegisterPassPipeline(
                    StringRef::new(name).to_raw(),
                    StringRef::new(description).to_raw(),
                    StringRef::new(&pipeline).to_raw(),
                )
            };
        }
    });
}

/// Runs `passes` (a pipeline string) on `module`.
pub fn run_passes(context: &Context, module: &mut Module, passes: &str) -> Result<(), LowerError> {
    crate::register_everything();
    let manager = PassManager::new(context);
    parse_pass_pipeline(manager.as_operation_pass_manager(), &format!("builtin.module({passes})"))
        .map_err(|error| LowerError::Pipeline(error.to_string()))?;
    manager.run(module).map_err(|_| LowerError::Failed)
}
