//! BEAM search against exhaustive search on a small real space, measured
//! (the tuner's unit test does the same with a deterministic cost model).
//!
//!     cargo run --release -p tessel-benchmarks --bin beam_vs_exhaustive
//!
//! The space: the 1024 matmul's register tile (1, 2, 4 or 8 rows by 1, 2
//! or 4 vectors) and k chunk (all of k, or 128 steps): 24 schedules. BEAM
//! (width 2, the tuner's patience) walks it by one-knob steps, measuring
//! as `tessel tune` does; then every schedule is measured. The two winners
//! are re-timed back to back (the machine drifts), and the report says
//! whether BEAM's pick is within 5% of the exhaustive best. Writes
//! benchmarks/BEAM.md.

use std::time::{Duration, Instant};
use tessel_runtime::{ElementType, HostArray};
use tessel_tuner::{CpuSchedule, beam_search, measure};

const ROWS: [i64; 4] = [1, 2, 4, 8];
const VECTORS: [i64; 3] = [1, 2, 4];
const K_CHUNKS: [i64; 2] = [0, 128];
const WIDTH: usize = 2;
const CONFIRM_ROUNDS: usize = 7;

fn schedule(lanes: i64, rows: i64, vectors: i64, k_chunk: i64) -> CpuSchedule {
    CpuSchedule { register_tile: [rows, vectors * lanes], k_chunk, ..CpuSchedule::host_default() }
}

/// The schedules one knob step away within the small space.
fn neighbours(lanes: i64, s: &CpuSchedule) -> Vec<CpuSchedule> {
    let [rows, columns] = s.register_tile;
    let vectors = columns / lanes;
    let mut next = Vec::new();
    for r in [rows * 2, rows / 2] {
        if ROWS.contains(&r) {
            next.push(schedule(lanes, r, vectors, s.k_chunk));
        }
    }
    for v in [vectors * 2, vectors / 2] {
        if VECTORS.contains(&v) {
            next.push(schedule(lanes, rows, v, s.k_chunk));
        }
    }
    next.push(schedule(lanes, rows, vectors, if s.k_chunk == 0 { 128 } else { 0 }));
    next
}

fn describe(s: &CpuSchedule) -> String {
    let chunk = if s.k_chunk > 0 { s.k_chunk.to_string() } else { "all".into() };
    format!("tile {}x{}, k chunk {chunk}", s.register_tile[0], s.register_tile[1])
}

fn main() {
    let module_text = tessel_benchmarks::example_source("matmul_1024");
    let lanes = tessel_passes::host_vector_bits() / 32;
    let inputs = vec![
        HostArray::random(ElementType::F32, &[1024, 1024], 1).expect("allocates"),
        HostArray::random(ElementType::F32, &[1024, 1024], 2).expect("allocates"),
        HostArray::zeros(ElementType::F32, &[1024, 1024]).expect("allocates"),
    ];
    let mut measurer = measure::Measurer {
        module_text: module_text.clone(),
        entry: "matmul_1024".into(),
        inputs,
        reference: None,
        compile_timeout: Duration::from_secs(120),
        deadline: Instant::now() + Duration::from_secs(3600),
        best: f64::INFINITY,
        parallel: std::thread::available_parallelism().map_or(1, |n| n.get()),
        slowest: Duration::ZERO,
    };
    let space: Vec<CpuSchedule> = ROWS
        .iter()
        .flat_map(|&r| VECTORS.iter().flat_map(move |&v| K_CHUNKS.iter().map(move |&k| schedule(lanes, r, v, k))))
        .collect();
    let start = schedule(lanes, 4, 4, 0);
    // The default first: its outputs are what every candidate must match.
    let default = measurer.measure(&[start]);
    assert!(default[0].seconds().is_some(), "the default failed: {default:?}");

    let beam_started = Instant::now();
    let found = beam_search(
        start,
        WIDTH,
        64,
        3,
        |s: &CpuSchedule| neighbours(lanes, s),
        |batch: &[CpuSchedule]| measurer.measure(batch).iter().map(measure::Outcome::seconds).collect(),
    )
    .expect("the default was measured");
    let beam_s = beam_started.elapsed().as_secs_f64();

    measurer.best = f64::INFINITY;
    let exhaustive_started = Instant::now();
    let outcomes = measurer.measure(&space);
    let exhaustive_s = exhaustive_started.elapsed().as_secs_f64();
    let (best, _) = space
        .iter()
        .zip(&outcomes)
        .filter_map(|(s, o)| o.seconds().map(|t| (*s, t)))
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .expect("some schedule ran");

    // The two winners re-timed in turn (the same schedule when they agree).
    let jits: Vec<_> =
        [found.schedule, best].iter().map(|s| measure::compile(&module_text, *s).expect("compiles")).collect();
    let rounds = measurer.confirm(&[&jits[0], &jits[1]], CONFIRM_ROUNDS).expect("re-timing");
    let medians: Vec<f64> =
        rounds.into_iter().map(|times| measure::median(times).expect("at least one round")).collect();
    let ratio = medians[0] / medians[1];
    let verdict = if ratio <= 1.05 { "within 5%" } else { "NOT within 5%" };
    println!(
        "BEAM (width {WIDTH}): {} after {} of {} schedules in {beam_s:.1} s; exhaustive: {} in {exhaustive_s:.1} s; \
         re-timed {:.3} ms vs {:.3} ms: BEAM's pick at {ratio:.3}x the best, {verdict}",
        describe(&found.schedule),
        found.measured,
        space.len(),
        describe(&best),
        medians[0] * 1e3,
        medians[1] * 1e3
    );
    let mut table = String::from("| schedule | measured (ms) |\n|---|---|\n");
    for (s, o) in space.iter().zip(&outcomes) {
        let time = o.seconds().map_or(format!("{o:?}"), |t| format!("{:.3}", t * 1e3));
        table.push_str(&format!("| {} | {time} |\n", describe(s)));
    }
    let report = format!(
        "# BEAM against exhaustive search (measured)\n\n\
         `cargo run --release -p tessel-benchmarks --bin beam_vs_exhaustive`: the 1024 matmul, register tiles of \
         1/2/4/8 rows by 1/2/4 vectors of {lanes} f32 and k chunks of all or 128 ({} schedules), one session.\n\n\
         | | pick | schedules measured | wall time | re-timed (median of {CONFIRM_ROUNDS}) |\n|---|---|---|---|---|\n\
         | BEAM, width {WIDTH} | {} | {} | {beam_s:.1} s | {:.3} ms |\n\
         | exhaustive | {} | {} | {exhaustive_s:.1} s | {:.3} ms |\n\n\
         BEAM's pick runs at {ratio:.3}x the exhaustive best's time: {verdict}.\n\n\
         Every schedule, as the exhaustive pass measured it (one moment of a drifting machine):\n\n{table}",
        space.len(),
        describe(&found.schedule),
        found.measured,
        medians[0] * 1e3,
        describe(&best),
        space.len(),
        medians[1] * 1e3,
    );
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("BEAM.md");
    std::fs::write(&path, report).expect("writing BEAM.md");
}
