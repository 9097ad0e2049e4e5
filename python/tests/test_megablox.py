"""JAX's megablox grouped matmuls (ops/tpu/megablox), unmodified, through
Tessel against numpy: `gmm` (rows of lhs in groups, each times its own
rhs), `tgmm` (lhs^T @ rhs per group of rows, the weight gradient), empty
groups, group sizes that do not fill the rows, `group_offset`,
`transpose_rhs`, `existing_out`, and the custom VJP of `ops.gmm`."""

import importlib

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.experimental.pallas.ops.tpu.megablox import ops

import tessel.jax

# The package exports ops.gmm (a custom_vjp) under the module's name.
megablox = importlib.import_module("jax.experimental.pallas.ops.tpu.megablox.gmm")

tessel.jax.install()

TILING = (64, 128, 128)


def group_bounds(sizes):
    ends = np.cumsum(sizes)
    return list(zip(ends - np.asarray(sizes), ends))


def reference_gmm(lhs, rhs, sizes, transpose_rhs=False, groups=None, existing=None):
    lhs, rhs = np.asarray(lhs, np.float64), np.asarray(rhs, np.float64)
    out = np.zeros((lhs.shape[0], rhs.shape[1 if transpose_rhs else 2])) if existing is None \
        else np.asarray(existing, np.float64).copy()
    for group, (start, end) in enumerate(group_bounds(sizes)):
        if groups is not None and group not in groups:
            continue
        weights = rhs[group].T if transpose_rhs else rhs[group]
        out[start:end] = lhs[start:end] @ weights
    return out


def reference_tgmm(lhs, rhs, sizes):
    lhs, rhs = np.asarray(lhs, np.float64), np.asarray(rhs, np.float64)
    return np.stack([lhs[:, start:end] @ rhs[start:end] for start, end in group_bounds(sizes)])


def operands(m, k, n, groups, seed=0, dtype=jnp.float32):
    keys = jax.random.split(jax.random.key(seed), 2)
    lhs = jax.random.normal(keys[0], (m, k), dtype)
    rhs = jax.random.normal(keys[1], (groups, k, n), dtype)
    return lhs, rhs


@pytest.mark.parametrize("sizes", [[64, 0, 100, 28, 0, 64], [256, 0, 0, 0, 0, 0], [7, 33, 0, 1, 90, 125]])
def test_gmm_groups(sizes):
    lhs, rhs = operands(256, 256, 256, len(sizes))
    group_sizes = jnp.asarray(sizes, jnp.int32)
    got = jax.jit(lambda a, b, g: megablox.gmm(a, b, g, tiling=TILING))(lhs, rhs, group_sizes)
    np.testing.assert_allclose(got, reference_gmm(lhs, rhs, sizes), rtol=1e-4, atol=1e-3)


def test_gmm_groups_short_of_the_rows():
    # Groups cover 150 of 256 rows: gmm leaves the rest as it found the
    # output's memory (uninitialized on a TPU), so only the groups' rows
    # are compared.
    sizes = [50, 0, 100]
    lhs, rhs = operands(256, 128, 128, len(sizes), seed=1)
    got = jax.jit(lambda a, b, g: megablox.gmm(a, b, g, tiling=TILING))(lhs, rhs, jnp.asarray(sizes, jnp.int32))
    np.testing.assert_allclose(got[:150], reference_gmm(lhs, rhs, sizes)[:150], rtol=1e-4, atol=1e-3)


def test_gmm_transpose_rhs_and_group_offset():
    sizes = [40, 24, 0, 64, 128]
    lhs, rhs = operands(256, 128, 256, len(sizes), seed=2)
    group_sizes = jnp.asarray(sizes, jnp.int32)
    rhs_t = jnp.swapaxes(rhs, 1, 2)
    got = jax.jit(lambda a, b, g: megablox.gmm(a, b, g, tiling=TILING, transpose_rhs=True))(lhs, rhs_t, group_sizes)
    np.testing.assert_allclose(got, reference_gmm(lhs, rhs_t, sizes, transpose_rhs=True), rtol=1e-4, atol=1e-3)
    # A shard holding experts 2..4 (rhs of 3 groups) starting at group 2;
    # the rows of other groups are zero.
    offset = jnp.asarray(2, jnp.int32)
    got = jax.jit(lambda a, b, g, o: megablox.gmm(a, b, g, tiling=TILING, group_offset=o))(
        lhs, rhs[2:], group_sizes, offset)
    padded = jnp.concatenate([jnp.zeros_like(rhs[:2]), rhs[2:]])
    np.testing.assert_allclose(got, reference_gmm(lhs, padded, sizes, groups={2, 3, 4}), rtol=1e-4, atol=1e-3)


def test_gmm_existing_out_keeps_other_rows():
    sizes = [64, 64, 0]
    lhs, rhs = operands(256, 128, 128, len(sizes), seed=3)
    existing = jnp.full((256, 128), 3.0, jnp.float32)
    got = jax.jit(lambda a, b, g, e: megablox.gmm(a, b, g, tiling=TILING, existing_out=e))(
        lhs, rhs, jnp.asarray(sizes, jnp.int32), existing)
    np.testing.assert_allclose(got, reference_gmm(lhs, rhs, sizes, existing=existing), rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("sizes", [[64, 0, 100, 92], [0, 0, 256, 0], [5, 77, 0, 174]])
def test_tgmm(sizes):
    keys = jax.random.split(jax.random.key(4), 2)
    lhs = jax.random.normal(keys[0], (128, 256), jnp.float32)  # [k, m]
    rhs = jax.random.normal(keys[1], (256, 128), jnp.float32)  # [m, n]
    got = jax.jit(lambda a, b, g: megablox.tgmm(a, b, g, tiling=TILING))(lhs, rhs, jnp.asarray(sizes, jnp.int32))
    np.testing.assert_allclose(got, reference_tgmm(lhs, rhs, sizes), rtol=1e-4, atol=1e-3)


def test_gmm_gradients():
    # ops.gmm's custom VJP runs gmm (transpose_rhs) for the lhs gradient and
    # tgmm for the rhs gradient.
    sizes = jnp.asarray([32, 96, 0, 128], jnp.int32)
    lhs, rhs = operands(256, 128, 128, 4, seed=5)

    def loss(a, b):
        return (ops.gmm(a, b, sizes, jnp.float32, TILING) ** 2).sum()

    def dense_loss(a, b):
        rows = jnp.repeat(jnp.arange(4), sizes, total_repeat_length=256)
        return (jnp.einsum("mk,mkn->mn", a, b[rows]) ** 2).sum()

    got = jax.jit(jax.grad(loss, argnums=(0, 1)))(lhs, rhs)
    want = jax.jit(jax.grad(dense_loss, argnums=(0, 1)))(lhs, rhs)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-3, atol=1e-2)


def test_bfloat16_operands():
    sizes = [100, 0, 156]
    lhs, rhs = operands(256, 128, 128, len(sizes), seed=6, dtype=jnp.bfloat16)
    got = jax.jit(lambda a, b, g: megablox.gmm(a, b, g, tiling=TILING))(lhs, rhs, jnp.asarray(sizes, jnp.int32))
    want = reference_gmm(lhs.astype(jnp.float32), rhs.astype(jnp.float32), sizes)
    np.testing.assert_allclose(np.asarray(got, np.float32), want, rtol=1e-2, atol=1e-1)
