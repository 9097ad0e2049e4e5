"""Grid order: programs that carry state in scratch from one to the next
(TPU's persistent VMEM scratch) run in order unless the call's
`dimension_semantics` make axes parallel, against JAX's interpreter."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

import tessel.jax

tessel.jax.install()


def carried_sum_call(grid, semantics, interpret):
    """Each program adds its block's column sums to a scratch carry and
    writes the running total: a prefix sum over the grid in row-major
    order."""
    rank = len(grid)

    def kernel(x_ref, o_ref, carry):
        # The carry starts over where every arbitrary axis is at 0 (every
        # axis, without semantics): at each point of the parallel ones.
        first = True
        for axis in range(rank):
            if semantics is None or semantics[axis] == "arbitrary":
                first = jnp.logical_and(first, pl.program_id(axis) == 0)

        @pl.when(first)
        def _():
            carry[...] = jnp.zeros_like(carry)

        carry[...] += x_ref[...].sum(axis=0, keepdims=True)
        o_ref[...] = jnp.broadcast_to(carry[...], o_ref.shape)

    def index(*ids):
        flat = 0
        for i, size in zip(ids, grid):
            flat = flat * size + i
        return (flat, 0)

    params = {} if semantics is None else {"compiler_params": pltpu.CompilerParams(dimension_semantics=semantics)}
    blocks = int(np.prod(grid))
    return pl.pallas_call(
        kernel, grid=grid,
        in_specs=[pl.BlockSpec((8, 128), index)],
        out_specs=pl.BlockSpec((8, 128), index),
        out_shape=jax.ShapeDtypeStruct((blocks * 8, 128), jnp.float32),
        scratch_shapes=[pltpu.VMEM((1, 128), jnp.float32)],
        interpret=interpret, **params)


@pytest.mark.parametrize("seed", range(24))
def test_random_scratch_carries_follow_the_interpreter(seed):
    # The bugs this pins: Tessel inferred every axis whose output blocks
    # differ as parallel, so a scratch carried along such an axis was read
    # uninitialized (NaN) or split across threads; and a single-program
    # axis after an ordered one (run as parallel) got the scratch
    # allocated inside the ordered loop, fresh at every step.
    rng = np.random.default_rng(seed)
    rank = int(rng.integers(1, 4))
    # Single-program axes often: Tessel runs them as parallel ones.
    grid = tuple(int(g) for g in rng.choice([1, 1, 2, 3, 5], size=rank))
    semantics = [None, "arbitrary", "mixed"][seed % 3]
    if semantics == "arbitrary":
        semantics = ("arbitrary",) * rank
    elif semantics == "mixed":
        # Leading parallel axes, as Pallas kernels order them (a carry
        # along later arbitrary axes only: each parallel point resets).
        parallel = int(rng.integers(0, rank))
        semantics = ("parallel",) * parallel + ("arbitrary",) * (rank - parallel)
    x = rng.standard_normal((int(np.prod(grid)) * 8, 128)).astype(np.float32)
    got = carried_sum_call(grid, semantics, interpret=False)(x)
    expected = carried_sum_call(grid, semantics, interpret=True)(x)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)
