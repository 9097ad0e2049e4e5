"""TPU-style manual copies (`pltpu.async_copy`, `make_async_copy`, arrays
left in HBM with `memory_space=pl.ANY`) through Tessel, against numpy."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

import tessel.jax

tessel.jax.install()


def test_async_copy_into_a_slice_of_a_scoped_buffer():
    # JAX's test_async_copy_slice (jax-ml/jax#33260).
    def kernel(o):
        @functools.partial(pl.run_scoped, sem=pltpu.SemaphoreType.DMA, x=pltpu.VMEM((1,), jnp.float32))
        def _(sem, x):
            x[...] = jnp.ones_like(x)

            @functools.partial(pl.run_scoped, y=pltpu.VMEM((1, 1), jnp.float32))
            def _(y):
                pltpu.async_copy(x, y.at[0], sem).wait()
                o[...] = y[0]

    out = pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct((1,), jnp.float32))()
    np.testing.assert_array_equal(out, np.ones((1,), np.float32))


def test_double_buffered_copies_from_hbm():
    # The manual pipeline of TPU kernels: the next chunk's copy starts
    # into the other slot before the current one is waited on and used.
    chunks, rows = 6, 8

    def kernel(x_hbm, o_ref, buffers, sems):
        def copy(i, slot):
            return pltpu.make_async_copy(x_hbm.at[pl.ds(i * rows, rows)], buffers.at[slot], sems.at[slot])

        copy(0, 0).start()

        def step(i, total):
            slot = i % 2

            @pl.when(i + 1 < chunks)
            def _():
                copy(i + 1, 1 - slot).start()

            copy(i, slot).wait()
            return total + buffers[slot] * (i + 1).astype(jnp.float32)

        o_ref[...] = jax.lax.fori_loop(0, chunks, step, jnp.zeros((rows, 128), jnp.float32))

    x = np.random.default_rng(3).standard_normal((chunks * rows, 128)).astype(np.float32)
    out = pl.pallas_call(
        kernel,
        in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
        out_specs=pl.BlockSpec((rows, 128), lambda: (0, 0)),
        out_shape=jax.ShapeDtypeStruct((rows, 128), jnp.float32),
        scratch_shapes=[pltpu.VMEM((2, rows, 128), jnp.float32), pltpu.SemaphoreType.DMA((2,))],
    )(x)
    weights = np.arange(1, chunks + 1, dtype=np.float32)[:, None, None]
    np.testing.assert_allclose(out, (x.reshape(chunks, rows, 128) * weights).sum(0), rtol=1e-6)


def test_copies_into_an_output_left_in_hbm():
    # Each program writes its rows of the output with a copy, in reverse
    # order, and one strided column window goes through the copy too.
    def kernel(x_ref, o_hbm, scratch, sem):
        i = pl.program_id(0)
        scratch[...] = x_ref[...] * 2 + 1
        last = pl.num_programs(0) - 1
        pltpu.async_copy(scratch.at[:, pl.ds(0, 64)], o_hbm.at[pl.ds((last - i) * 8, 8), pl.ds(64, 64)], sem).wait()
        pltpu.async_copy(scratch.at[:, pl.ds(64, 64)], o_hbm.at[pl.ds((last - i) * 8, 8), pl.ds(0, 64)], sem).wait()

    x = np.arange(32 * 128, dtype=np.int32).reshape(32, 128)
    out = pl.pallas_call(
        kernel, grid=(4,),
        in_specs=[pl.BlockSpec((8, 128), lambda i: (i, 0))],
        out_specs=pl.BlockSpec(memory_space=pl.ANY),
        out_shape=jax.ShapeDtypeStruct((32, 128), jnp.int32),
        scratch_shapes=[pltpu.VMEM((8, 128), jnp.int32), pltpu.SemaphoreType.DMA(())],
    )(x)
    expected = (x * 2 + 1).reshape(4, 8, 128)[::-1].reshape(32, 128)
    np.testing.assert_array_equal(out, np.concatenate([expected[:, 64:], expected[:, :64]], axis=1))


def test_a_copy_with_add_accumulates_into_its_destination():
    def kernel(x_hbm, o_ref, sem):
        o_ref[...] = jnp.full(o_ref.shape, 10, o_ref.dtype)
        for i in range(2):
            copy = pltpu.make_async_copy(x_hbm.at[i], o_ref, sem)
            copy.start(add=True)
            copy.wait()
        pltpu.sync_copy(x_hbm.at[2], o_ref, add=True)

    x = np.arange(3 * 16 * 128, dtype=np.float32).reshape(3, 16, 128)
    out = pl.pallas_call(
        kernel,
        in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
        out_shape=jax.ShapeDtypeStruct((16, 128), jnp.float32),
        scratch_shapes=[pltpu.SemaphoreType.DMA(())],
    )(x)
    np.testing.assert_array_equal(out, x.sum(0) + 10)


def test_empty_refs_are_scratch_buffers():
    # jax.empty_ref in a kernel (emit_pipeline bodies use it for scratch):
    # an uninitialized buffer from there on, each program's own.
    def kernel(x_ref, o_ref):
        total = jax.empty_ref(jax.ShapeDtypeStruct((8, 128), jnp.float32), memory_space=pltpu.VMEM)
        total[...] = x_ref[...] * 2
        total[...] += 1
        o_ref[...] = total[...]

    x = jnp.asarray(np.random.default_rng(3).standard_normal((32, 128)), jnp.float32)
    run = jax.jit(pl.pallas_call(kernel, grid=(4,), in_specs=[pl.BlockSpec((8, 128), lambda i: (i, 0))],
                                 out_specs=pl.BlockSpec((8, 128), lambda i: (i, 0)),
                                 out_shape=jax.ShapeDtypeStruct((32, 128), jnp.float32)))
    assert "tessel_pallas_call" in run.lower(x).as_text()
    np.testing.assert_array_equal(np.asarray(run(x)), np.asarray(x) * 2 + 1)


@pytest.mark.parametrize("mode", ["eager", "on_wait"])
@pytest.mark.parametrize("start,rows", [(0, 8), (3, 5), (7, 1), (2, 0)])
def test_dmas_of_windows_of_traced_size(mode, start, rows):
    # pl.ds of a traced size on both sides (what pl.BoundedSlice pipelines
    # copy): the rows in the window are copied, the rest of the buffer
    # keeps its values, and the wait waits for exactly the rows' bytes.
    def kernel(window_ref, x_hbm, o_ref, buf, sem):
        first, count = window_ref[0], window_ref[1]
        buf[...] = jnp.full(buf.shape, -1.0, jnp.float32)
        copy = pltpu.make_async_copy(x_hbm.at[pl.ds(first, count)], buf.at[pl.ds(8 - count, count)], sem)
        copy.start()
        copy.wait()
        o_ref[...] = buf[...]

    call = pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct((8, 128), jnp.float32),
                          in_specs=[pl.BlockSpec(memory_space=pltpu.SMEM), pl.BlockSpec(memory_space=pl.ANY)],
                          scratch_shapes=[pltpu.VMEM((8, 128), jnp.float32), pltpu.SemaphoreType.DMA],
                          compiler_params=tessel.jax.CompilerParams(dma_execution_mode=mode))
    x = jnp.arange(16 * 128, dtype=jnp.float32).reshape(16, 128)
    out = jax.jit(call)(jnp.array([start, rows], jnp.int32), x)
    expected = np.full((8, 128), -1.0, np.float32)
    expected[8 - rows:] = np.asarray(x)[start:start + rows]
    np.testing.assert_array_equal(np.asarray(out), expected)

