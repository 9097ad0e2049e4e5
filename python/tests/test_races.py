"""Race detection (`interpret=pltpu.InterpretParams(detect_races=True)`
through Tessel): a kernel's read of a DMA's destination, or its write of
the DMA's source or destination, before a wait on the DMA's semaphore saw
it complete, and two DMAs in flight on overlapping bytes, set JAX's
`races.races_found` and print both accesses' lines; race-free kernels
(waited DMAs, disjoint windows) report nothing and compute what they
compute without the detector. Kernels whose verdict depends on when DMAs
copy are checked against JAX's TPU interpreter itself, and a generator
injects one fault (a missing or late wait, a slot reused too early, an
out-of-bounds page) into random correct DMA pipelines: every injection is
reported, no correct program is."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax._src.pallas.mosaic.interpret import interpret_pallas_call as mosaic_interpret
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

import tessel.jax
from kernel_calls import PIPELINE_FAULTS, pipeline_kernel


@pytest.fixture(autouse=True)
def tessel_takes_interpret_calls():
    tessel.jax.install(include_interpret=True)
    yield
    tessel.jax.install()


def races_found() -> bool:
    return mosaic_interpret.races.races_found


def copy_call(kernel, mode, shape=(8, 128), space=pl.ANY, scratch=None):
    x = jnp.arange(np.prod(shape), dtype=jnp.float32).reshape(shape)
    call = pl.pallas_call(
        kernel, out_shape=jax.ShapeDtypeStruct(shape, jnp.float32),
        in_specs=[pl.BlockSpec(memory_space=space)],
        scratch_shapes=scratch or [pltpu.VMEM(shape, jnp.float32), pltpu.SemaphoreType.DMA],
        interpret=pltpu.InterpretParams(detect_races=True, dma_execution_mode=mode))
    return x, call


@pytest.mark.parametrize("mode", ["eager", "on_wait"])
@pytest.mark.parametrize("space", [pltpu.HBM, pl.ANY])
def test_a_read_of_a_dma_destination_before_its_wait_races(mode, space, capfd):
    def waited(x_hbm, o_ref, t_ref, sem):
        copy = pltpu.make_async_copy(x_hbm, t_ref, sem)
        copy.start()
        copy.wait()
        o_ref[...] = t_ref[...] + 1.0

    def racy(x_hbm, o_ref, t_ref, sem):
        copy = pltpu.make_async_copy(x_hbm, t_ref, sem)
        copy.start()
        o_ref[...] = t_ref[...] + 1.0  # the racy read
        copy.wait()

    x, call = copy_call(waited, mode, space=space)
    np.testing.assert_array_equal(np.asarray(call(x)), np.asarray(x) + 1)
    assert not races_found()
    assert "RACE" not in capfd.readouterr().err
    _, call = copy_call(racy, mode, space=space)
    call(x).block_until_ready()
    assert races_found()
    err = capfd.readouterr().err
    line = racy.__code__.co_firstlineno
    assert f"the load from memref<8x128xf32> at {__file__}:{line + 3}" in err, err
    assert f"the DMA started at {__file__}:{line + 2}" in err, err


@pytest.mark.parametrize("mode", ["eager", "on_wait"])
def test_a_write_of_a_dma_source_or_destination_before_its_wait_races(mode):
    # VMEM to VMEM: the kernel writes the source, then the destination,
    # while the copy is in flight; the race-free kernel writes them after
    # the wait.
    def kernel(write, after_wait):
        def body(x_hbm, o_ref, src, dst, sem):
            pltpu.sync_copy(x_hbm, src)
            copy = pltpu.make_async_copy(src, dst, sem)
            copy.start()
            if not after_wait:
                write(src, dst)
            copy.wait()
            if after_wait:
                write(src, dst)
            o_ref[...] = dst[...] + src[...]
        return body

    def source(src, dst):
        src[0:1, :] = jnp.zeros((1, 128), jnp.float32)

    def destination(src, dst):
        dst[4:8, :] = jnp.ones((4, 128), jnp.float32)

    scratch = [pltpu.VMEM((8, 128), jnp.float32), pltpu.VMEM((8, 128), jnp.float32), pltpu.SemaphoreType.DMA]
    for write in (source, destination):
        for after_wait in (True, False):
            x, call = copy_call(kernel(write, after_wait), mode, scratch=scratch)
            out = np.asarray(call(x))
            assert races_found() is not after_wait, (write.__name__, after_wait)
            if after_wait:
                src, dst = np.asarray(x).copy(), np.asarray(x).copy()
                write(src, dst)
                np.testing.assert_array_equal(out, src + dst)


@pytest.mark.parametrize("mode", ["eager", "on_wait"])
@pytest.mark.parametrize("second, racy", [(4, False), (2, True)])
def test_dmas_in_flight_race_only_on_overlapping_bytes(mode, second, racy):
    # Two DMAs in flight at once on two semaphores: into rows 0:4 and rows
    # second:second+4 of one buffer. Disjoint halves are race-free.
    def kernel(x_hbm, o_ref, t_ref, sems):
        a = pltpu.make_async_copy(x_hbm.at[pl.ds(0, 4)], t_ref.at[pl.ds(0, 4)], sems.at[0])
        b = pltpu.make_async_copy(x_hbm.at[pl.ds(4, 4)], t_ref.at[pl.ds(second, 4)], sems.at[1])
        a.start()
        b.start()
        a.wait()
        b.wait()
        o_ref[...] = t_ref[...]

    x, call = copy_call(kernel, mode, scratch=[pltpu.VMEM((8, 128), jnp.float32), pltpu.SemaphoreType.DMA((2,))])
    out = np.asarray(call(x))
    assert races_found() is racy
    if not racy:
        np.testing.assert_array_equal(out, np.asarray(x))


@pytest.mark.parametrize("mode", ["eager", "on_wait"])
def test_a_column_block_beside_a_dma_window_does_not_race(mode):
    # Strided windows: the DMA writes columns 0:128 of every row, the
    # kernel reads columns 128:256 meanwhile. Exact to the byte, not to
    # the bounding range.
    def kernel(x_hbm, o_ref, t_ref, sem):
        t_ref[:, 128:] = jnp.full((8, 128), 2.0, jnp.float32)
        copy = pltpu.make_async_copy(x_hbm.at[:, pl.ds(0, 128)], t_ref.at[:, pl.ds(0, 128)], sem)
        copy.start()
        o_ref[:, 128:] = t_ref[:, 128:]
        copy.wait()
        o_ref[:, :128] = t_ref[:, :128]

    x, call = copy_call(kernel, mode, shape=(8, 256))
    out = np.asarray(call(x))
    assert not races_found()
    np.testing.assert_array_equal(out[:, :128], np.asarray(x)[:, :128])
    np.testing.assert_array_equal(out[:, 128:], 2.0)


def two_copies_one_wait(x_hbm, o_ref, t_ref, sem):
    # Two copies of one size on one semaphore, one wait for one copy's
    # bytes, then a read of the first copy's rows. Copying on starts, both
    # copies are done at the wait (no race); copying on waits, the wait ran
    # only the last started, so the first is still in flight (a race).
    pltpu.make_async_copy(x_hbm.at[pl.ds(0, 4)], t_ref.at[pl.ds(0, 4)], sem).start()
    second = pltpu.make_async_copy(x_hbm.at[pl.ds(4, 4)], t_ref.at[pl.ds(4, 4)], sem)
    second.start()
    second.wait()
    o_ref[4:8, :] = t_ref[4:8, :]
    o_ref[0:4, :] = t_ref[0:4, :]
    second.wait()


@pytest.mark.parametrize("mode, racy", [("eager", False), ("on_wait", True)])
def test_when_dmas_copy_decides_races_as_in_jaxs_interpreter(mode, racy):
    x, call = copy_call(two_copies_one_wait, mode)
    call(x).block_until_ready()
    assert races_found() is racy
    # JAX's own interpreter on the same kernel. Its vector clocks give each
    # DMA a random "virtual core" entry among vector_clock_size - cores:
    # with its default size (two entries per core) every DMA of one core
    # shares one entry, and it misses races between them; Tessel tracks
    # each DMA. With room for distinct entries (and NumPy's global RNG,
    # which draws them, seeded) it finds the race Tessel finds.
    tessel.jax.install()
    np.random.seed(0)
    jax_call = pl.pallas_call(
        two_copies_one_wait, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
        scratch_shapes=[pltpu.VMEM(x.shape, x.dtype), pltpu.SemaphoreType.DMA],
        interpret=pltpu.InterpretParams(detect_races=True, dma_execution_mode=mode, vector_clock_size=64))
    jax_call(x).block_until_ready()
    assert races_found() is racy


def test_detection_is_off_by_default_and_adds_nothing_to_the_kernel():
    def kernel(x_hbm, o_ref, t_ref, sem):
        copy = pltpu.make_async_copy(x_hbm, t_ref, sem)
        copy.start()
        copy.wait()
        o_ref[...] = t_ref[...]

    x = jnp.zeros((8, 128), jnp.float32)

    def lowered(params):
        call = pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
                              in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
                              scratch_shapes=[pltpu.VMEM(x.shape, x.dtype), pltpu.SemaphoreType.DMA],
                              interpret=params)
        return jax.jit(call).lower(x).as_text()

    assert "tessel.detect_races" not in lowered(pltpu.InterpretParams())
    assert "tessel.detect_races = 1" in lowered(pltpu.InterpretParams(detect_races=True))


def test_race_detection_over_a_grid_split_between_cores_is_refused_naming_the_field():
    def kernel(x_ref, o_ref):
        o_ref[...] = x_ref[...]

    call = pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct((8, 128), jnp.float32), grid=(2,),
                          interpret=pltpu.InterpretParams(detect_races=True, num_cores_or_threads=2))
    with pytest.raises(NotImplementedError,
                       match=r"test_races.py:\d+: InterpretParams\(detect_races=True\) with num_cores_or_threads=2"):
        jax.jit(call)(jnp.zeros((8, 128), jnp.float32))


def shared_buffer_copies(ordered: bool, mode: str, cores: int = 2):
    """Each core of a core mesh copies x through one HBM buffer the cores
    share into y: racy unless a semaphore makes core 1 wait for core 0's
    signal (JAX's test_allocate_shared_buffer_in_core_map)."""
    mesh = pltpu.create_tensorcore_mesh("x", num_cores=cores)

    @jax.jit
    def f(x):
        y = jnp.zeros_like(x)

        def inner(refs):
            x_ref, y_ref = refs

            @pl.core_map(mesh, interpret=pltpu.InterpretParams(
                detect_races=True, allow_hbm_allocation_in_run_scoped=True, dma_execution_mode=mode))
            def _():
                core = jax.lax.axis_index("x")

                def body(sem):
                    if ordered:
                        @pl.when(core > 0)
                        def _():
                            pl.semaphore_wait(sem, 1)

                    def copy(hbm):
                        pltpu.sync_copy(x_ref, hbm)
                        pltpu.sync_copy(hbm, y_ref)

                    pl.run_scoped(copy, pltpu.HBM(x_ref.shape, x_ref.dtype))
                    if ordered:
                        @pl.when(core + 1 < cores)
                        def _():
                            pl.semaphore_signal(sem, 1, core_index=core + 1)

                pl.run_scoped(body, pltpu.SemaphoreType.REGULAR)

        _, y = pl.run_state(inner)((x, y))
        return y

    return f


@pytest.mark.parametrize("mode", ["eager", "on_wait"])
@pytest.mark.parametrize("cores", [2, 3])
def test_cores_sharing_a_buffer_race_unless_a_semaphore_orders_them(mode, cores, capfd):
    x = jnp.arange(16 * 128, dtype=jnp.int32).reshape(16, 128)
    np.testing.assert_array_equal(np.asarray(shared_buffer_copies(True, mode, cores)(x)), np.asarray(x))
    assert not races_found()
    assert "RACE" not in capfd.readouterr().err
    shared_buffer_copies(False, mode, cores)(x).block_until_ready()
    assert races_found()
    assert "on another core, and no semaphore orders the two" in capfd.readouterr().err


def test_cores_writing_disjoint_rows_of_one_output_do_not_race():
    mesh = pltpu.create_tensorcore_mesh("core", num_cores=2)
    x = jnp.arange(16 * 128, dtype=jnp.float32).reshape(16, 128)

    @functools.partial(pl.kernel, out_type=jax.ShapeDtypeStruct(x.shape, x.dtype), mesh=mesh,
                       interpret=pltpu.InterpretParams(detect_races=True))
    def rows(x_hbm, o_hbm):
        core = jax.lax.axis_index("core")
        pltpu.sync_copy(x_hbm.at[pl.ds(core * 8, 8)], o_hbm.at[pl.ds(core * 8, 8)])

    np.testing.assert_array_equal(np.asarray(jax.jit(rows)(x)), np.asarray(x))
    assert not races_found()

    @functools.partial(pl.kernel, out_type=jax.ShapeDtypeStruct(x.shape, x.dtype), mesh=mesh,
                       interpret=pltpu.InterpretParams(detect_races=True))
    def overlapping(x_hbm, o_hbm):
        core = jax.lax.axis_index("core")
        pltpu.sync_copy(x_hbm.at[pl.ds(core * 4, 8)], o_hbm.at[pl.ds(core * 4, 8)])

    jax.jit(overlapping)(x).block_until_ready()
    assert races_found()


# The differential generator: random correct double-buffered pipelines
# (pages streamed from HBM through slots, copies started `ahead` pages in
# advance), and the same pipelines with one fault injected.
@pytest.mark.parametrize("mode", ["eager", "on_wait"])
@pytest.mark.parametrize("seed", range(10))
def test_random_pipelines_report_every_injected_fault_and_no_correct_one(seed, mode):
    rng = np.random.default_rng(seed)
    slots = int(rng.integers(2, 5))
    fault = PIPELINE_FAULTS[seed % len(PIPELINE_FAULTS)]
    # A slot reused too early: a copy started `slots` pages ahead lands in
    # the slot of a page not read yet.
    ahead = slots if fault == "slot_reused_early" else int(rng.integers(1, min(3, slots - 1) + 1))
    pages = int(rng.integers(ahead + 2, 9))
    victim = int(rng.integers(0, pages - ahead)) if fault == "slot_reused_early" else int(rng.integers(0, pages))
    rows = int(rng.choice([8, 16]))
    x = jnp.asarray(rng.integers(-50, 50, (pages, rows, 128)), jnp.float32)
    call = pl.pallas_call(
        pipeline_kernel(pages, slots, ahead, fault, victim), grid=(pages,),
        out_shape=jax.ShapeDtypeStruct((pages, rows, 128), jnp.float32),
        in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
        out_specs=pl.BlockSpec((None, rows, 128), lambda i: (i, 0, 0)),
        scratch_shapes=[pltpu.VMEM((slots, rows, 128), jnp.float32), pltpu.SemaphoreType.DMA((slots,))],
        compiler_params=pltpu.CompilerParams(dimension_semantics=("arbitrary",)),
        interpret=pltpu.InterpretParams(detect_races=True, out_of_bounds_reads="raise", dma_execution_mode=mode))
    what = f"{fault} at program {victim}: {pages} pages, {slots} slots, {ahead} ahead"
    if fault == "page_out_of_bounds":
        with pytest.raises(Exception, match="Out-of-bounds read of a DMA source"):
            jax.jit(call)(x).block_until_ready()
        return
    out = np.asarray(jax.jit(call)(x))
    assert races_found() is (fault != "none"), what
    if fault == "none":
        expected = np.asarray(x) * 2 + np.arange(pages, dtype=np.float32)[:, None, None]
        np.testing.assert_array_equal(out, expected, err_msg=what)
