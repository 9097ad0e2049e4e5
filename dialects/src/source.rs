//! Parsing source text with mlir-opt style diagnostics.
//!
//! Diagnostics raised while a [`SourceDiagnostics`] lives (parser, verifier,
//! passes) are printed to stderr as `file:line:col: error: ...` with the
//! source line, or, in verify mode, matched against the `expected-error`,
//! `expected-warning`, `expected-note` and `expected-remark` comments of the
//! source (`@above`, `@below`, `@+N`, `@-N`), exactly like
//! `mlir-opt --verify-diagnostics`.

use crate::ffi;
use melior::{Context, StringRef, ir::Module};
use mlir_sys::mlirModuleFromOperation;
use std::marker::PhantomData;

/// Diagnostic handling tied to one source buffer.
pub struct SourceDiagnostics<'c> {
    raw: *mut ffi::TesselSourceDiagnostics,
    _context: PhantomData<&'c Context>,
}

impl<'c> SourceDiagnostics<'c> {
    /// Starts handling the diagnostics of `context` for `source`, named
    /// `name` in locations.
    pub fn new(context: &'c Context, source: &str, name: &str, verify: bool) -> Self {
        // SAFETY: the C++ side copies `source` and `name` into its own
        // SourceMgr; `context` outlives the handler (the `'c` borrow).
        let raw = unsafe {
            ffi::tesselSourceDiagnosticsCreate(
                context.to_raw(),
                StringRef::new(source).to_raw(),
                StringRef::new(name).to_raw(),
                verify,
            )
        };
        Self { raw, _context: PhantomData }
    }

    /// Parses and verifies the source as a module; `None` after a diagnostic.
    pub fn parse(&self) -> Option<Module<'c>> {
        // SAFETY: `self.raw` is the live handler made in `new`.
        let operation = unsafe { ffi::tesselSourceDiagnosticsParse(self.raw) };
        if operation.ptr.is_null() {
            return None;
        }
        // SAFETY: a fresh, non-null `builtin.module` the parser made, owned
        // from here by the melior `Module` (which destroys it).
        Some(unsafe { Module::from_raw(mlirModuleFromOperation(operation)) })
    }

    /// In verify mode: whether every expected diagnostic was seen and no
    /// unexpected one (those are reported as errors). Always true otherwise.
    pub fn verify(&self) -> bool {
        // SAFETY: `self.raw` is the live handler made in `new`.
        unsafe { ffi::tesselSourceDiagnosticsVerify(self.raw).value != 0 }
    }
}

impl Drop for SourceDiagnostics<'_> {
    fn drop(&mut self) {
        // SAFETY: made in `new`, destroyed once, here.
        unsafe { ffi::tesselSourceDiagnosticsDestroy(self.raw) }
    }
}
