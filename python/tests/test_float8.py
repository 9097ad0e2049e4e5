"""8-bit floats (float8_e4m3fn, e5m2, their fnuz forms, e4m3b11fnuz, e4m3,
e3m4) as kernel inputs, outputs and values: rounding from f32 against
ml_dtypes (which jax.jit's conversions match) and arithmetic against
jax.jit."""

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest
from jax import lax
from jax.experimental import pallas as pl
from kernel_calls import in_kernel

FLOAT8 = [jnp.float8_e4m3fn, jnp.float8_e5m2, jnp.float8_e4m3fnuz, jnp.float8_e5m2fnuz, jnp.float8_e4m3b11fnuz,
          jnp.float8_e4m3, jnp.float8_e3m4]
ids = lambda dtype: jnp.dtype(dtype).name  # noqa: E731


def assert_same_values(got, want, what):
    # Same value, or both NaN; zeros' signs must match too.
    assert got.dtype == want.dtype, what
    got, want = np.asarray(got).astype(np.float32), np.asarray(want).astype(np.float32)
    both_nan = np.isnan(got) & np.isnan(want)
    np.testing.assert_array_equal(np.where(both_nan, 0, got), np.where(both_nan, 0, want), err_msg=what)
    np.testing.assert_array_equal(np.signbit(got) | both_nan, np.signbit(want) | both_nan, err_msg=f"{what}: signs")


def float8_edges(dtype):
    """Values around every rounding decision of `dtype`: each of its values,
    the midpoints between neighbours and a hair either side of them, the
    overflow edge, and f32 specials."""
    values = np.sort(np.unique(np.arange(256, dtype=np.uint8).view(dtype).astype(np.float32)))
    values = values[np.isfinite(values)]
    middles = (values[1:].astype(np.float64) + values[:-1]) / 2
    largest = float(ml_dtypes.finfo(dtype).max)
    top = [largest * (1 + f) for f in (2.0 ** -5, 2.0 ** -4, 0.0624, 0.0626, 0.124, 0.125, 0.126, 1.0)]
    near = np.concatenate([middles, np.nextafter(middles.astype(np.float32), np.float32(np.inf)),
                           np.nextafter(middles.astype(np.float32), np.float32(-np.inf)), top, np.negative(top)])
    special = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-40, -1e-40, 3e38, -3e38]
    return np.concatenate([values, near.astype(np.float32), np.float32(special)]).astype(np.float32)


@pytest.mark.parametrize("dtype", FLOAT8, ids=ids)
def test_rounding_from_f32_matches_ml_dtypes_and_xla(dtype):
    rng = np.random.default_rng(1)
    noise = (rng.standard_normal(4096) * np.float32(2.0) ** rng.integers(-20, 20, 4096)).astype(np.float32)
    x = jnp.asarray(np.concatenate([float8_edges(dtype), noise]))
    cast = lambda v: v.astype(dtype)  # noqa: E731
    out = in_kernel(cast, x)
    # (XLA flushes f32 subnormal inputs; ml_dtypes rounds them to zeros too.)
    assert_same_values(out, jnp.asarray(np.asarray(x).astype(dtype)), f"f32 to {ids(dtype)}")
    assert_same_values(out, jax.jit(cast)(x), f"f32 to {ids(dtype)}, against jax.jit")
    for source in (jnp.bfloat16, jnp.float16, jnp.int32):
        narrow = x.astype(source) if source != jnp.int32 else jnp.asarray(rng.integers(-600, 600, 512), jnp.int32)
        assert_same_values(in_kernel(cast, narrow), jax.jit(cast)(narrow), f"{ids(source)} to {ids(dtype)}")


@pytest.mark.parametrize("dtype", FLOAT8, ids=ids)
def test_arithmetic_on_every_pair_of_values_matches_xla(dtype):
    values = np.arange(256, dtype=np.uint8).view(dtype)
    a, b = np.meshgrid(values, values)
    a, b = jnp.asarray(a), jnp.asarray(b)
    for name, fn in {"add": lax.add, "sub": lax.sub, "mul": lax.mul, "max": lax.max, "lt": lax.lt}.items():
        assert_same_values(in_kernel(fn, a, b), jax.jit(fn)(a, b), f"{name} on {ids(dtype)}")
    for name, fn in {"neg": lax.neg, "abs": lax.abs, "to_f32": lambda v: v.astype(jnp.float32),
                     "to_bf16": lambda v: v.astype(jnp.bfloat16), "to_int8": lambda v: v.astype(jnp.int8),
                     "to_e5m2": lambda v: v.astype(jnp.float8_e5m2)}.items():
        assert_same_values(in_kernel(fn, a), jax.jit(fn)(a), f"{name} on {ids(dtype)}")


def test_fp8_cache_dequantized_in_attention_scores():
    # An fp8 KV-cache idiom: keys stored as float8_e4m3fn with a per-row
    # scale, widened in the kernel, scores accumulated in f32.
    rng = np.random.default_rng(2)
    q = rng.standard_normal((16, 64)).astype(np.float32)
    k = rng.standard_normal((128, 64)).astype(np.float32)
    scale = np.abs(k).max(axis=1, keepdims=True) / 448
    k8 = jnp.asarray((k / scale).astype(jnp.float8_e4m3fn))

    def kernel(q_ref, k_ref, s_ref, o_ref):
        keys = k_ref[...].astype(jnp.float32) * s_ref[...]
        o_ref[...] = lax.dot_general(q_ref[...], keys, (((1,), (1,)), ((), ())), preferred_element_type=jnp.float32)

    out = jax.jit(pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct((16, 128), jnp.float32)))(
        jnp.asarray(q), k8, jnp.asarray(scale))
    expected = q.astype(np.float64) @ (np.asarray(k8).astype(np.float64) * scale).T
    np.testing.assert_allclose(np.asarray(out), expected, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("dtype", FLOAT8, ids=ids)
def test_infinite_constants_is_finite_and_cummax(dtype):
    # Found: each of these raised "Changing the dtype of a 0d array is only
    # supported if the itemsize is unchanged" in the translator (an
    # infinite constant's bits were read in the 8-bit type's width, not its
    # f32 container's).
    values = jnp.asarray(np.arange(256, dtype=np.uint8).view(dtype).reshape(8, 32))
    for name, fn in {"is_finite": lambda v: jnp.isfinite(v), "max_minus_inf": lambda v: jnp.maximum(v, -jnp.inf),
                     "min_inf": lambda v: jnp.minimum(v, jnp.inf), "cummax": lambda v: lax.cummax(v, axis=1),
                     "cummin": lambda v: lax.cummin(v, axis=0)}.items():
        got, want = in_kernel(fn, values), fn(values)
        if got.dtype == np.bool_:
            np.testing.assert_array_equal(np.asarray(got), np.asarray(want), err_msg=f"{name} on {ids(dtype)}")
        else:
            assert_same_values(got, want, f"{name} on {ids(dtype)}")


@pytest.mark.parametrize("dtype", FLOAT8, ids=ids)
def test_bitcasts_to_and_from_bits_match_xla(dtype):
    # Every bit pattern to the type and every value back to its bits, and
    # through a 32-bit word (four values packed, as a TPU kernel reading
    # fp8 pages as uint32 does), against XLA. NaNs come back as the type's
    # canonical NaN.
    patterns = jnp.asarray(np.arange(256, dtype=np.uint8).reshape(8, 32))
    values = jax.lax.bitcast_convert_type(patterns, dtype)
    assert_same_values(in_kernel(lambda b: jax.lax.bitcast_convert_type(b, dtype), patterns), values,
                       f"uint8 to {ids(dtype)}")
    canonical = np.asarray(np.float32(np.nan)).astype(dtype).view(np.uint8)
    want = np.where(np.isnan(np.asarray(values).astype(np.float32)), canonical, np.asarray(patterns))
    got = in_kernel(lambda v: jax.lax.bitcast_convert_type(v, jnp.uint8), values)
    np.testing.assert_array_equal(np.asarray(got), want, err_msg=f"{ids(dtype)} to uint8")
    words = jax.lax.bitcast_convert_type(patterns.reshape(8, 8, 4), jnp.uint32)
    finite = jnp.asarray(np.where(np.isnan(np.asarray(values).astype(np.float32)), 0, np.asarray(patterns)))
    finite_values = jax.lax.bitcast_convert_type(finite.reshape(8, 8, 4), dtype)
    got = in_kernel(lambda v: jax.lax.bitcast_convert_type(v, jnp.uint32), finite_values)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(jax.lax.bitcast_convert_type(finite.reshape(8, 8, 4),
                                                                                            jnp.uint32)))
    assert_same_values(in_kernel(lambda w: jax.lax.bitcast_convert_type(w, dtype), words),
                       jax.lax.bitcast_convert_type(words, dtype), f"uint32 to {ids(dtype)} x4")


@pytest.mark.parametrize("dtype", FLOAT8, ids=ids)
def test_scalar_bitcasts_in_smem_match_xla(dtype):
    # A scalar read from SMEM bitcast to and from 8-bit types (JAX's
    # test_bitcast_scalar): scalars, not blocks, on both sides.
    from jax.experimental.pallas import tpu as pltpu

    smem = pl.BlockSpec(memory_space=pltpu.SMEM)
    for source, target in ((jnp.uint8, dtype), (jnp.int8, dtype), (dtype, jnp.uint8), (dtype, jnp.float8_e5m2)):
        if source == target:
            continue

        def kernel(x_ref, o_ref, target=target):
            o_ref[0] = jax.lax.bitcast_convert_type(x_ref[0], target)

        x = jax.lax.bitcast_convert_type(jnp.asarray([0x3A], jnp.uint8), source)
        got = pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct((1,), target), in_specs=[smem],
                             out_specs=smem)(x)
        want = jax.lax.bitcast_convert_type(x, target)
        np.testing.assert_array_equal(np.asarray(got).view(np.uint8), np.asarray(want).view(np.uint8),
                                      err_msg=f"{jnp.dtype(source).name} to {jnp.dtype(target).name}")
