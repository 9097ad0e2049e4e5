"""`pl.kernel` and `pl.core_map` over TensorCore meshes under jax.jit
through Tessel: the cores run at once (a thread each, more cores than
the host has CPUs too), each with its own scratch, `lax.axis_index` of the
core axis, pipelines split across cores, signals between cores
(`core_index=`), memory they share (`pltpu.VMEM_SHARED`), and a wait no
core ever signals reported at the user's line after the wait timeout."""

import functools
import inspect

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax._src import config
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

import tessel.jax as tessel_jax


def mesh_and_rows(cores: int):
    """A mesh of `cores` TensorCores and an input of 8 rows per core."""
    mesh = pltpu.create_tensorcore_mesh("core", num_cores=cores)
    return mesh, jnp.arange(cores * 8 * 128, dtype=jnp.float32).reshape(cores * 8, 128)


@pytest.mark.parametrize("cores", [1, 2, 4])
def test_pl_kernel_gives_each_core_its_rows(cores):
    mesh, x = mesh_and_rows(cores)

    @jax.jit
    def double(x):
        @functools.partial(pl.kernel, out_type=jax.ShapeDtypeStruct(x.shape, x.dtype), mesh=mesh,
                           scratch_types=[pltpu.VMEM((8, 128), jnp.float32), pltpu.SemaphoreType.DMA])
        def kernel(x_hbm, o_hbm, buf, sem):
            core = jax.lax.axis_index("core")
            pltpu.sync_copy(x_hbm.at[pl.ds(core * 8, 8)], buf)
            buf[...] = buf[...] * 2 + core.astype(jnp.float32)
            pltpu.sync_copy(buf, o_hbm.at[pl.ds(core * 8, 8)])

        return kernel(x)

    assert "tessel_pallas_call" in double.lower(x).as_text()
    expected = np.asarray(x) * 2 + np.repeat(np.arange(cores, dtype=np.float32), 8)[:, None]
    np.testing.assert_array_equal(np.asarray(double(x)), expected)


def test_core_map_in_run_state_with_scoped_buffers():
    mesh = pltpu.create_tensorcore_mesh("core", num_cores=4)
    x = jnp.arange(32 * 128, dtype=jnp.float32).reshape(32, 128)

    @jax.jit
    def shifted(x):
        def stateful(refs):
            x_ref, o_ref = refs

            @pl.core_map(mesh)
            def _():
                core = jax.lax.axis_index("core")

                def body(buf):
                    pltpu.sync_copy(x_ref.at[pl.ds(core * 8, 8)], buf)
                    buf[...] = buf[...] + 100 * core.astype(buf.dtype)
                    pltpu.sync_copy(buf, o_ref.at[pl.ds(core * 8, 8)])

                pl.run_scoped(body, pltpu.VMEM((8, 128), x.dtype))

        return pl.run_state(stateful)((x, jnp.zeros_like(x)))[1]

    expected = np.asarray(x) + 100 * np.repeat(np.arange(4, dtype=np.float32), 8)[:, None]
    np.testing.assert_array_equal(np.asarray(shifted(x)), expected)


@pytest.mark.parametrize("primitive", [False, True], ids=["inline", "primitive"])
def test_a_pipeline_split_across_cores(primitive):
    # emit_pipeline with the core axis: each core streams its share of the
    # blocks (the pipeline inline, or as its primitive that Tessel expands).
    mesh = pltpu.create_tensorcore_mesh("core", num_cores=2)
    x = jnp.asarray(np.random.default_rng(0).standard_normal((256, 128)), jnp.float32)

    @jax.jit
    def plus_one(x):
        @functools.partial(pl.kernel, out_type=jax.ShapeDtypeStruct(x.shape, x.dtype), mesh=mesh)
        def kernel(x_hbm, o_hbm):
            def inner(x_ref, o_ref):
                o_ref[...] = x_ref[...] + 1

            spec = pl.BlockSpec((32, 128), lambda i: (i, 0))
            pltpu.emit_pipeline(inner, grid=(8,), in_specs=[spec], out_specs=spec, core_axis_name="core",
                                dimension_semantics=(pltpu.PARALLEL,))(x_hbm, o_hbm)

        return kernel(x)

    with config.use_emit_pipeline_primitive(primitive):
        out = plus_one(x)
    np.testing.assert_array_equal(np.asarray(out), np.asarray(x) + 1)


def _exchange(cores: int, rows: int, dma_execution_mode: str = "eager"):
    """A pl.kernel over `cores` cores in which core c puts its rows of x
    into shared memory, signals core c + 1, waits for core c - 1's signal
    and copies that core's rows out: every core waits for a core that
    may start after it, so they must run at once."""
    mesh = pltpu.create_tensorcore_mesh("core", num_cores=cores)

    def run(x):
        @functools.partial(pl.kernel, out_type=jax.ShapeDtypeStruct(x.shape, x.dtype), mesh=mesh,
                           scratch_types=[pltpu.VMEM_SHARED(x.shape, x.dtype), pltpu.SemaphoreType.REGULAR,
                                          pltpu.SemaphoreType.DMA],
                           compiler_params=tessel_jax.CompilerParams(dma_execution_mode=dma_execution_mode))
        def kernel(x_hbm, o_hbm, shared, ready, copied):
            core = jax.lax.axis_index("core")
            mine = pl.ds(core * rows, rows)
            pltpu.sync_copy(x_hbm.at[mine], shared.at[mine])
            pl.semaphore_signal(ready, 1, core_index=(core + 1) % cores)
            pl.semaphore_wait(ready, 1)
            previous = pl.ds(((core + cores - 1) % cores) * rows, rows)
            copy = pltpu.make_async_copy(shared.at[previous], o_hbm.at[mine], copied)
            copy.start()
            copy.wait()

        return kernel(x)

    return run


@pytest.mark.parametrize("mode", ["eager", "on_wait"])
@pytest.mark.parametrize("cores", [2, 3, 4])
def test_cores_signal_each_other_through_shared_memory(cores, mode):
    rows = 8
    x = jnp.asarray(np.random.default_rng(cores).standard_normal((cores * rows, 128)), jnp.float32)
    run = jax.jit(_exchange(cores, rows, mode))
    text = run.lower(x).as_text()
    assert "tessel_pallas_call" in text and f"tessel.dma_mode = {tessel_jax.DMA_MODES.index(mode)}" in text
    # Each core's rows are the previous core's rows of x.
    expected = np.roll(np.asarray(x), rows, axis=0)
    for _ in range(3):
        np.testing.assert_array_equal(np.asarray(run(x)), expected)


def test_a_barrier_of_all_cores_then_a_reduction_over_shared_memory():
    # Each core writes its partial sum to shared memory and signals every
    # core; once a core has heard from all, it reads every partial sum.
    cores = 4
    mesh = pltpu.create_tensorcore_mesh("core", num_cores=cores)
    x = jnp.asarray(np.random.default_rng(7).standard_normal((cores * 8, 128)), jnp.float32)

    @jax.jit
    def total(x):
        @functools.partial(pl.kernel, out_type=jax.ShapeDtypeStruct((cores * 8, 128), jnp.float32), mesh=mesh,
                           scratch_types=[pltpu.VMEM((8, 128), jnp.float32),
                                          pltpu.VMEM_SHARED((cores, 8, 128), jnp.float32),
                                          pltpu.SemaphoreType.BARRIER])
        def kernel(x_hbm, o_hbm, buf, partials, arrived):
            core = jax.lax.axis_index("core")
            pltpu.sync_copy(x_hbm.at[pl.ds(core * 8, 8)], buf)
            pltpu.sync_copy(buf, partials.at[core])
            for other in range(cores):
                pl.semaphore_signal(arrived, 1, core_index=other)
            pl.semaphore_wait(arrived, cores)
            acc = jnp.zeros((8, 128), jnp.float32)
            for other in range(cores):
                acc += partials[other]
            buf[...] = acc
            pltpu.sync_copy(buf, o_hbm.at[pl.ds(core * 8, 8)])

        return kernel(x)

    expected = np.asarray(x).reshape(cores, 8, 128).sum(axis=0)
    np.testing.assert_allclose(np.asarray(total(x)), np.tile(expected, (cores, 1)), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("cores", [1, 2])
def test_a_kernel_capturing_a_traced_scalar(cores):
    # pl.kernel's body closes over a jit argument: the scalar is an operand
    # of the call, a value (not a ref) in the kernel.
    mesh = pltpu.create_tensorcore_mesh("core", num_cores=cores)
    x = jnp.arange(4 * 8 * 128, dtype=jnp.int32).reshape(4, 8, 128)

    @jax.jit
    def pick(x, i):
        @functools.partial(pl.kernel, out_type=jax.ShapeDtypeStruct((cores, 8, 128), jnp.int32), mesh=mesh)
        def kernel(x_hbm, o_hbm):
            core = jax.lax.axis_index("core")
            pltpu.sync_copy(x_hbm.at[(i + core) % 4], o_hbm.at[core])

        return kernel(x)

    for i in range(4):
        expected = np.stack([np.asarray(x)[(i + c) % 4] for c in range(cores)])
        np.testing.assert_array_equal(np.asarray(pick(x, i)), expected)


def test_signals_to_cores_named_by_device_id():
    # In a core_map, `device_id={"core": c}` names a core of the mesh (JAX's
    # test_can_signal_cores): every core signals every core, then waits.
    cores = 3
    mesh, x = mesh_and_rows(cores)

    @jax.jit
    def rotate(x):
        @functools.partial(pl.kernel, out_type=jax.ShapeDtypeStruct(x.shape, x.dtype), mesh=mesh,
                           scratch_types=[pltpu.VMEM_SHARED(x.shape, x.dtype), pltpu.SemaphoreType.REGULAR])
        def kernel(x_hbm, o_hbm, shared, arrived):
            core = jax.lax.axis_index("core")
            pltpu.sync_copy(x_hbm.at[pl.ds(core * 8, 8)], shared.at[pl.ds(core * 8, 8)])
            for other in range(cores):
                pl.semaphore_signal(arrived, device_id={"core": other})
            pl.semaphore_wait(arrived, cores)
            pltpu.sync_copy(shared.at[pl.ds(((core + 1) % cores) * 8, 8)], o_hbm.at[pl.ds(core * 8, 8)])

        return kernel(x)

    np.testing.assert_array_equal(np.asarray(rotate(x)), np.roll(np.asarray(x), -8, axis=0))


def test_scoped_shared_memory_in_core_map():
    # run_scoped buffers in VMEM_SHARED are one for all cores too.
    cores = 2
    mesh, x = mesh_and_rows(cores)

    @jax.jit
    def swapped(x):
        def stateful(refs):
            x_ref, o_ref = refs

            @pl.core_map(mesh)
            def _():
                core = jax.lax.axis_index("core")

                def body(shared, sem):
                    pltpu.sync_copy(x_ref.at[pl.ds(core * 8, 8)], shared.at[core])
                    pl.semaphore_signal(sem, 1, core_index=1 - core)
                    pl.semaphore_wait(sem, 1)
                    pltpu.sync_copy(shared.at[1 - core], o_ref.at[pl.ds(core * 8, 8)])

                pl.run_scoped(body, pltpu.VMEM_SHARED((cores, 8, 128), x.dtype), pltpu.SemaphoreType.REGULAR)

        return pl.run_state(stateful)((x, jnp.zeros_like(x)))[1]

    np.testing.assert_array_equal(np.asarray(swapped(x)), np.roll(np.asarray(x), 8, axis=0))


def test_a_wait_no_core_signals_times_out_at_the_users_line(monkeypatch):
    # Core 1 waits for a signal no core sends: JAX's interpreter (and a
    # TPU) would wait forever; Tessel gives up after TESSEL_WAIT_TIMEOUT
    # seconds, naming the wait's line.
    monkeypatch.setenv("TESSEL_WAIT_TIMEOUT", "0.3")
    mesh = pltpu.create_tensorcore_mesh("core", num_cores=2)

    def run(x):
        @functools.partial(pl.kernel, out_type=jax.ShapeDtypeStruct(x.shape, x.dtype), mesh=mesh,
                           scratch_types=[pltpu.SemaphoreType.REGULAR])
        def kernel(x_hbm, o_hbm, ready):
            @pl.when(jax.lax.axis_index("core") == 1)
            def _():
                pl.semaphore_wait(ready, 1)

            pltpu.sync_copy(x_hbm, o_hbm)

        return kernel(x)

    line = inspect.getsource(run).splitlines().index("                pl.semaphore_wait(ready, 1)")
    line += inspect.getsourcelines(run)[1]
    with pytest.raises(Exception, match=rf"timed out after 0\.3 s.*test_cores\.py:{line}:"):
        jax.block_until_ready(jax.jit(run)(jnp.zeros((8, 128), jnp.float32)))


@pytest.mark.parametrize("seed", range(6))
def test_random_exchanges_between_cores_match_numpy(seed):
    # A generator of exchanges: a random number of cores, each sending its
    # rows to a random other core (a permutation) over shared memory, with
    # signals of random sizes (the receiver waits for that many), in
    # rounds; each round's receiver copies what it got out.
    rng = np.random.default_rng(seed)
    cores, rows, rounds = int(rng.integers(1, 5)), int(rng.choice([1, 4, 8])), int(rng.integers(1, 4))
    targets = [rng.permutation(cores) for _ in range(rounds)]
    amounts = [rng.integers(1, 4, cores) for _ in range(rounds)]
    mesh = pltpu.create_tensorcore_mesh("core", num_cores=cores)
    x = jnp.asarray(rng.standard_normal((cores * rows, 128)), jnp.float32)

    def run(x):
        @functools.partial(
            pl.kernel, out_type=jax.ShapeDtypeStruct((rounds, cores * rows, 128), x.dtype), mesh=mesh,
            scratch_types=[pltpu.VMEM_SHARED((rounds, cores * rows, 128), x.dtype),
                           pltpu.SemaphoreType.REGULAR((rounds,))])
        def kernel(x_hbm, o_hbm, shared, ready):
            core = jax.lax.axis_index("core")
            for r in range(rounds):
                target = _pick(core, targets[r])
                amount = _pick(core, amounts[r])
                # Into the target's slot, then tell it.
                pltpu.sync_copy(x_hbm.at[pl.ds(core * rows, rows)], shared.at[r, pl.ds(target * rows, rows)])
                pl.semaphore_signal(ready.at[r], amount, core_index=target)
                sent = amounts[r][np.argsort(targets[r])]
                pl.semaphore_wait(ready.at[r], _pick(core, sent))
                pltpu.sync_copy(shared.at[r, pl.ds(core * rows, rows)], o_hbm.at[r, pl.ds(core * rows, rows)])

        return kernel(x)

    out = np.asarray(jax.jit(run)(x))
    blocks = np.asarray(x).reshape(cores, rows, 128)
    for r in range(rounds):
        expected = blocks[np.argsort(targets[r])].reshape(cores * rows, 128)
        np.testing.assert_array_equal(out[r], expected)


def _pick(core, values):
    """values[core] for a traced core index (kernels take no array constants)."""
    picked = jnp.int32(0)
    for k, value in enumerate(values):
        picked = jnp.where(core == k, jnp.int32(int(value)), picked)
    return picked


@pytest.mark.parametrize("num_cores", [1, 2, 4])
def test_jax_barrier_that_deadlocks_unless_cores_run_at_once(num_cores):
    # The kernel of JAX's test_shard_map_of_core_map (one device): every
    # core signals every core, then waits for all of them, before its DMAs.
    core_mesh = pltpu.create_tensorcore_mesh("core", num_cores=num_cores)

    @jax.jit
    def f(x):
        def inner(refs):
            x_ref, y_ref = refs

            @pl.core_map(core_mesh)
            def _():
                cores = jax.lax.axis_size("core")
                size = 16 // cores

                def alloc(x_vmem_ref, y_vmem_ref, dma_sem, sem):
                    for i in range(cores):
                        pl.semaphore_signal(sem, 1, core_index=i)
                    pl.semaphore_wait(sem, cores)
                    core_index = jax.lax.axis_index("core")
                    slc = pl.ds(core_index * size, size)
                    pltpu.async_copy(x_ref.at[slc], x_vmem_ref, dma_sem).wait()
                    y_vmem_ref[...] = x_vmem_ref[...] + core_index + 1
                    pltpu.async_copy(y_vmem_ref, y_ref.at[slc], dma_sem).wait()

                pl.run_scoped(alloc, pltpu.VMEM((size, 128), x_ref.dtype), pltpu.VMEM((size, 128), y_ref.dtype),
                              pltpu.SemaphoreType.DMA, pltpu.SemaphoreType.REGULAR)

        return pl.run_state(inner)((x, jnp.zeros_like(x)))[1]

    x = jnp.arange(16 * 128, dtype=jnp.int32).reshape((-1, 128))
    expected = (x.reshape((num_cores, -1, 128)) + 1 + jnp.arange(num_cores, dtype=jnp.int32)[:, None, None])
    np.testing.assert_array_equal(np.asarray(f(x)), np.asarray(expected).reshape(x.shape))
