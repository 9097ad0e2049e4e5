"""`pltpu.emit_pipeline` inside kernels over `pl.ANY` refs, under jax.jit
through Tessel: the pipeline's DMAs, semaphores and buffers (it traces
because tessel.jax answers Pallas' TPU-info questions for the CPU).

Every test runs both ways JAX traces a pipeline: inline (the default) and
as one `emit_pipeline` equation (`jax_use_emit_pipeline_primitive`),
which Tessel expands before translating (`tessel.jax._pipelines`)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax._src import config
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

ANY = pl.BlockSpec(memory_space=pl.ANY)


@pytest.fixture(autouse=True, params=[False, True], ids=["inline", "primitive"])
def pipeline_primitive(request):
    with config.use_emit_pipeline_primitive(request.param):
        yield request.param


@pytest.mark.parametrize("block_rows", [8, 64, 512])
def test_elementwise_pipeline_over_hbm(block_rows):
    def kernel(x_hbm, y_hbm, o_hbm):
        def inner(x_ref, y_ref, o_ref):
            o_ref[...] = x_ref[...] * 2 + y_ref[...]

        spec = pl.BlockSpec((block_rows, 128), lambda i: (i, 0))
        pltpu.emit_pipeline(inner, grid=(512 // block_rows,), in_specs=[spec, spec], out_specs=spec)(
            x_hbm, y_hbm, o_hbm)

    x = jnp.asarray(np.random.default_rng(0).standard_normal((512, 128)), jnp.float32)
    y = jnp.arange(512 * 128, dtype=jnp.float32).reshape(512, 128)
    out = jax.jit(pl.pallas_call(kernel, in_specs=[ANY, ANY], out_specs=ANY,
                                 out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype)))(x, y)
    np.testing.assert_array_equal(np.asarray(out), np.asarray(x) * 2 + np.asarray(y))


@pytest.mark.parametrize("buffers", [2, 3])
def test_matmul_pipeline_accumulating_over_k(buffers):
    # The Pallas TPU pipelining docs' matmul: an (m, n, k) inner grid whose
    # output block is revisited along k, accumulated in a VMEM scratch.
    m = n = k = 256
    bm = bn = bk = 128

    def kernel(x_hbm, y_hbm, o_hbm, acc_ref):
        def inner(x_ref, y_ref, o_ref):
            @pl.when(pl.program_id(2) == 0)
            def _():
                acc_ref[...] = jnp.zeros_like(acc_ref)

            acc_ref[...] += jnp.dot(x_ref[...], y_ref[...], preferred_element_type=jnp.float32)

            @pl.when(pl.program_id(2) == k // bk - 1)
            def _():
                o_ref[...] = acc_ref[...]

        pltpu.emit_pipeline(
            inner, grid=(m // bm, n // bn, k // bk),
            in_specs=[pl.BlockSpec((bm, bk), lambda i, j, kk: (i, kk), pipeline_mode=pl.Buffered(buffers)),
                      pl.BlockSpec((bk, bn), lambda i, j, kk: (kk, j))],
            out_specs=pl.BlockSpec((bm, bn), lambda i, j, kk: (i, j)))(x_hbm, y_hbm, o_hbm)

    rng = np.random.default_rng(1)
    x = jnp.asarray(rng.standard_normal((m, k)), jnp.float32)
    y = jnp.asarray(rng.standard_normal((k, n)), jnp.float32)
    out = jax.jit(pl.pallas_call(kernel, in_specs=[ANY, ANY], out_specs=ANY,
                                 out_shape=jax.ShapeDtypeStruct((m, n), jnp.float32),
                                 scratch_shapes=[pltpu.VMEM((bm, bn), jnp.float32)]))(x, y)
    np.testing.assert_allclose(np.asarray(out), np.asarray(x, np.float64) @ np.asarray(y, np.float64),
                               rtol=1e-5, atol=1e-4)


def test_pipeline_inside_an_outer_grid():
    # An outer pallas_call grid over row panels, each streaming its panel's
    # column blocks through an inner pipeline.
    def kernel(x_hbm, o_hbm):
        row = pl.program_id(0)

        def inner(x_ref, o_ref):
            o_ref[...] = x_ref[...] + row.astype(jnp.float32)

        pltpu.emit_pipeline(inner, grid=(4,), in_specs=[pl.BlockSpec((8, 128), lambda j: (row, j))],
                            out_specs=pl.BlockSpec((8, 128), lambda j: (row, j)))(x_hbm, o_hbm)

    x = jnp.arange(32 * 512, dtype=jnp.float32).reshape(32, 512)
    out = jax.jit(pl.pallas_call(kernel, grid=(4,), in_specs=[ANY], out_specs=ANY,
                                 out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype)))(x)
    np.testing.assert_array_equal(np.asarray(out), np.asarray(x) + np.repeat(np.arange(4.0), 8)[:, None])


def test_program_ids_in_a_body_are_the_pipelines_then_the_kernels():
    # In a pipeline body, program_id(0) is the pipeline's step and the
    # kernel's axes come after the pipeline's (Mosaic's numbering).
    def kernel(o_hbm):
        def inner(o_ref):
            o_ref[...] = jnp.full(o_ref.shape, pl.program_id(0) * 10 + pl.num_programs(0), jnp.int32)

        pltpu.emit_pipeline(inner, grid=(4,), out_specs=pl.BlockSpec((8, 128), lambda j: (j, 0)))(o_hbm)

    out = jax.jit(pl.pallas_call(kernel, out_specs=ANY, out_shape=jax.ShapeDtypeStruct((32, 128), jnp.int32)))()
    np.testing.assert_array_equal(np.asarray(out), np.repeat(np.arange(4) * 10 + 4, 8)[:, None] + np.zeros(128, int))


def test_nested_pipelines_stream_blocks_of_blocks():
    # An outer pipeline brings (64, 256) blocks into VMEM; an inner one
    # streams (8, 128) tiles of each block through its own buffers.
    def kernel(x_hbm, o_hbm):
        def outer(x_block, o_block):
            def inner(x_tile, o_tile):
                o_tile[...] = x_tile[...] * 3 + 1

            tile = pl.BlockSpec((8, 128), lambda i, j: (i, j))
            pltpu.emit_pipeline(inner, grid=(8, 2), in_specs=[tile], out_specs=tile)(x_block, o_block)

        block = pl.BlockSpec((64, 256), lambda i: (i, 0))
        pltpu.emit_pipeline(outer, grid=(4,), in_specs=[block], out_specs=block)(x_hbm, o_hbm)

    x = jnp.asarray(np.random.default_rng(2).standard_normal((256, 256)), jnp.float32)
    out = jax.jit(pl.pallas_call(kernel, in_specs=[ANY], out_specs=ANY,
                                 out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype)))(x)
    np.testing.assert_array_equal(np.asarray(out), np.asarray(x) * 3 + 1)


def test_pipeline_over_transformed_refs():
    # The pipeline reads a row window of a bitcast HBM ref and writes a
    # window of the output: views handed on to the pipeline.
    def kernel(x_hbm, o_hbm):
        def inner(x_ref, o_ref):
            o_ref[...] = x_ref[...] + 1

        spec = pl.BlockSpec((8, 128), lambda i: (i, 0))
        pltpu.emit_pipeline(inner, grid=(2,), in_specs=[spec], out_specs=spec)(
            x_hbm.bitcast(jnp.int32).at[8:24], o_hbm.at[16:32])

    x = jnp.arange(32 * 128, dtype=jnp.float32).reshape(32, 128) / 7
    out = jax.jit(pl.pallas_call(kernel, in_specs=[ANY], out_specs=ANY,
                                 out_shape=jax.ShapeDtypeStruct((32, 128), jnp.int32)))(x)
    bits = np.asarray(x).view(np.int32)
    np.testing.assert_array_equal(np.asarray(out)[16:32], bits[8:24] + 1)


def test_bounded_slice_blocks_of_traced_sizes():
    # pl.BoundedSlice: each step's block is a window of a size read from
    # SMEM (at most the bound), copied in and out by DMAs of traced size.
    bounds = np.array([[0, 3], [3, 8], [8, 11], [11, 16]], np.int32)[::-1]

    def kernel(bounds_ref, x_hbm, o_hbm):
        def index_map(i):
            return (pl.ds(bounds_ref[i, 0], bounds_ref[i, 1] - bounds_ref[i, 0]), 0)

        spec = pl.BlockSpec((pl.BoundedSlice(8), 128), index_map)
        pltpu.emit_pipeline(lambda x_ref, o_ref: o_ref.__setitem__(..., x_ref[...] * 2), grid=(len(bounds),),
                            in_specs=[spec], out_specs=spec)(x_hbm, o_hbm)

    x = jnp.arange(16 * 128, dtype=jnp.float32).reshape(16, 128)
    out = jax.jit(pl.pallas_call(kernel, in_specs=[pl.BlockSpec(memory_space=pltpu.SMEM), ANY], out_specs=ANY,
                                 out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype)))(jnp.asarray(bounds), x)
    np.testing.assert_array_equal(np.asarray(out), np.asarray(x) * 2)
