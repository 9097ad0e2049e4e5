"""TPU semaphores and DMAs under jax.jit through Tessel: semaphore
signal/wait/read, DMAs counted in bytes, waits that can never be
satisfied reported at the user's line, and a generator of random
double-buffered DMA pipelines against a plain reference."""

import inspect

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

import tessel.jax as tessel_jax
from kernel_calls import pipeline_kernel


def test_signal_wait_and_read():
    # Signals add, waits take away, reads see the count; semaphores start
    # at zero with each worker.
    def kernel(o_ref, sems):
        pl.semaphore_signal(sems.at[0], 3)
        first = pl.semaphore_read(sems.at[0])
        pl.semaphore_wait(sems.at[0], 2)
        second = pl.semaphore_read(sems.at[0])
        pl.semaphore_signal(sems.at[1])
        third = pl.semaphore_read(sems.at[1])
        pl.semaphore_wait(sems.at[1])
        pl.semaphore_wait(sems.at[0])
        o_ref[0] = first
        o_ref[1] = second
        o_ref[2] = third
        o_ref[3] = pl.semaphore_read(sems.at[0]) + pl.semaphore_read(sems.at[1])

    out = jax.jit(pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct((4,), jnp.int32),
                                 out_specs=pl.BlockSpec(memory_space=pltpu.SMEM),
                                 scratch_shapes=[pltpu.SemaphoreType.REGULAR((2,))]))()
    np.testing.assert_array_equal(np.asarray(out), [3, 1, 1, 0])


def test_a_wait_that_can_never_be_satisfied_names_the_users_line():
    # Nothing signals the semaphore: on a TPU the kernel would hang; here
    # the call fails, naming the wait's file and line.
    def kernel(x_ref, o_ref, sem):
        pl.semaphore_wait(sem, 1)
        o_ref[...] = x_ref[...]

    line = inspect.getsourcelines(kernel)[1] + 1
    call = jax.jit(pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct((8, 128), jnp.float32),
                                  scratch_shapes=[pltpu.SemaphoreType.REGULAR]))
    with pytest.raises(Exception, match=rf"never be satisfied.*test_semaphores\.py:{line}:"):
        jax.block_until_ready(call(jnp.zeros((8, 128), jnp.float32)))


def test_a_wait_for_more_bytes_than_were_copied_names_the_users_line():
    def kernel(x_hbm, o_ref, buf, sem):
        half = pltpu.make_async_copy(x_hbm.at[pl.ds(0, 4)], buf.at[pl.ds(0, 4)], sem)
        whole = pltpu.make_async_copy(x_hbm, buf, sem)
        half.start()
        whole.wait()
        o_ref[...] = buf[...]

    line = inspect.getsourcelines(kernel)[1] + 4
    call = jax.jit(pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct((8, 128), jnp.float32),
                                  in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
                                  scratch_shapes=[pltpu.VMEM((8, 128), jnp.float32), pltpu.SemaphoreType.DMA]))
    with pytest.raises(Exception, match=rf"never be satisfied.*test_semaphores\.py:{line}:"):
        jax.block_until_ready(call(jnp.ones((8, 128), jnp.float32)))


def test_a_wait_counts_bytes_not_copies():
    # Two copies of the same size on one semaphore: waiting twice on the
    # second's descriptor is satisfied by both (as on a TPU), and both
    # copies' data are there.
    def kernel(x_hbm, o_ref, buf, sem):
        first = pltpu.make_async_copy(x_hbm.at[0], buf.at[1], sem)
        second = pltpu.make_async_copy(x_hbm.at[1], buf.at[0], sem)
        first.start()
        second.start()
        second.wait()
        second.wait()
        o_ref[...] = buf[...]

    x = jnp.arange(2 * 8 * 128, dtype=jnp.float32).reshape(2, 8, 128)
    out = jax.jit(pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct((2, 8, 128), jnp.float32),
                                 in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
                                 scratch_shapes=[pltpu.VMEM((2, 8, 128), jnp.float32), pltpu.SemaphoreType.DMA]))(x)
    np.testing.assert_array_equal(np.asarray(out), np.asarray(x)[::-1])


def test_scoped_semaphores_and_sync_copies():
    def kernel(x_hbm, o_ref):
        def body(buf, sem):
            copy = pltpu.make_async_copy(x_hbm.at[pl.ds(pl.program_id(0) * 8, 8)], buf, sem)
            copy.start()
            copy.wait()
            o_ref[...] = buf[...] + 1

        pl.run_scoped(body, pltpu.VMEM((8, 128), jnp.float32), pltpu.SemaphoreType.DMA)

    x = jnp.arange(32 * 128, dtype=jnp.float32).reshape(32, 128)
    out = jax.jit(pl.pallas_call(kernel, grid=(4,), out_shape=jax.ShapeDtypeStruct((32, 128), jnp.float32),
                                 in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
                                 out_specs=pl.BlockSpec((8, 128), lambda i: (i, 0))))(x)
    np.testing.assert_array_equal(np.asarray(out), np.asarray(x) + 1)


@pytest.mark.parametrize("mode", ["eager", "on_wait"])
@pytest.mark.parametrize("seed", range(8))
def test_random_double_buffered_pipelines_match_a_plain_reference(seed, mode):
    # Random page counts, sizes, slot counts and depths of prefetch (1 to
    # 3 copies ahead, fewer than the slots), every page streamed once; DMAs
    # copying when they start and on waits give the same results.
    rng = np.random.default_rng(seed)
    slots = int(rng.integers(2, 5))
    ahead = int(rng.integers(1, min(3, slots - 1) + 1))
    pages = int(rng.integers(ahead + 1, 9))
    rows = int(rng.choice([8, 16, 24]))
    dtype = [jnp.float32, jnp.int32, jnp.bfloat16][seed % 3]
    x = jnp.asarray(rng.integers(-50, 50, (pages, rows, 128)), dtype)
    call = pl.pallas_call(
        pipeline_kernel(pages, slots, ahead), grid=(pages,),
        out_shape=jax.ShapeDtypeStruct((pages, rows, 128), dtype),
        in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
        out_specs=pl.BlockSpec((None, rows, 128), lambda i: (i, 0, 0)),
        scratch_shapes=[pltpu.VMEM((slots, rows, 128), dtype), pltpu.SemaphoreType.DMA((slots,))],
        compiler_params=tessel_jax.CompilerParams(dimension_semantics=("arbitrary",), dma_execution_mode=mode))
    assert f"tessel.dma_mode = {tessel_jax.DMA_MODES.index(mode)}" in jax.jit(call).lower(x).as_text()
    out = np.asarray(jax.jit(call)(x)).astype(np.float32)
    expected = np.asarray(x).astype(np.float32) * 2 + np.arange(pages, dtype=np.float32)[:, None, None]
    np.testing.assert_array_equal(out, expected, err_msg=f"{pages} pages, {slots} slots, {ahead} ahead")


def test_semaphores_returned_by_one_call_and_waited_on_by_the_next():
    # A copy started in one call, its semaphore returned (a future), and
    # waited on by a later call, in a loop: returned semaphores start at
    # zero (XLA's fresh buffers are not), counts carry between calls.
    def start(x):
        def kernel(x_ref, aliased_ref, o_ref, sem):
            del aliased_ref
            pltpu.make_async_copy(x_ref, o_ref, sem).start()

        return pl.pallas_call(
            kernel, out_shape=(jax.ShapeDtypeStruct.like(x), pl.ANY(x.shape, x.dtype), pltpu.SemaphoreType.DMA(())),
            in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
            out_specs=(pl.BlockSpec(memory_space=pl.ANY), pl.BlockSpec(memory_space=pl.ANY),
                       pl.BlockSpec(memory_space=pltpu.SEMAPHORE)),
            input_output_aliases={0: 0})(x)

    def done(x, out, sem):
        def kernel(x_ref, o_ref, sem, aliased_ref):
            del aliased_ref
            pltpu.make_async_copy(x_ref, o_ref, sem).wait()

        return pl.pallas_call(
            kernel, out_shape=pl.ANY(x.shape, x.dtype),
            in_specs=[pl.BlockSpec(memory_space=pl.ANY), pl.BlockSpec(memory_space=pl.ANY),
                      pl.BlockSpec(memory_space=pltpu.SEMAPHORE)],
            out_specs=pl.BlockSpec(memory_space=pl.ANY), input_output_aliases={1: 0})(x, out, sem)

    @jax.jit
    def f(xs):
        def body(i, ys):
            x, out, sem = start(xs[i] + i)
            return ys.at[i].set(done(x, out, sem))
        return jax.lax.fori_loop(0, xs.shape[0], body, jnp.zeros_like(xs))

    xs = jax.random.normal(jax.random.key(0), (6, 8, 128), jnp.float32)
    np.testing.assert_array_equal(f(xs), xs + jnp.arange(6, dtype=jnp.float32)[:, None, None])


def test_an_unknown_dma_mode_is_refused_naming_the_choices():
    with pytest.raises(ValueError, match=r"dma_execution_mode must be one of \('eager', 'on_wait'\), got 'lazy'"):
        tessel_jax.CompilerParams(dma_execution_mode="lazy")
