"""Output blocks revisited by consecutive programs (an output index map
that ignores the trailing arbitrary axes) keep all of their contents from
one visit to the next, the part past the array's end included, as a TPU
keeps the block in VMEM and as JAX's interpreter does."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

import tessel.jax

tessel.jax.install()


def test_lanes_past_the_end_are_kept():
    # The bug this pins: a partial block was staged afresh at each visit
    # (zeros, then the in-bounds part), so the second visit summed one
    # real lane and 127 zeros. JAX's paged attention keeps its running
    # maximum and sum this way, in 128-lane blocks of one-column arrays.
    def kernel(o_ref):
        @pl.when(pl.program_id(0) == 0)
        def _():
            o_ref[...] = jax.lax.broadcasted_iota(jnp.float32, o_ref.shape, 1)

        @pl.when(pl.program_id(0) > 0)
        def _():
            o_ref[...] = jnp.broadcast_to(jnp.sum(o_ref[...], axis=1, keepdims=True), o_ref.shape) / 64

    call = pl.pallas_call(kernel, grid=(2,), out_specs=pl.BlockSpec((8, 128), lambda k: (0, 0)),
                          out_shape=jax.ShapeDtypeStruct((8, 1), jnp.float32))
    np.testing.assert_array_equal(np.asarray(jax.jit(call)()), np.full((8, 1), 127.0, np.float32))


def revisited_call(shape, block, revisits, semantics, interpret):
    """Every block of `shape` visited `revisits` times in a row: the first
    visit writes a pattern over the whole block, each later one mixes the
    block's row and column means (past the array's end included) into it."""
    grid = (pl.cdiv(shape[0], block[0]), pl.cdiv(shape[1], block[1]), revisits)

    def kernel(o_ref):
        # (Program ids outside the branches: JAX's interpreter cannot
        # lower them inside.)
        i, j, k = pl.program_id(0), pl.program_id(1), pl.program_id(2)

        @pl.when(k == 0)
        def _():
            rows = jax.lax.broadcasted_iota(jnp.float32, o_ref.shape, 0)
            lanes = jax.lax.broadcasted_iota(jnp.float32, o_ref.shape, 1)
            o_ref[...] = rows * 0.25 - lanes * 0.125 + (i + 2 * j).astype(jnp.float32)

        @pl.when(k > 0)
        def _():
            v = o_ref[...]
            o_ref[...] = v * 0.5 + jnp.mean(v, axis=1, keepdims=True) * 0.25 + jnp.mean(v, axis=0, keepdims=True) * 0.25

    params = {} if semantics is None else {"compiler_params": pltpu.CompilerParams(dimension_semantics=semantics)}
    return pl.pallas_call(kernel, grid=grid, out_specs=pl.BlockSpec(block, lambda i, j, k: (i, j)),
                          out_shape=jax.ShapeDtypeStruct(shape, jnp.float32), interpret=interpret, **params)


@pytest.mark.parametrize("seed", range(16))
def test_random_revisited_blocks_follow_the_interpreter(seed):
    rng = np.random.default_rng(seed)
    block = (int(rng.choice([8, 16])), int(rng.choice([128, 256])))
    # Arrays of whole blocks, partial edge blocks, or only a partial block.
    shape = tuple(int(rng.integers(1, 3 * b)) for b in block)
    revisits = int(rng.integers(2, 5))
    semantics = [None, ("parallel", "parallel", "arbitrary"), ("arbitrary",) * 3][seed % 3]
    got = jax.jit(revisited_call(shape, block, revisits, semantics, interpret=False))()
    expected = revisited_call(shape, block, revisits, semantics, interpret=True)()
    np.testing.assert_allclose(np.asarray(got), np.asarray(expected), rtol=1e-6, atol=1e-6)


def aliased_call(shape, block, revisits, interpret):
    """An input aliased to the output, its block the same for `revisits`
    programs in a row: each reads the input as it was before the first of
    them (a TPU fetches a block when its index changes only), whatever the
    earlier ones wrote to the output it aliases."""
    grid = (pl.cdiv(shape[0], block[0]), pl.cdiv(shape[1], block[1]), revisits)

    def kernel(x_ref, o_ref):
        k = pl.program_id(2)
        o_ref[...] = x_ref[...] * 2.0 + k.astype(jnp.float32)

    spec = pl.BlockSpec(block, lambda i, j, k: (i, j))
    return pl.pallas_call(kernel, grid=grid, in_specs=[spec], out_specs=spec,
                          out_shape=jax.ShapeDtypeStruct(shape, jnp.float32), input_output_aliases={0: 0},
                          compiler_params=pltpu.CompilerParams(
                              dimension_semantics=("parallel", "parallel", "arbitrary")),
                          interpret=interpret)


@pytest.mark.parametrize("seed", range(6))
def test_random_revisited_aliased_inputs_follow_the_tpu_interpreter(seed):
    # The bug this pins: each program snapshotted the aliased input afresh,
    # so the k-th revisit read what the (k-1)-th wrote (JAX's
    # test_dynamic_grid_and_aliasing got x + iters instead of x + 1).
    rng = np.random.default_rng(100 + seed)
    block = (8, int(rng.choice([128, 256])))
    shape = tuple(int(rng.integers(1, 3) * b) for b in block)
    revisits = int(rng.integers(2, 5))
    x = jnp.asarray(rng.standard_normal(shape, dtype=np.float32))
    got = jax.jit(aliased_call(shape, block, revisits, interpret=False))(x)
    expected = aliased_call(shape, block, revisits, interpret=pltpu.InterpretParams())(x)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(expected))
    np.testing.assert_array_equal(np.asarray(got), np.asarray(x) * 2 + (revisits - 1))
