//! The per-target pipelines, each visible in one function, registered as
//! named pipelines (`tessel-to-cpu`, `tessel-to-rocm`) so `tessel-opt` and pipeline strings
//! reach them too.

pub mod cpu;
pub mod emit;
pub mod rocm;

use melior::StringRef;
use std::sync::Once;
use tessel_dialects::ffi;

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
