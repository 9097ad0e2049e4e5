//! The software pipeline of a staged contraction's k loop, computed from
//! the loop body's dependence graph: how many chunks of k ahead of their
//! compute a wave issues the chunks' global loads.
//!
//! Each chunk goes through five operations: its global loads into
//! registers, their stores into LDS, a barrier, the LDS reads of the
//! fragments and the compute (matrix instructions or FMAs). They are the
//! nodes of a graph whose edges say what waits for what, each with a
//! latency (cycles from the first operation's issue to the earliest start
//! of the second) and a distance in iterations (the accumulators carry
//! from one chunk's compute to the next; a buffer's stores wait for the
//! reads of the chunk `buffers` chunks before), as modulo schedulers
//! (Rau, "Iterative Modulo Scheduling", 1994) and Triton's pipeliner
//! model a loop. The latencies are the chip's (`Chip::global_latency`,
//! `Chip::lds_latency`); the issue cycles the chunk's instructions'.
//!
//! The interval II between chunks starts from the chunk's issue cycles —
//! a wave issues its instructions in order, so all five operations' — and
//! grows until every dependence cycle fits (latency <= II x distance).
//! Start times are then the longest paths from the loads under weights
//! latency - II x distance (Bellman-Ford on the negated weights, whose
//! negative cycles are the recurrences II is too short for). The loop's
//! shape fixes where stores go — at the end of the iteration computing
//! the chunk before — so a chunk's loads are issued `load_distance`
//! iterations before that one: the stores' earliest start in whole
//! intervals, rounded up. Chunks in flight cost registers (one set per
//! chunk between its loads and its stores), so the distance is capped by
//! a register budget and by the chunks there are.

use petgraph::algo::bellman_ford;
use petgraph::graph::{DiGraph, NodeIndex};
use tessel_dialects::Chip;

/// What one chunk of k costs a wave, and what its loads hold.
#[derive(Clone, Copy, Debug)]
pub(super) struct ChunkWork {
    pub chip: Chip,
    /// Vector instructions per lane: global loads, LDS stores, LDS reads.
    pub global_loads: i64,
    pub lds_stores: i64,
    pub lds_reads: i64,
    /// Cycles the chunk's matrix instructions or FMAs keep the SIMD busy.
    pub compute_cycles: i64,
    /// Registers per lane one chunk's loads occupy, and the accumulators'.
    pub chunk_registers: i64,
    pub accumulator_registers: i64,
    /// Chunks of k the loop computes, and LDS buffers per operand.
    pub chunks: i64,
    pub buffers: i64,
}

/// The five operations of a chunk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Operation {
    GlobalLoad,
    LdsStore,
    Barrier,
    LdsRead,
    Compute,
}

/// The schedule: the interval, each operation's earliest start (cycles
/// after its chunk's loads) and how many chunks ahead the loads run.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Schedule {
    pub interval: i64,
    pub starts: Vec<(Operation, i64)>,
    pub load_distance: i64,
}

/// Cycles a barrier costs a wave that arrives last.
const BARRIER_CYCLES: i64 = 16;

/// Registers per lane the chunks loaded ahead (beyond the one every
/// pipelined loop holds) may take, and all live chunk registers plus the
/// accumulators at most: more leaves the fragments and addresses too few
/// and spills (the RDNA 3 FMA kernel holds 225 VGPRs with one chunk).
const EXTRA_CHUNK_REGISTERS: i64 = 32;
const LIVE_REGISTERS: i64 = 160;

/// The schedule of `work`'s k loop.
pub(super) fn schedule(work: &ChunkWork) -> Schedule {
    let issue = work.chip.issue_cycles();
    let (global, lds) = (work.chip.global_latency(), work.chip.lds_latency());
    let (loads, stores, reads) =
        (work.global_loads * issue, work.lds_stores * issue, work.lds_reads * issue + BARRIER_CYCLES);
    let mut graph = DiGraph::<Operation, (i64, i64)>::new();
    let load = graph.add_node(Operation::GlobalLoad);
    let store = graph.add_node(Operation::LdsStore);
    let barrier = graph.add_node(Operation::Barrier);
    let read = graph.add_node(Operation::LdsRead);
    let compute = graph.add_node(Operation::Compute);
    // (latency, distance)
    graph.add_edge(load, store, (loads + global, 0));
    graph.add_edge(store, barrier, (stores + lds, 0));
    graph.add_edge(barrier, read, (BARRIER_CYCLES, 0));
    graph.add_edge(read, compute, (lds, 0));
    graph.add_edge(compute, compute, (work.compute_cycles, 1));
    // A buffer is written again once every wave has read it: the reads of
    // the chunk `buffers` before, and a barrier after them.
    graph.add_edge(read, store, (reads, work.buffers));
    let mut interval = loads + stores + reads + work.compute_cycles;
    let starts = loop {
        match longest_paths(&graph, load, interval) {
            Some(starts) => break starts,
            None => interval += 1,
        }
    };
    let store_start = starts[store.index()];
    let per_chunk = work.chunk_registers.max(1);
    let by_registers =
        (1 + EXTRA_CHUNK_REGISTERS / per_chunk).min((LIVE_REGISTERS - work.accumulator_registers) / per_chunk);
    let wanted = (store_start + interval - 1) / interval;
    let load_distance = wanted.min(by_registers).min(work.chunks - 1).max(1);
    let starts = graph.node_indices().map(|index| (graph[index], starts[index.index()])).collect();
    Schedule { interval, starts, load_distance }
}

/// Each node's earliest start after `from`'s, under interval `interval`;
/// None where a dependence cycle does not fit it.
fn longest_paths(graph: &DiGraph<Operation, (i64, i64)>, from: NodeIndex, interval: i64) -> Option<Vec<i64>> {
    let negated =
        graph.map(|_, operation| *operation, |_, &(latency, distance)| (interval * distance - latency) as f64);
    let paths = bellman_ford(&negated, from).ok()?;
    Some(paths.distances.iter().map(|&distance| -distance as i64).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn work(chip: Chip, compute_cycles: i64) -> ChunkWork {
        ChunkWork {
            chip,
            global_loads: 3,
            lds_stores: 8,
            lds_reads: 8,
            compute_cycles,
            chunk_registers: 8,
            accumulator_registers: 64,
            chunks: 32,
            buffers: 1,
        }
    }

    #[test]
    fn long_compute_hides_the_loads_one_chunk_ahead() {
        let schedule = schedule(&work(Chip::Gfx942, 2048));
        assert_eq!(schedule.load_distance, 1);
        assert!(schedule.interval >= 2048);
    }

    #[test]
    fn short_compute_runs_the_loads_further_ahead() {
        // 16 i8 MFMAs of 16 cycles: the loads' 500 cycles span two chunks.
        let schedule = schedule(&work(Chip::Gfx942, 256));
        assert_eq!(schedule.load_distance, 2);
        let start = |operation| schedule.starts.iter().find(|(o, _)| *o == operation).unwrap().1;
        assert!(start(Operation::LdsStore) >= Chip::Gfx942.global_latency());
        assert!(start(Operation::Compute) > start(Operation::LdsRead));
    }

    #[test]
    fn registers_and_chunks_cap_the_distance() {
        // Wanted: five chunks ahead (the loads' 503 cycles over an interval
        // of 112, the LDS buffer's reuse); 32 registers allow two more.
        let tiny = ChunkWork { chunk_registers: 16, ..work(Chip::Gfx1100, 8) };
        assert_eq!(schedule(&tiny).load_distance, 1 + EXTRA_CHUNK_REGISTERS / 16);
        assert_eq!(schedule(&ChunkWork { chunks: 3, ..tiny }).load_distance, 2);
        assert_eq!(schedule(&ChunkWork { chunk_registers: 32, accumulator_registers: 128, ..tiny }).load_distance, 1);
    }

    #[test]
    fn a_single_buffer_bounds_the_interval_by_its_reuse() {
        // Store, barrier and reads of one buffer must fit one interval.
        let schedule = schedule(&ChunkWork { global_loads: 0, lds_stores: 0, lds_reads: 0, ..work(Chip::Gfx942, 1) });
        let lds = Chip::Gfx942.lds_latency();
        assert!(schedule.interval >= lds + 2 * BARRIER_CYCLES);
    }
}
