//! Reading and parsing input files with located diagnostics.

use crate::DriverError;
use melior::{Context, ir::Module};
use std::path::Path;
use tessel_dialects::source::SourceDiagnostics;

/// Parses `path`; diagnostics raised while the returned handler lives (also
/// during lowering) are printed as `file:line:col: error: ...`.
pub fn parse_file<'c>(context: &'c Context, path: &Path) -> Result<(Module<'c>, SourceDiagnostics<'c>), DriverError> {
    let name = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|e| DriverError::read(path, e))?;
    let text = String::from_utf8(bytes)
        .map_err(|_| DriverError::Located(format!("{name}:1:1: error: input is not valid UTF-8 text")))?;
    let diagnostics = SourceDiagnostics::new(context, &text, &name, false);
    let module = diagnostics.parse().ok_or(DriverError::Reported)?;
    Ok((module, diagnostics))
}
