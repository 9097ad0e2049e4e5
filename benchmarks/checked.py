"""Checked execution: kernels run with JAX's TPU interpreter's checks
(`interpret=pltpu.InterpretParams(detect_races=True,
out_of_bounds_reads="raise", uninitialized_memory="nan")`) compiled by
Tessel (`install(include_interpret=True)`), against the same kernels
compiled by Tessel without checks (the cost of the checks) and against
JAX's TPU interpreter with the same checks (what a kernel author's CI runs
today), in one session, alternating the contenders:

- page_stream: a double-buffered DMA pipeline streaming 64 pages of
  64x128 f32 from HBM (2 copies ahead, 3 slots, waits on copy);
- gmm: JAX's megablox `gmm`, unmodified, 4 groups over 1024x256 @ 256x256
  in 128-wide tiles.

    .venv/bin/python benchmarks/checked.py [--repeats N] [--interpret-repeats N]

Writes benchmarks/checked.md and benchmarks/checked.json. Times are
medians."""

from __future__ import annotations

import argparse
import importlib
import os
import sys

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jax_pallas import alternate, cpu_name, vector_width, write_section

import tessel.jax

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python", "tests"))
from kernel_calls import pipeline_kernel  # noqa: E402

megablox = importlib.import_module("jax.experimental.pallas.ops.tpu.megablox.gmm")

# The target: checked Tessel against the interpreter, same checks.
TARGET = 20.0
CHECKS = pltpu.InterpretParams(detect_races=True, out_of_bounds_reads="raise", uninitialized_memory="nan",
                               dma_execution_mode="on_wait")


def page_stream(interpret):
    pages, slots, ahead, rows = 64, 3, 2, 64
    call = pl.pallas_call(
        pipeline_kernel(pages, slots, ahead), grid=(pages,),
        out_shape=jax.ShapeDtypeStruct((pages, rows, 128), jnp.float32),
        in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
        out_specs=pl.BlockSpec((None, rows, 128), lambda i: (i, 0, 0)),
        scratch_shapes=[pltpu.VMEM((slots, rows, 128), jnp.float32), pltpu.SemaphoreType.DMA((slots,))],
        compiler_params=pltpu.CompilerParams(dimension_semantics=("arbitrary",)),
        interpret=interpret)
    x = jax.random.normal(jax.random.key(0), (pages, rows, 128), jnp.float32)
    return call, (x,)


def gmm(interpret):
    m, k, n, groups = 1024, 256, 256, 4
    keys = jax.random.split(jax.random.key(1), 2)
    lhs = jax.random.normal(keys[0], (m, k), jnp.float32)
    rhs = jax.random.normal(keys[1], (groups, k, n), jnp.float32)
    sizes = jnp.asarray([256, 384, 128, 256], jnp.int32)

    def call(lhs, rhs, sizes):
        return megablox.gmm(lhs, rhs, sizes, tiling=(128, 128, 128), interpret=interpret)

    return call, (lhs, rhs, sizes)


WORKLOADS = {"page_stream": page_stream, "gmm": gmm}


def measure(make, repeats: int, interpret_repeats: int) -> dict:
    plain, args = make(False)
    checked, _ = make(CHECKS)
    contenders = {"tessel": jax.jit(plain), "tessel_checked": jax.jit(checked)}
    # The same checks, left to JAX's interpreter for this call only.
    interpreted, _ = make(tessel.jax.jax_interpreted(CHECKS))
    interpreter = jax.jit(interpreted)
    expected = np.asarray(contenders["tessel"](*args))
    np.testing.assert_allclose(np.asarray(interpreter(*args)), expected, rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(np.asarray(contenders["tessel_checked"](*args)), expected, rtol=1e-5)
    medians = alternate(contenders, args, repeats)
    medians["interpreter_checked"] = alternate({"interpreter": interpreter}, args, interpret_repeats)["interpreter"]
    return medians


def write(results: dict) -> None:
    lines = [
        "## Checked execution (InterpretParams through Tessel)",
        "",
        f"`benchmarks/checked.py`, one session on {cpu_name()} ({vector_width()}, {os.cpu_count()} cores), "
        f"jax {jax.__version__}: the same kernels compiled by Tessel without checks, compiled by Tessel with "
        "JAX's TPU interpreter's checks (`detect_races=True, out_of_bounds_reads=\"raise\", "
        "uninitialized_memory=\"nan\", dma_execution_mode=\"on_wait\"`), and run by JAX's TPU interpreter with "
        "the same checks; medians, the contenders alternating.",
        "",
        "| workload | Tessel | Tessel checked | checks cost | interpreter checked "
        f"| checked Tessel vs interpreter | met (>= {TARGET:.0f}x) |",
        "| --- | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    for name, m in results.items():
        ratio = m["interpreter_checked"] / m["tessel_checked"]
        lines.append(
            f"| {name} | {m['tessel'] * 1e3:.2f} ms | {m['tessel_checked'] * 1e3:.2f} ms "
            f"| {m['tessel_checked'] / m['tessel']:.1f}x | {m['interpreter_checked'] * 1e3:.0f} ms "
            f"| {ratio:.0f}x | {'yes' if ratio >= TARGET else 'no'} |")
    write_section("checked", lines, results)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--interpret-repeats", type=int, default=3)
    parser.add_argument("workloads", nargs="*")
    options = parser.parse_args()
    tessel.jax.install(include_interpret=True)
    results = {}
    for name, make in WORKLOADS.items():
        if options.workloads and name not in options.workloads:
            continue
        results[name] = measure(make, options.repeats, options.interpret_repeats)
        print(name, {k: f"{v * 1e3:.2f} ms" for k, v in results[name].items()}, flush=True)
    write(results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
