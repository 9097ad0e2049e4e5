//! What every pass builds on: IR helpers over the C API, textual templates,
//! transform-dialect scripts, diagnostics and the by-name pass registry.

pub mod bounds_checks;
pub mod diagnostics;
pub mod handles;
pub mod ir;
pub mod registry;
pub mod template;
pub mod transform;
pub(crate) mod uninitialized;
