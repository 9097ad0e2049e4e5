//! How a `tessel` command fails. Every command returns a [`DriverError`];
//! `bin/tessel.rs` is the one place that prints it and turns it into an
//! exit code (0 ok, 1 diagnostics or a failed run, 2 usage).

use std::path::Path;
use tessel_lowering::{LowerError, emit::EmitError};
use tessel_runtime::{ArrayError, JitError, interpret::InterpretError};

#[derive(Debug, thiserror::Error)]
pub enum DriverError {
    /// Diagnostics were already printed, located in the source.
    #[error("see the diagnostics above")]
    Reported,
    /// The command line asks for something impossible (exit 2).
    #[error("{0}")]
    Usage(String),
    /// A message that already names its file (`file: error: ...`).
    #[error("{0}")]
    Located(String),
    #[error("cannot read '{path}': {source}")]
    Read { path: String, source: std::io::Error },
    #[error("cannot create '{path}': {source}")]
    CreateDir { path: String, source: std::io::Error },
    /// Writing the command's output file.
    #[error(transparent)]
    Write(#[from] std::io::Error),
    /// An argument array could not be made, read or written.
    #[error("argument #{index}: {source}")]
    Argument { index: usize, source: ArrayError },
    #[error(transparent)]
    Array(#[from] ArrayError),
    #[error(transparent)]
    Lower(LowerError),
    #[error(transparent)]
    Emit(#[from] EmitError),
    #[error(transparent)]
    Jit(#[from] JitError),
    #[error(transparent)]
    Hip(#[from] tessel_runtime::hip::HipError),
    #[error("interpreter: {0}")]
    Interpreter(#[from] InterpretError),
    #[error("--check: {0}")]
    Check(String),
    #[error(transparent)]
    Tune(#[from] tessel_tuner::TuneError),
    /// A failure with no richer type (the message is the whole story).
    #[error("{0}")]
    Failed(String),
}

impl DriverError {
    /// The process exit code for this failure.
    pub fn exit_code(&self) -> u8 {
        match self {
            DriverError::Usage(_) => 2,
            _ => 1,
        }
    }

    pub fn read(path: &Path, source: std::io::Error) -> Self {
        DriverError::Read { path: path.display().to_string(), source }
    }
}

/// A failed pipeline has reported its diagnostics; other lowering errors
/// still need saying.
impl From<LowerError> for DriverError {
    fn from(error: LowerError) -> Self {
        match error {
            LowerError::Failed => DriverError::Reported,
            other => DriverError::Lower(other),
        }
    }
}
