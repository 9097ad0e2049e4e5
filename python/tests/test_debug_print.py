"""`pl.debug_print` in kernels: printed by the compiled kernel's run, in
program order, formatted as JAX formats it. The reference is JAX's own
interpret mode printing the same kernel (its debug callbacks, which XLA
may reorder)."""

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

import tessel.jax


def printing_kernel(x_ref, o_ref):
    i, j = pl.program_id(0), pl.program_id(1)
    pl.debug_print("program ({}, {}): x[0, 0] = {}", i, j, x_ref[0, 0])
    pl.debug_print("as int {} and unsigned {} and bool {}", x_ref[0, 1].astype(jnp.int32),
                   x_ref[0, 2].astype(jnp.uint32), x_ref[0, 3] > 0)
    pl.debug_print("no placeholders", i + j)

    @pl.when(i == 1)
    def _():
        pl.debug_print("It works!")

    o_ref[...] = x_ref[...] * 2


def call(interpret: bool):
    return pl.pallas_call(
        printing_kernel, grid=(2, 3), in_specs=[pl.BlockSpec((8, 128), lambda i, j: (i, j))],
        out_specs=pl.BlockSpec((8, 128), lambda i, j: (i, j)),
        out_shape=jax.ShapeDtypeStruct((16, 384), jnp.float32), interpret=interpret,
        compiler_params=pltpu.CompilerParams(dimension_semantics=("parallel", "parallel")))


def printed(capsys, function, *args):
    out = jax.block_until_ready(function(*args))
    jax.effects_barrier()
    return out, capsys.readouterr().out


def test_lines_match_jax_interpret_mode(capsys):
    x = jax.random.normal(jax.random.key(0), (16, 384), jnp.float32) * 100
    tessel.jax.uninstall()
    try:
        want_out, want = printed(capsys, jax.jit(call(True)), x)
    finally:
        tessel.jax.install()
    got_out, got = printed(capsys, jax.jit(call(False)), x)
    assert "tessel_pallas_call" in jax.jit(call(False)).lower(x).as_text()
    np.testing.assert_array_equal(got_out, want_out)
    # The same lines; interpret mode's unordered debug callbacks come out
    # in XLA's order, Tessel's in the kernel's: program by program, each
    # program's in source order (as a TPU prints them).
    assert sorted(got.splitlines()) == sorted(want.splitlines())
    lines = iter(got.splitlines())
    for i in range(2):
        for j in range(3):
            assert next(lines).startswith(f"program ({i}, {j}): x[0, 0] = ")
            assert next(lines).startswith("as int ")
            assert next(lines) == f"no placeholders {i + j}"
            if i == 1:
                assert next(lines) == "It works!"
    assert next(lines, None) is None


def test_prints_come_out_at_each_call(capsys):
    def kernel(o_ref):
        pl.debug_print("value {}", o_ref.shape[0])
        o_ref[...] = jnp.zeros_like(o_ref)

    run = jax.jit(pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct((8, 128), jnp.float32)))
    for _ in range(3):
        printed(capsys, run)
    jax.block_until_ready(run())
    jax.block_until_ready(run())
    assert capsys.readouterr().out.splitlines() == ["value 8"] * 2


def test_trace_value_changes_no_result():
    # pltpu.trace_value feeds xprof trace regions of TPU kernels; the CPU
    # has none, so the kernel runs as without it (JAX's interpreter has no
    # rule for it at all; JAX checks the value's type when tracing).
    def kernel(x_ref, o_ref):
        positives = jnp.sum((x_ref[...] > 0).astype(jnp.int32))
        pltpu.trace_value("positives", positives)
        pltpu.trace_value("first", x_ref[0, 0])
        o_ref[...] = x_ref[...] * 2

    x = jnp.asarray(np.random.default_rng(0).standard_normal((8, 128)), jnp.float32)
    run = jax.jit(pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct((8, 128), jnp.float32)))
    assert "tessel_pallas_call" in run.lower(x).as_text()
    np.testing.assert_array_equal(np.asarray(run(x)), np.asarray(x) * 2)



def test_arrays_print_as_jax_interpret_mode_prints_them(capsys):
    # Arrays (ints, floats, bools, bf16) print as numpy prints them, with
    # JAX's own formatting: the same lines as JAX's interpret mode.
    def kernel(x_ref, o_ref):
        i = pl.program_id(0)
        pl.debug_print("program {}: rows {}", i, x_ref[0:2, 0:3])
        pl.debug_print("ints", x_ref[0, 0:4].astype(jnp.int32), "bools", x_ref[1, 0:3] > 0)
        pl.debug_print("bf16 {}", x_ref[2, 0:2].astype(jnp.bfloat16))
        o_ref[...] = x_ref[...]

    def run(interpret: bool):
        return jax.jit(pl.pallas_call(
            kernel, grid=(2,), in_specs=[pl.BlockSpec((8, 128), lambda i: (i, 0))],
            out_specs=pl.BlockSpec((8, 128), lambda i: (i, 0)),
            out_shape=jax.ShapeDtypeStruct((16, 128), jnp.float32), interpret=interpret,
            compiler_params=pltpu.CompilerParams(dimension_semantics=("arbitrary",))))

    x = jnp.round(jax.random.normal(jax.random.key(1), (16, 128), jnp.float32) * 400) / 8
    tessel.jax.uninstall()
    try:
        _, want = printed(capsys, run(True), x)
    finally:
        tessel.jax.install()
    assert "tessel_pallas_call" in run(False).lower(x).as_text()
    _, got = printed(capsys, run(False), x)
    # The same printed values; interpret mode's callbacks may come out in
    # another order (see above): compare the lines, an array's continuation
    # lines with the line they continue.
    assert sorted(_records(got)) == sorted(_records(want)) and "program 1: rows [[" in got


def _records(text: str) -> list[str]:
    records = []
    for line in text.splitlines():
        if line.startswith(" ") and records:
            records[-1] += "\n" + line
        else:
            records.append(line)
    return records
