"""Kernels that write their scalar-prefetch refs (TPU kernels keep state in
SMEM scalars): each worker gets its own copy, filled from the caller's array
where its programs start; the caller's array is left as it was. JAX's TPU
paged attention kernel, which keeps its buffer index and first-block flag
that way, runs unmodified."""

import jax
import ml_dtypes
import jax.numpy as jnp
import numpy as np
import pytest
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jax.experimental.pallas.ops.tpu.paged_attention import paged_attention

import tessel.jax


def _counting_call(semantics):
    """Each program adds the running count kept in `state[0]` (counted up
    by every program of a worker) to its row: row (i, j) gets the number of
    programs its worker ran before it, plus `state[1]`."""

    def kernel(state, x_ref, o_ref):
        o_ref[...] = x_ref[...] + (state[0] + state[1]).astype(jnp.float32)
        state[0] = state[0] + 1

    params = None if semantics is None else pltpu.CompilerParams(dimension_semantics=semantics)
    return pl.pallas_call(
        kernel,
        grid_spec=pltpu.PrefetchScalarGridSpec(
            num_scalar_prefetch=1,
            grid=(3, 4),
            in_specs=[pl.BlockSpec((1, 128), lambda i, j, state: (i * 4 + j, 0))],
            out_specs=pl.BlockSpec((1, 128), lambda i, j, state: (i * 4 + j, 0)),
        ),
        out_shape=jax.ShapeDtypeStruct((12, 128), jnp.float32),
        compiler_params=params,
    )


@pytest.mark.parametrize("semantics,count", [
    # One worker over the whole grid, in order (no semantics: as Mosaic).
    (None, lambda i, j: 4 * i + j),
    (("arbitrary", "arbitrary"), lambda i, j: 4 * i + j),
    # A worker per row of the grid: each row's count starts again.
    (("parallel", "arbitrary"), lambda i, j: j),
    # A worker per program.
    (("parallel", "parallel"), lambda i, j: 0),
])
def test_scalar_prefetch_state_is_per_worker(semantics, count):
    x = np.random.default_rng(1).standard_normal((12, 128)).astype(np.float32)
    state = np.array([0, 100], np.int32)
    out = np.asarray(jax.jit(_counting_call(semantics))(jnp.asarray(state), x))
    expected = x + np.array([[count(i, j) + 100] for i in range(3) for j in range(4)], np.float32)
    np.testing.assert_array_equal(out, expected)
    assert state.tolist() == [0, 100]


def test_scalar_prefetch_state_starts_from_the_callers_values():
    call = jax.jit(_counting_call(("arbitrary", "arbitrary")))
    x = np.zeros((12, 128), np.float32)
    state = jnp.array([5, 0], jnp.int32)
    out = np.asarray(call(state, x))
    np.testing.assert_array_equal(out[:, 0], np.arange(5, 17, dtype=np.float32))
    # The caller's array is unchanged: a second call starts from 5 again.
    np.testing.assert_array_equal(np.asarray(call(state, x)), out)
    np.testing.assert_array_equal(np.asarray(state), [5, 0])


def _attention(q, k_pages, v_pages, lengths, page_indices):
    """Each sequence's query heads attending to its first `length` keys,
    gathered from its pages (query head h reads kv head h // group)."""
    batch, heads, dim = q.shape
    kv_heads = k_pages.shape[0]
    out = np.zeros((batch, heads, dim))
    for b in range(batch):
        keys = k_pages[:, page_indices[b]].reshape(kv_heads, -1, dim)[:, : lengths[b]]
        values = v_pages[:, page_indices[b]].reshape(kv_heads, -1, dim)[:, : lengths[b]]
        for h in range(heads if lengths[b] else 0):
            scores = keys[h // (heads // kv_heads)] @ q[b, h].astype(np.float64)
            weights = np.exp(scores - scores.max())
            out[b, h] = weights @ values[h // (heads // kv_heads)] / weights.sum()
    return out


def _paged_inputs(page_size, pages_per_sequence, batch=4, heads=8, kv_heads=2, dim=128):
    rng = np.random.default_rng(7)
    total_pages = batch * pages_per_sequence + 3
    lengths = np.array([0, 3, page_size * pages_per_sequence, 37, 1, 60][:batch], np.int32)
    q = rng.standard_normal((batch, heads, dim)).astype(np.float32)
    k_pages = rng.standard_normal((kv_heads, total_pages, page_size, dim)).astype(np.float32)
    v_pages = rng.standard_normal((kv_heads, total_pages, page_size, dim)).astype(np.float32)
    page_indices = rng.permutation(total_pages)[: batch * pages_per_sequence].reshape(batch, -1).astype(np.int32)
    return q, k_pages, v_pages, lengths, page_indices


@pytest.mark.parametrize("megacore_mode,inline_seq_dim", [
    (None, True), (None, False), ("batch", True), ("batch", False), ("kv_head", True)])
@pytest.mark.parametrize("page_size,pages_per_compute_block", [(16, 2), (8, 4)])
def test_tpu_paged_attention(megacore_mode, inline_seq_dim, page_size, pages_per_compute_block):
    q, k_pages, v_pages, lengths, page_indices = _paged_inputs(page_size, pages_per_sequence=8)

    def run(*args):
        return paged_attention(*args, pages_per_compute_block=pages_per_compute_block, megacore_mode=megacore_mode,
                               inline_seq_dim=inline_seq_dim)

    out = np.asarray(jax.jit(run)(q, k_pages, v_pages, lengths, page_indices))
    nonempty = lengths > 0
    if megacore_mode is None:
        # The kernel's own semantics: JAX's TPU interpreter (f32 sums in
        # another order: scores of magnitude ~10 go through exp). Its
        # megacore grids did not finish in 5 minutes.
        tessel.jax.uninstall()
        try:
            with pltpu.force_tpu_interpret_mode():
                interpreted = np.asarray(jax.jit(run)(q, k_pages, v_pages, lengths, page_indices))
        finally:
            tessel.jax.install()
        np.testing.assert_allclose(out[nonempty], interpreted[nonempty], rtol=1e-4, atol=1e-4)
    # And attention in float64 numpy of the keys and values the kernel
    # computes with: it rounds the pages it copied in to bfloat16
    # (`_maybe_dequantize`).
    k_rounded, v_rounded = (pages.astype(ml_dtypes.bfloat16).astype(np.float64) for pages in (k_pages, v_pages))
    reference = _attention(q, k_rounded, v_rounded, lengths, page_indices)
    np.testing.assert_allclose(out[nonempty], reference[nonempty], rtol=1e-4, atol=1e-4)
