"""Calls made with JAX's TPU interpreter parameters
(`interpret=pltpu.InterpretParams(...)`) under
`install(include_interpret=True)` run through Tessel with their checks:
out-of-bounds block indices, ref reads and writes and DMA windows raise
(or read uninitialized values), unwritten outputs and scratch hold the
uninitialized fill, and a field Tessel cannot honour raises naming it.
Expected values are computed with NumPy, and the errors are matched
against JAX's interpreter's messages (`../shared/TPU-SEMANTICS.md` §5)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

import tessel.jax


@pytest.fixture(autouse=True)
def tessel_takes_interpret_calls():
    tessel.jax.install(include_interpret=True)
    yield
    tessel.jax.install()


def block_copy(mode, input_offset, output_offset):
    def kernel(x_ref, o_ref):
        o_ref[...] = x_ref[...]

    return pl.pallas_call(
        kernel,
        out_shape=jax.ShapeDtypeStruct((16, 128), jnp.float32),
        out_specs=pl.BlockSpec((4, 128), lambda i: (i + output_offset, 0)),
        in_specs=[pl.BlockSpec((4, 128), lambda i: (i + input_offset, 0))],
        grid=(4,),
        interpret=pltpu.InterpretParams(out_of_bounds_reads=mode),
    )


def test_calls_with_interpreter_parameters_are_tessel_calls():
    x = jnp.arange(16 * 128, dtype=jnp.float32).reshape(16, 128)
    call = jax.jit(block_copy("raise", 0, 0))
    assert "tessel" in call.lower(x).as_text()
    np.testing.assert_array_equal(np.asarray(call(x)), np.asarray(x))


def test_out_of_bounds_block_indices_raise_or_read_uninitialized():
    x = jnp.zeros((16, 128), jnp.float32)
    with pytest.raises(Exception, match=r"Out-of-bounds block index \[4, 0\] for input #0"):
        jax.jit(block_copy("raise", 1, 0))(x)
    with pytest.raises(Exception, match=r"Out-of-bounds block index \[4, 0\] for output #0"):
        jax.jit(block_copy("raise", 0, 2))(x)
    out = np.asarray(jax.jit(block_copy("uninitialized", 1, 0))(x))
    np.testing.assert_array_equal(out[:12], 0.0)
    assert np.isnan(out[12:]).all()


def test_block_indices_out_of_bounds_at_run_time_name_the_operand():
    # The block index comes from a scalar-prefetch operand: only compiled
    # code can tell.
    def kernel(s_ref, x_ref, o_ref):
        o_ref[...] = x_ref[...] * 2

    def call(s, x):
        return pl.pallas_call(
            kernel,
            out_shape=jax.ShapeDtypeStruct((8, 128), jnp.float32),
            grid_spec=pltpu.PrefetchScalarGridSpec(
                num_scalar_prefetch=1, grid=(1,),
                in_specs=[pl.BlockSpec((8, 128), lambda i, s: (s[0], 0))],
                out_specs=pl.BlockSpec((8, 128), lambda i, s: (0, 0))),
            interpret=pltpu.InterpretParams(),
        )(s, x)

    x = jnp.arange(32 * 128, dtype=jnp.float32).reshape(32, 128)
    np.testing.assert_array_equal(np.asarray(jax.jit(call)(jnp.array([3], jnp.int32), x)), np.asarray(x[24:]) * 2)
    message = (r"Out-of-bounds block index in a program for input #0 of @kernel_kernel "
               r"\(called at .*test_interpret_params.py:\d+:1\)")
    with pytest.raises(Exception, match=message):
        jax.jit(call)(jnp.array([4], jnp.int32), x).block_until_ready()


def scalar_sum(mode):
    """JAX's `test_out_of_bounds_read_index` kernel: sums x[x[s0]:x[s1]]
    with scalar reads that may fall past x."""
    def kernel(s_ref, x_ref, o_ref):
        def body(carry):
            i, accum = carry
            return i + 1, accum + x_ref[i]

        start, stop = x_ref[s_ref[0]], x_ref[s_ref[1]]
        o_ref[0] = jax.lax.while_loop(lambda c: c[0] < stop, body, (start, jnp.int32(0)))[1]

    return jax.jit(pl.pallas_call(
        kernel,
        out_shape=jax.ShapeDtypeStruct((1,), jnp.int32),
        out_specs=pl.BlockSpec(memory_space=pltpu.SMEM),
        in_specs=[pl.BlockSpec(memory_space=pltpu.SMEM), pl.BlockSpec(memory_space=pltpu.SMEM)],
        interpret=pltpu.InterpretParams(out_of_bounds_reads=mode)))


def test_scalar_reads_past_a_ref():
    s = jnp.array([0, 1], jnp.int32)
    inside = jnp.array([2, 5, 9, 15, 17], jnp.int32)
    past = jnp.array([2, 6, 9, 15, 17], jnp.int32)
    for mode in ("raise", "uninitialized"):
        assert int(scalar_sum(mode)(s, inside)[0]) == 9 + 15 + 17
    with pytest.raises(Exception, match=r"Out-of-bounds read of a load from memref<5xi32> at .*test_interpret_params"):
        scalar_sum("raise")(s, past).block_until_ready()
    # The read past the end is the integer maximum (uninitialized_memory
    # "nan"), which wraps the sum negative, as in JAX's interpreter.
    total = np.int64(9 + 15 + 17) + np.iinfo(np.int32).max
    expected = np.int32(total - 2**32)
    assert int(scalar_sum("uninitialized")(s, past)[0]) == expected


def window(mode, memory="nan"):
    def kernel(s_ref, x_ref, o_ref):
        o_ref[...] = x_ref[pl.ds(s_ref[0], 8), :]

    return jax.jit(pl.pallas_call(
        kernel,
        out_shape=jax.ShapeDtypeStruct((8, 128), jnp.float32),
        in_specs=[pl.BlockSpec(memory_space=pltpu.SMEM), pl.BlockSpec(memory_space=pltpu.VMEM)],
        interpret=pltpu.InterpretParams(out_of_bounds_reads=mode, uninitialized_memory=memory)))


@pytest.mark.parametrize("start", [-3, 0, 2, 5, 12])
def test_windows_past_a_ref(start):
    x = jnp.arange(10 * 128, dtype=jnp.float32).reshape(10, 128)
    s = jnp.array([start], jnp.int32)
    inside = 0 <= start <= 2
    if inside:
        np.testing.assert_array_equal(np.asarray(window("raise")(s, x)), np.asarray(x[start:start + 8]))
    else:
        with pytest.raises(Exception, match="Out-of-bounds read of a load from memref<10x128xf32>"):
            window("raise")(s, x).block_until_ready()
    # Uninitialized: the rows inside read as they are, the others as the fill.
    for memory, fill in (("nan", np.nan), ("zero", 0.0)):
        expected = np.full((8, 128), fill, np.float32)
        rows = np.arange(start, start + 8)
        valid = (rows >= 0) & (rows < 10)
        expected[valid] = np.asarray(x)[rows[valid]]
        np.testing.assert_array_equal(np.asarray(window("uninitialized", memory)(s, x)), expected)


def test_stores_and_dma_windows_past_a_ref_raise():
    def store(s_ref, x_ref, o_ref):
        o_ref[...] = jnp.zeros_like(o_ref)
        o_ref[pl.ds(s_ref[0], 8), :] = x_ref[...]

    def masked_store(s_ref, x_ref, m_ref, o_ref):
        o_ref[...] = jnp.zeros_like(o_ref)
        pltpu.store(o_ref.at[pl.ds(s_ref[0], 8), :], x_ref[...], mask=m_ref[...] != 0)

    def dma(s_ref, x_ref, o_ref, scratch, sem):
        pltpu.async_copy(x_ref.at[pl.ds(s_ref[0], 8)], scratch, sem).wait()
        pltpu.sync_copy(scratch, o_ref.at[pl.ds(s_ref[1], 8)])

    smem, vmem, anywhere = (pl.BlockSpec(memory_space=space) for space in (pltpu.SMEM, pltpu.VMEM, pl.ANY))
    out = jax.ShapeDtypeStruct((16, 128), jnp.float32)
    x = jnp.ones((8, 128), jnp.float32)
    params = pltpu.InterpretParams(out_of_bounds_reads="uninitialized")
    store_call = jax.jit(pl.pallas_call(store, out_shape=out, in_specs=[smem, vmem], interpret=params))
    np.testing.assert_array_equal(np.asarray(store_call(jnp.array([8], jnp.int32), x))[8:], 1.0)
    with pytest.raises(Exception, match="Out-of-bounds swap of a store to memref<16x128xf32>"):
        store_call(jnp.array([9], jnp.int32), x).block_until_ready()

    masked_call = jax.jit(pl.pallas_call(masked_store, out_shape=out, in_specs=[smem, vmem, vmem], interpret=params))
    # Lanes past the ref that the mask leaves off are not writes.
    mask = np.zeros((8, 128), np.int32)
    mask[:4] = 1
    got = np.asarray(masked_call(jnp.array([12], jnp.int32), x, jnp.asarray(mask)))
    np.testing.assert_array_equal(got[12:], 1.0)
    np.testing.assert_array_equal(got[:12], 0.0)
    with pytest.raises(Exception, match="Out-of-bounds masked swap of a store to memref<16x128xf32>"):
        masked_call(jnp.array([12], jnp.int32), x, jnp.ones((8, 128), jnp.int32)).block_until_ready()

    dma_call = jax.jit(pl.pallas_call(
        dma, out_shape=out, in_specs=[smem, anywhere], out_specs=anywhere,
        scratch_shapes=[pltpu.VMEM((8, 128), jnp.float32), pltpu.SemaphoreType.DMA], interpret=params))
    source = jnp.arange(16 * 128, dtype=jnp.float32).reshape(16, 128)
    got = np.asarray(dma_call(jnp.array([4, 8], jnp.int32), source))
    np.testing.assert_array_equal(got[8:], np.asarray(source[4:12]))
    with pytest.raises(Exception, match="Out-of-bounds read of a DMA source memref<16x128xf32>"):
        dma_call(jnp.array([9, 0], jnp.int32), source).block_until_ready()
    with pytest.raises(Exception, match="Out-of-bounds write of a DMA destination memref<16x128xf32>"):
        dma_call(jnp.array([0, 9], jnp.int32), source).block_until_ready()


@pytest.mark.parametrize("memory", ["nan", "zero"])
def test_unwritten_outputs_and_scratch_hold_the_fill(memory):
    # JAX's own test_uninitialized_memory.
    def kernel(o1_ref, o2_ref, o3_ref, t1_ref, t2_ref):
        o1_ref[...] = t1_ref[...]
        o2_ref[...] = t2_ref[...]

    x, y, z = pl.pallas_call(
        kernel,
        out_shape=[jax.ShapeDtypeStruct((8, 128), jnp.bfloat16), jax.ShapeDtypeStruct((8, 128), jnp.int16),
                   jax.ShapeDtypeStruct((8, 128), jnp.float32)],
        in_specs=[],
        scratch_shapes=[pltpu.VMEM((8, 128), jnp.bfloat16), pltpu.VMEM((8, 128), jnp.int16)],
        interpret=pltpu.InterpretParams(uninitialized_memory=memory),
    )()
    if memory == "nan":
        assert np.isnan(np.asarray(x, np.float32)).all() and np.isnan(np.asarray(z)).all()
        np.testing.assert_array_equal(np.asarray(y), np.iinfo(np.int16).max)
    else:
        for array in (x, y, z):
            np.testing.assert_array_equal(np.asarray(array, np.float32), 0)


@pytest.mark.parametrize("field, value", [
    ("skip_floating_point_ops", True), ("random_seed", 7),
    ("buffer_bounds", "padded"), ("grid_point_recorder", lambda token, point, core: token),
])
def test_fields_tessel_cannot_honour_raise_naming_them(field, value):
    def kernel(x_ref, o_ref):
        o_ref[...] = x_ref[...]

    call = pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct((8, 128), jnp.float32),
                          interpret=pltpu.InterpretParams(**{field: value}))
    with pytest.raises(NotImplementedError, match=rf"test_interpret_params.py:\d+: InterpretParams\({field}="):
        jax.jit(call)(jnp.zeros((8, 128), jnp.float32))


def test_hbm_in_run_scoped_raises_unless_allowed():
    def kernel(x_ref, o_ref):
        def body(hbm):
            pltpu.sync_copy(x_ref, hbm)
            pltpu.sync_copy(hbm, o_ref)

        pl.run_scoped(body, pltpu.HBM((8, 128), jnp.float32))

    def call(allow):
        return jax.jit(pl.pallas_call(
            kernel, out_shape=jax.ShapeDtypeStruct((8, 128), jnp.float32),
            in_specs=[pl.BlockSpec(memory_space=pl.ANY)], out_specs=pl.BlockSpec(memory_space=pl.ANY),
            interpret=pltpu.InterpretParams(allow_hbm_allocation_in_run_scoped=allow)))

    x = jnp.arange(8 * 128, dtype=jnp.float32).reshape(8, 128)
    with pytest.raises(ValueError, match=r"Cannot allocate HBM in `run_scoped`\."):
        call(False)(x)
    np.testing.assert_array_equal(np.asarray(call(True)(x)), np.asarray(x))


@pytest.mark.parametrize("mode", ["eager", "on_wait"])
def test_race_free_kernels_agree_with_and_without_checks(mode):
    # A double-buffered DMA pipeline over pages: the checks change nothing
    # for a kernel that stays in bounds.
    def kernel(x_ref, o_ref, buf, sems):
        def copy(page, slot):
            return pltpu.make_async_copy(x_ref.at[pl.ds(page * 8, 8)], buf.at[slot], sems.at[slot])

        copy(0, 0).start()

        def body(page, carry):
            slot = page % 2

            @pl.when(page + 1 < 4)
            def _():
                copy(page + 1, 1 - slot).start()

            copy(page, slot).wait()
            o_ref[pl.ds(page * 8, 8), :] = buf[slot] * 2 + 1
            return carry

        jax.lax.fori_loop(0, 4, body, 0)

    def call(interpret):
        return jax.jit(pl.pallas_call(
            kernel, out_shape=jax.ShapeDtypeStruct((32, 128), jnp.float32),
            in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
            scratch_shapes=[pltpu.VMEM((2, 8, 128), jnp.float32), pltpu.SemaphoreType.DMA((2,))],
            interpret=interpret))

    x = jax.random.normal(jax.random.key(3), (32, 128), jnp.float32)
    expected = np.asarray(x) * 2 + 1
    np.testing.assert_array_equal(np.asarray(call(pltpu.InterpretParams(dma_execution_mode=mode))(x)), expected)
    np.testing.assert_array_equal(np.asarray(call(False)(x)), expected)


@pytest.mark.parametrize("space", [pltpu.HBM, pl.ANY])
def test_reading_or_writing_an_hbm_ref_itself_raises_as_the_interpreter_does(space):
    # A TPU core only copies HBM by DMA: JAX's interpreter refuses a
    # kernel's loads and stores of an HBM (or ANY) ref, and so does Tessel
    # for calls with its parameters, naming the access's line.
    def load_and_store(x_ref, o_ref):
        o_ref[...] = x_ref[...]

    def tpu_load_and_store(x_ref, o_ref):
        pltpu.store(o_ref, pltpu.load(x_ref))

    def copied(x_ref, o_ref):
        pltpu.sync_copy(x_ref, o_ref)

    def call(kernel, in_space, out_space):
        return jax.jit(pl.pallas_call(
            kernel, out_shape=jax.ShapeDtypeStruct((8, 128), jnp.float32), grid=(1,),
            in_specs=[pl.BlockSpec(memory_space=in_space)], out_specs=pl.BlockSpec(memory_space=out_space),
            interpret=pltpu.InterpretParams()))

    x = jnp.arange(8 * 128, dtype=jnp.float32).reshape(8, 128)
    line = load_and_store.__code__.co_firstlineno + 1
    message = r"Buffers with a memory space of HBM or ANY cannot be referenced directly"
    with pytest.raises(ValueError, match=rf"test_interpret_params.py:{line}: get_p: {message}"):
        call(load_and_store, space, pltpu.VMEM)(x)
    with pytest.raises(ValueError, match=rf"test_interpret_params.py:{line}: swap_p: {message}"):
        call(load_and_store, pltpu.VMEM, space)(x)
    tpu_line = tpu_load_and_store.__code__.co_firstlineno + 1
    with pytest.raises(ValueError, match=rf"test_interpret_params.py:{tpu_line}: load_p: {message}"):
        call(tpu_load_and_store, space, pltpu.VMEM)(x)
    with pytest.raises(ValueError, match=rf"test_interpret_params.py:{tpu_line}: swap_p: {message}"):
        call(tpu_load_and_store, pltpu.VMEM, space)(x)
    np.testing.assert_array_equal(np.asarray(call(copied, space, space)(x)), np.asarray(x))


def test_a_call_can_ask_for_jaxs_interpreter_itself():
    # Under install(include_interpret=True), interpret=jax_interpreted(...)
    # keeps one call in JAX's TPU interpreter (no Tessel call in its HLO),
    # with the same parameters; both give the same numbers.
    def kernel(x_ref, o_ref):
        o_ref[...] = x_ref[...] + 1

    def call(params):
        return jax.jit(pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct((8, 128), jnp.float32),
                                      interpret=params))

    x = jnp.zeros((8, 128), jnp.float32)
    params = pltpu.InterpretParams(dma_execution_mode="eager")
    kept = tessel.jax.jax_interpreted(params)
    assert isinstance(kept, pltpu.InterpretParams) and kept.dma_execution_mode == "eager"
    assert "tessel_pallas_call" in call(params).lower(x).as_text()
    assert "tessel_pallas_call" not in call(kept).lower(x).as_text()
    np.testing.assert_array_equal(np.asarray(call(kept)(x)), np.asarray(call(params)(x)))
