//! BEAM search over kernel schedules, tinygrad style: from a starting
//! schedule, every action applicable to every schedule in the beam gives a
//! candidate; candidates are measured, the `width` fastest form the next
//! beam, and the search stops when a round finds nothing faster than the
//! best so far (or the budget is spent). `beam_search` is generic over the
//! schedule type, the actions (`neighbours`) and the measurement (`cost`),
//! so the search is tested with deterministic cost models; [`tune`] runs
//! it over the CPU schedule space (`space`) with real measurements
//! (`measure`: parallel compiles, serial timing, a correctness guard) and
//! keeps the winner in the on-disk cache (`cache`), which `tessel run` and
//! `tessel compile` consult ([`cached_schedule`]).

#![deny(clippy::undocumented_unsafe_blocks)]

pub mod cache;
pub mod gpu;
pub mod measure;
pub mod space;

use indexmap::IndexSet;
use serde::Serialize;
use std::collections::HashMap;
use std::hash::Hash;
use std::time::{Duration, Instant};

pub use cache::{Cache, Entry, Lookup};
pub use measure::Outcome;
pub use space::CpuSchedule;
use tessel_runtime::HostArray;

/// How to tune.
#[derive(Clone, Debug)]
pub struct TuneOptions {
    /// Wall-clock budget of the search (compiles and timing).
    pub budget: Duration,
    /// BEAM width.
    pub beam: usize,
    /// Read and write the cache.
    pub use_cache: bool,
    pub cache_dir: std::path::PathBuf,
    /// A candidate that takes longer to compile is dropped.
    pub compile_timeout: Duration,
}

impl Default for TuneOptions {
    fn default() -> Self {
        TuneOptions {
            budget: Duration::from_secs(40),
            beam: 4,
            use_cache: true,
            cache_dir: cache::default_dir(),
            compile_timeout: Duration::from_secs(60),
        }
    }
}

/// What tuning found.
#[derive(Clone, Debug, PartialEq)]
pub struct Tuned<S = CpuSchedule> {
    pub default_s: f64,
    pub best_s: f64,
    /// Candidates measured (the default included).
    pub candidates: usize,
    /// Answered from the cache.
    pub cached: bool,
    pub best: S,
    /// Things worth telling the user (an ignored corrupt cache entry, a
    /// cache that could not be written).
    pub warnings: Vec<String>,
}

/// A schedule as the `"best"` object of `tessel tune`'s JSON line: the
/// knobs under the names the CLI gives them.
pub trait ScheduleJson {
    type Report: Serialize;
    fn report(&self) -> Self::Report;
}

/// `"best"` of a CPU tune.
#[derive(Serialize)]
pub struct CpuReport {
    register_tile: [i64; 2],
    num_stages: i64,
    k_chunk: i64,
    k_unroll: i64,
    num_threads: i64,
    vector_bits: i64,
    pad_tiles: bool,
    grid_order: &'static str,
    group: i64,
    group_top: bool,
}

impl ScheduleJson for CpuSchedule {
    type Report = CpuReport;
    fn report(&self) -> CpuReport {
        CpuReport {
            register_tile: self.register_tile,
            num_stages: self.num_stages,
            k_chunk: self.k_chunk,
            k_unroll: self.k_unroll,
            num_threads: self.num_threads,
            vector_bits: self.bits(),
            pad_tiles: self.pad_tiles,
            grid_order: tessel_lowering::grid_order_name(self.column_major),
            group: self.group,
            group_top: self.group_top,
        }
    }
}

/// The JSON line of `tessel tune`.
#[derive(Serialize)]
struct TuneLine<R> {
    default_s: f64,
    best_s: f64,
    candidates: usize,
    cached: bool,
    best: R,
}

/// serde_json's one-line output with a space after each `:` and `,`, the
/// style `tessel tune` prints (and the README shows).
struct SpacedLine;

impl serde_json::ser::Formatter for SpacedLine {
    fn begin_object_key<W: ?Sized + std::io::Write>(&mut self, writer: &mut W, first: bool) -> std::io::Result<()> {
        if first { Ok(()) } else { writer.write_all(b", ") }
    }

    fn begin_object_value<W: ?Sized + std::io::Write>(&mut self, writer: &mut W) -> std::io::Result<()> {
        writer.write_all(b": ")
    }

    fn begin_array_value<W: ?Sized + std::io::Write>(&mut self, writer: &mut W, first: bool) -> std::io::Result<()> {
        if first { Ok(()) } else { writer.write_all(b", ") }
    }
}

impl<S: ScheduleJson> Tuned<S> {
    /// The JSON line `tessel tune` prints last.
    pub fn json(&self) -> String {
        let line = TuneLine {
            default_s: self.default_s,
            best_s: self.best_s,
            candidates: self.candidates,
            cached: self.cached,
            best: self.best.report(),
        };
        let mut bytes = Vec::new();
        let mut serializer = serde_json::Serializer::with_formatter(&mut bytes, SpacedLine);
        line.serialize(&mut serializer).expect("plain numbers, booleans and strings serialize");
        String::from_utf8(bytes).expect("serde_json writes UTF-8")
    }
}

/// The cached answer for `key` (when `use_cache`), as a `Tuned`; a
/// corrupt entry becomes a warning.
pub(crate) fn from_cache<S: serde::de::DeserializeOwned>(
    cache: &Cache,
    key: &str,
    use_cache: bool,
    valid: impl Fn(&Entry<S>) -> bool,
    warnings: &mut Vec<String>,
) -> Option<Tuned<S>> {
    if !use_cache {
        return None;
    }
    match cache.get(key, valid) {
        Lookup::Hit(found) => Some(Tuned {
            default_s: found.default_s,
            best_s: found.best_s,
            candidates: found.candidates,
            cached: true,
            best: found.schedule,
            warnings: std::mem::take(warnings),
        }),
        Lookup::Corrupt(why) => {
            warnings.push(why);
            None
        }
        Lookup::Miss => None,
    }
}

#[derive(Debug, thiserror::Error)]
pub enum TuneError {
    #[error("the default schedule failed: {0}")]
    DefaultFailed(String),
    #[error("{0}")]
    NoDevice(String),
}

/// Rounds without a faster schedule before the search gives up (timings
/// on this machine are noisy; the budget bounds the search anyway).
pub(crate) const PATIENCE: usize = 3;
/// Rounds of re-timing the default and the finalists (a finalist must win
/// every one: `measure::clear_winner`).
pub(crate) const CONFIRM_ROUNDS: usize = 5;
/// The search's best few that are re-timed against the default.
const FINALISTS: usize = 2;

/// One measured candidate, for progress reports.
pub struct Progress<'a, S = CpuSchedule> {
    pub schedule: S,
    pub outcome: &'a Outcome,
    pub best_s: f64,
    pub measured: usize,
    pub elapsed: Duration,
}

/// Tunes `entry` of `module_text` (the module as MLIR prints it) for this
/// CPU, calling it on `inputs`; answers from the cache when it can.
pub fn tune(
    module_text: &str,
    entry: &str,
    inputs: Vec<HostArray>,
    options: &TuneOptions,
    mut progress: impl FnMut(Progress),
) -> Result<Tuned, TuneError> {
    let cache = Cache::new(&options.cache_dir);
    let key = cache::key(module_text, "cpu", space::SPACE);
    let mut warnings = Vec::new();
    if let Some(answer) =
        from_cache(&cache, &key, options.use_cache, |entry: &Entry| entry.schedule.is_legal(), &mut warnings)
    {
        return Ok(answer);
    }
    let started = Instant::now();
    let mut measurer = measure::Measurer {
        module_text: module_text.to_string(),
        entry: entry.to_string(),
        inputs,
        reference: None,
        compile_timeout: options.compile_timeout,
        // The default is always measured, whatever the budget.
        deadline: started + options.budget.max(Duration::from_secs(3600)),
        best: f64::INFINITY,
        parallel: std::thread::available_parallelism().map_or(1, |n| n.get()),
        slowest: Duration::ZERO,
    };
    let space = {
        tessel_lowering::register_everything();
        let context = tessel_dialects::create_context();
        let module = melior::ir::Module::parse(&context, module_text)
            .ok_or_else(|| TuneError::DefaultFailed("the kernel does not parse".into()))?;
        space::Space::of(&module)
    };
    let start = space.start();
    let compiling = Instant::now();
    let default_jit = measure::compile(module_text, start).map_err(TuneError::DefaultFailed)?;
    let compile_time = compiling.elapsed();
    let default = measurer.time(&default_jit);
    let Some(default_s) = default.seconds() else {
        let why = match default {
            Outcome::Failed(why) | Outcome::Wrong(why) => why,
            other => format!("{other:?}"),
        };
        return Err(TuneError::DefaultFailed(why));
    };
    // The search leaves time in the budget for the confirmation: one more
    // compile and the alternating re-timings.
    // (Compiles in parallel take longer each: 2x.) No batch of candidates
    // starts unless it can finish before that.
    // Timing a candidate costs more than its calls where copying and
    // checking big arrays dominate: the reserve follows the longest
    // timing so far, before every batch.
    let reserve = |measurer: &measure::Measurer| {
        let timing = measurer.timing(default_s);
        let confirmation = compile_time * 2 + timing * ((1 + FINALISTS) * CONFIRM_ROUNDS) as u32;
        let last_batch = compile_time * 2 + timing * measurer.parallel as u32;
        confirmation + last_batch
    };
    measurer.deadline = started + options.budget.saturating_sub(reserve(&measurer));
    let mut measured = 1;
    let mut timings: Vec<(CpuSchedule, f64)> = Vec::new();
    progress(Progress { schedule: start, outcome: &default, best_s: default_s, measured, elapsed: started.elapsed() });
    let found = beam_search(
        start,
        options.beam,
        64,
        PATIENCE,
        |schedule: &CpuSchedule| space.neighbours(schedule),
        |batch: &[CpuSchedule]| {
            if batch.first() == Some(&start) {
                return vec![Some(default_s)];
            }
            measurer.deadline = started + options.budget.saturating_sub(reserve(&measurer));
            if Instant::now() >= measurer.deadline {
                return Vec::new();
            }
            let outcomes = measurer.measure(batch);
            for (schedule, outcome) in batch.iter().zip(&outcomes) {
                if let Outcome::Timed(seconds) = outcome {
                    timings.push((*schedule, *seconds));
                }
                if outcome.seconds().is_some() {
                    measured += 1;
                }
                let best_s = measurer.best;
                progress(Progress { schedule: *schedule, outcome, best_s, measured, elapsed: started.elapsed() });
            }
            // Slow candidates lose; skipped ones were never measured.
            outcomes.iter().map(Outcome::seconds).collect()
        },
    )
    .expect("the default schedule was measured");
    // The search's numbers come from different moments of a drifting
    // machine: its few best are re-timed against the default, in rounds,
    // and one replaces the default only where it is clearly faster
    // (`measure::clear_winner`): the tuned schedule is never slower than
    // the default but by noise the re-timings could not see.
    let mut finalists: Vec<(CpuSchedule, f64)> =
        timings.into_iter().filter(|(schedule, _)| *schedule != start).collect();
    finalists.sort_by(|a, b| a.1.total_cmp(&b.1));
    finalists.truncate(FINALISTS);
    let (mut best, mut default_s, mut best_s) = (start, default_s, default_s);
    if !finalists.is_empty() {
        let schedules: Vec<CpuSchedule> = finalists.iter().map(|(schedule, _)| *schedule).collect();
        let compiled: Result<Vec<_>, String> =
            measure::compile_all(module_text, &schedules, options.compile_timeout).into_iter().collect();
        let confirmed = compiled.and_then(|jits| {
            let all: Vec<&tessel_runtime::Jit> = std::iter::once(&default_jit).chain(jits.iter()).collect();
            measurer.confirm(&all, CONFIRM_ROUNDS)
        });
        match confirmed {
            Ok(times) => {
                default_s = measure::median(times[0].clone()).expect("at least one round");
                best_s = default_s;
                if let Some((index, seconds)) = measure::clear_winner(&times[0], &times[1..]) {
                    (best, best_s) = (finalists[index].0, seconds);
                }
            }
            Err(why) => warnings.push(format!("keeping the default schedule: {why}")),
        }
    }
    let tuned = Tuned { default_s, best_s, candidates: found.measured, cached: false, best, warnings: Vec::new() };
    if options.use_cache {
        let entry = Entry { schedule: tuned.best, default_s, best_s: tuned.best_s, candidates: tuned.candidates };
        if let Err(error) = cache.put(&key, &entry) {
            warnings.push(format!("could not write the cache in {}: {error}", cache.dir().display()));
        }
    }
    Ok(Tuned { warnings, ..tuned })
}

/// The cached schedule of `module_text` on the CPU, if tuned before:
/// `Ok(None)` on a miss, `Err(warning)` for a corrupt entry (ignored).
pub fn cached_schedule(module_text: &str, cache_dir: &std::path::Path) -> Result<Option<CpuSchedule>, String> {
    match Cache::new(cache_dir)
        .get(&cache::key(module_text, "cpu", space::SPACE), |entry: &Entry| entry.schedule.is_legal())
    {
        Lookup::Hit(entry) => Ok(Some(entry.schedule)),
        Lookup::Miss => Ok(None),
        Lookup::Corrupt(why) => Err(why),
    }
}

/// The best schedule found and its cost.
#[derive(Clone, Debug, PartialEq)]
pub struct Found<S> {
    pub schedule: S,
    pub cost: f64,
    /// Distinct schedules measured (each at most once).
    pub measured: usize,
}

/// BEAM search of `width` from `start`. `neighbours` lists the schedules one
/// action away (illegal combinations are simply not listed); `cost`
/// measures a batch (one round's new candidates, so they may compile in
/// parallel), lower is better, `None` for a candidate that failed (did not
/// compile, timed out, computed a wrong result): such a candidate is never
/// chosen. At most `rounds` rounds; the search also stops after
/// `patience` rounds in a row that found nothing faster than the best so
/// far (1: tinygrad's rule; more rides out measurement noise and plateaus),
/// and when the batch result is empty (the budget is spent). `None` if even
/// `start` fails.
pub fn beam_search<S, N, C>(
    start: S,
    width: usize,
    rounds: usize,
    patience: usize,
    neighbours: N,
    mut cost: C,
) -> Option<Found<S>>
where
    S: Clone + Eq + Hash,
    N: Fn(&S) -> Vec<S>,
    C: FnMut(&[S]) -> Vec<Option<f64>>,
{
    let mut known: HashMap<S, Option<f64>> = HashMap::new();
    let start_cost = cost(std::slice::from_ref(&start)).first().copied().flatten();
    known.insert(start.clone(), start_cost);
    let start_cost = start_cost?;
    let mut best = (start.clone(), start_cost);
    let mut beam = vec![(start, start_cost)];
    let mut stale = 0;
    for _ in 0..rounds {
        // New schedules, each once, in the order the beam proposes them
        // (so a search and its progress lines are reproducible).
        let mut batch: IndexSet<S> = IndexSet::new();
        for (schedule, _) in &beam {
            batch.extend(neighbours(schedule).into_iter().filter(|next| !known.contains_key(next)));
        }
        let batch: Vec<S> = batch.into_iter().collect();
        if batch.is_empty() {
            break;
        }
        let costs = cost(&batch);
        let mut candidates: Vec<(S, f64)> = Vec::new();
        for (schedule, value) in batch.into_iter().zip(costs.iter().copied().chain(std::iter::repeat(None))) {
            if let Some(value) = value {
                candidates.push((schedule.clone(), value));
            }
            known.insert(schedule, value);
        }
        if costs.is_empty() {
            break;
        }
        candidates.sort_by(|a, b| a.1.total_cmp(&b.1));
        candidates.truncate(width.max(1));
        match candidates.first() {
            Some((schedule, value)) if *value < best.1 => {
                best = (schedule.clone(), *value);
                stale = 0;
            }
            Some(_) => {
                stale += 1;
                if stale >= patience.max(1) {
                    break;
                }
            }
            None => break,
        }
        beam = candidates;
    }
    let measured = known.values().filter(|value| value.is_some()).count();
    Some(Found { schedule: best.0, cost: best.1, measured })
}

/// A one-at-a-time cost as a batch cost.
pub fn each<S, C: FnMut(&S) -> Option<f64>>(mut cost: C) -> impl FnMut(&[S]) -> Vec<Option<f64>> {
    move |batch: &[S]| batch.iter().map(&mut cost).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A register tile (rows, columns) and a pipeline depth, as the CPU
    /// schedule space; actions double or halve one knob within bounds.
    type Tile = (i64, i64, i64);

    fn neighbours(&(rows, columns, stages): &Tile) -> Vec<Tile> {
        let mut next = Vec::new();
        for r in [rows * 2, rows / 2] {
            if (1..=16).contains(&r) {
                next.push((r, columns, stages));
            }
        }
        for c in [columns * 2, columns / 2] {
            if (1..=128).contains(&c) {
                next.push((rows, c, stages));
            }
        }
        for s in [stages + 1, stages - 1] {
            if (1..=3).contains(&s) {
                next.push((rows, columns, s));
            }
        }
        next
    }

    fn space() -> Vec<Tile> {
        let mut all = Vec::new();
        for r in [1, 2, 4, 8, 16] {
            for c in [1, 2, 4, 8, 16, 32, 64, 128] {
                for s in 1..=3 {
                    all.push((r, c, s));
                }
            }
        }
        all
    }

    /// A deterministic model with a register-pressure cliff (more than 24
    /// accumulator vectors of 16 lanes spill) and a local optimum.
    fn model(&(rows, columns, stages): &Tile) -> Option<f64> {
        let vectors = rows * ((columns + 15) / 16);
        let work = 1.0e6 / ((rows * columns) as f64).sqrt();
        let spill = if vectors > 24 { 4.0 } else { 1.0 };
        let narrow = if columns < 16 { 16.0 / columns as f64 } else { 1.0 };
        let pipeline = [1.0, 0.97, 0.99][(stages - 1) as usize];
        Some(work * spill * narrow * pipeline)
    }

    #[test]
    fn beam_finds_within_five_percent_of_exhaustive() {
        let exhaustive = space().iter().filter_map(model).fold(f64::INFINITY, f64::min);
        for width in [2, 4, 8] {
            let found = beam_search((1, 1, 1), width, 20, 1, neighbours, each(model)).unwrap();
            assert!(found.cost <= exhaustive * 1.05, "width {width}: {found:?} against {exhaustive}");
            assert!(found.measured < space().len(), "the search measured the whole space");
        }
    }

    #[test]
    fn failing_candidates_are_never_chosen() {
        // The model's best tiles "compute wrong results": excluded.
        let wrong = |t: &Tile| t.0 * ((t.1 + 15) / 16) >= 16;
        let guarded = |t: &Tile| if wrong(t) { None } else { model(t) };
        let found = beam_search((1, 1, 1), 4, 20, 1, neighbours, each(guarded)).unwrap();
        assert!(!wrong(&found.schedule), "{found:?}");
        let best_valid = space().iter().filter(|t| !wrong(t)).filter_map(model).fold(f64::INFINITY, f64::min);
        assert!(found.cost <= best_valid * 1.05);
    }

    #[test]
    fn every_schedule_is_measured_once_and_a_failing_start_gives_none() {
        let mut calls = HashMap::new();
        let found = beam_search(
            (1, 1, 1),
            8,
            20,
            1,
            neighbours,
            each(|t: &Tile| {
                *calls.entry(*t).or_insert(0) += 1;
                model(t)
            }),
        )
        .unwrap();
        assert!(calls.values().all(|&n| n == 1));
        assert_eq!(found.measured, calls.len());
        assert!(beam_search((1, 1, 1), 4, 20, 1, neighbours, each(|_: &Tile| None::<f64>)).is_none());
    }

    #[test]
    fn an_exhausted_budget_ends_the_search() {
        // The measurement stops answering after the first round.
        let mut rounds = 0;
        let found = beam_search((1, 1, 1), 4, 20, 1, neighbours, |batch: &[Tile]| {
            rounds += 1;
            if rounds > 2 { Vec::new() } else { batch.iter().map(model).collect() }
        })
        .unwrap();
        assert_eq!(rounds, 3);
        assert!(found.cost < model(&(1, 1, 1)).unwrap());
    }

    #[test]
    fn stops_when_nothing_improves() {
        // The start is already optimal.
        let search = |patience| {
            let cost = each(|t: &Tile| Some(if *t == (4, 64, 2) { 0.0 } else { 1.0 }));
            beam_search((4, 64, 2), 4, 20, patience, neighbours, cost).unwrap()
        };
        // One round of neighbours, then stop.
        let found = search(1);
        assert_eq!(found.schedule, (4, 64, 2));
        assert_eq!(found.measured, 1 + neighbours(&(4, 64, 2)).len());
        // With patience, the search walks on past a plateau: more rounds.
        let patient = search(3);
        assert_eq!(patient.schedule, (4, 64, 2));
        assert!(patient.measured > found.measured);
    }

    /// Row sums and maxima of f32 and i32 blocks: reductions GROUP and
    /// GROUPTOP split.
    const ROW_REDUCTIONS: &str = "\
        func.func @kernel(%x: memref<8x1024xf32>, %y: memref<8x512xi32>, %s: memref<8xf32>, %m: memref<8xf32>, %t: memref<8xi32>) {\n\
          %a = block.load %x : memref<8x1024xf32> -> tensor<8x1024xf32>\n\
          %sum = block.reduce sum %a dims [1] : tensor<8x1024xf32> -> tensor<8xf32>\n\
          %max = block.reduce max %a dims [1] : tensor<8x1024xf32> -> tensor<8xf32>\n\
          %b = block.load %y : memref<8x512xi32> -> tensor<8x512xi32>\n\
          %isum = block.reduce sum %b dims [1] : tensor<8x512xi32> -> tensor<8xi32>\n\
          block.store %sum, %s : tensor<8xf32>, memref<8xf32>\n\
          block.store %max, %m : tensor<8xf32>, memref<8xf32>\n\
          block.store %isum, %t : tensor<8xi32>, memref<8xi32>\n\
          return\n\
        }\n\
        func.func @rows(%x: memref<64x1024xf32>, %y: memref<64x512xi32>, %s: memref<64xf32>, %m: memref<64xf32>, %t: memref<64xi32>) {\n\
          grid.call @kernel grid [8] ins(%x, %y : memref<64x1024xf32>, memref<64x512xi32>)\n\
              outs(%s, %m, %t : memref<64xf32>, memref<64xf32>, memref<64xi32>)\n\
              in_specs [#grid.block<[8, 1024], (i) -> (i, 0)>, #grid.block<[8, 512], (i) -> (i, 0)>]\n\
              out_specs [#grid.block<[8], (i) -> (i)>, #grid.block<[8], (i) -> (i)>, #grid.block<[8], (i) -> (i)>]\n\
          return\n\
        }\n";

    #[test]
    fn reductions_are_tuned_with_group_candidates_that_pass_the_guard() {
        use tessel_runtime::ElementType;
        let inputs = vec![
            HostArray::random(ElementType::F32, &[64, 1024], 1).unwrap(),
            HostArray::random(ElementType::I32, &[64, 512], 2).unwrap(),
            HostArray::zeros(ElementType::F32, &[64]).unwrap(),
            HostArray::zeros(ElementType::F32, &[64]).unwrap(),
            HostArray::zeros(ElementType::I32, &[64]).unwrap(),
        ];
        let cache = tempfile::tempdir().unwrap();
        let options = TuneOptions {
            budget: Duration::from_secs(10),
            beam: 2,
            use_cache: false,
            cache_dir: cache.path().to_path_buf(),
            compile_timeout: Duration::from_secs(60),
        };
        let mut grouped = Vec::new();
        let tuned = tune(ROW_REDUCTIONS, "rows", inputs, &options, |report| {
            if report.schedule.group > 0 {
                grouped.push((report.schedule, report.outcome.clone()));
            }
        })
        .unwrap();
        // GROUP (a vector of partials) and GROUPTOP (contiguous chunks)
        // were both compiled, ran, and matched the default's results
        // (the i32 sums exactly, the f32 ones within tolerance).
        for top in [false, true] {
            assert!(
                grouped.iter().any(|(s, outcome)| s.group_top == top && outcome.seconds().is_some()),
                "no measured group_top={top} candidate: {grouped:?}"
            );
        }
        assert!(
            grouped.iter().all(|(_, outcome)| !matches!(outcome, Outcome::Wrong(_) | Outcome::Failed(_))),
            "{grouped:?}"
        );
        assert!(tuned.best.is_legal());
    }
}
