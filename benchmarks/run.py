"""Measures Tessel, its peers and the machine's peaks on the workloads of
examples/ in one session and writes benchmarks/REPORT.md and
benchmarks/report.png.

    benchmarks/setup-peers.sh              # venv in benchmarks/.peers, clang
    cargo build --release --bin tessel
    benchmarks/.peers/bin/python benchmarks/run.py [--beam-timeout S] [WORKLOAD...]
    benchmarks/.peers/bin/python benchmarks/run.py --merge WORKLOAD...   # re-measure some, keep the rest

Times are medians of repeated calls in one session (the clock drifts
between 2.6 and 3.55 GHz on this machine: compare only within a run)."""

import argparse
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TESSEL = os.path.join(ROOT, "target", "release", "tessel")
PEERS = os.path.join(ROOT, "benchmarks", "peers.py")

# workload -> (number of input arguments, FLOPs or bytes moved, unit)
WORKLOADS = {
    "matmul_1024": (2, 2 * 1024**3, "GFLOP/s"),
    "matmul_2048": (2, 2 * 2048**3, "GFLOP/s"),
    "matmul_bias_relu_2048": (3, 2 * 2048**3, "GFLOP/s"),
    "softmax_4096": (1, 2 * 4 * 4096**2, "GB/s"),
    "layernorm_4096": (3, 2 * 4 * 4096**2, "GB/s"),
    "attention_2048": (3, 4 * 2048 * 2048 * 64, "GFLOP/s"),
    "elementwise_16m": (3, 4 * 4 * (1 << 24), "GB/s"),
    "sum_64m": (1, 4 * (1 << 26), "GB/s"),
    "matmul_i8": (2, 2 * 1024**3, "GOP/s"),
}

# The targets: (workload, reference, minimum speedup); a reference
# is a peer or a probe (STREAM bandwidth as the fraction of it reached).
TARGETS = [
    ("matmul_2048", "numpy", 1.0),
    ("matmul_1024", "numpy", 1.0),
    ("matmul_bias_relu_2048", "numpy", 1.1),
    ("softmax_4096", "jax.jit", 2.0),
    ("layernorm_4096", "jax.jit", 2.0),
    ("attention_2048", "jax.jit", 1.4),
    ("elementwise_16m", "STREAM mul_add", 0.9),
    ("sum_64m", "STREAM sum", 0.9),
    # 8-bit products per second against Tessel's own f32 FLOP rate on the
    # same shape (VNNI hosts; AVX2 code has no VNNI).
    ("matmul_i8", "Tessel matmul_1024", 2.5),
]

PEER_COLUMNS = ["numpy", "jax.jit", "IREE", "tinygrad BEAM=0", "tinygrad BEAM=2"]

# numpy's OpenBLAS (DYNAMIC_ARCH) picks its kernels by CPU model, unless
# the environment forces some (OPENBLAS_CORETYPE: this VM's sets Haswell's
# AVX2 kernels, half a Zen 5's FMA peak). The peers run without such
# overrides, and the BLAS-bound workloads are also measured with OpenBLAS's
# kernels for each vector width the host runs forced (peers "numpy CORE"):
# the numpy columns and targets take the fastest numpy of the host's width,
# the AVX2 section numpy with AVX2 kernels.
OPENBLAS_OVERRIDES = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")
OPENBLAS_KERNELS = {"AVX-512": "SkylakeX", "AVX2": "Haswell"}
BLAS_WORKLOADS = {"matmul_1024", "matmul_2048", "matmul_bias_relu_2048", "attention_2048"}

# Targets for hosts with VNNI, which x86-64-v3 code does not have.
NEEDS_VNNI = {"matmul_i8"}

# The second code target Tessel is measured as: AVX2 code (TESSEL_CPU), on
# hosts that run it.
AVX2_LEVEL = "x86-64-v3"

# On hosts with wider vectors, the peers that can be held to AVX2 code are
# measured that way too ("jax.jit AVX2", "IREE AVX2": what an AVX2 host
# runs), for the AVX2 section.
AVX2_PEERS = {"jax.jit": "jax.jit AVX2", "IREE": "IREE AVX2"}
AVX2_COLUMNS = ["numpy", "jax.jit", "jax.jit AVX2", "IREE", "IREE AVX2"]


def cpu_flags():
    try:
        with open("/proc/cpuinfo") as f:
            return next((line.split(":", 1)[1].split() for line in f if line.startswith("flags")), [])
    except OSError:
        return []


def host_width():
    """The widest vectors the host runs: AVX-512, AVX2 or SSE."""
    flags = cpu_flags()
    return "AVX-512" if "avx512f" in flags else "AVX2" if "avx2" in flags else "SSE"


def host_model():
    """The host CPU's model name and widest vectors, for the report."""
    name = platform.processor() or "unknown CPU"
    try:
        for line in subprocess.run(["lscpu"], capture_output=True, text=True).stdout.splitlines():
            if line.startswith("Model name:"):
                name = line.split(":", 1)[1].strip()
    except OSError:
        pass
    return f"{name}, {host_width()}"


def runs_avx2():
    flags = cpu_flags()
    return all(flag in flags for flag in ["avx2", "fma", "bmi1", "bmi2", "f16c", "movbe"])


def peer_environment(extra=None):
    """The environment peers run in: this one without OpenBLAS overrides,
    plus `extra`."""
    base = {key: value for key, value in os.environ.items() if key not in OPENBLAS_OVERRIDES}
    return {**base, **(extra or {})}


def openblas_core():
    """The kernels numpy's OpenBLAS picks on this host, as it reports them."""
    out = subprocess.run([sys.executable, "-c", "import numpy"], capture_output=True, text=True,
                         env=peer_environment({"OPENBLAS_VERBOSE": "2"}))
    match = re.search(r"Core: (\S+)", out.stdout + out.stderr)
    return match.group(1) if match else "unknown"


def forced_openblas_cores():
    """OpenBLAS's kernels for each vector width this host runs."""
    widths = {"AVX-512": ["AVX-512", "AVX2"], "AVX2": ["AVX2"]}.get(host_width(), [])
    return [OPENBLAS_KERNELS[width] for width in widths if width != "AVX2" or runs_avx2()]


def numpy_peer(core):
    """The peer name of numpy with OpenBLAS's `core` kernels forced (None:
    numpy as installed)."""
    return f"numpy {core}" if core else "numpy"


def with_numpy(others, cores):
    """`others` with each workload's numpy the fastest of the numpy peers
    with `cores` (None: as installed) that were measured."""
    shown = dict(others)
    for name in {workload for workload, _ in others}:
        times = [others[(name, numpy_peer(core))] for core in cores if (name, numpy_peer(core)) in others]
        if times:
            shown[(name, "numpy")] = min(times)
    return shown


def numpy_note(others, core, width):
    """What the report's numpy is, with matmul_2048's times as evidence."""
    name = "matmul_2048"
    times = [(label, others.get((name, numpy_peer(c)))) for label, c in
             [(f"{core} kernels, OpenBLAS's pick", None), *((f"{c} forced", c) for c in OPENBLAS_KERNELS.values())]]
    measured = [f"{label} {seconds * 1e3:.1f} ms" for label, seconds in times if seconds is not None]
    if len(measured) < 2:
        return []
    return [f"numpy: OpenBLAS picks its {core} kernels on this host (without the environment's OpenBLAS "
            f"overrides); {name}: {', '.join(measured)} (`OPENBLAS_CORETYPE`). The numpy columns and targets take "
            f"the fastest of the host's width ({width}), the AVX2 section OpenBLAS's AVX2 (Haswell) kernels.", ""]


def tessel_run(name, inputs, level=None):
    """Median seconds of `tessel run --bench` on the example, as code for
    the host or for x86-64 `level`."""
    args = [f"--arg={i}=random:{i + 1}" for i in range(inputs)]
    example = os.path.join(ROOT, "examples", f"{name}.mlir")
    env = {**os.environ, "TESSEL_CPU": level} if level else None
    out = subprocess.run([TESSEL, "run", example, "--entry", name, *args, "--bench"],
                         check=True, capture_output=True, text=True, env=env).stdout
    return json.loads(out.strip().splitlines()[-1])["median_s"]


def tessel(name, inputs):
    example = os.path.join(ROOT, "examples", f"{name}.mlir")
    run_s = tessel_run(name, inputs)
    # Whole compile (parse, passes, LLVM, object file) in the release build.
    with tempfile.TemporaryDirectory() as tmp:
        times = []
        for _ in range(3):
            start = time.perf_counter()
            command = [TESSEL, "compile", example, "--target", "cpu", "--emit", "obj", "-o", os.path.join(tmp, "k.o")]
            subprocess.run(command, check=True, capture_output=True)
            times.append(time.perf_counter() - start)
    return run_s, sorted(times)[1]


def peers(family, names, env=None, timeout=None):
    """Runs one peer family, one workload per process (a timeout or a crash
    loses only that workload); returns {(workload, peer): seconds}."""
    results = {}
    for name in names:
        try:
            out = subprocess.run([sys.executable, PEERS, family, name], capture_output=True, text=True,
                                 env=peer_environment(env), timeout=timeout).stdout
        except subprocess.TimeoutExpired:
            print(f"{family} {env or ''}: {name} timed out after {timeout} s", file=sys.stderr)
            continue
        for line in out.splitlines():
            if line.startswith("{"):
                row = json.loads(line)
                results[(row["workload"], row["peer"])] = row["median_s"]
    return results


def compile_probes(directory, only_stream=False):
    """Builds the machine's probes into `directory`: STREAM-style
    bandwidths and vector FMA rate (and the FMA rate of AVX2 code,
    `fma_avx2`, where the host runs it); with `only_stream`, the bandwidths
    alone. Returns [(probe, key, binary)] for `run_probes`."""
    builds = [("stream", "stream", ["-march=native"])]
    if not only_stream:
        builds.append(("fma", "fma", ["-march=native"]))
    if runs_avx2() and not only_stream:
        builds.append(("fma", "fma_avx2", [f"-march={AVX2_LEVEL}", "-DCHAINS=6"]))
    built = []
    for probe, key, flags in builds:
        binary = os.path.join(directory, key)
        subprocess.run(["clang-22", "-O3", *flags, "-mprefer-vector-width=512", "-fopenmp",
                        os.path.join(ROOT, "benchmarks", "probes", f"{probe}.c"), "-o", binary], check=True)
        built.append((probe, key, binary))
    return built


def run_probes(built):
    """Runs probes built by `compile_probes`: {key or STREAM kernel: row}."""
    found = {}
    for probe, key, binary in built:
        for line in subprocess.run([binary], check=True, capture_output=True, text=True).stdout.splitlines():
            row = json.loads(line)
            found[key if probe == "fma" else row["probe"]] = row
    return found


def probes():
    """The machine's peaks, built and run once."""
    with tempfile.TemporaryDirectory() as tmp:
        return run_probes(compile_probes(tmp))


def ratio(value):
    return f"{value:.2f}x" if value is not None else "n/a"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--beam-timeout", type=float, default=900, help="seconds per workload for tinygrad BEAM=2")
    parser.add_argument("--render", metavar="RESULTS_JSON",
                        help="rewrite the report from a saved benchmarks/results.json (no measuring)")
    parser.add_argument("--merge", action="store_true",
                        help="measure only the named workloads and merge them into benchmarks/results.json "
                             "(same host model; the other workloads and the machine probes keep their saved values)")
    parser.add_argument("workloads", nargs="*")
    options = parser.parse_args()
    results_path = os.path.join(ROOT, "benchmarks", "results.json")

    merged = {}
    if options.render or options.merge:
        with open(options.render or results_path) as f:
            saved = json.load(f)
        machine = saved["probes"]
        host = saved.get("host", platform.node())
        merged = saved.get("merged", {})
        measured = {n: (r["run_s"], r["compile_s"]) for n, r in saved["tessel"].items()}
        avx2 = {n: r["run_avx2_s"] for n, r in saved["tessel"].items() if r.get("run_avx2_s")}
        others = {tuple(key.split(" | ")): value for key, value in saved["peers"].items()}
        adjacent = saved.get("stream_adjacent", {})
        core = saved.get("openblas_core", "unknown")
    if options.merge and host != host_model():
        sys.exit(f"--merge: results.json is from {host}, this host is {host_model()}")
    if options.render:
        names = [n for n in WORKLOADS if n in measured]
    else:
        if not options.merge:
            machine = probes()
            host = host_model()
            core = openblas_core()
            measured, others, avx2, adjacent = {}, {}, {}, {}
        todo = options.workloads or list(WORKLOADS)
        names = [n for n in WORKLOADS if n in todo or n in measured]
        # Workload by workload, Tessel (host code, then AVX2 code) right
        # before its peers: the clock drifts over a session, so comparisons
        # are made minutes apart at most.
        # The STREAM probe run next to bandwidth workloads, built once.
        with tempfile.TemporaryDirectory() as probe_dir:
            stream_probe = compile_probes(probe_dir, only_stream=True)
            for name in todo:
                if options.merge:
                    merged[name] = time.strftime("%Y-%m-%d")
                    others = {key: value for key, value in others.items() if key[0] != name}
                measured[name] = tessel(name, WORKLOADS[name][0])
                if runs_avx2():
                    avx2[name] = tessel_run(name, WORKLOADS[name][0], AVX2_LEVEL)
                # A bandwidth target's STREAM probe, measured right after the
                # workload: this VM's memory bandwidth moves by 2x within a
                # session (42 to 105 GB/s for the read-only sum, one Zen 5 host).
                if any(n == name and r.startswith("STREAM") for n, r, _ in TARGETS):
                    adjacent[name] = {k: row["median_gbs"] for k, row in run_probes(stream_probe).items()}
                others.update(peers("numpy-jax", [name]))
                if name in BLAS_WORKLOADS:
                    for forced in forced_openblas_cores():
                        others.update(peers("numpy", [name], env={"OPENBLAS_CORETYPE": forced}))
                others.update(peers("iree", [name]))
                if runs_avx2() and host_width() != "AVX2":
                    others.update(peers("jax-avx2", [name]))
                    others.update(peers("iree-avx2", [name]))
                others.update(peers("tinygrad", [name], env={"BEAM": "0"}))
                others.update(peers("tinygrad", [name], env={"BEAM": "2"}, timeout=options.beam_timeout))

    stream = {k: machine[k]["median_gbs"] for k in ["triad", "mul_add", "sum"]}
    width = host.rsplit(", ", 1)[-1]
    measured_peers = others
    others = with_numpy(measured_peers, [None, OPENBLAS_KERNELS.get(width)])
    lines = [
        "# Tessel benchmarks",
        "",
        f"One session on {host} ({os.cpu_count()} cores), medians (raw numbers: benchmarks/results.json). "
        "Generated by `benchmarks/run.py`.",
        f"Machine peaks (benchmarks/probes, medians): vector FMA {machine['fma']['median_gflops']:.0f} GFLOP/s, "
        f"STREAM triad {stream['triad']:.1f} GB/s, x*y+w {stream['mul_add']:.1f} GB/s, "
        f"read-only sum {stream['sum']:.1f} GB/s.",
        *(["Bandwidth targets compare with the STREAM probe run right after their workload: "
           + ", ".join(f"{n} {b[kind]:.1f} GB/s ({kind})" for n, b in adjacent.items()
                       for t, r, _ in TARGETS if t == n and r.startswith("STREAM") for kind in [r.split()[1]])
           + "."] if adjacent else []),
        "",
        *numpy_note(measured_peers, core, width),
        *([f"Measured later on the same host model and merged (`run.py --merge`), their ratios from their own "
           f"session: {', '.join(f'{n} ({d})' for n, d in merged.items())}.", ""] if merged else []),
        "## Times",
        "",
        "| workload | Tessel | rate | compile | " + " | ".join(PEER_COLUMNS) + " |",
        "| --- | --- | --- | --- | " + " | ".join("---" for _ in PEER_COLUMNS) + " |",
    ]
    for name in names:
        t, compile_s = measured[name]
        work, unit = WORKLOADS[name][1], WORKLOADS[name][2]
        cells = [f"{others[(name, p)] * 1e3:.2f} ms" if (name, p) in others else "n/a" for p in PEER_COLUMNS]
        lines.append(f"| {name} | {t * 1e3:.2f} ms | {work / t / 1e9:.1f} {unit} | {compile_s:.2f} s | "
                     + " | ".join(cells) + " |")
    lines += [
        "",
        "Rates are useful work per second: FLOPs for matmul and attention, bytes of",
        "the arrays read and written once for the memory-bound kernels. Compile is",
        "`tessel compile --emit obj` of the example, whole process, release build.",
        "",
        "## Speedups (peer time / Tessel time; above 1: Tessel is faster)",
        "",
        "| workload | " + " | ".join(PEER_COLUMNS) + " |",
        "| --- | " + " | ".join("---" for _ in PEER_COLUMNS) + " |",
    ]
    for name in names:
        t = measured[name][0]
        lines.append(f"| {name} | " + " | ".join(ratio(others[(name, p)] / t) if (name, p) in others else "n/a"
                                                   for p in PEER_COLUMNS) + " |")
    lines += ["", "## Targets", "", "| workload | against | target | measured | met |",
              "| --- | --- | --- | --- | --- |"]
    for name, reference, minimum in TARGETS:
        if name not in measured:
            continue
        lines.append(target_row(name, reference, minimum, measured[name][0], others, adjacent.get(name, stream),
                                {n: r for n, (r, _) in measured.items()}))
    compile_worst = max(c for _, c in measured.values())
    met = "yes" if compile_worst < 1 else "no"
    lines.append(f"| every example | compile time | < 1 s | {compile_worst:.2f} s | {met} |")
    avx2_peers = with_numpy(measured_peers, ["Haswell"])
    lines += avx2_section(names, avx2, avx2_peers, machine, stream, adjacent)
    lines += per_width_targets({n: r for n, (r, _) in measured.items()}, others, avx2, avx2_peers, machine, width)
    # The hand-written analysis of the targets missed (profiles, reasons).
    with open(os.path.join(ROOT, "benchmarks", "gaps.md")) as f:
        lines += ["", f.read().rstrip()]
    # Pallas kernels under jax.jit, measured by benchmarks/jax_pallas.py.
    # ... JAX's TPU kernels at serving sizes, by benchmarks/tpu_kernels.py,
    # and checked execution against JAX's interpreter, by benchmarks/checked.py.
    for section in ("jax_pallas.md", "tpu_kernels.md", "checked.md"):
        path = os.path.join(ROOT, "benchmarks", section)
        if os.path.exists(path):
            with open(path) as f:
                lines += ["", f.read().rstrip()]
    report = "\n".join(lines) + "\n"
    with open(os.path.join(ROOT, "benchmarks", "REPORT.md"), "w") as f:
        f.write(report)
    if not options.render:
        with open(results_path, "w") as f:
            json.dump({"host": host, "openblas_core": core, "merged": merged,
                       "tessel": {n: {"run_s": r, "compile_s": c, "run_avx2_s": avx2.get(n)}
                                  for n, (r, c) in measured.items()},
                       "peers": {f"{w} | {p}": s for (w, p), s in measured_peers.items()}, "probes": machine,
                       "stream_adjacent": adjacent}, f, indent=1)
    print(report)
    plot(names, measured, others)


def target_row(name, reference, minimum, seconds, others, stream, tessel_times):
    """A row of a targets table: Tessel's `seconds` on `name` against a peer
    (speed-up), a STREAM probe (fraction of its bandwidth) or another of
    Tessel's workloads (ratio of the rates)."""
    if reference.startswith("STREAM"):
        achieved = WORKLOADS[name][1] / seconds / 1e9 / stream[reference.split()[1]]
    else:
        achieved = achieved_against(name, reference, seconds, others, tessel_times)
    met = "yes" if achieved is not None and achieved >= minimum else "no"
    return f"| {name} | {reference} | {minimum:.1f}x | {ratio(achieved)} | {met} |"


def avx2_section(names, avx2, others, machine, stream, adjacent):
    """Tessel's AVX2 code (TESSEL_CPU=x86-64-v3) on this host: times, the
    rate against the AVX2 FMA probe, ratios to the peers and the targets."""
    if not avx2:
        return ["", f"## {AVX2_LEVEL} (AVX2) code", "",
                "Not measured in this session (the host does not run AVX2 code, or the results predate the column)."]
    lines = [
        "",
        f"## {AVX2_LEVEL} (AVX2) code on this host",
        "",
        f"The same workloads with `TESSEL_CPU={AVX2_LEVEL}`: AVX2 code and AVX2's 16-register tiles, measured",
        "right after the host's code and before the peers. The peers keep the host's best code except in the columns",
        "held to AVX2 (where they were measured): numpy with OpenBLAS's AVX2 kernels, and jax.jit AVX2 and IREE AVX2,",
        "XLA limited to AVX2 (`--xla_cpu_max_isa=AVX2`) and IREE compiling for x86-64-v3: what an AVX2 host runs.",
    ]
    if "fma_avx2" in machine:
        lines.append(f"The AVX2 FMA probe peaks at {machine['fma_avx2']['median_gflops']:.0f} GFLOP/s "
                     f"(host code: {machine['fma']['median_gflops']:.0f}).")
    columns = [p for p in AVX2_COLUMNS if any(key[1] == p for key in others)]
    lines += ["", "| workload | AVX2 code | rate | " + " | ".join(f"vs {p}" for p in columns) + " |",
              "| --- | --- | --- | " + " | ".join("---" for _ in columns) + " |"]
    for name in names:
        if name not in avx2:
            continue
        t = avx2[name]
        work, unit = WORKLOADS[name][1], WORKLOADS[name][2]
        rate = work / t / 1e9
        if unit == "GFLOP/s" and "fma_avx2" in machine:
            rate_text = f"{rate:.1f} {unit} ({rate / machine['fma_avx2']['median_gflops']:.0%} of the AVX2 probe)"
        else:
            rate_text = f"{rate:.1f} {unit}"
        cells = [ratio(others[(name, p)] / t) if (name, p) in others else "n/a" for p in columns]
        lines.append(f"| {name} | {t * 1e3:.2f} ms | {rate_text} | " + " | ".join(cells) + " |")
    lines += ["", "| workload | against | target | measured (AVX2 code) | met |", "| --- | --- | --- | --- | --- |"]
    for name, reference, minimum in TARGETS:
        if name not in avx2 or name in NEEDS_VNNI:
            continue
        lines.append(target_row(name, reference, minimum, avx2[name], others, adjacent.get(name, stream), avx2))
    return lines


# Issue #16's targets, measured for the host's code and for AVX2 code:
# (workload, what it is against, minimum). A reference is a peer, the best
# of several peers ("a / b"), the FMA probe of the code's own width (the
# fraction of its peak reached) or Tessel's rate on another workload with
# the same code.
PER_WIDTH_TARGETS = [
    ("matmul_2048", "numpy", 1.0),
    ("matmul_2048", "FMA probe", 0.85),
    ("matmul_bias_relu_2048", "numpy / jax.jit", 1.05),
    ("attention_2048", "jax.jit", 1.4),
    ("matmul_i8", "Tessel matmul_1024", 2.5),
    ("softmax_4096", "jax.jit / IREE", 1.2),
    ("layernorm_4096", "jax.jit / IREE", 1.2),
]


def achieved_against(name, reference, seconds, others, tessel_times, fma_gflops=None):
    """What Tessel's `seconds` on `name` reaches against `reference`: a peer
    or the best of several ("a / b", speed-up), the FMA probe of the code's
    width (`fma_gflops`, fraction of its peak) or another of Tessel's
    workloads with the same code ("Tessel NAME", ratio of the rates); None
    where it was not measured."""
    if reference == "FMA probe":
        return WORKLOADS[name][1] / seconds / 1e9 / fma_gflops if fma_gflops else None
    if reference.startswith("Tessel "):
        other = reference.split()[1]
        return (WORKLOADS[name][1] / seconds) / (WORKLOADS[other][1] / tessel_times[other]) \
            if other in tessel_times else None
    times = [others[(name, peer)] for peer in reference.split(" / ") if (name, peer) in others]
    return min(times) / seconds if times else None


def per_width_targets(host_times, host_peers, avx2_times, avx2_peers, machine, width):
    """Issue #16's targets side by side for the host's code and AVX2 code,
    each against peers of its own width where they were measured so (the
    AVX2 column: numpy with OpenBLAS's AVX2 kernels, jax.jit and IREE held
    to AVX2; the host's code where a peer was not)."""
    columns = [(f"host code ({width})", host_times, host_peers, machine.get("fma", {}).get("median_gflops"))]
    if avx2_times:
        # A peer held to AVX2 stands in for the same peer's host code.
        plain_name = {held: plain for plain, held in AVX2_PEERS.items()}
        same_width = dict(avx2_peers)
        for (name, peer), seconds in avx2_peers.items():
            if peer in plain_name:
                same_width[(name, plain_name[peer])] = seconds
        columns.append((f"{AVX2_LEVEL} (AVX2) code", avx2_times, same_width,
                        machine.get("fma_avx2", {}).get("median_gflops")))
    lines = ["", "## Targets per code width (issue #16)", "",
             "Speed-ups over the best of the peers named, or the fraction of the same width's FMA probe; the AVX2 "
             "column compares with the peers held to AVX2 code where they were measured so (numpy with OpenBLAS's "
             "AVX2 kernels, jax.jit AVX2, IREE AVX2). "
             "`tessel tune` against the default schedule is measured by `benchmarks/tune.py` (TUNING.md).", "",
             "| workload | against | target | " + " | ".join(f"{label} | met" for label, *_ in columns) + " |",
             "| --- | --- | --- | " + " | ".join("--- | ---" for _ in columns) + " |"]
    for name, reference, minimum in PER_WIDTH_TARGETS:
        target = f"{minimum:.0%}" if reference == "FMA probe" else f"{minimum:.2f}x"
        cells = []
        for label, times, peers_seen, fma in columns:
            if name not in times:
                cells += ["n/a", "not measured"]
                continue
            if name in NEEDS_VNNI and times is avx2_times:
                cells += ["n/a", "no VNNI in AVX2 code"]
                continue
            achieved = achieved_against(name, reference, times[name], peers_seen, times, fma)
            shown = "n/a" if achieved is None else f"{achieved:.0%}" if reference == "FMA probe" else ratio(achieved)
            cells += [shown, "yes" if achieved is not None and achieved >= minimum else "no"]
        lines.append(f"| {name} | {reference} | {target} | " + " | ".join(cells) + " |")
    return lines


def plot(names, measured, others):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(10, 4.5))
    width = 0.8 / len(PEER_COLUMNS)
    for k, peer in enumerate(PEER_COLUMNS):
        xs = [i + (k - (len(PEER_COLUMNS) - 1) / 2) * width for i in range(len(names))]
        ys = [others[(n, peer)] / measured[n][0] if (n, peer) in others else 0 for n in names]
        ax.bar(xs, ys, width, label=f"vs {peer}")
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_yscale("log")
    ax.set_xticks(range(len(names)), names, rotation=30, ha="right")
    ax.set_ylabel("speedup of Tessel (log)")
    ax.legend(fontsize=8, ncol=2)
    fig.tight_layout()
    fig.savefig(os.path.join(ROOT, "benchmarks", "report.png"), dpi=100)


if __name__ == "__main__":
    main()
