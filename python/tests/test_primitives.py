"""Primitives that expand into several ops (inverse trigonometry, erf_inv,
nextafter, bit casts, arg-max, cumulative scans, roll, flip, batched and
permuted dot_general), through Tessel, against the same jnp computation
run by XLA."""

import itertools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def whole(kernel, out_shape, *args):
    """`kernel` on whole arrays (no grid)."""
    return pl.pallas_call(kernel, out_shape=out_shape)(*args)


def elementwise(fn, x):
    def kernel(x_ref, o_ref):
        o_ref[...] = fn(x_ref[...])

    out = jax.eval_shape(fn, x)
    return whole(kernel, jax.ShapeDtypeStruct(out.shape, out.dtype), x)


SPECIAL = [jnp.sinh, jnp.cosh, jnp.asinh, jnp.acosh, jnp.atanh, jnp.asin, jnp.acos, jnp.atan]


@pytest.mark.parametrize("fn", SPECIAL, ids=lambda f: f.__name__)
def test_inverse_and_hyperbolic_functions(fn):
    # Values in and out of each function's domain, near its edges, tiny and large.
    values = [-3e30, -100.0, -2.4, -1.0, -0.999, -0.42, -1e-30, -0.0, 0.0, 1e-6, 0.42, 0.999, 1.0, 1.4, 2.4,
              50.0, 3e30, np.inf, -np.inf, np.nan]
    x = jnp.asarray(np.array(values * 4, np.float32).reshape(8, 10))
    np.testing.assert_allclose(elementwise(fn, x), fn(x), rtol=2e-6, atol=0)


@pytest.mark.parametrize("dtype", [jnp.bfloat16, jnp.float16])
def test_special_functions_on_narrow_floats(dtype):
    # Computed in f32 and rounded once: within an ulp of the narrow type.
    x = jnp.asarray(np.linspace(-0.9, 0.9, 64, dtype=np.float32)).astype(dtype)
    for fn in SPECIAL:
        np.testing.assert_allclose(np.asarray(elementwise(fn, x), np.float32), np.asarray(fn(x), np.float32),
                                   rtol=float(jnp.finfo(dtype).eps), err_msg=fn.__name__)


def test_erf_inv():
    x = jnp.asarray(np.concatenate([np.linspace(-1, 1, 1001, dtype=np.float32),
                                    np.array([-3.2, 2.4, 0.9999999, np.nan], np.float32)]))
    np.testing.assert_allclose(elementwise(lax.erf_inv, x), lax.erf_inv(x), rtol=4e-6, atol=1e-7)


def test_nextafter_is_exact():
    # (No subnormal inputs: XLA's CPU runtime flushes them to zero.)
    values = np.array([-3.2, -0.0, 0.0, 5.1, np.nan, np.inf, -np.inf, 1.1754944e-38, -1.0, 3.4028235e38],
                      np.float32)
    x, y = (jnp.asarray(np.array(v, np.float32)) for v in zip(*itertools.product(values, values)))

    def kernel(x_ref, y_ref, o_ref):
        o_ref[...] = jnp.nextafter(x_ref[...], y_ref[...])

    out = whole(kernel, jax.ShapeDtypeStruct(x.shape, x.dtype), x, y)
    expected = jnp.nextafter(x, y)
    # Bit for bit, except that any NaN is a NaN.
    np.testing.assert_array_equal(np.isnan(out), np.isnan(expected))
    same = ~np.isnan(expected)
    np.testing.assert_array_equal(np.asarray(out).view(np.uint32)[same], np.asarray(expected).view(np.uint32)[same])


@pytest.mark.parametrize("source,target", [(jnp.float32, jnp.int32), (jnp.uint32, jnp.float32),
                                           (jnp.int16, jnp.bfloat16), (jnp.float16, jnp.uint16)])
def test_bitcast_convert_type(source, target):
    x = (jnp.arange(64) * 7919 - 200).astype(source).reshape(8, 8)
    np.testing.assert_array_equal(elementwise(lambda v: lax.bitcast_convert_type(v, target), x),
                                  lax.bitcast_convert_type(x, target))


def random_bits(rng, shape, dtype):
    """An array of `dtype` whose elements have random bit patterns."""
    size = jnp.dtype(dtype).itemsize
    data = jnp.asarray(rng.integers(0, 256, shape + ((size,) if size > 1 else ()), dtype=np.uint8))
    return lax.bitcast_convert_type(data, dtype)


@pytest.mark.parametrize("source,target", [(jnp.float32, jnp.uint8), (jnp.uint8, jnp.float32),
                                           (jnp.float32, jnp.bfloat16), (jnp.bfloat16, jnp.uint32),
                                           (jnp.int32, jnp.int16), (jnp.int8, jnp.uint32), (jnp.float16, jnp.int8),
                                           (jnp.uint16, jnp.int32)])
def test_bitcast_convert_type_between_widths(source, target):
    # A wider element becomes a new last dim of narrower ones, least
    # significant first, and back (NaN payloads and signs kept bit for bit).
    width = jnp.dtype(target).itemsize // jnp.dtype(source).itemsize
    shape = (4, 8, width) if width > 1 else (4, 8)
    x = random_bits(np.random.default_rng(11), shape, source)
    bits = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[jnp.dtype(target).itemsize]
    out = elementwise(lambda v: lax.bitcast_convert_type(v, target), x)
    expected = lax.bitcast_convert_type(x, target)
    np.testing.assert_array_equal(np.asarray(out).view(bits), np.asarray(expected).view(bits))


@pytest.mark.parametrize("source,target", [(jnp.int8, jnp.int4), (jnp.uint8, jnp.uint4), (jnp.int4, jnp.int8),
                                           (jnp.uint4, jnp.uint8), (jnp.int32, jnp.int4), (jnp.int4, jnp.float32),
                                           (jnp.int16, jnp.uint4), (jnp.uint4, jnp.bfloat16), (jnp.int8, jnp.uint2),
                                           (jnp.int2, jnp.uint8), (jnp.int4, jnp.uint2), (jnp.uint2, jnp.int4),
                                           (jnp.int4, jnp.uint4), (jnp.uint4, jnp.int4)])
def test_bitcast_convert_type_to_and_from_sub_byte_integers(source, target):
    # 4- and 2-bit fields, the least significant first; signed ones read
    # back sign-extended, as XLA's.
    source_bits, target_bits = jnp.iinfo(source).bits, jnp.iinfo(target).bits if jnp.issubdtype(
        target, jnp.integer) else jnp.finfo(target).bits
    rng = np.random.default_rng(5)
    shape = (4, 8) + ((target_bits // source_bits,) if target_bits > source_bits else ())
    info = jnp.iinfo(source)
    x = jnp.asarray(rng.integers(int(info.min), int(info.max) + 1, shape), source)
    out = elementwise(lambda v: lax.bitcast_convert_type(v, target), x)
    expected = lax.bitcast_convert_type(x, target)
    assert out.dtype == expected.dtype and out.shape == expected.shape
    np.testing.assert_array_equal(np.asarray(out.astype(jnp.float32) if target_bits < 8 else out).view(np.uint8),
                                  np.asarray(expected.astype(jnp.float32) if target_bits < 8 else expected)
                                  .view(np.uint8))


@pytest.mark.parametrize("source,target", [(jnp.bfloat16, jnp.uint32), (jnp.uint32, jnp.bfloat16),
                                           (jnp.int8, jnp.int32), (jnp.float32, jnp.float32)])
def test_tpu_bitcast_packs_the_second_minor_dim(source, target):
    # pltpu.bitcast (JAX's test_bfloat16_to_uint32_bitcast), against
    # jax.jit of the same primitive.
    x = random_bits(np.random.default_rng(12), (16, 128), source)
    out = elementwise(lambda v: pltpu.bitcast(v, target), x)
    expected = jax.jit(lambda v: pltpu.bitcast(v, target))(x)
    bits = {1: np.uint8, 2: np.uint16, 4: np.uint32}[jnp.dtype(target).itemsize]
    np.testing.assert_array_equal(np.asarray(out).view(bits), np.asarray(expected).view(bits))


@pytest.mark.parametrize("fn", [lax.population_count, lax.clz], ids=lambda f: f.__name__)
def test_bit_counts(fn):
    x = jnp.asarray(np.array([0, 1, -1, 7, 1 << 30, -(1 << 31), 12345, 65535], np.int32))
    np.testing.assert_array_equal(elementwise(fn, x), fn(x))


@pytest.mark.parametrize("reduce", [jnp.argmax, jnp.argmin], ids=lambda f: f.__name__)
@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("dtype", [jnp.float32, jnp.int32, jnp.uint32, jnp.bfloat16])
def test_arg_extremes(reduce, axis, dtype):
    rng = np.random.default_rng(3)
    # Few distinct values, so ties pick the first index.
    x = rng.integers(0, 5, (16, 8)).astype(np.float32)
    if dtype in (jnp.float32, jnp.bfloat16):
        x[3, 2] = x[9, 5] = x[10, 5] = np.nan
    x = jnp.asarray(x).astype(dtype)
    np.testing.assert_array_equal(elementwise(lambda v: reduce(v, axis=axis), x), reduce(x, axis=axis))


@pytest.mark.parametrize("fn", [jnp.all, jnp.any], ids=lambda f: f.__name__)
def test_boolean_reductions(fn):
    x = jnp.asarray(np.random.default_rng(0).random((8, 16)) < 0.9)
    for axis in (0, 1, None):
        np.testing.assert_array_equal(elementwise(lambda v: fn(v, axis=axis), x), fn(x, axis=axis))


@pytest.mark.parametrize("scan", [jnp.cumsum, jnp.cumprod, lax.cummax, lax.cummin, "reverse"],
                         ids=lambda f: getattr(f, "__name__", f))
@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("dtype", [jnp.float32, jnp.int32])
def test_cumulative_scans(scan, axis, dtype):
    x = jnp.asarray(np.random.default_rng(1).integers(-3, 4, (13, 6))).astype(dtype)
    if scan == "reverse":
        def scan(v, axis):
            return lax.cumsum(v, axis=axis, reverse=True)
    np.testing.assert_allclose(elementwise(lambda v: scan(v, axis=axis), x), scan(x, axis=axis), rtol=1e-6)


@pytest.mark.parametrize("scan", [jnp.cumsum, jnp.cumprod], ids=lambda f: f.__name__)
@pytest.mark.parametrize("dtype", [jnp.float16, jnp.bfloat16])
def test_cumulative_scans_of_16_bit_floats_round_once(scan, dtype):
    # Sums and products of 16-bit floats accumulate in f32 (as XLA's CPU
    # code and jnp.sum do): against the exact scan rounded once, within
    # an ulp, where rounding every step drifted by several (JAX's
    # ops_test.test_cumsum0 caught 0.277 for 0.293 in float16).
    rng = np.random.default_rng(5)
    x = rng.standard_normal((32, 8)) if scan is jnp.cumsum else rng.uniform(0.5, 1.5, (32, 8))
    x = jnp.asarray(x, dtype)
    exact = np.asarray(scan(np.asarray(x, np.float64), axis=0))
    out = np.asarray(elementwise(lambda v: scan(v, axis=0), x), np.float64)
    ulp = float(jnp.finfo(dtype).eps)
    np.testing.assert_allclose(out, np.asarray(jnp.asarray(exact, dtype), np.float64), rtol=ulp, atol=1e-4)


@pytest.mark.parametrize("shape,axis", [((15, 256), 0), ((8, 100), 1), ((5, 8, 64), 2)])
@pytest.mark.parametrize("shift", [0, 3, 129])
def test_roll_static(shape, axis, shift):
    x = jnp.arange(np.prod(shape), dtype=jnp.float32).reshape(shape)
    np.testing.assert_array_equal(elementwise(lambda v: pltpu.roll(v, shift, axis), x), np.roll(x, shift, axis))


def test_roll_with_a_dynamic_shift_and_a_stride():
    x = jnp.arange(8 * 128, dtype=jnp.int32).reshape(8, 128)

    def kernel(s_ref, x_ref, o_ref, p_ref):
        o_ref[...] = pltpu.roll(x_ref[...], s_ref[0], 1)
        p_ref[...] = pltpu.roll(x_ref[...], 5, 1, stride=3, stride_axis=0)

    shape = jax.ShapeDtypeStruct(x.shape, x.dtype)
    for shift in (0, 7, 130, -3):
        rolled, strided = pl.pallas_call(kernel, out_shape=(shape, shape))(jnp.array([shift], jnp.int32), x)
        np.testing.assert_array_equal(rolled, np.roll(x, shift, 1))
    np.testing.assert_array_equal(strided, np.stack([np.roll(x[i], 5 + 3 * i) for i in range(8)]))


@pytest.mark.parametrize("flip", [
    lambda v: jnp.flip(v), lambda v: v[::-1], lambda v: v[:, ::-1], lambda v: jnp.flip(v, 2) * 2 + v,
    lambda v: v[::-1, ::3, ::-2], lambda v: jnp.flip(v[0, :, :1], 0),
], ids=["all", "rows", "columns", "last-then-arithmetic", "strided", "of-a-slice"])
@pytest.mark.parametrize("dtype", [jnp.float32, jnp.int8, jnp.bool_])
def test_flip(flip, dtype):
    # `lax.rev` (jnp.flip, negative strides), once unsupported.
    x = jnp.asarray(np.random.default_rng(0).integers(-100, 100, (4, 16, 128))).astype(dtype)
    np.testing.assert_array_equal(elementwise(flip, x), jax.jit(flip)(x))


def random_dot_general(rng):
    """A dot_general with random batch, contracted and free dims, placed in
    random orders in both operands."""
    batch = list(rng.integers(1, 4, rng.integers(0, 3)))
    contracted = list(rng.integers(1, 9, rng.integers(1, 3)))
    free_a = list(rng.integers(1, 7, rng.integers(0, 3)))
    free_b = list(rng.integers(1, 7, rng.integers(0, 3)))

    def operand(free):
        dims = [("b", i) for i in range(len(batch))] + [("c", i) for i in range(len(contracted))] + \
               [("f", i) for i in range(len(free))]
        order = [dims[i] for i in rng.permutation(len(dims))]
        sizes = {"b": batch, "c": contracted, "f": free}
        return order, tuple(int(sizes[kind][i]) for kind, i in order)

    (order_a, shape_a), (order_b, shape_b) = operand(free_a), operand(free_b)

    def where(order, kind, count):
        return tuple(order.index((kind, i)) for i in range(count))

    numbers = ((where(order_a, "c", len(contracted)), where(order_b, "c", len(contracted))),
               (where(order_a, "b", len(batch)), where(order_b, "b", len(batch))))
    return shape_a, shape_b, numbers


@pytest.mark.parametrize("seed", range(24))
def test_dot_general_differential(seed):
    # Generated layouts: batch dims anywhere, several contracted and free
    # dims, transposed operands; integer values so every order sums exactly.
    rng = np.random.default_rng(seed)
    shape_a, shape_b, numbers = random_dot_general(rng)
    a = jnp.asarray(rng.integers(-4, 5, shape_a), jnp.float32)
    b = jnp.asarray(rng.integers(-4, 5, shape_b), jnp.float32)

    def product(x, y):
        return lax.dot_general(x, y, numbers)

    def kernel(a_ref, b_ref, o_ref):
        o_ref[...] = product(a_ref[...], b_ref[...])

    expected = product(a, b)
    out = whole(kernel, jax.ShapeDtypeStruct(expected.shape, expected.dtype), a, b)
    np.testing.assert_array_equal(out, expected, err_msg=f"{shape_a} x {shape_b} with {numbers}")


@pytest.mark.parametrize("dtype", [jnp.bfloat16, jnp.float16])
@pytest.mark.parametrize("batched", [False, True])
def test_16_bit_dots_accumulate_in_f32(dtype, batched):
    # A dot of 16-bit floats without preferred_element_type: products
    # summed in f32 and rounded once, as jax.jit does. Summed in bf16, the
    # error was 8x jax.jit's (108 against 12.7 on results near 900).
    rng = np.random.default_rng(3)
    lead = (2,) if batched else ()
    x = jnp.asarray(rng.normal(0, 100, lead + (16, 256)), np.float32).astype(dtype)
    y = jnp.asarray(rng.normal(0, 1, lead + (256, 128)), np.float32).astype(dtype)

    def kernel(x_ref, y_ref, o_ref):
        o_ref[...] = jnp.matmul(x_ref[...], y_ref[...])

    out = np.asarray(whole(kernel, jax.ShapeDtypeStruct(lead + (16, 128), dtype), x, y), np.float64)
    x64, y64 = np.asarray(x, np.float64), np.asarray(y, np.float64)
    exact = np.matmul(x64, y64)
    # One rounding to the 16-bit type plus f32's summation error.
    rounding = np.ldexp(1.0, np.floor(np.log2(np.abs(exact))).astype(int) - jnp.finfo(dtype).nmant)
    summation = 256 * 2.0**-24 * np.matmul(np.abs(x64), np.abs(y64))
    assert np.all(np.abs(out - exact) <= rounding + summation), np.max(np.abs(out - exact) / (rounding + summation))


def test_batched_einsum_and_stack():
    k1, k2 = jax.random.split(jax.random.key(0))
    q, k = jax.random.normal(k1, (4, 16, 32)), jax.random.normal(k2, (4, 24, 32))

    def kernel(q_ref, k_ref, s_ref, t_ref):
        scores = jnp.einsum("bqd,bkd->bqk", q_ref[...], k_ref[...])
        s_ref[...] = scores
        t_ref[...] = jnp.stack([scores[0], scores[3]], axis=1)

    s, t = pl.pallas_call(kernel, out_shape=(jax.ShapeDtypeStruct((4, 16, 24), jnp.float32),
                                             jax.ShapeDtypeStruct((16, 2, 24), jnp.float32)))(q, k)
    expected = jnp.einsum("bqd,bkd->bqk", q, k, precision="highest")
    np.testing.assert_allclose(s, expected, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(t, jnp.stack([expected[0], expected[3]], axis=1), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("fn", [jnp.expm1, jnp.log1p, jnp.cbrt, lax.erf], ids=lambda f: f.__name__)
def test_library_functions_keep_their_precision(fn):
    # expm1/log1p once lowered as exp(x) - 1 and log(1 + x): 0 for 1e-30.
    x = jnp.asarray(np.array([1e-30, -1e-30, 1e-10, 1e-6, -1e-6, 1e-3, 0.1, 0.42, -0.3, 3.0, 20.0], np.float32))
    np.testing.assert_allclose(elementwise(fn, x), fn(x), rtol=3e-7, atol=0)


@pytest.mark.parametrize("seed", range(4))
def test_f32_to_bf16_rounds_every_bit_pattern_like_xla(seed):
    # Random f32 bit patterns (subnormals, NaNs, infinities, exact ties
    # included) narrowed to bf16: round to nearest even, subnormals kept
    # (x86's vcvtneps2bf16 would flush them), compared bit for bit with
    # XLA's conversion.
    rng = np.random.default_rng(seed)
    bits = rng.integers(0, 1 << 32, 4096, dtype=np.uint64).astype(np.uint32)
    bits[:64] = rng.integers(1, 1 << 23, 64, dtype=np.uint64).astype(np.uint32)  # subnormals
    bits[64:128] = (bits[64:128] & 0xFFFF0000) | 0x8000  # ties
    x = jnp.asarray(bits.view(np.float32).reshape(64, 64))
    out = elementwise(lambda v: v.astype(jnp.bfloat16), x)
    expected = x.astype(jnp.bfloat16)
    nan = np.isnan(np.asarray(expected, np.float32))
    np.testing.assert_array_equal(np.isnan(np.asarray(out, np.float32)), nan)
    np.testing.assert_array_equal(np.asarray(out).view(np.uint16)[~nan], np.asarray(expected).view(np.uint16)[~nan])


def test_float_to_bool_treats_subnormals_as_xla_does():
    # XLA converts bf16 on the bits (a subnormal is true) and compares
    # other floats with zero on threads that flush subnormals (false).
    x = jnp.asarray(np.array([0.0, -0.0, 1e-45, -1e-40, 1e-38, 1.0, np.nan, -np.inf], np.float32))
    for dtype in (jnp.float32, jnp.bfloat16):
        v = x.astype(dtype)
        out = elementwise(lambda a: a.astype(jnp.bool_).astype(jnp.int32), v)
        np.testing.assert_array_equal(out, jax.jit(lambda a: a.astype(jnp.bool_).astype(jnp.int32))(v),
                                      err_msg=str(dtype))


def test_sign_and_log_read_subnormals_as_zeros():
    # On XLA's threads a subnormal input is zero: sign gives a zero (it
    # passed the subnormal through) and log -inf (glibc's logf, reading
    # the bits of a flushed product, gave -103.97 for 1e-40; the true
    # value is -92.1).
    x = jnp.asarray(np.array([1e-40, -1e-40, 1e-45, -3e-39, 0.0, -0.0, 1e-37, np.nan], np.float32))
    for fn, dtype in itertools.product((jnp.sign, jnp.log, jnp.log2, jnp.log10), (jnp.float32, jnp.bfloat16)):
        v = x.astype(dtype)
        out, expected = np.asarray(elementwise(fn, v), np.float32), np.asarray(jax.jit(fn)(v), np.float32)
        nan, where = np.isnan(expected), f"{fn.__name__} {dtype.__name__}"
        np.testing.assert_array_equal(np.isnan(out), nan, err_msg=where)
        np.testing.assert_array_equal(out[~nan].view(np.uint32), expected[~nan].view(np.uint32), err_msg=where)


@pytest.mark.parametrize("dtype", [jnp.float32, jnp.float16, jnp.bfloat16, jnp.int32])
def test_integer_pow_multiplies_in_jaxs_order(dtype):
    # JAX defines x**n by squaring (`lax._integer_pow`: x**4 = (x*x)*(x*x));
    # another order of the same products differs in a float's last bit.
    # Every power from -9 to 9, bit for bit against numpy multiplying in
    # that order, each product rounded to the dtype (no subnormals arise).
    rng = np.random.default_rng(7)
    if jnp.issubdtype(dtype, jnp.integer):
        x = np.asarray(rng.integers(-7, 8, (8, 128)), dtype)
    else:
        x = np.asarray(rng.uniform(0.5, 1.6, (8, 128)) * rng.choice([-1, 1], (8, 128)), dtype)

    def by_squaring(a, n):
        result, square, remaining = None, a, abs(n)
        while remaining:
            if remaining & 1:
                result = square if result is None else result * square
            remaining >>= 1
            if remaining:
                square = square * square
        if result is None:
            return np.ones_like(a)
        return np.ones_like(a) / result if n < 0 else result

    for power in range(-9, 10):
        if power < 0 and jnp.issubdtype(dtype, jnp.integer):
            continue
        out = np.asarray(elementwise(lambda v, power=power: lax.integer_pow(v, power), jnp.asarray(x)))
        expected = by_squaring(x, power)
        bits = {2: np.uint16, 4: np.uint32}[out.dtype.itemsize]
        np.testing.assert_array_equal(out.view(bits), expected.view(bits), err_msg=f"x**{power} in {dtype.__name__}")


def test_integer_edges_give_xlas_results_instead_of_a_trap():
    # x86's idiv traps on x / 0 and INT_MIN / -1 (SIGFPE killed the
    # process); LLVM makes shifts by the width poison. XLA defines them all.
    lowest = np.iinfo(np.int32).min
    a = np.array([7, -7, lowest, lowest, 7, -7, 0, 5], np.int32)
    b = np.array([0, 0, -1, 0, 2, 2, 0, -1], np.int32)

    def both(fn, x, y):
        def kernel(x_ref, y_ref, o_ref):
            o_ref[...] = fn(x_ref[...], y_ref[...])

        return np.asarray(whole(kernel, jax.ShapeDtypeStruct(x.shape, x.dtype), x, y))

    np.testing.assert_array_equal(both(lax.div, a, b), [-1, -1, lowest, -1, 3, -3, -1, -5])
    np.testing.assert_array_equal(both(lax.rem, a, b), [7, -7, 0, lowest, 1, -1, 0, 0])
    unsigned = np.array([7, 0, 4294967295, 9], np.uint32)
    zeros = np.array([0, 0, 0, 4], np.uint32)
    np.testing.assert_array_equal(both(lax.div, unsigned, zeros), [4294967295, 4294967295, 4294967295, 2])
    np.testing.assert_array_equal(both(lax.rem, unsigned, zeros), [7, 0, 4294967295, 1])
    x = np.array([1, 1, -8, 8, -8, -8, 3, 3], np.int32)
    by = np.array([31, 32, 40, 40, 32, -1, 1, 33], np.int32)
    np.testing.assert_array_equal(both(lax.shift_left, x, by), [lowest, 0, 0, 0, 0, 0, 6, 0])
    np.testing.assert_array_equal(both(lax.shift_right_arithmetic, x, by), [0, 0, -1, 0, -1, -1, 1, 0])
    np.testing.assert_array_equal(both(lax.shift_right_logical, x, by), [0, 0, 0, 0, 0, 0, 1, 0])
    # clamp(low, x, high) is min(max(x, low), high): high where low > high.
    np.testing.assert_array_equal(both(lambda v, w: lax.clamp(v, jnp.zeros_like(v), w), np.array([5, -3], np.int32),
                                       np.array([-7, 4], np.int32)), [-7, 0])


def test_float_to_an_integer_power():
    x = jnp.asarray(np.linspace(-2, 2, 16, dtype=np.float32))
    n = jnp.asarray(np.arange(-8, 8, dtype=np.int32))

    def kernel(x_ref, n_ref, o_ref):
        o_ref[...] = lax.pow(x_ref[...], n_ref[...])

    out = whole(kernel, jax.ShapeDtypeStruct(x.shape, x.dtype), x, n)
    np.testing.assert_allclose(out, lax.pow(x, n), rtol=1e-6)


def test_library_functions_on_bfloat16():
    x = jnp.asarray(np.linspace(-3, 3, 64, dtype=np.float32)).astype(jnp.bfloat16)
    for fn in (jnp.cbrt, jnp.expm1, jnp.log1p):
        np.testing.assert_allclose(np.asarray(elementwise(fn, x), np.float32), np.asarray(fn(x), np.float32),
                                   rtol=float(jnp.finfo(jnp.bfloat16).eps), err_msg=fn.__name__)


def test_unsupported_dtypes_are_named():
    x = jnp.ones((8, 128), jnp.float4_e2m1fn)
    with pytest.raises(NotImplementedError, match="float4_e2m1fn"):
        elementwise(lambda a: a, x)
