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

/// A location as a reader wants it in a runtime message: `file:line:col`,
/// then `, called from file:line:col` for each call site an inlined op
/// carries (MLIR prints `loc(callsite("a.mlir":9:3 at "a.mlir":20:3))`).
pub fn location_text(location: Location) -> String {
    let printed = location.to_string();
    let mut places = Vec::new();
    let mut rest = printed.as_str();
    while let Some(start) = rest.find('"') {
        let after = &rest[start + 1..];
        let Some(end) = after.find('"') else { break };
        let file = &after[..end];
        let tail = &after[end + 1..];
        // `:line:col` follows a file name in a file location.
        let digits: String = tail.chars().take_while(|c| c.is_ascii_digit() || *c == ':').collect();
        if digits.starts_with(':') && digits.len() > 1 {
            places.push(format!("{file}{}", digits.trim_end_matches(':')));
        }
        rest = &tail[digits.len()..];
    }
    match places.split_first() {
        Some((own, callers)) => {
            callers.iter().fold(own.clone(), |text, caller| format!("{text}, called from {caller}"))
        }
        None => printed,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn locations_read_as_file_line_column_and_their_callers() {
        let context = tessel_dialects::create_context();
        let own = melior::ir::Location::new(&context, "kernel.mlir", 9, 3);
        assert_eq!(super::location_text(own), "kernel.mlir:9:3");
        let caller = melior::ir::Location::new(&context, "entry.mlir", 20, 5);
        let inlined = melior::ir::Location::call_site(own, caller);
        assert_eq!(super::location_text(inlined), "kernel.mlir:9:3, called from entry.mlir:20:5");
    }
}
