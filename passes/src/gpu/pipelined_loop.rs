//! The software-pipelined k-chunk loop `tessel-matrix-cores` and
//! `tessel-register-tiles` share, written as `pipeline_schedule` computes
//! it: each chunk's global loads some chunks ahead of its compute, its
//! registers carried across iterations until they are stored to LDS.

use crate::gpu::matrix_staging::StagedContraction;
use crate::gpu::pipeline_schedule;
use crate::gpu::tessel_lds_stage::STAGED_LOOP;
use crate::support::template::emit_line;
use std::collections::{BTreeSet, VecDeque};

/// The pipelined k loop stays a loop: it is the schedule (loads of the
/// next chunk in flight during this one's matrix instructions); unrolled
/// by LLVM, every chunk's addresses and loads would be live at once
/// (spills on RDNA 3's WMMA kernels).
const KEEP_ROLLED: &str = "loop_annotation = #llvm.loop_annotation<unroll = #llvm.loop_unroll<disable = true>>";

/// Between a step's loads, its compute and its stores: LLVM's scheduler
/// may not move instructions across (it would sink the loads below the
/// matrix instructions, or hoist the stores, and their wait for the loads,
/// above them — the schedule's distance undone; Triton's AMD pipeliner
/// fences its stages alike).
const PIN: &str = "amdgpu.sched_barrier allow = <none>\n";

fn gcd(a: i64, b: i64) -> i64 {
    if b == 0 { a } else { gcd(b, a % b) }
}

/// The k-chunk loop of a contraction with per-item staging (`plan`'s
/// `staging()` must be some), software-pipelined as `pipeline_schedule`
/// computes: the global loads of chunk c + D (D the schedule's load
/// distance) are issued before chunk c's compute, and chunk c + 1's
/// registers are stored to LDS after it (one buffer: a barrier before the
/// stores and one after; two buffers: one after, the loop unrolled by two
/// so each step names its buffers). The D - 1 chunks loaded and not yet
/// stored ride the loop as `iter_args`; the chunks after the loop's last
/// whole step are written out, with their loads where there are chunks
/// left to load. `accumulators` are the loop's names of the accumulators
/// and their initial values, of `types`; returns the final values.
pub(super) fn pipelined_loop(
    plan: &impl StagedContraction,
    body: &mut String,
    accumulators: Vec<(String, String)>,
    types: &str,
    constants: &mut BTreeSet<i64>,
) -> Vec<String> {
    let Some(staging) = plan.staging() else { return accumulators.into_iter().map(|(_, init)| init).collect() };
    let (k, chunk, buffers) = plan.depth();
    let chunks = k / chunk;
    let ahead = pipeline_schedule::schedule(&plan.chunk_work()).load_distance;
    let (view_a, view_b) = plan.chunk_view_types();
    let load = |body: &mut String, constants: &mut BTreeSet<i64>, label: &str, at: &str| {
        body.push_str(&plan.chunk_views(label, at));
        staging.emit_loads(body, constants, label, (&view_a, &view_b))
    };
    let stores = |body: &mut String, constants: &mut _, label: &str, registers: &[String], buffer: i64| {
        staging.emit_stores(body, constants, label, registers, (&format!("%la{buffer}"), &format!("%lb{buffer}")))
    };
    // One step: a chunk's compute from buffer `buffer`, with the loads
    // of the chunk `ahead` chunks later (if any) before it and the stores
    // of the next chunk (if any) after it.
    let step = |body: &mut String,
                constants: &mut BTreeSet<i64>,
                label: &str,
                (buffer, later, store): (i64, Option<&str>, bool),
                in_flight: &mut VecDeque<Vec<String>>,
                current: Vec<String>| {
        if let Some(at) = later {
            in_flight.push_back(load(body, constants, &format!("l{label}"), at));
            body.push_str(PIN);
        }
        let next = plan.compute(body, label, &buffer.to_string(), current, constants);
        body.push_str(PIN);
        if store {
            if buffers == 1 {
                body.push_str("gpu.barrier\n");
            }
            let registers = in_flight.pop_front().expect("a loaded chunk to store");
            stores(body, constants, label, &registers, (buffer + 1) % buffers);
            body.push_str("gpu.barrier\n");
        }
        next
    };
    let first = load(body, constants, "c0", "%c0");
    stores(body, constants, "c0", &first, 0);
    body.push_str("gpu.barrier\n");
    let mut in_flight: VecDeque<Vec<String>> = (1..ahead)
        .map(|c| {
            constants.insert(c * chunk);
            load(body, constants, &format!("c{c}"), &format!("%c{}", c * chunk))
        })
        .collect();
    let iter_args = accumulators.iter().map(|(arg, init)| format!("{arg} = {init}")).collect::<Vec<_>>().join(", ");
    let (mut current, inits): (Vec<String>, Vec<String>) = accumulators.into_iter().unzip();
    // Chunks the loop computes, each with a chunk `ahead` later to load:
    // whole iterations of `unroll` steps, as many as the buffers and the
    // chunks in flight take to come back to where they started (no
    // register copies between iterations: each carried chunk's registers
    // are free again when the chunk that replaces them arrives).
    let unroll = buffers * ahead / gcd(buffers, ahead);
    let looped = (chunks - ahead).max(0) / unroll * unroll;
    if looped > 0 {
        let register_types = staging.register_types();
        let carried: Vec<Vec<String>> = (1..ahead)
            .map(|slot| (0..register_types.len()).map(|index| format!("%fl{slot}_{index}")).collect())
            .collect();
        let flight_args = carried.iter().flatten().zip(in_flight.iter().flatten());
        let all_args = std::iter::once(iter_args)
            .chain(flight_args.map(|(arg, init)| format!("{arg} = {init}")))
            .collect::<Vec<_>>()
            .join(", ");
        let all_types = std::iter::once(types.to_string())
            .chain(carried.iter().flat_map(|_| register_types.iter().cloned()))
            .collect::<Vec<_>>()
            .join(", ");
        let (count, results) = (current.len(), current.len() + carried.iter().flatten().count());
        constants.extend([looped * chunk, unroll * chunk]);
        emit_line!(
            body,
            "%res:{results} = scf.for %k = %c0 to %c{} step %c{} iter_args({all_args}) -> ({all_types}) {{",
            looped * chunk,
            unroll * chunk
        );
        let mut flight: VecDeque<Vec<String>> = carried.into_iter().collect();
        for within in 0..unroll {
            let at = (within + ahead) * chunk;
            constants.insert(at);
            emit_line!(body, "%k{within}_ahead = arith.addi %k, %c{at} : index");
            let later = format!("%k{within}_ahead");
            let stage = (within % buffers, Some(later.as_str()), true);
            current = step(body, constants, &format!("s{within}"), stage, &mut flight, current);
        }
        let yielded: Vec<String> = current.iter().cloned().chain(flight.into_iter().flatten()).collect();
        emit_line!(body, "scf.yield {} : {all_types}\n}} {{{STAGED_LOOP}, {KEEP_ROLLED}}}", yielded.join(", "));
        current = (0..count).map(|index| format!("%res#{index}")).collect();
        let mut index = count;
        for set in in_flight.iter_mut() {
            for register in set.iter_mut() {
                *register = format!("%res#{index}");
                index += 1;
            }
        }
    } else {
        current = inits;
    }
    for c in looped..chunks {
        let later = (c + ahead < chunks).then(|| {
            constants.insert((c + ahead) * chunk);
            format!("%c{}", (c + ahead) * chunk)
        });
        let label = format!("t{c}");
        current =
            step(body, constants, &label, (c % buffers, later.as_deref(), c + 1 < chunks), &mut in_flight, current);
    }
    current
}
