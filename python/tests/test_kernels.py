"""Pallas kernels written here, through Tessel, against numpy: grids,
windows, control flow, reductions, masks, aliasing, knobs."""

from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jax.experimental.pallas import triton as plgpu

import tessel.jax


def test_k_accumulating_sum():
    # The Pallas docs' reduction over an arbitrary grid axis: the output
    # block is revisited along k, zeroed at k == 0.
    def sum_kernel(x_ref, o_ref):
        @pl.when(pl.program_id(1) == 0)
        def _():
            o_ref[...] = jnp.zeros_like(o_ref)

        o_ref[...] += x_ref[...].sum(axis=1, keepdims=True)

    x = np.arange(8 * 64, dtype=np.float32).reshape(8, 64)
    result = pl.pallas_call(
        sum_kernel,
        out_shape=jax.ShapeDtypeStruct((8, 1), jnp.float32),
        grid=(2, 4),
        in_specs=[pl.BlockSpec((4, 16), lambda i, k: (i, k))],
        out_specs=pl.BlockSpec((4, 1), lambda i, k: (i, 0)),
    )(x)
    np.testing.assert_array_equal(result, x.sum(axis=1, keepdims=True))


def test_design_note_fused_matmul_with_k_loop():
    def matmul_kernel(x_ref, y_ref, o_ref, *, activation, block_k):
        acc = jnp.zeros((x_ref.shape[0], y_ref.shape[1]), jnp.float32)
        for k in range(x_ref.shape[1] // block_k):
            x = x_ref[:, k * block_k:(k + 1) * block_k]
            y = y_ref[k * block_k:(k + 1) * block_k, :]
            acc += x @ y
        o_ref[:, :] = activation(acc).astype(o_ref.dtype)

    @partial(jax.jit, static_argnames=["block_shape", "activation"])
    def matmul(x, y, *, block_shape, activation):
        block_m, block_n, block_k = block_shape
        return pl.pallas_call(
            partial(matmul_kernel, block_k=block_k, activation=activation),
            out_shape=jax.ShapeDtypeStruct((x.shape[0], y.shape[1]), jnp.float32),
            in_specs=[pl.BlockSpec((block_m, x.shape[1]), lambda i, j: (i, 0)),
                      pl.BlockSpec((y.shape[0], block_n), lambda i, j: (0, j))],
            out_specs=pl.BlockSpec((block_m, block_n), lambda i, j: (i, j)),
            grid=(4, 4),
        )(x, y)

    k1, k2 = jax.random.split(jax.random.key(1))
    x = jax.random.normal(k1, (512, 256))
    y = jax.random.normal(k2, (256, 1024))
    z = matmul(x, y, block_shape=(128, 256, 128), activation=jax.nn.gelu)
    reference = jax.nn.gelu(np.asarray(x, np.float64) @ np.asarray(y, np.float64))
    np.testing.assert_allclose(z, reference, rtol=1e-4, atol=1e-4)


def test_exp_of_each_programs_element():
    def f(x_ref, o_ref):
        i = pl.program_id(axis=0)
        o_ref[i] = jnp.exp(x_ref[i])

    x = np.linspace(-2, 2, 8, dtype=np.float32)
    result = pl.pallas_call(f, out_shape=jax.ShapeDtypeStruct((8,), jnp.float32), grid=(8,))(x)
    np.testing.assert_allclose(result, np.exp(x), rtol=1e-6)


def test_fori_loop_cond_and_windows():
    def kernel(x_ref, o_ref):
        i = pl.program_id(0)

        def body(k, acc):
            window = x_ref[pl.ds(k * 4, 4), :]
            return acc + jnp.where(window > 0, window, -window)

        acc = jax.lax.fori_loop(0, 4, body, jnp.zeros((4, 8), jnp.float32))
        o_ref[...] = jax.lax.cond(i % 2 == 0, lambda a: a * 2.0, lambda a: a - 1.0, acc)

    x = np.random.default_rng(0).standard_normal((16, 8)).astype(np.float32)
    result = pl.pallas_call(
        kernel,
        out_shape=jax.ShapeDtypeStruct((4, 16), jnp.float32),
        grid=(2,),
        in_specs=[pl.BlockSpec((16, 8), lambda i: (0, 0))],
        out_specs=pl.BlockSpec((4, 8), lambda i: (0, i)),
    )(x)
    acc = np.abs(x).reshape(4, 4, 8).sum(axis=0)
    np.testing.assert_allclose(result, np.concatenate([acc * 2, acc - 1], axis=1), rtol=1e-6)


def test_masked_windows_wider_than_the_ref():
    def kernel(x_ref, o_ref):
        idx = jnp.arange(16)
        mask = idx < x_ref.shape[0]
        row = plgpu.load(x_ref.at[pl.ds(0, 16)], mask=mask, other=-jnp.inf)
        plgpu.store(o_ref.at[pl.ds(0, 16)], jnp.exp(row - row.max()), mask=mask)

    x = np.linspace(-1, 1, 10, dtype=np.float32)
    result = pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct((10,), jnp.float32))(x)
    np.testing.assert_allclose(result, np.exp(x - x.max()), rtol=1e-6)


def test_transposed_dot_and_integer_conversion():
    def kernel(a_ref, b_ref, o_ref, i_ref):
        product = jax.lax.dot_general(a_ref[...], b_ref[...], (((1,), (1,)), ((), ())))
        o_ref[...] = product
        i_ref[...] = (product * 1e9).astype(jnp.int32)  # saturates as XLA does

    a = np.random.default_rng(1).standard_normal((8, 16)).astype(np.float32)
    b = np.random.default_rng(2).standard_normal((4, 16)).astype(np.float32)
    out, ints = pl.pallas_call(
        kernel,
        out_shape=(jax.ShapeDtypeStruct((8, 4), jnp.float32), jax.ShapeDtypeStruct((8, 4), jnp.int32)),
    )(a, b)
    np.testing.assert_allclose(out, a @ b.T, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(ints, (jnp.asarray(a @ b.T) * 1e9).astype(jnp.int32))


def test_input_output_aliases_update_in_place():
    def kernel(x_ref, o_ref):
        o_ref[...] = x_ref[...] + 1

    @partial(jax.jit, donate_argnums=0)
    def increment(x):
        return pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype), grid=(2,),
                              in_specs=[pl.BlockSpec((4,), lambda i: (i,))],
                              out_specs=pl.BlockSpec((4,), lambda i: (i,)),
                              input_output_aliases={0: 0})(x)

    assert "output_operand_alias" in increment.lower(jnp.zeros(8)).as_text()
    np.testing.assert_array_equal(increment(jnp.arange(8.0)), np.arange(8.0) + 1)


def test_compiler_params_carry_schedule_knobs():
    def kernel(x_ref, y_ref, o_ref):
        o_ref[...] = x_ref[...] @ y_ref[...]

    x = np.random.default_rng(3).standard_normal((64, 32)).astype(np.float32)
    y = np.random.default_rng(4).standard_normal((32, 48)).astype(np.float32)
    call = pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct((64, 48), jnp.float32),
                          compiler_params=tessel.jax.CompilerParams(num_threads=1, register_tile=(2, 16)))
    text = jax.jit(call).lower(x, y).as_text()
    assert "tessel.num_threads = 1" in text and "tessel.register_tile = array<i64: 2, 16>" in text
    np.testing.assert_allclose(jax.jit(call)(x, y), x @ y, rtol=1e-5, atol=1e-5)


def test_interpret_mode_stays_with_jax():
    def kernel(x_ref, o_ref):
        o_ref[...] = x_ref[...] * 2

    call = pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct((4,), jnp.float32), interpret=True)
    assert "tessel_pallas_call" not in jax.jit(call).lower(jnp.ones(4)).as_text()
    np.testing.assert_array_equal(call(jnp.ones(4)), 2 * np.ones(4))


def test_include_interpret_sends_interpret_calls_to_tessel():
    def kernel(x_ref, o_ref):
        o_ref[...] = x_ref[...] * 3

    call = pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct((4,), jnp.float32), interpret=True)
    tessel.jax.install(include_interpret=True)
    try:
        assert "tessel_pallas_call" in jax.jit(call).lower(jnp.ones(4)).as_text()
        np.testing.assert_array_equal(jax.jit(call)(jnp.arange(4.0)), 3 * np.arange(4.0))
    finally:
        tessel.jax.install()
    assert "tessel_pallas_call" not in jax.jit(call).lower(jnp.ones(4)).as_text()


def test_include_interpret_keeps_the_interpreters_padding():
    """Reads past an array's end see NaN / the integer minimum in JAX's
    interpreter; an interpret=True call Tessel takes keeps that."""

    def copy(x_ref, o_ref):
        o_ref[...] = x_ref[...]

    tessel.jax.install(include_interpret=True)
    try:
        for dtype, fill in ((np.float32, np.nan), (np.int32, np.iinfo(np.int32).min)):
            call = pl.pallas_call(copy, jax.ShapeDtypeStruct((6,), dtype), grid=(1,),
                                  in_specs=[pl.BlockSpec((6,), lambda i: 0)], interpret=True)
            np.testing.assert_array_equal(call(np.full((3,), 42, dtype)), np.array([42] * 3 + [fill] * 3, dtype))
    finally:
        tessel.jax.install()


def test_bool_blocks_and_no_outputs():
    def logical(x_ref, o_ref):
        o_ref[...] = jnp.logical_or(x_ref[...], True) & jnp.logical_not(x_ref[...] & False)

    x = np.arange(16).reshape(2, 8) % 3 == 0
    out = jax.jit(pl.pallas_call(logical, out_shape=jax.ShapeDtypeStruct(x.shape, jnp.bool_)))(x)
    np.testing.assert_array_equal(np.asarray(out), np.ones_like(x))
    nothing = pl.pallas_call(lambda x_ref: None, ())
    assert "tessel_pallas_call" in jax.jit(nothing).lower(jnp.ones(4)).as_text()
    assert jax.jit(nothing)(jnp.ones(4)) == ()


def test_uninstall_restores_jax():
    def kernel(x_ref, o_ref):
        o_ref[...] = x_ref[...]

    call = pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct((4,), jnp.float32))
    tessel.jax.uninstall()
    try:
        with pytest.raises(Exception, match="interpret"):
            jax.jit(call).lower(jnp.ones(4))
    finally:
        tessel.jax.install()
    assert "tessel_pallas_call" in jax.jit(call).lower(jnp.ones(4)).as_text()


def test_dynamic_grid_sizes_are_read_at_run_time():
    # grid=(steps * 2, steps + 1, 3) with `steps` traced: one compiled
    # kernel, its grid read from the call's operands on every run.
    def kernel(x_ref, y_ref):
        @pl.when((pl.program_id(0) == 0) & (pl.program_id(1) == 0) & (pl.program_id(2) == 0))
        def _():
            y_ref[...] = x_ref[...]

        y_ref[...] += pl.num_programs(0).astype(jnp.float32)

    @jax.jit
    def run(steps, x):
        return pl.pallas_call(
            kernel, grid=(steps * 2, steps + 1, 3),
            in_specs=[pl.BlockSpec((8, 128), lambda *_: (0, 0))],
            out_specs=pl.BlockSpec((8, 128), lambda *_: (0, 0)),
            out_shape=jax.ShapeDtypeStruct((8, 128), jnp.float32))(x)

    x = jnp.arange(8 * 128, dtype=jnp.float32).reshape(8, 128)
    for steps in (1, 4, 2):
        programs = 2 * steps * (steps + 1) * 3
        np.testing.assert_array_equal(run(jnp.int32(steps), x), x + programs * 2 * steps)


def test_index_maps_read_dynamic_grid_sizes():
    # pl.num_programs of a traced grid axis in index maps (blocks visited
    # last to first on both axes), next to a scalar-prefetch operand: the
    # sizes reach the index functions as scalar arrays after the user's.
    def kernel(s_ref, x_ref, o_ref):
        o_ref[...] = x_ref[...] * 2.0 + s_ref[0].astype(jnp.float32)

    @jax.jit
    def run(steps, shift, x):
        spec = pltpu.PrefetchScalarGridSpec(
            num_scalar_prefetch=1, grid=(steps, 2),
            in_specs=[pl.BlockSpec((8, 64), lambda i, j, s: (pl.num_programs(0) - 1 - i + s[0],
                                                             pl.num_programs(1) - 1 - j))],
            out_specs=pl.BlockSpec((8, 64), lambda i, j, s: (i, j)))
        return pl.pallas_call(kernel, grid_spec=spec,
                              out_shape=jax.ShapeDtypeStruct((32, 128), jnp.float32))(shift, x)

    x = np.arange(32 * 128, dtype=np.float32).reshape(32, 128)
    blocks = x.reshape(4, 8, 2, 64)
    for steps in (4, 1, 3):
        shift = 4 - steps
        out = np.asarray(run(jnp.int32(steps), jnp.array([shift], jnp.int32), x))
        expected = blocks[::-1, :, ::-1, :][:steps].reshape(steps * 8, 128) * 2.0 + shift
        np.testing.assert_array_equal(out[:steps * 8], expected)


def test_aliases_count_inputs_after_dynamic_grid_sizes():
    # input_output_aliases index the call's inputs; the custom call's
    # operands start with the grid sizes. Counted from the operands, the
    # alias named the operand before: the rows no program writes came from
    # x, not from `old` (and megablox gmm's `existing_out` failed to
    # verify: shapes mismatch in output_operand_alias).
    def kernel(x_ref, old_ref, o_ref):
        o_ref[...] = old_ref[...] + x_ref[...]

    @jax.jit
    def run(steps, x, old):
        return pl.pallas_call(
            kernel, grid=(steps,),
            in_specs=[pl.BlockSpec((8, 128), lambda i: (i, 0)), pl.BlockSpec((8, 128), lambda i: (i, 0))],
            out_specs=pl.BlockSpec((8, 128), lambda i: (i, 0)),
            out_shape=jax.ShapeDtypeStruct((32, 128), jnp.float32), input_output_aliases={1: 0})(x, old)

    x = jnp.ones((32, 128), jnp.float32)
    old = jnp.arange(32 * 128, dtype=jnp.float32).reshape(32, 128)
    out = np.asarray(run(jnp.int32(2), x, old))
    np.testing.assert_array_equal(out[:16], np.asarray(old)[:16] + 1)
    np.testing.assert_array_equal(out[16:], np.asarray(old)[16:])


@pytest.mark.parametrize("seed", range(8))
def test_random_aliases_with_static_and_dynamic_grids(seed):
    # The generator that finds the bug above: inputs of one shape, some
    # aliased to outputs, a grid that covers some of the rows with 0-2 axes
    # sized by traced values; rows no program writes keep the aliased
    # input's contents.
    rng = np.random.default_rng(seed)
    n_in, n_out = int(rng.integers(2, 5)), int(rng.integers(1, 3))
    aliased = rng.permutation(n_in)[:n_out]
    aliases = {int(i): o for o, i in enumerate(aliased) if rng.random() < 0.8}
    dynamic = [bool(rng.random() < 0.5) for _ in range(2)]
    blocks, steps = 4, int(rng.integers(1, 5))
    inputs = [rng.standard_normal((blocks * 8, 128)).astype(np.float32) for _ in range(n_in)]

    def kernel(*refs):
        ins, outs = refs[:n_in], refs[n_in:]
        for o, out in enumerate(outs):
            out[...] = sum((k + o + 1) * r[...] for k, r in enumerate(ins))

    def call(rows, extra, *xs):
        grid = (rows if dynamic[0] else steps, extra if dynamic[1] else 1)
        return pl.pallas_call(
            kernel, grid=grid, in_specs=[pl.BlockSpec((8, 128), lambda i, j: (i, 0))] * n_in,
            out_specs=[pl.BlockSpec((8, 128), lambda i, j: (i, 0))] * n_out,
            out_shape=[jax.ShapeDtypeStruct((blocks * 8, 128), jnp.float32)] * n_out,
            input_output_aliases=aliases)(*xs)

    got = jax.jit(call)(jnp.int32(steps), jnp.int32(1), *inputs)
    for o in range(n_out):
        want = sum((k + o + 1) * x for k, x in enumerate(inputs))
        np.testing.assert_allclose(got[o][:steps * 8], want[:steps * 8], rtol=1e-6)
        source = [i for i, out in aliases.items() if out == o]
        if source:
            np.testing.assert_array_equal(got[o][steps * 8:], inputs[source[0]][steps * 8:])


def test_masked_swap_returns_the_stored_value_where_masked_off():
    # JAX's masked swap: the old value where the mask holds, the stored
    # value elsewhere (the ref keeps its old value there).
    from jax._src.pallas import primitives as pallas_primitives

    def kernel(x_ref, y_ref, m_ref, ox_ref, oy_ref):
        oy_ref[...] = y_ref[...]
        ox_ref[...] = pallas_primitives.swap(oy_ref, (slice(None),), x_ref[...], mask=m_ref[...])

    rng = np.random.default_rng(7)
    x, y = (jnp.asarray(rng.standard_normal((8, 16)), jnp.float32) for _ in range(2))
    m = jnp.asarray(rng.random((8, 16)) < 0.5)
    shape = jax.ShapeDtypeStruct(x.shape, x.dtype)
    ox, oy = pl.pallas_call(kernel, out_shape=(shape, shape))(x, y, m)
    np.testing.assert_array_equal(ox, jnp.where(m, y, x))
    np.testing.assert_array_equal(oy, jnp.where(m, x, y))


def test_run_scoped_buffers_and_scratch_shapes():
    # `pl.run_scoped` allocations (nested, in a loop, returning a value)
    # and the call's `scratch_shapes`, on a parallel grid: each program has
    # its own buffers. Once 'unsupported primitive run_scoped'.
    from jax.experimental.pallas import tpu as pltpu

    def kernel(x_ref, o_ref, carry_ref):
        carry_ref[...] = jnp.zeros_like(carry_ref)

        def scope(doubled_ref, count_ref):
            doubled_ref[...] = x_ref[...] * 2
            count_ref[0] = 0

            def step(i, _):
                def inner(row_ref):
                    row_ref[...] = doubled_ref[pl.ds(i, 1), :] + 1
                    return jnp.sum(row_ref[...])

                total = pl.run_scoped(inner, pltpu.VMEM((1, 128), jnp.float32))
                carry_ref[...] += total
                count_ref[0] += 1
                return 0

            jax.lax.fori_loop(0, 8, step, 0)
            o_ref[...] = doubled_ref[...] + carry_ref[...] * count_ref[0].astype(jnp.float32)

        pl.run_scoped(scope, pltpu.VMEM((8, 128), jnp.float32), pltpu.SMEM((1,), jnp.int32))

    x = np.random.default_rng(0).integers(-3, 4, (32, 128)).astype(np.float32)
    spec = pl.BlockSpec((8, 128), lambda i: (i, 0))
    call = partial(pl.pallas_call, kernel, out_shape=jax.ShapeDtypeStruct(x.shape, jnp.float32), grid=(4,),
                   in_specs=[spec], out_specs=spec, scratch_shapes=[pltpu.VMEM((1, 128), jnp.float32)],
                   compiler_params=tessel.jax.CompilerParams(num_threads=2))
    expected = np.empty_like(x)
    for block in range(4):
        rows, carry = x[8 * block:8 * block + 8] * 2, np.zeros((1, 128), np.float32)
        for i in range(8):
            carry = carry + np.sum(rows[i:i + 1] + 1)
        expected[8 * block:8 * block + 8] = rows + carry * 8
    np.testing.assert_array_equal(np.asarray(call()(x)), expected)
    np.testing.assert_array_equal(np.asarray(call(interpret=True)(x)), expected)


def test_platform_dependent_picks_the_cpu_branch():
    # `lax.platform_dependent` in a kernel: the "cpu" branch, else the
    # default, as JAX's interpreter picks on the CPU.
    def kernel(x_ref, o_ref, p_ref):
        x = x_ref[...]
        o_ref[...] = jax.lax.platform_dependent(x, cpu=lambda v: v + 1, cuda=lambda v: v * 2, default=lambda v: -v)
        p_ref[...] = jax.lax.platform_dependent(x, tpu=lambda v: v + 1, default=lambda v: v - 1)

    x = np.arange(8 * 128, dtype=np.float32).reshape(8, 128)
    shapes = (jax.ShapeDtypeStruct(x.shape, jnp.float32),) * 2
    cpu, default = pl.pallas_call(kernel, out_shape=shapes)(x)
    np.testing.assert_array_equal(cpu, x + 1)
    np.testing.assert_array_equal(default, x - 1)


@pytest.mark.parametrize("effects, kept", [(False, 1), (True, 2), ("DATAFLOW_SIDE_EFFECTING", 2),
                                           ("SIDE_EFFECTING", 2), ("PURE", 1)])
def test_side_effecting_calls_are_neither_merged_nor_dropped(effects, kept):
    # has_side_effects (or a SideEffectType other than PURE): XLA keeps
    # both of two identical calls, and a call whose result is unused.
    # (DATAFLOW_SIDE_EFFECTING may be dropped when unused on a TPU; XLA's
    # custom calls have no such middle ground, so Tessel keeps it.)
    if isinstance(effects, str):
        effects = getattr(pltpu.SideEffectType, effects)

    def kernel(x_ref, o_ref):
        o_ref[...] = x_ref[...] + 1

    call = pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct((8, 128), jnp.float32),
                          compiler_params=pltpu.CompilerParams(has_side_effects=effects))
    x = jnp.ones((8, 128), jnp.float32)
    twice = jax.jit(lambda x: call(x) + call(x))
    assert twice.lower(x).compile().as_text().count("custom-call(") == kept
    unused = jax.jit(lambda x: (call(x), x * 2)[1])
    assert unused.lower(x).compile().as_text().count("custom-call(") == kept - 1
    np.testing.assert_array_equal(twice(x), np.full((8, 128), 4.0, np.float32))
