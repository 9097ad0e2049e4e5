//! Measuring candidates: compile in parallel, each in its own MLIR context
//! and thread (with a timeout), then time one at a time on the same
//! inputs, with nothing else running: a warm-up call whose outputs must
//! match the default schedule's, then runs up to a median of several, cut
//! short when a run is 3x slower than the best so far.

use crate::space::CpuSchedule;
use std::{
    sync::mpsc,
    time::{Duration, Instant},
};
use tessel_lowering::cpu::{self, Padding};
use tessel_runtime::{HostArray, Jit};

/// A compiled candidate. The JIT's engine refers to nothing of the MLIR
/// context it was lowered in, and is used by one thread at a time: it may
/// move from the compiling thread to the timing one.
struct Compiled(Jit);
// SAFETY: see above: the engine owns its own LLVM context and JITed code,
// shares nothing with other threads, and `Compiled` is moved, never shared.
unsafe impl Send for Compiled {}

/// Lowers `module_text` under `schedule` and JIT-compiles it, in a fresh
/// context (contexts are not shared between threads).
pub fn compile(module_text: &str, schedule: CpuSchedule) -> Result<Jit, String> {
    tessel_lowering::register_everything();
    let context = tessel_dialects::create_context();
    let mut module = melior::ir::Module::parse(&context, module_text).ok_or("the kernel does not parse")?;
    schedule.to_lowering().apply(&context, &mut module);
    cpu::lower(&context, &mut module, Padding::Zero).map_err(|error| error.to_string())?;
    Jit::new(&module, 3).map_err(|error| error.to_string())
}

/// Compiles every schedule of `batch` at once, each in its own thread and
/// context; one that takes longer than `timeout` (from the start) fails.
pub fn compile_all(module_text: &str, batch: &[CpuSchedule], timeout: Duration) -> Vec<Result<Jit, String>> {
    let receivers: Vec<mpsc::Receiver<Result<Compiled, String>>> = batch
        .iter()
        .map(|&schedule| {
            let (sender, receiver) = mpsc::channel();
            let text = module_text.to_string();
            std::thread::spawn(move || {
                let _ = sender.send(compile(&text, schedule).map(Compiled));
            });
            receiver
        })
        .collect();
    let started = Instant::now();
    receivers
        .iter()
        .map(|receiver| {
            let left = timeout.saturating_sub(started.elapsed());
            match receiver.recv_timeout(left) {
                Ok(result) => result.map(|Compiled(jit)| jit),
                Err(_) => Err(format!("compiling took over {timeout:?}")),
            }
        })
        .collect()
}

/// The median of `times` (the upper one of an even count; `None` if empty).
pub fn median(mut times: Vec<f64>) -> Option<f64> {
    times.sort_by(f64::total_cmp);
    times.get(times.len() / 2).copied()
}

/// The least speed-up over the default (the median of the rounds'
/// ratios) with which a finalist replaces it. Below it the difference is
/// the machine's noise: on a noisy host (`benchmarks/tune.py`, Zen 4, 2
/// cores) the median of the re-timings picked schedules that then ran
/// 0.97-1.00x the default.
pub const CLEAR_MARGIN: f64 = 1.01;

/// Which finalist clearly beats the default, from re-timings in rounds
/// (`default[r]` and `finalists[i][r]` taken in the same round, next to
/// each other): one faster than the default in every round whose median
/// speed-up over the rounds is at least [`CLEAR_MARGIN`]; of several, the
/// largest median speed-up. Its index and median seconds, or `None` to
/// keep the default: a tuned schedule is never one the re-timings could
/// not tell from the default, or found slower in a round.
pub fn clear_winner(default: &[f64], finalists: &[Vec<f64>]) -> Option<(usize, f64)> {
    let mut winner: Option<(usize, f64, f64)> = None;
    for (index, times) in finalists.iter().enumerate() {
        if times.len() != default.len() || times.is_empty() {
            continue;
        }
        let speedups: Vec<f64> = default.iter().zip(times).map(|(d, t)| d / t).collect();
        if speedups.iter().any(|&speedup| speedup <= 1.0 || speedup.is_nan()) {
            continue;
        }
        let speedup = median(speedups).expect("not empty");
        if speedup >= CLEAR_MARGIN && winner.is_none_or(|(_, best, _)| speedup > best) {
            winner = Some((index, speedup, median(times.clone()).expect("not empty")));
        }
    }
    winner.map(|(index, _, seconds)| (index, seconds))
}

/// What happened to one candidate.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// Median seconds per call.
    Timed(f64),
    /// Slower than 3x the best: stopped early, at this time per call.
    Slow(f64),
    Failed(String),
    /// Computed something else than the default schedule.
    Wrong(String),
    /// The budget ran out before it was measured.
    Skipped,
}

impl Outcome {
    pub fn seconds(&self) -> Option<f64> {
        match self {
            Outcome::Timed(seconds) | Outcome::Slow(seconds) => Some(*seconds),
            _ => None,
        }
    }
}

/// Measures candidates of one kernel entry.
pub struct Measurer {
    pub module_text: String,
    pub entry: String,
    pub inputs: Vec<HostArray>,
    /// The default schedule's outputs (set by the first measurement).
    pub reference: Option<Vec<HostArray>>,
    pub compile_timeout: Duration,
    pub deadline: Instant,
    pub best: f64,
    /// Threads compiling at once.
    pub parallel: usize,
    /// The longest a call of `time` took, all in (copying the inputs,
    /// checking the outputs: for big arrays these outweigh the kernel).
    pub slowest: Duration,
}

/// Runs per candidate (after the warm-up), and the time after which
/// fewer suffice.
const RUNS: usize = 5;
const TIME_PER_CANDIDATE: Duration = Duration::from_millis(600);

/// About how long timing one candidate takes, if a call takes `seconds`:
/// the warm-up, then runs until `RUNS` or `TIME_PER_CANDIDATE` (two at
/// least), with some margin.
pub fn timing_estimate(seconds: f64) -> Duration {
    let runs = (TIME_PER_CANDIDATE.as_secs_f64() / seconds.max(1e-9)).clamp(2.0, RUNS as f64);
    Duration::from_secs_f64(seconds * (runs + 1.0) * 1.5)
}

impl Measurer {
    /// Compiles `batch` (up to `parallel` at a time) and times every
    /// candidate that compiled, one after the other.
    pub fn measure(&mut self, batch: &[CpuSchedule]) -> Vec<Outcome> {
        let mut outcomes = Vec::new();
        for chunk in batch.chunks(self.parallel.max(1)) {
            if Instant::now() >= self.deadline {
                outcomes.extend(chunk.iter().map(|_| Outcome::Skipped));
                continue;
            }
            let compiled = compile_all(&self.module_text, chunk, self.compile_timeout);
            for result in compiled {
                outcomes.push(match result {
                    Ok(jit) if Instant::now() < self.deadline => self.time(&jit),
                    Ok(_) => Outcome::Skipped,
                    Err(why) => Outcome::Failed(why),
                });
            }
        }
        outcomes
    }

    /// Re-times `jits` (the default first, then the search's best few) in
    /// `rounds` rounds, each timing every one of them once, in turn, so all
    /// are measured under the same conditions (this machine's speed
    /// drifts); the order alternates between rounds (forward, backward), so
    /// that a drift within a round favours none of them. Each one's times,
    /// by round (for [`clear_winner`]).
    pub fn confirm(&mut self, jits: &[&Jit], rounds: usize) -> Result<Vec<Vec<f64>>, String> {
        let mut times: Vec<Vec<f64>> = vec![Vec::new(); jits.len()];
        for round in 0..rounds.max(1) {
            let order: Vec<usize> =
                if round % 2 == 0 { (0..jits.len()).collect() } else { (0..jits.len()).rev().collect() };
            for index in order {
                self.best = f64::INFINITY;
                match self.time(jits[index]) {
                    Outcome::Timed(seconds) => times[index].push(seconds),
                    other => return Err(format!("re-timing failed: {other:?}")),
                }
            }
        }
        Ok(times)
    }

    /// About how long timing one candidate takes: the estimate from the
    /// time per call `seconds`, or the longest timing so far if longer.
    pub fn timing(&self, seconds: f64) -> Duration {
        timing_estimate(seconds).max(self.slowest)
    }

    /// Times a compiled schedule: a warm-up checked against the default
    /// schedule's outputs (the first one timed is the default), then runs.
    pub fn time(&mut self, jit: &Jit) -> Outcome {
        let started = Instant::now();
        let outcome = self.time_once(jit);
        self.slowest = self.slowest.max(started.elapsed());
        outcome
    }

    fn time_once(&mut self, jit: &Jit) -> Outcome {
        // Warm-up on fresh inputs, checked against the default schedule.
        let mut arrays = self.inputs.clone();
        if let Err(error) = jit.call(&self.entry, &mut arrays) {
            return Outcome::Failed(error.to_string());
        }
        match &self.reference {
            None => self.reference = Some(arrays),
            Some(reference) => {
                if let Err(difference) = tessel_runtime::compare(&arrays, reference, "candidate", "default") {
                    return Outcome::Wrong(difference);
                }
            }
        }
        // Timed calls reuse one copy of the inputs, as `tessel run --bench`
        // does (a fresh copy per call would flush the caches in between).
        let mut times = Vec::new();
        let started = Instant::now();
        let mut arrays = self.inputs.clone();
        while times.len() < RUNS && (times.len() < 2 || started.elapsed() < TIME_PER_CANDIDATE) {
            let start = Instant::now();
            if let Err(error) = jit.call(&self.entry, &mut arrays) {
                return Outcome::Failed(error.to_string());
            }
            let seconds = start.elapsed().as_secs_f64();
            times.push(seconds);
            if seconds > 3.0 * self.best {
                return Outcome::Slow(seconds);
            }
        }
        let seconds = median(times).expect("at least two runs");
        self.best = self.best.min(seconds);
        Outcome::Timed(seconds)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tessel_runtime::ElementType;

    /// `@scale` multiplies by `factor`: a second "schedule" with another
    /// factor stands for a candidate that computes a wrong result.
    fn scale(factor: &str) -> String {
        format!(
            "func.func @kernel(%x: memref<64xf32>, %o: memref<64xf32>) {{\n\
             %v = block.load %x : memref<64xf32> -> tensor<64xf32>\n\
             %f = arith.constant dense<{factor}> : tensor<64xf32>\n\
             %r = arith.mulf %v, %f : tensor<64xf32>\n\
             block.store %r, %o : tensor<64xf32>, memref<64xf32>\n\
             return\n}}\n\
             func.func @scale(%x: memref<256xf32>, %o: memref<256xf32>) {{\n\
             grid.call @kernel grid [4] ins(%x : memref<256xf32>) outs(%o : memref<256xf32>)\n\
             in_specs [#grid.block<[64], (i) -> (i)>] out_specs [#grid.block<[64], (i) -> (i)>]\n\
             return\n}}\n"
        )
    }

    #[test]
    fn a_candidate_computing_something_else_is_rejected() {
        let inputs = vec![
            HostArray::random(ElementType::F32, &[256], 1).unwrap(),
            HostArray::zeros(ElementType::F32, &[256]).unwrap(),
        ];
        let mut measurer = Measurer {
            module_text: scale("2.0"),
            entry: "scale".into(),
            inputs,
            reference: None,
            compile_timeout: Duration::from_secs(60),
            deadline: Instant::now() + Duration::from_secs(60),
            best: f64::INFINITY,
            parallel: 2,
            slowest: Duration::ZERO,
        };
        let schedule = CpuSchedule::host_default();
        let default = compile(&scale("2.0"), schedule).unwrap();
        assert!(matches!(measurer.time(&default), Outcome::Timed(_)));
        let same = compile(&scale("2.0"), CpuSchedule { num_stages: 2, ..schedule }).unwrap();
        // (A few microseconds each: any outcome but a rejection will do.)
        assert!(matches!(measurer.time(&same), Outcome::Timed(_) | Outcome::Slow(_)));
        let wrong = compile(&scale("3.0"), schedule).unwrap();
        assert!(matches!(measurer.time(&wrong), Outcome::Wrong(why) if why.contains("argument #1")));
        // Through the batch path too: compiled in threads, then guarded.
        measurer.module_text = scale("3.0");
        assert!(matches!(&measurer.measure(&[schedule])[..], [Outcome::Wrong(_)]));
    }

    #[test]
    fn only_a_finalist_faster_in_every_round_by_the_margin_replaces_the_default() {
        let default = [10.0, 10.4, 9.8, 10.1, 10.0];
        // Noise: faster in most rounds and by its median, not in all.
        let noise = vec![9.7, 10.5, 9.6, 9.9, 9.8];
        assert_eq!(clear_winner(&default, std::slice::from_ref(&noise)), None);
        // Faster in every round, but by less than the margin.
        let marginal = default.iter().map(|t| t * 0.995).collect::<Vec<_>>();
        assert_eq!(clear_winner(&default, std::slice::from_ref(&marginal)), None);
        // Slower: never.
        let slower = default.iter().map(|t| t * 1.03).collect::<Vec<_>>();
        assert_eq!(clear_winner(&default, std::slice::from_ref(&slower)), None);
        // Clearly faster: chosen, with its median time.
        let faster = vec![9.0, 9.5, 9.1, 9.2, 9.3];
        assert_eq!(clear_winner(&default, &[noise.clone(), faster.clone()]), Some((1, 9.2)));
        // Of two clear winners, the larger median speed-up.
        let fastest = default.iter().map(|t| t * 0.8).collect::<Vec<_>>();
        assert_eq!(clear_winner(&default, &[faster, fastest, slower]).map(|(index, _)| index), Some(1));
        // Rounds that failed to pair up (a missing time) decide nothing.
        assert_eq!(clear_winner(&default, &[vec![5.0, 5.0]]), None);
        assert_eq!(clear_winner(&[], &[vec![]]), None);
    }

    #[test]
    fn a_compile_timeout_fails_the_candidate() {
        let mut measurer = Measurer {
            module_text: scale("2.0"),
            entry: "scale".into(),
            inputs: Vec::new(),
            reference: None,
            compile_timeout: Duration::ZERO,
            deadline: Instant::now() + Duration::from_secs(60),
            best: f64::INFINITY,
            parallel: 1,
            slowest: Duration::ZERO,
        };
        let outcome = measurer.measure(&[CpuSchedule::host_default()]);
        assert!(matches!(&outcome[..], [Outcome::Failed(why)] if why.contains("compiling took over")));
    }
}
