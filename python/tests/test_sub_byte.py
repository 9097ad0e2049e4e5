"""Integers narrower than a byte (int4, uint4, int2, uint2) as kernel inputs,
outputs and values: every operation on every pair of values, casts at edge
values and a dequantizing int4 matmul, against jax.jit (XLA) or numpy."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax
from jax.experimental import pallas as pl
from kernel_calls import in_kernel

SUB_BYTE = [jnp.int4, jnp.uint4, jnp.int2, jnp.uint2]
ids = lambda dtype: jnp.dtype(dtype).name  # noqa: E731


def every_value(dtype):
    info = jnp.iinfo(dtype)
    return np.arange(int(info.min), int(info.max) + 1)


def every_pair(dtype):
    """(a, b): every pair of the type's values, as two (n, n) arrays."""
    a, b = np.meshgrid(every_value(dtype), every_value(dtype))
    return jnp.asarray(a.astype(np.int32)).astype(dtype), jnp.asarray(b.astype(np.int32)).astype(dtype)


def assert_same(got, want, what):
    assert got.dtype == want.dtype, what
    np.testing.assert_array_equal(np.asarray(got).astype(np.int64), np.asarray(want).astype(np.int64), err_msg=what)


BINARY = {"add": lax.add, "sub": lax.sub, "mul": lax.mul, "div": lax.div, "rem": lax.rem, "max": lax.max,
          "min": lax.min, "and": lax.bitwise_and, "or": lax.bitwise_or, "xor": lax.bitwise_xor,
          "shift_left": lax.shift_left, "shift_right_logical": lax.shift_right_logical,
          "shift_right_arithmetic": lax.shift_right_arithmetic, "lt": lax.lt, "ge": lax.ge, "eq": lax.eq}
UNARY = {"neg": lax.neg, "not": lax.bitwise_not, "clz": lax.clz, "sign": lax.sign, "square": lambda a: a * a,
         "cube": lambda a: lax.integer_pow(a, 3)}


@pytest.mark.parametrize("dtype", SUB_BYTE, ids=ids)
def test_operations_on_every_pair_of_values_match_xla(dtype):
    # Kernels compute in an 8-bit container; every result must wrap around
    # (or saturate, or compare) as XLA's narrow type does. Division by zero
    # and shifts by the width or more included: the pairs cover them.
    a, b = every_pair(dtype)
    for name, fn in BINARY.items():
        assert_same(in_kernel(fn, a, b), jax.jit(fn)(a, b), f"{name} on {ids(dtype)}")
    for name, fn in UNARY.items():
        assert_same(in_kernel(fn, a), jax.jit(fn)(a), f"{name} on {ids(dtype)}")


@pytest.mark.parametrize("dtype", SUB_BYTE, ids=ids)
def test_population_count_counts_the_types_own_bits(dtype):
    # XLA's CPU code counts an int4's sign-extended byte (5 for -8) but an
    # int2's own bits; Tessel counts the type's own bits for all four.
    bits = jnp.iinfo(dtype).bits
    values = every_value(dtype)
    x = jnp.asarray(values.astype(np.int32)).astype(dtype)
    expected = np.array([bin(int(v) & ((1 << bits) - 1)).count("1") for v in values])
    wrapped = (expected + (1 << (bits - 1))) % (1 << bits) - (1 << (bits - 1)) if jnp.issubdtype(
        dtype, jnp.signedinteger) else expected
    np.testing.assert_array_equal(np.asarray(in_kernel(lax.population_count, x)).astype(np.int64), wrapped)


EDGE_FLOATS = np.array([0.0, -0.0, 0.4, -0.6, 1.0, 1.9, -1.5, -2.0, 2.5, 3.99, 7.5, 7.99, 8.0, -8.0, -8.5, -9.0, 15.2,
                        15.99, 16.0, 100.0, -100.0, 1e30, -1e30, np.inf, -np.inf, np.nan, 1e-40, -3.0], np.float32)
EDGE_INTS = np.array([0, 1, -1, 2, -2, 3, 7, 8, -8, -9, 15, 16, 17, 127, -128, 255, 1000, -1000, 2**31 - 1, -2**31],
                     np.int64)


@pytest.mark.parametrize("dtype", SUB_BYTE, ids=ids)
def test_casts_into_the_type_saturate_floats_and_wrap_integers_like_xla(dtype):
    sources = [jnp.asarray(EDGE_FLOATS), jnp.asarray(EDGE_FLOATS).astype(jnp.bfloat16),
               jnp.asarray(EDGE_INTS.astype(np.int32)), jnp.asarray(EDGE_INTS.astype(np.int32)).astype(jnp.uint32),
               jnp.asarray(EDGE_INTS.astype(np.int32)).astype(jnp.int8), jnp.asarray(EDGE_INTS % 2 == 0)]
    for source in sources:
        cast = lambda v: v.astype(dtype)  # noqa: E731
        assert_same(in_kernel(cast, source), jax.jit(cast)(source), f"{source.dtype} to {ids(dtype)}")
    for other in SUB_BYTE:
        x = jnp.asarray(every_value(other).astype(np.int32)).astype(other)
        cast = lambda v: v.astype(dtype)  # noqa: E731
        assert_same(in_kernel(cast, x), jax.jit(cast)(x), f"{ids(other)} to {ids(dtype)}")


@pytest.mark.parametrize("dtype", SUB_BYTE, ids=ids)
@pytest.mark.parametrize("target", [jnp.float32, jnp.bfloat16, jnp.int8, jnp.uint8, jnp.int32, jnp.uint32, jnp.bool_],
                         ids=ids)
def test_casts_out_of_the_type_match_xla(dtype, target):
    x = jnp.asarray(every_value(dtype).astype(np.int32)).astype(dtype)
    cast = lambda v: v.astype(target)  # noqa: E731
    assert_same(in_kernel(cast, x), jax.jit(cast)(x), f"{ids(dtype)} to {ids(target)}")


@pytest.mark.parametrize("dtype", [jnp.int4, jnp.uint4], ids=ids)
def test_iota_and_constants_wrap_into_the_type(dtype):
    def fn(v):
        return v + lax.broadcasted_iota(dtype, v.shape, 1) + jnp.asarray(5, dtype)

    x = jnp.asarray(np.tile(every_value(dtype), (2, 2)).astype(np.int32)).astype(dtype)
    assert_same(in_kernel(fn, x), jax.jit(fn)(x), ids(dtype))


@pytest.mark.parametrize("signed", [True, False])
def test_int4_weights_dequantized_in_a_tiled_matmul(signed):
    # The quantized-weights idiom: int4 (or uint4 with a zero point)
    # weights streamed block by block over a (i, j, k) grid, widened and
    # scaled per output column in the kernel, accumulated in the output.
    rng = np.random.default_rng(3)
    m, k, n, bm, bk, bn = 64, 256, 128, 32, 64, 64
    dtype, zero_point = (jnp.int4, 0) if signed else (jnp.uint4, 8)
    info = jnp.iinfo(dtype)
    w = rng.integers(int(info.min), int(info.max) + 1, (k, n))
    x = rng.standard_normal((m, k)).astype(np.float32)
    scale = rng.uniform(0.01, 0.1, (1, n)).astype(np.float32)

    def kernel(x_ref, w_ref, s_ref, o_ref):
        @pl.when(pl.program_id(2) == 0)
        def _():
            o_ref[...] = jnp.zeros_like(o_ref)

        weights = (w_ref[...].astype(jnp.float32) - zero_point) * s_ref[...]
        o_ref[...] += jnp.dot(x_ref[...], weights, preferred_element_type=jnp.float32)

    call = pl.pallas_call(
        kernel,
        grid=(m // bm, n // bn, k // bk),
        in_specs=[pl.BlockSpec((bm, bk), lambda i, j, kk: (i, kk)), pl.BlockSpec((bk, bn), lambda i, j, kk: (kk, j)),
                  pl.BlockSpec((1, bn), lambda i, j, kk: (0, j))],
        out_specs=pl.BlockSpec((bm, bn), lambda i, j, kk: (i, j)),
        out_shape=jax.ShapeDtypeStruct((m, n), jnp.float32),
    )
    out = jax.jit(call)(jnp.asarray(x), jnp.asarray(w.astype(np.int32)).astype(dtype), jnp.asarray(scale))
    expected = x.astype(np.float64) @ ((w - zero_point) * scale.astype(np.float64))
    np.testing.assert_allclose(np.asarray(out), expected, rtol=1e-5, atol=1e-5)


def test_sub_byte_outputs_alias_their_inputs():
    # input_output_aliases across the widening: the int4 result replaces
    # the int4 operand it aliases.
    x = jnp.asarray(np.arange(-8, 8).reshape(2, 8).astype(np.int32)).astype(jnp.int4)

    def kernel(x_ref, o_ref):
        o_ref[...] = x_ref[...] * jnp.asarray(3, jnp.int4)

    out = jax.jit(pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
                                 input_output_aliases={0: 0}))(x)
    assert_same(out, jax.jit(lambda v: v * jnp.asarray(3, jnp.int4))(x), "aliased int4")


@pytest.mark.parametrize("dtype", [jnp.int4, jnp.uint4], ids=ids)
def test_sub_byte_dot_accumulates_in_int32(dtype):
    # (XLA's CPU backend rejects this program outside a kernel; numpy is
    # the reference.)
    info = jnp.iinfo(dtype)
    rng = np.random.default_rng(5)
    a = rng.integers(int(info.min), int(info.max) + 1, (32, 64))
    b = rng.integers(int(info.min), int(info.max) + 1, (64, 48))

    def kernel(a_ref, b_ref, o_ref):
        o_ref[...] = jnp.dot(a_ref[...], b_ref[...], preferred_element_type=jnp.int32)

    call = pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct((32, 48), jnp.int32))
    out = jax.jit(call)(jnp.asarray(a.astype(np.int32)).astype(dtype), jnp.asarray(b.astype(np.int32)).astype(dtype))
    np.testing.assert_array_equal(np.asarray(out), a @ b)
