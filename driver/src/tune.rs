//! `tessel tune`: BEAM search over a kernel's CPU schedules by measurement;
//! the winner goes to the cache that `tessel run` and `tessel compile` use.

use crate::{DriverError, source::parse_file};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use std::{path::PathBuf, time::Duration};
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
    /// What to tune for: the host CPU, or an AMD GPU (`--chip`; measured
    /// on the GPU through HIP: needs the `hip` feature and a GPU).
    #[arg(long, value_enum, default_value = "cpu")]
    target: crate::compile::Target,
    #[command(flatten)]
    gpu: crate::GpuOptions,
    #[command(flatten)]
    jit_cpu: crate::JitCpuOption,
}

pub fn tune(options: TuneOptions) -> Result<(), DriverError> {
    options.jit_cpu.select()?;
    tune_checked(&options)
}

fn seconds(value: f64, what: &str) -> Result<Duration, DriverError> {
    Duration::try_from_secs_f64(value)
        .map_err(|_| DriverError::Failed(format!("{what} must be a non-negative number of seconds")))
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

fn tune_checked(options: &TuneOptions) -> Result<(), DriverError> {
    let started = std::time::Instant::now();
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
        .map(|(index, (_, element, shape))| {
            HostArray::random(*element, shape, index as u64).map_err(|source| DriverError::Argument { index, source })
        })
        .collect::<Result<_, _>>()?;
    // The budget is the command's: parsing and making the inputs count.
    let search = SearchOptions {
        budget: budget.saturating_sub(started.elapsed()),
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
    let line = |elapsed: std::time::Duration, measured: usize, best_s: f64, schedule: String, outcome: &Outcome| {
        bar.set_position(elapsed.as_millis() as u64);
        bar.set_message(format!("{measured} measured, best {:.3} ms; {schedule}: {}", best_s * 1e3, describe(outcome)));
    };
    let (json, warnings) = match options.target {
        crate::compile::Target::Cpu => {
            let tuned = tessel_tuner::tune(&module_text, &options.entry, inputs, &search, |report| {
                let [rows, columns] = report.schedule.register_tile;
                let s = report.schedule;
                let group = match (s.group, s.group_top) {
                    (0, _) => String::new(),
                    (p, false) => format!("/group{p}"),
                    (p, true) => format!("/grouptop{p}"),
                };
                let flags = format!(
                    "{}{}{group}",
                    if s.pad_tiles { "/pad" } else { "" },
                    if s.column_major { "/cm" } else { "" }
                );
                let schedule = format!(
                    "{rows}x{columns}/{}/{}/{}/t{}/v{}{flags}",
                    s.num_stages,
                    s.k_chunk,
                    s.k_unroll,
                    s.num_threads,
                    s.bits()
                );
                line(report.elapsed, report.measured, report.best_s, schedule, report.outcome);
            })?;
            (tuned.json(), tuned.warnings)
        }
        crate::compile::Target::Rocm => {
            let chip = options.gpu.chip();
            let tuned = tessel_tuner::gpu::tune_gpu(&module_text, &options.entry, inputs, chip, &search, |report| {
                let s = report.schedule;
                let cores = if s.matrix_cores { "matrix cores" } else { "FMAs" };
                let order = if s.column_major { "/column-major" } else { "" };
                let schedule =
                    format!("{} warps/{} stages/chunk {}/{cores}{order}", s.num_warps, s.num_stages, s.lds_chunk);
                line(report.elapsed, report.measured, report.best_s, schedule, report.outcome);
            })?;
            (tuned.json(), tuned.warnings)
        }
    };
    bar.finish_and_clear();
    for warning in &warnings {
        eprintln!("tessel: warning: {warning}");
    }
    crate::write_stdout(&format!("{json}\n"));
    Ok(())
}
