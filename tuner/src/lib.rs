//! BEAM search over kernel schedules, tinygrad style: from a starting
//! schedule, every action applicable to every schedule in the beam gives a
//! candidate; candidates are measured, the `width` fastest form the next
//! beam, and the search stops when a round finds nothing faster than the
//! best so far. Generic over the schedule type, the actions (`neighbours`)
//! and the measurement (`cost`), so the search is tested with deterministic
//! cost models; the compile-and-time measurement, the CLI and the cache
//! build on it (the BEAM tuner issue).

use std::collections::HashMap;
use std::hash::Hash;

/// The best schedule found and its cost.
#[derive(Clone, Debug, PartialEq)]
pub struct Found<S> {
    pub schedule: S,
    pub cost: f64,
    /// Distinct schedules measured (each at most once).
    pub measured: usize,
}

/// BEAM search of `width` from `start`. `neighbours` lists the schedules one
/// action away (illegal combinations are simply not listed); `cost` measures
/// one, lower is better, `None` for a candidate that failed (did not
/// compile, timed out, computed a wrong result): such a candidate is never
/// chosen. At most `rounds` rounds. `None` if even `start` fails.
pub fn beam_search<S, N, C>(start: S, width: usize, rounds: usize, neighbours: N, mut cost: C) -> Option<Found<S>>
where
    S: Clone + Eq + Hash,
    N: Fn(&S) -> Vec<S>,
    C: FnMut(&S) -> Option<f64>,
{
    let mut known: HashMap<S, Option<f64>> = HashMap::new();
    let mut measure = |schedule: &S, known: &mut HashMap<S, Option<f64>>| -> Option<f64> {
        *known.entry(schedule.clone()).or_insert_with(|| cost(schedule))
    };
    let start_cost = measure(&start, &mut known)?;
    let mut best = (start.clone(), start_cost);
    let mut beam = vec![(start, start_cost)];
    for _ in 0..rounds {
        let mut candidates: Vec<(S, f64)> = Vec::new();
        for (schedule, _) in &beam {
            for next in neighbours(schedule) {
                if known.contains_key(&next) {
                    continue;
                }
                if let Some(value) = measure(&next, &mut known) {
                    candidates.push((next, value));
                }
            }
        }
        candidates.sort_by(|a, b| a.1.total_cmp(&b.1));
        candidates.truncate(width.max(1));
        match candidates.first() {
            Some((schedule, value)) if *value < best.1 => best = (schedule.clone(), *value),
            _ => break,
        }
        beam = candidates;
    }
    Some(Found { schedule: best.0, cost: best.1, measured: known.len() })
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
            let found = beam_search((1, 1, 1), width, 20, neighbours, model).unwrap();
            assert!(found.cost <= exhaustive * 1.05, "width {width}: {found:?} against {exhaustive}");
            assert!(found.measured < space().len(), "the search measured the whole space");
        }
    }

    #[test]
    fn failing_candidates_are_never_chosen() {
        // The model's best tiles "compute wrong results": excluded.
        let wrong = |t: &Tile| t.0 * ((t.1 + 15) / 16) >= 16;
        let guarded = |t: &Tile| if wrong(t) { None } else { model(t) };
        let found = beam_search((1, 1, 1), 4, 20, neighbours, guarded).unwrap();
        assert!(!wrong(&found.schedule), "{found:?}");
        let best_valid = space().iter().filter(|t| !wrong(t)).filter_map(model).fold(f64::INFINITY, f64::min);
        assert!(found.cost <= best_valid * 1.05);
    }

    #[test]
    fn every_schedule_is_measured_once_and_a_failing_start_gives_none() {
        let mut calls = HashMap::new();
        let found = beam_search((1, 1, 1), 8, 20, neighbours, |t: &Tile| {
            *calls.entry(*t).or_insert(0) += 1;
            model(t)
        })
        .unwrap();
        assert!(calls.values().all(|&n| n == 1));
        assert_eq!(found.measured, calls.len());
        assert!(beam_search((1, 1, 1), 4, 20, neighbours, |_: &Tile| None::<f64>).is_none());
    }

    #[test]
    fn stops_when_nothing_improves() {
        // Already optimal: one round of neighbours, then stop.
        let found = beam_search((4, 64, 2), 4, 20, neighbours, |t: &Tile| Some(if *t == (4, 64, 2) { 0.0 } else { 1.0 })).unwrap();
        assert_eq!(found.schedule, (4, 64, 2));
        assert_eq!(found.measured, 1 + neighbours(&(4, 64, 2)).len());
    }
}
