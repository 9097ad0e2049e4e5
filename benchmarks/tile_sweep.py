"""Sweeps a contraction's CPU register tiles and flags performance cliffs.

Runs `tessel run --bench` of one example for every register tile of 1..8
rows and 1..6 vectors of columns (whole and `--pad-tiles`), for the host's
code and, where given, other `--cpu` targets the host can run (x86-64-v3:
AVX2). A tile with enough accumulators to cover the FMA latency (8 or more
vectors) that runs more than `--cliff` times slower than the target's
default schedule is a codegen bug, not a tuning choice: the tiles of three
vectors once ran 20-40x slower (LLVM passing a `<48 x float>` accumulator
between blocks element by element), which this sweep shows at a glance.

    cargo build --release --bin tessel
    python3 benchmarks/tile_sweep.py [--example matmul_1024] [--cpu x86-64-v3] [--cliff 3]

Exits 1 when a cliff is found. Times are medians of `--bench`; the machine
drifts, so read ratios within one target's table, not single numbers."""

import argparse
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TESSEL = os.path.join(ROOT, "target", "release", "tessel")


def entry_of(example):
    """The example's last function: its entry point, as the examples write it."""
    entries = [line.split("@")[1].split("(")[0] for line in open(example) if line.startswith("func.func @")]
    return entries[-1]


def bench_ms(tessel, example, entry, options):
    """Median milliseconds per call, or None when the run fails."""
    arrays = ["--arg", "0=random:1", "--arg", "1=random:2"]
    command = [tessel, "run", example, "--entry", entry, *arrays, "--bench", "--no-cache", *options]
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT)
    if done.returncode != 0:
        return None
    return json.loads(done.stdout.strip().splitlines()[-1])["median_s"] * 1e3


def lanes_of(cpu):
    """f32 lanes of the target's vectors (the host: from its flags)."""
    if cpu:
        return 16 if "avx512" in cpu or cpu in ("sapphirerapids", "znver4", "znver5") else 8
    flags = open("/proc/cpuinfo").read()
    return 16 if "avx512f" in flags else 8


def sweep(tessel, example, entry, cpu, cliff):
    target = ["--cpu", cpu] if cpu else []
    default = bench_ms(tessel, example, entry, target)
    lanes = lanes_of(cpu)
    print(f"\n## {cpu or 'host'} code ({lanes} f32 lanes): default schedule {default:.1f} ms\n")
    print("| tile | ms | / default | padded ms | / default |")
    print("| --- | --- | --- | --- | --- |")
    cliffs = []
    for rows in range(1, 9):
        for vectors in range(1, 7):
            tile = f"{rows}x{vectors * lanes}"
            cells = []
            for padded in ([], ["--pad-tiles"]):
                ms = bench_ms(tessel, example, entry, [*target, "--register-tile", tile, *padded])
                ratio = ms / default if ms else None
                cells += [f"{ms:.1f}" if ms else "failed", f"{ratio:.2f}" if ratio else ""]
                if ms is None or (rows * vectors >= 8 and ratio > cliff):
                    cliffs.append(f"{cpu or 'host'} {tile}{' padded' if padded else ''}: {cells[-2]} ms")
            print(f"| {tile} | {' | '.join(cells)} |", flush=True)
    return cliffs


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--example", default="matmul_1024", help="an example's name (examples/NAME.mlir)")
    parser.add_argument("--cpu", action="append", default=[], help="another target to sweep (repeatable)")
    parser.add_argument("--cliff", type=float, default=3.0, help="slowdown against the default that is a bug")
    parser.add_argument("--tessel", default=TESSEL, help="the tessel binary (default: the release build)")
    args = parser.parse_args()
    example = os.path.join(ROOT, "examples", f"{args.example}.mlir")
    entry = entry_of(example)
    model = next(line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name"))
    print(f"# Register tiles of {args.example}: {model}, {os.cpu_count()} cores")
    print("\nMedians of `tessel run --bench`; `/ default`: against the target's default schedule.")
    cliffs = []
    for cpu in [None, *args.cpu]:
        cliffs += sweep(args.tessel, example, entry, cpu, args.cliff)
    if cliffs:
        print("\nCliffs (tiles of 8+ accumulators this much slower than the default, or failing):")
        print("\n".join(f"- {cliff}" for cliff in cliffs))
        sys.exit(1)
    print(f"\nNo tile of 8+ accumulators over {args.cliff}x the default.")


if __name__ == "__main__":
    main()
