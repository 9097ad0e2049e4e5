"""Pallas kernels under jax.jit on the CPU: Tessel-compiled (`tessel.jax`)
against the same computation written in jnp (compiled by XLA) and against
JAX's own `interpret=True`, in one session, alternating the contenders so
the drifting clock treats them alike. The kernels are JAX's own
(`jax.experimental.pallas.ops`), imported from the installed jax.

    .venv/bin/python benchmarks/jax_pallas.py [--repeats N] [WORKLOAD...]
    .venv/bin/python benchmarks/jax_pallas.py --render   # after editing the notes

Writes benchmarks/jax_pallas.md (included in benchmarks/REPORT.md by
`benchmarks/run.py`, or at once with `run.py --render`) and
benchmarks/jax_pallas.json. Times are medians."""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import time

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas.ops.gpu import attention, layer_norm, softmax
from jax.experimental.pallas import tpu as pltpu
from jax.experimental.pallas.ops.tpu import matmul as tpu_matmul

import tessel.jax

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The targets: Tessel's speed-up over XLA's jnp version.
TARGETS = {"softmax_4096": 2.0, "layernorm_4096": 2.0, "attention_2048": 1.2, "matmul_2048": 1.0}
OVERHEAD_TARGET_US = 20.0


def tpu_matmul_call(x, y, block: int, block_k: int, interpret: bool = False):
    """`jax.experimental.pallas.ops.tpu.matmul`'s kernel and call (its
    wrapper has no `interpret` flag): (block x block) output tiles
    accumulated over k in a scratch ref."""
    if not interpret:
        return tpu_matmul.matmul(x, y, block_shape=(block, block), block_k=block_k)
    return pl.pallas_call(
        tpu_matmul.matmul_kernel,
        out_shape=jax.ShapeDtypeStruct((x.shape[0], y.shape[1]), x.dtype),
        grid_spec=pltpu.PrefetchScalarGridSpec(
            num_scalar_prefetch=0,
            in_specs=[pl.BlockSpec((block, block_k), lambda i, _, k: (i, k)),
                      pl.BlockSpec((block_k, block), lambda _, j, k: (k, j))],
            out_specs=pl.BlockSpec((block, block), lambda i, j, k: (i, j)),
            grid=(x.shape[0] // block, y.shape[1] // block, x.shape[1] // block_k),
            scratch_shapes=[pltpu.VMEM((block, block), jnp.float32)]),
        interpret=True)(x, y)


def workloads():
    """name -> (pallas function, jnp function, arguments)."""
    keys = jax.random.split(jax.random.key(0), 4)
    x = jax.random.normal(keys[0], (4096, 4096), jnp.float32)
    w, b = jax.random.normal(keys[1], (4096,)), jax.random.normal(keys[2], (4096,))
    q, k, v = (jax.random.normal(key, (1, 2048, 1, 64), jnp.float32) for key in jax.random.split(keys[3], 3))
    y = jax.random.normal(keys[1], (2048, 2048), jnp.float32)
    z = jax.random.normal(keys[2], (2048, 2048), jnp.float32)
    sizes = attention.BlockSizes(block_q=128, block_k=128)
    return {
        "softmax_4096": (lambda x, **f: softmax.softmax(x, axis=-1, **f), lambda x: jax.nn.softmax(x, axis=-1),
                         (x,)),
        # (JAX's layer_norm vmaps over two leading axes: batch, sequence.)
        "layernorm_4096": (lambda x, w, b, **f: layer_norm.layer_norm(x, w, b, **f), layer_norm.layer_norm_reference,
                           (x[None], w, b)),
        "attention_2048": (lambda q, k, v, **f: attention.mha(q, k, v, None, block_sizes=sizes, **f),
                           lambda q, k, v: attention.mha_reference(q, k, v, None), (q, k, v)),
        "matmul_2048": (lambda y, z, **f: tpu_matmul_call(y, z, 256, 256, **f), jnp.matmul, (y, z)),
    }


def timed(function, args) -> float:
    start = time.perf_counter()
    jax.block_until_ready(function(*args))
    return time.perf_counter() - start


def alternate(contenders: dict, args, repeats: int) -> dict:
    """Median seconds per call of each jitted contender, calls interleaved."""
    for function in contenders.values():
        jax.block_until_ready(function(*args))  # compile and warm up
    samples = {name: [] for name in contenders}
    for _ in range(repeats):
        for name, function in contenders.items():
            samples[name].append(timed(function, args))
    return {name: statistics.median(times) for name, times in samples.items()}


def empty_kernel_overhead(repeats: int) -> dict:
    """The cost of one call through the FFI path: a kernel writing one
    float, against XLA's own one-element add in the same program shape."""

    def kernel(x_ref, o_ref):
        o_ref[...] = x_ref[...]

    small = jnp.ones((1,), jnp.float32)
    tessel_call = jax.jit(lambda x: pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct((1,), jnp.float32))(x))
    xla_call = jax.jit(lambda x: x + 1)
    # Many calls per sample: single calls are too short to time alone.
    calls = 2000

    def many(function):
        def run(x):
            for _ in range(calls):
                x = function(x)
            return x
        return run

    medians = alternate({"tessel": many(tessel_call), "xla": many(xla_call)}, (small,), repeats)
    return {name: seconds / calls for name, seconds in medians.items()}


def row_softmax(x, num_threads):
    """A row softmax over 8-row blocks, with Tessel's thread count set (or
    left to the default when `num_threads` is None)."""

    def kernel(x_ref, o_ref):
        v = x_ref[...]
        e = jnp.exp(v - jnp.max(v, axis=1, keepdims=True))
        o_ref[...] = e / jnp.sum(e, axis=1, keepdims=True)

    spec = pl.BlockSpec((8, x.shape[1]), lambda i: (i, 0))
    params = tessel.jax.CompilerParams(num_threads=num_threads) if num_threads else None
    return pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype), grid=(x.shape[0] // 8,),
                          in_specs=[spec], out_specs=spec, compiler_params=params)(x)


def threads_under_xla(repeats: int) -> dict:
    """Whether the default thread count (all cores) oversubscribes when XLA
    has several independent kernel calls to run: one jitted program with
    four independent softmaxes, Tessel's default against one thread per
    call (what a per-call share of the cores would give if XLA ran the
    four at once), and XLA's own."""
    xs = [jax.random.normal(jax.random.key(i), (4096, 4096), jnp.float32) for i in range(4)]
    w = xs[1][:, :1024]
    contenders = {
        "one call, default threads": lambda a, b, c, d: row_softmax(a, None),
        "one call, 1 thread": lambda a, b, c, d: row_softmax(a, 1),
        "four calls, default threads": lambda a, b, c, d: [row_softmax(v, None) for v in (a, b, c, d)],
        "four calls, 1 thread each": lambda a, b, c, d: [row_softmax(v, 1) for v in (a, b, c, d)],
        "four calls, XLA (jnp)": lambda a, b, c, d: [jax.nn.softmax(v, axis=1) for v in (a, b, c, d)],
        # XLA's threads run the matmul as soon as the kernel returns: the
        # kernel's OpenMP workers must not keep spinning on their cores, so
        # the program should take the one call's time plus the matmul's.
        "one call, then jnp tanh(p @ w)": lambda a, b, c, d: jnp.tanh(row_softmax(a, None) @ w),
        "jnp tanh(p @ w) alone": lambda a, b, c, d: jnp.tanh(b @ w),
    }
    return alternate({name: jax.jit(function) for name, function in contenders.items()}, xs, repeats)


def cpu_name() -> str:
    try:
        for line in subprocess.run(["lscpu"], capture_output=True, text=True).stdout.splitlines():
            if line.startswith("Model name:"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def vector_width() -> str:
    try:
        flags = open("/proc/cpuinfo").read()
    except OSError:
        return "unknown"
    return "AVX-512" if " avx512f" in flags else "AVX2" if " avx2" in flags else "SSE"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--interpret-repeats", type=int, default=1, help="interpret=True is slow: few runs")
    parser.add_argument("--render", action="store_true",
                        help="rewrite benchmarks/jax_pallas.md from benchmarks/jax_pallas.json (after editing notes)")
    parser.add_argument("workloads", nargs="*")
    options = parser.parse_args()
    if options.render:
        with open(os.path.join(ROOT, "benchmarks", "jax_pallas.json")) as f:
            saved = json.load(f)
        write(saved["seconds"], saved["overhead_s"], saved.get("threads_s", {}))
        return 0
    tessel.jax.install()
    chosen = options.workloads or list(TARGETS)
    results = {}
    for name, (pallas, reference, args) in workloads().items():
        if name not in chosen:
            continue
        contenders = {"tessel": jax.jit(pallas), "xla": jax.jit(reference)}
        medians = alternate(contenders, args, options.repeats)
        interpreted = jax.jit(lambda *a, pallas=pallas: pallas(*a, interpret=True))
        medians["interpret"] = alternate({"interpret": interpreted}, args, options.interpret_repeats)["interpret"]
        results[name] = medians
        print(f"{name}: " + ", ".join(f"{k} {v * 1e3:.2f} ms" for k, v in medians.items()), flush=True)
    overhead = empty_kernel_overhead(max(5, options.repeats // 3))
    print(f"overhead: tessel {overhead['tessel'] * 1e6:.1f} us, xla {overhead['xla'] * 1e6:.1f} us per call")
    threads = threads_under_xla(max(5, options.repeats // 2))
    print("threads: " + ", ".join(f"{k} {v * 1e3:.2f} ms" for k, v in threads.items()), flush=True)
    write(results, overhead, threads)
    return 0


def write(results: dict, overhead: dict, threads: dict) -> None:
    lines = [
        "## Pallas under jax.jit (tessel.jax)",
        "",
        f"`benchmarks/jax_pallas.py`, one session on {cpu_name()} ({vector_width()}, {os.cpu_count()} cores), "
        f"jax {jax.__version__}: JAX's own Pallas kernels (`jax.experimental.pallas.ops`) under `jax.jit`,",
        "compiled by Tessel, against the same computation in jnp compiled by XLA and against",
        "`interpret=True`; medians, the contenders alternating.",
        "",
        "| workload | Tessel | XLA (jnp) | interpret=True | Tessel vs XLA | target | met | vs interpret |",
        "| --- | ---: | ---: | ---: | ---: | ---: | --- | ---: |",
    ]
    for name, medians in results.items():
        speedup = medians["xla"] / medians["tessel"]
        target = TARGETS.get(name)
        met = "yes" if target is not None and speedup >= target else "no"
        lines.append(
            f"| {name} | {medians['tessel'] * 1e3:.2f} ms | {medians['xla'] * 1e3:.2f} ms | "
            f"{medians['interpret'] * 1e3:.0f} ms | {speedup:.2f}x | {target:.1f}x | {met} | "
            f"{medians['interpret'] / medians['tessel']:.0f}x |")
    per_call = overhead["tessel"] * 1e6
    lines += [
        "",
        f"Per-call overhead of a one-element kernel through the FFI path: {per_call:.1f} us "
        f"(XLA's own one-element add: {overhead['xla'] * 1e6:.1f} us; target <= {OVERHEAD_TARGET_US:.0f} us: "
        f"{'met' if per_call <= OVERHEAD_TARGET_US else 'missed'}).",
    ]
    lines += [
        "",
        "Threads under XLA: one jitted program making four independent 4096x4096 softmax calls (8-row blocks),",
        "Tessel's default thread count (all cores per call) against one thread per call; and a program",
        "whose call is followed by XLA's own work (a 4096x4096x1024 matmul and tanh), against that work",
        "alone: with no interference it takes the sum of the two; medians.",
        "",
        "| program | time |",
        "| --- | ---: |",
    ]
    lines += [f"| {name} | {seconds * 1e3:.2f} ms |" for name, seconds in threads.items()]
    write_section("jax_pallas", lines, {"cpu": cpu_name(), "jax": jax.__version__, "seconds": results,
                                        "overhead_s": overhead, "threads_s": threads})


def write_section(stem: str, lines: list[str], measured: dict) -> None:
    """benchmarks/<stem>.md: `lines` then the hand-written notes on the
    targets missed (benchmarks/<stem>_notes.md); benchmarks/<stem>.json:
    `measured`."""
    notes = os.path.join(ROOT, "benchmarks", f"{stem}_notes.md")
    if os.path.exists(notes):
        with open(notes) as f:
            lines = [*lines, "", f.read().rstrip()]
    with open(os.path.join(ROOT, "benchmarks", f"{stem}.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    with open(os.path.join(ROOT, "benchmarks", f"{stem}.json"), "w") as f:
        json.dump(measured, f, indent=1)


if __name__ == "__main__":
    raise SystemExit(main())
