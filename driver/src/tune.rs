//! `tessel tune`: BEAM search over a kernel's CPU schedules by measurement;
//! the winner goes to the cache that `tessel run` and `tessel compile` use.

use crate::source::{SourceError, parse_file};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use std::{path::PathBuf, process::ExitCode, time::Duration};
use tessel_runtime::HostArray;
use tessel_tuner::{Outcome, TuneOptions as SearchOptions};

#[derive(Args, Debug)]
pub struct TuneOptions {
    /// The module (`.mlir`).
    file: PathBuf,
    /// The function to tune (timed on random inputs).
    #[arg(long)]
    entry: String,
    /// Seconds the search may take (the default schedule is always measured).
    #[arg(long, value_name = "SECONDS", default_value = "40")]
    budget: f64,
    /// BEAM width: schedules kept per round.
    #[arg(long, value_name = "WIDTH", default_value = "4", value_parser = clap::value_parser!(u32).range(1..=64))]
    beam: u32,
    /// Neither read nor write the cache (search again).
    #[arg(long)]
    no_cache: bool,
    /// Seconds after which a candidate still compiling is dropped.
    #[arg(long, value_name = "SECONDS", default_value = "60")]
    compile_timeout: f64,
}

pub fn tune(options: TuneOptions) -> ExitCode {
    match tune_checked(&options) {
        Ok(()) => ExitCode::SUCCESS,
        Err(SourceError::Reported) => ExitCode::from(1),
        Err(SourceError::Message(message)) => {
            eprintln!("{message}");
            ExitCode::from(1)
        }
    }
}

fn seconds(value: f64, what: &str) -> Result<Duration, SourceError> {
    Duration::try_from_secs_f64(value)
        .map_err(|_| SourceError::Message(format!("tessel: error: {what} must be a non-negative number of seconds")))
}

fn describe(outcome: &Outcome) -> String {
    match outcome {
        Outcome::Timed(s) => format!("{:.3} ms", s * 1e3),
        Outcome::Slow(s) => format!("{:.3} ms (stopped: over 3x the best)", s * 1e3),
        Outcome::Failed(why) => format!("failed: {why}"),
        Outcome::Wrong(why) => format!("rejected, wrong result: {why}"),
        Outcome::Skipped => "skipped: budget spent".into(),
    }
}

fn tune_checked(options: &TuneOptions) -> Result<(), SourceError> {
    let budget = seconds(options.budget, "--budget")?;
    let compile_timeout = seconds(options.compile_timeout, "--compile-timeout")?;
    tessel_lowering::register_everything();
    let context = tessel_dialects::create_context();
    let file = options.file.display().to_string();
    let (module, _diagnostics) = parse_file(&context, &options.file)?;
    let module_text = module.as_operation().to_string();
    let signature = crate::run::signature(&module, &options.entry, &file)?;
    let inputs: Vec<HostArray> = signature
        .iter()
        .enumerate()
        .map(|(index, (_, element, shape))| HostArray::random(*element, shape, index as u64))
        .collect();
    let search = SearchOptions {
        budget,
        beam: options.beam as usize,
        use_cache: !options.no_cache,
        cache_dir: tessel_tuner::cache::default_dir(),
        compile_timeout,
    };
    // A bar over the budget (hidden when stderr is not a terminal).
    let bar = ProgressBar::new(budget.as_millis().max(1) as u64);
    bar.set_style(
        ProgressStyle::with_template("{spinner} tuning [{bar:30}] {msg}")
            .expect("a valid template")
            .progress_chars("=> "),
    );
    let tuned = tessel_tuner::tune(&module_text, &options.entry, inputs, &search, |report| {
        bar.set_position(report.elapsed.as_millis() as u64);
        let [rows, columns] = report.schedule.register_tile;
        bar.set_message(format!(
            "{} measured, best {:.3} ms; {rows}x{columns}/{}/{}: {}",
            report.measured,
            report.best_s * 1e3,
            report.schedule.num_stages,
            report.schedule.k_chunk,
            describe(report.outcome)
        ));
    })
    .map_err(|error| SourceError::Message(format!("tessel: error: {error}")))?;
    bar.finish_and_clear();
    for warning in &tuned.warnings {
        eprintln!("tessel: warning: {warning}");
    }
    crate::write_stdout(&format!("{}\n", tuned.json()));
    Ok(())
}
