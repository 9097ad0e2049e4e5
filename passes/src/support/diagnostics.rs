//! Located diagnostics from Rust passes, through the context's handlers.

use melior::{StringRef, ir::Location};
use tessel_dialects::ffi;

fn emit(location: Location, severity: u32, message: &str) {
    // SAFETY: `location` is a live location of the context (melior ties it
    // to the context's lifetime); the message outlives the call.
    unsafe { ffi::tesselEmitDiagnostic(location.to_raw(), severity, StringRef::new(message).to_raw()) }
}

pub fn emit_error(location: Location, message: &str) {
    emit(location, ffi::SEVERITY_ERROR, message)
}

pub fn emit_warning(location: Location, message: &str) {
    emit(location, ffi::SEVERITY_WARNING, message)
}

pub fn emit_remark(location: Location, message: &str) {
    emit(location, ffi::SEVERITY_REMARK, message)
}
