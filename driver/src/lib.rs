//! The `tessel-opt` and `tessel` command-line tools, as thin shells over the
//! Tessel crates.

pub mod opt;
pub mod run;
pub mod source;
