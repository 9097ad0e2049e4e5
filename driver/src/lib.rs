#![doc = include_str!("../../README.md")]
// The `tessel-opt` and `tessel` command-line tools, as thin shells over the
// Tessel crates; the README (above) is the crate's documentation, and its
// library example a doctest.

pub mod compile;
pub mod opt;
pub mod run;
pub mod source;

/// Writes to stdout; a closed pipe (`tessel ... | head`) is not an error
/// worth a panic, the output is simply no longer wanted.
pub fn write_stdout(text: &str) {
    use std::io::Write;
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
}
