"""Bad input gives located Python exceptions, never a crash."""

import inspect

import jax
import jax.numpy as jnp
import pytest
from jax.experimental import pallas as pl

import tessel


def line_of(marker):
    source, _ = inspect.getsourcelines(inspect.getmodule(line_of))
    return 1 + next(i for i, line in enumerate(source) if marker in line and "line_of" not in line)


def test_unsupported_primitive_names_it_and_the_users_line():
    def kernel(x_ref, o_ref):
        o_ref[...] = jax.lax.digamma(x_ref[...]).sum(axis=1)  # DIGAMMA

    call = pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct((8,), jnp.float32))
    with pytest.raises(NotImplementedError) as raised:
        jax.jit(call).lower(jnp.ones((8, 4)))
    assert "'digamma'" in str(raised.value)
    assert f"test_errors.py:{line_of('# DIGAMMA')}" in str(raised.value)


def test_signals_to_other_cores_outside_a_core_mesh_are_located_errors():
    # A plain pallas_call runs on one core: there is no core 1 to signal
    # (pl.kernel / core_map over a TensorCore mesh has them: test_cores.py).
    from jax.experimental.pallas import tpu as pltpu

    from tessel import CompileError

    def kernel(o_ref):
        def scope(copied, signalled, x_ref):
            x_ref[...] = jnp.ones_like(x_ref)
            pltpu.async_copy(x_ref, o_ref, copied).wait()
            pl.semaphore_signal(signalled, core_index=1)  # SIGNAL

        pl.run_scoped(scope, pltpu.SemaphoreType.DMA, pltpu.SemaphoreType.REGULAR, pltpu.VMEM((8,), jnp.float32))

    call = pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct((8,), jnp.float32))
    with pytest.raises(CompileError) as raised:
        jax.jit(call).lower()
    assert "a signal to another core (`core`) needs a call over a core mesh" in str(raised.value)
    assert f"test_errors.py:{line_of('# SIGNAL')}" in str(raised.value)


def test_index_maps_of_written_scalar_prefetch_arrays_are_refused_and_located():
    # A kernel that writes a scalar-prefetch array works on its own copy
    # (test_scalar_state.py); index maps see the caller's values, which a
    # TPU's would not once the kernel wrote them: refused, at the kernel.
    from jax.experimental.pallas import tpu as pltpu

    def kernel(s_ref, x_ref, o_ref):
        o_ref[...] = x_ref[...] + s_ref[0].astype(jnp.float32)  # KERNEL
        s_ref[0] = s_ref[0] + 1

    spec = pltpu.PrefetchScalarGridSpec(
        num_scalar_prefetch=1, grid=(4,),
        in_specs=[pl.BlockSpec((8, 128), lambda i, s: (s[0] % 4, 0))],
        out_specs=pl.BlockSpec((8, 128), lambda i, s: (i, 0)))
    call = pl.pallas_call(kernel, grid_spec=spec, out_shape=jax.ShapeDtypeStruct((32, 128), jnp.float32))
    with pytest.raises(NotImplementedError) as raised:
        jax.jit(call).lower(jnp.zeros((1,), jnp.int32), jnp.zeros((32, 128), jnp.float32))
    assert "an index map reads a scalar-prefetch array the kernel writes" in str(raised.value)
    assert f"test_errors.py:{line_of('# KERNEL')}" in str(raised.value)


def test_num_programs_of_a_static_grid_in_a_non_affine_index_map():
    # The select makes the map an index function; num_programs is the
    # grid's size there.
    x = jnp.arange(4 * 8 * 128, dtype=jnp.float32).reshape(32, 128)

    def kernel(x_ref, o_ref):
        o_ref[...] = x_ref[...]

    out = pl.pallas_call(
        kernel, grid=(4,),
        in_specs=[pl.BlockSpec((8, 128), lambda i: (jnp.where(i < pl.num_programs(0) - 1, i + 1, 0), 0))],
        out_specs=pl.BlockSpec((8, 128), lambda i: (i, 0)),
        out_shape=jax.ShapeDtypeStruct((32, 128), jnp.float32))(x)
    assert (out == jnp.roll(x, -8, axis=0)).all()


def test_compile_error_carries_located_diagnostics():
    source = "func.func @f(%x: memref<4xf32>) {\n  %a = block.load %x : memref<4xf32> -> tensor<5xf32>\n  return\n}\n"
    with pytest.raises(tessel.CompileError) as raised:
        tessel.compile(source)
    assert raised.value.diagnostics[0].startswith("<string>:2:8: error: 'block.load' op result shape 5")
    assert "see current operation" not in str(raised.value)


def test_malformed_ir_is_a_compile_error():
    with pytest.raises(tessel.CompileError, match="<string>:1:"):
        tessel.compile("func.func @f(%x: memref<4xf32>) { garbage")


def test_unknown_knob_and_bad_values():
    source = "func.func @f(%x: memref<4xf32>) {\n  return\n}\n"
    with pytest.raises(ValueError, match="unknown schedule knob 'tile'"):
        tessel.compile(source, tile=(2, 2))
    with pytest.raises(ValueError, match="knob register_tile"):
        tessel.compile(source, register_tile=(0, 4))
