"""`pl.kernel` and `pl.core_map` over TensorCore meshes under jax.jit
through Tessel: each core a program of a parallel grid (its own thread and
scratch), `lax.axis_index` of the core axis, pipelines split across cores;
what cores cannot do yet is refused at the user's line."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


@pytest.mark.parametrize("cores", [1, 2, 4])
def test_pl_kernel_gives_each_core_its_rows(cores):
    mesh = pltpu.create_tensorcore_mesh("core", num_cores=cores)
    x = jnp.arange(cores * 8 * 128, dtype=jnp.float32).reshape(cores * 8, 128)

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


def test_a_pipeline_split_across_cores():
    # emit_pipeline with the core axis: each core streams its share of the
    # blocks.
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

    np.testing.assert_array_equal(np.asarray(plus_one(x)), np.asarray(x) + 1)


def test_memory_shared_by_cores_is_refused_at_the_users_line():
    mesh = pltpu.create_tensorcore_mesh("core", num_cores=2)

    def run(x):
        @functools.partial(pl.kernel, out_type=jax.ShapeDtypeStruct(x.shape, x.dtype), mesh=mesh,
                           scratch_types=[pltpu.VMEM_SHARED((8, 128), jnp.float32)])
        def kernel(x_hbm, o_hbm, shared):
            pltpu.sync_copy(x_hbm, shared)
            pltpu.sync_copy(shared, o_hbm)

        return kernel(x)

    with pytest.raises(NotImplementedError, match=r"test_cores\.py:\d+: .*scratch shared by cores"):
        jax.jit(run)(jnp.zeros((8, 128), jnp.float32))
