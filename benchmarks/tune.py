"""Measures the tuner on real kernels: `tessel tune` with a fresh cache and
a budget (a real BEAM search, by measurement), then again (answered from
the cache), then `tessel run --bench` of the default and the tuned schedule
alternately, in one session. Writes benchmarks/TUNING.md.

Whether the tuned schedule is measurably faster is decided from pairs:
each round times the default and the tuned schedule back to back (in
alternating order, ABBA), so the machine's slow drift cancels within a
pair; the report gives the median of the per-pair speed-ups and a
one-sided sign test over the pairs (the chance of that many or more
tuned-faster pairs if the two were equally fast).

    cargo build --release --bin tessel
    python3 benchmarks/tune.py [--budget SECONDS] [--cpu NAME ...] [WORKLOAD...]

`--cpu` (repeatable) tunes and times code for that CPU (TESSEL_CPU, e.g.
x86-64-v3 for AVX2 code on an AVX-512 host; `host`: the host's, the
default); one row per workload and CPU.

The machine drifts (2.6-3.55 GHz): only ratios within one run mean
anything; medians of alternating runs are quoted."""

import argparse
import json
import math
import os
import platform
import re
import statistics
import subprocess
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TESSEL = os.path.join(ROOT, "target", "release", "tessel")


def tessel(*args, cache, cpu=None):
    env = dict(os.environ, TESSEL_CACHE_DIR=cache)
    if cpu == "host":
        env.pop("TESSEL_CPU", None)
    elif cpu:
        env["TESSEL_CPU"] = cpu
    started = time.monotonic()
    done = subprocess.run([TESSEL, *args], capture_output=True, text=True, env=env, cwd=ROOT, check=True)
    return done.stdout.strip().splitlines()[-1], time.monotonic() - started


def example_args(example):
    """The `--arg` options of the example's own `tessel run` comment line
    (random inputs), so benches time the data the tuner timed."""
    with open(os.path.join(ROOT, example)) as source:
        for line in source:
            if "tessel run " in line:
                return re.findall(r"--arg \S+", line.split("tessel run ", 1)[1])
    return []


def host_cpu():
    with open("/proc/cpuinfo") as info:
        text = info.read()
    name = re.search(r"model name\s*:\s*(.*)", text)
    family = re.search(r"cpu family\s*:\s*(\d+)", text)
    model = name.group(1) if name else platform.processor()
    return f"{model} (family {family.group(1) if family else '?'}), {os.cpu_count()} cores"


def sign_test(wins, pairs):
    """One-sided sign test: P(at least `wins` of `pairs` fair coin flips)."""
    return sum(math.comb(pairs, k) for k in range(wins, pairs + 1)) / 2 ** pairs


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--budget", type=float, default=40)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--cpu", action="append", metavar="NAME",
                        help="code for this CPU (TESSEL_CPU; repeatable; default: host, the host's)")
    parser.add_argument("workloads", nargs="*", default=["matmul_2048"])
    args = parser.parse_args()
    rows = []
    for workload, cpu in [(w, c) for w in args.workloads for c in args.cpu or ["host"]]:
        example = os.path.join("examples", f"{workload}.mlir")
        with tempfile.TemporaryDirectory() as cache:
            tune = ["tune", example, "--entry", workload, "--budget", str(args.budget)]
            first, tune_s = tessel(*tune, cache=cache, cpu=cpu)
            again, cached_s = tessel(*tune, cache=cache, cpu=cpu)
            found, cached = json.loads(first), json.loads(again)
            # Default (--no-cache) and tuned (from the cache), in pairs,
            # alternating which goes first.
            times = {"default": [], "tuned": []}
            inputs = [word for option in example_args(example) for word in option.split()]
            runs = [("default", ["--no-cache"]), ("tuned", [])]
            for round_index in range(args.rounds):
                for name, extra in runs if round_index % 2 == 0 else runs[::-1]:
                    line, _ = tessel("run", example, "--entry", workload, *inputs, "--bench", *extra, cache=cache,
                                     cpu=cpu)
                    times[name].append(json.loads(line)["median_s"])
        default_ms = statistics.median(times["default"]) * 1e3
        tuned_ms = statistics.median(times["tuned"]) * 1e3
        ratios = [d / t for d, t in zip(times["default"], times["tuned"])]
        wins = sum(ratio > 1 for ratio in ratios)
        paired = (statistics.median(ratios), min(ratios), max(ratios), wins, len(ratios), sign_test(wins, len(ratios)))
        rows.append((workload, cpu, found, tune_s, cached, cached_s, default_ms, tuned_ms, paired))
        print(f"{workload} ({cpu} code): tuned {found['best']} in {tune_s:.1f} s "
              f"({found['candidates']} candidates); "
              f"cached answer in {cached_s:.2f} s; default {default_ms:.1f} ms, tuned {tuned_ms:.1f} ms; "
              f"per pair {paired[0]:.3f}x ({paired[1]:.3f}-{paired[2]:.3f}), tuned faster in {wins}/{len(ratios)} "
              f"(sign test p = {paired[5]:.4f})", flush=True)
    with open(os.path.join(ROOT, "benchmarks", "TUNING.md"), "w") as report:
        report.write("# Tuning (`tessel tune`)\n\n")
        report.write(f"Host: {host_cpu()}. ")
        report.write(f"Budget {args.budget:g} s, BEAM width 4, fresh cache; then the same command again; then "
                     f"`tessel run --bench` (a median of calls) of the default and the tuned schedule back to back, "
                     f"{args.rounds} pairs (alternating which goes first). One session: the machine drifts, compare "
                     "within a row; the per-pair speed-ups cancel the drift, and the sign test gives the chance of "
                     "that many tuned-faster pairs if both schedules were equally fast.\n\n")
        report.write("| workload | code | tuned schedule | candidates | tune wall time | tuner's default / best | "
                     "second tune (cache) | bench: default | bench: tuned | speed-up per pair: median (range) | "
                     "tuned faster | sign test p |\n")
        report.write("|---|---|---|---|---|---|---|---|---|---|---|---|\n")
        for workload, code, found, tune_s, cached, cached_s, default_ms, tuned_ms, paired in rows:
            best = found["best"]
            threads = best.get("num_threads", 0) or "all"
            group = best.get("group", 0)
            schedule = (f"tile {best['register_tile'][0]}x{best['register_tile'][1]}, "
                        f"{best['num_stages']} stage(s), k chunk {best['k_chunk'] or 'from the caches'}, "
                        f"k unroll {best['k_unroll']}, "
                        f"threads {threads}, {best.get('vector_bits', '?')}-bit vectors"
                        f"{', padded tiles' if best.get('pad_tiles') else ''}"
                        f"{', column-major grid' if best.get('grid_order') == 'column-major' else ''}"
                        f"{(', group top ' if best.get('group_top') else ', group ') + str(group) if group else ''}")
            median_ratio, low, high, wins, pairs, p = paired
            report.write(f"| {workload} | {code} | {schedule} | {found['candidates']} | {tune_s:.1f} s | "
                         f"{found['default_s'] * 1e3:.1f} / {found['best_s'] * 1e3:.1f} ms | "
                         f"{cached_s:.2f} s (cached: {str(cached['cached']).lower()}) | {default_ms:.1f} ms | "
                         f"{tuned_ms:.1f} ms | {median_ratio:.3f}x ({low:.3f}-{high:.3f}) | "
                         f"{wins}/{pairs} | {p:.4f} |\n")
        # The analysis that goes with the numbers (written by hand).
        notes = os.path.join(ROOT, "benchmarks", "tuning-notes.md")
        if os.path.exists(notes):
            with open(notes) as text:
                report.write("\n" + text.read())


if __name__ == "__main__":
    main()
