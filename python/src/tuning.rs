//! `tessel.tune`: `tessel tune` in process. A BEAM search over the
//! module's CPU schedules, timed on random inputs, whose winner goes to
//! the cache `tessel.compile` (and `tessel run`/`compile`) read.

use crate::compiler::{self, CompileFailure};
use std::time::Duration;
use tessel_dialects::knobs::Settings;
use tessel_runtime::HostArray;
use tessel_tuner::TuneOptions;

/// Why tuning failed.
#[derive(Debug, thiserror::Error)]
pub enum TuneFailure {
    /// The module does not compile (located diagnostics).
    #[error(transparent)]
    Compile(#[from] CompileFailure),
    /// No entry of that name, or one that cannot be timed.
    #[error("{0}")]
    Entry(String),
    /// The search itself failed (the default schedule did not run).
    #[error(transparent)]
    Search(#[from] tessel_tuner::TuneError),
}

/// What `tessel.tune` is asked.
pub struct Request<'a> {
    pub text: &'a str,
    pub name: &'a str,
    pub entry: &'a str,
    pub budget: Duration,
    pub beam: usize,
    pub use_cache: bool,
    pub compile_timeout: Duration,
}

/// Tunes `request.entry` and returns `tessel tune`'s JSON line
/// (`default_s`, `best_s`, `candidates`, `cached`, `best`).
pub fn tune(request: &Request) -> Result<String, TuneFailure> {
    // Compiling once checks the module (with located diagnostics) and
    // gives the entry's arguments.
    let compiled = compiler::compile(request.text, request.name, &Settings::default())?;
    let entry = compiled.entries.get(request.entry).ok_or_else(|| {
        let names: Vec<&String> = compiled.entries.keys().collect();
        TuneFailure::Entry(format!("the module has no entry @{}; its entries are {names:?}", request.entry))
    })?;
    let inputs = entry
        .arguments
        .iter()
        .enumerate()
        .map(|(index, argument)| {
            let shape: Vec<usize> = argument.shape.iter().map(|&n| n as usize).collect();
            HostArray::random(argument.element, &shape, index as u64)
                .map_err(|error| TuneFailure::Entry(format!("argument {index} of @{}: {error}", request.entry)))
        })
        .collect::<Result<Vec<_>, _>>()?;
    // The cache is keyed by the module as MLIR prints it, as `tessel tune`
    // and `compile` key it.
    let module_text = compiler::canonical_text(request.text, request.name)?;
    let options = TuneOptions {
        budget: request.budget,
        beam: request.beam,
        use_cache: request.use_cache,
        cache_dir: tessel_tuner::cache::default_dir(),
        compile_timeout: request.compile_timeout,
    };
    let tuned = tessel_tuner::tune(&module_text, request.entry, inputs, &options, |_| {})?;
    Ok(tuned.json())
}
