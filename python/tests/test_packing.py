"""TPU element packing and stochastic rounding in kernels:
`pltpu.pack_elementwise` / `unpack_elementwise` (f32 <-> bfloat16 pairs,
integers 2 or 4 to a word) against numpy bit arithmetic, and
`pltpu.stochastic_round` checked as JAX's TPU test checks it (each result
is the neighbour below or above) plus its rate of rounding up."""

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

import tessel.jax

tessel.jax.install()

SHAPE = (8, 128)


def run(kernel, out_dtype, *args):
    call = pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct(SHAPE, out_dtype))
    return np.asarray(jax.jit(call)(*args))


def test_pack_and_unpack_bfloat16_pairs():
    keys = jax.random.split(jax.random.key(0), 2)
    x, y = (jax.random.normal(k, SHAPE, jnp.float32) * 100 for k in keys)

    def pack(x_ref, y_ref, o_ref):
        o_ref[...] = pltpu.pack_elementwise((x_ref[...], y_ref[...]), packed_dtype=jnp.bfloat16)

    packed = run(pack, jnp.uint32, x, y)
    low = np.asarray(x).astype(ml_dtypes.bfloat16).view(np.uint16).astype(np.uint32)
    high = np.asarray(y).astype(ml_dtypes.bfloat16).view(np.uint16).astype(np.uint32)
    np.testing.assert_array_equal(packed, low | (high << 16))

    for index, want in ((0, x), (1, y)):
        def unpack(p_ref, o_ref, index=index):
            o_ref[...] = pltpu.unpack_elementwise(p_ref[...], index=index, packed_dtype=jnp.bfloat16,
                                                  unpacked_dtype=jnp.float32)

        got = run(unpack, jnp.float32, jnp.asarray(packed))
        np.testing.assert_array_equal(got, np.asarray(want).astype(ml_dtypes.bfloat16).astype(np.float32))


@pytest.mark.parametrize("wide, narrow", [(jnp.int32, jnp.int8), (jnp.int32, jnp.int16), (jnp.int16, jnp.int8),
                                          (jnp.int32, jnp.uint8), (jnp.int32, jnp.int4), (jnp.int16, jnp.int4),
                                          (jnp.int8, jnp.int4)])
def test_pack_and_unpack_integers(wide, narrow):
    # Fields are the sources' low bits (truncated); unpacking sign-extends
    # signed packed types (int4 included: NumPy does not call it signed)
    # and zero-extends unsigned ones.
    wide_bits, narrow_bits = jnp.iinfo(wide).bits, jnp.iinfo(narrow).bits
    factor = wide_bits // narrow_bits
    rng = np.random.default_rng(factor + narrow_bits)
    xs = [rng.integers(-2**(wide_bits - 1), 2**(wide_bits - 1), SHAPE).astype(wide) for _ in range(factor)]

    def pack(*refs):
        *ins, o_ref = refs
        o_ref[...] = pltpu.pack_elementwise([r[...] for r in ins], packed_dtype=narrow)

    container = np.dtype(f"uint{wide_bits}")
    packed = run(pack, container, *xs)
    mask = (1 << narrow_bits) - 1
    fields = [x.view(container).astype(np.int64) & mask for x in xs]
    want = np.zeros(SHAPE, np.int64)
    for k, field in enumerate(fields):
        want |= field << (k * narrow_bits)
    np.testing.assert_array_equal(packed, want.astype(np.uint64).astype(container))

    signed = jnp.issubdtype(narrow, jnp.signedinteger)
    for index, field in enumerate(fields):
        def unpack(p_ref, o_ref, index=index):
            o_ref[...] = pltpu.unpack_elementwise(p_ref[...], index=index, packed_dtype=narrow, unpacked_dtype=wide)

        got = run(unpack, wide, jnp.asarray(packed))
        value = np.where(signed & (field >= 1 << (narrow_bits - 1)), field - (1 << narrow_bits), field)
        np.testing.assert_array_equal(got, value.astype(wide))


@pytest.mark.parametrize("target", [jnp.bfloat16, jnp.float8_e5m2, jnp.float8_e4m3fn, jnp.float8_e4m3b11fnuz])
def test_stochastic_round_picks_a_neighbour(target):
    # JAX's tpu_ops_test check: every result is x's neighbour below or
    # above in the target type.
    k1, k2 = jax.random.split(jax.random.key(4242), 2)
    x = jax.random.normal(k1, SHAPE, dtype=jnp.float32)
    bits = jax.random.bits(k2, SHAPE, dtype=jnp.uint32)

    def kernel(x_ref, b_ref, o_ref):
        o_ref[...] = pltpu.stochastic_round(x_ref[...], b_ref[...], target_dtype=target)

    result = jax.jit(pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct(SHAPE, target)))(x, bits)
    x_cast = x.astype(target)
    as_f32 = x_cast.astype(jnp.float32)
    info = jnp.finfo(target)
    lower = jnp.where(as_f32 > x, jnp.nextafter(x_cast, info.min), x_cast)
    upper = jnp.where(as_f32 < x, jnp.nextafter(x_cast, info.max), x_cast)
    width = jnp.dtype(target).itemsize * 8
    view = getattr(jnp, f"uint{width}")
    ok = (result.view(view) == lower.view(view)) | (result.view(view) == upper.view(view))
    assert bool(jnp.all(ok))


@pytest.mark.parametrize("target, value, rate", [(jnp.bfloat16, 1.0 + 2.0**-10, 1 / 8),
                                                 (jnp.float8_e4m3fn, 1.0 + 2.0**-5, 1 / 4),
                                                 (jnp.bfloat16, -(1.0 + 3 * 2.0**-9), 3 / 4)])
def test_stochastic_round_is_unbiased(target, value, rate):
    # Between two neighbours, up (in magnitude) as often as the fraction
    # of the step: 1 + 2^-10 lies 1/8 of the way from 1 to 1 + 2^-7.
    shape = (256, 128)
    bits = jax.random.bits(jax.random.key(7), shape, dtype=jnp.uint32)
    x = jnp.full(shape, value, jnp.float32)

    def kernel(x_ref, b_ref, o_ref):
        o_ref[...] = pltpu.stochastic_round(x_ref[...], b_ref[...], target_dtype=target)

    result = np.asarray(jax.jit(pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct(shape, target)))(x, bits))
    away = np.abs(result.astype(np.float32)) > abs(value)
    assert abs(away.mean() - rate) < 0.01
