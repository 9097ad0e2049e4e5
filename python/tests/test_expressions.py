"""Random element-wise expressions through Tessel, compared with numpy
evaluating the same expression in float32.

Only operations IEEE 754 rounds correctly (or that are exact) are drawn:
+, -, *, /, sqrt, remainders, min, max, abs, negation, sign, floor, ceil,
trunc, round (half to even), comparisons and selects, integer powers. Each has one right answer for a given order of
operations, and that order is the one JAX defines (x**n by squaring, as
`lax.integer_pow` lowers; a*b + c rounded twice), so any difference is a
translation that computes something else. numpy is the reference, not
jax.jit: XLA's CPU code contracts a*b + c into one fused multiply-add,
which rounds once. Like XLA's CPU code, Tessel's flushes subnormal
results to zero; the reference does the same after every operation. f32
only: 16-bit floats may legitimately be kept in f32 between operations
(XLA's excess precision)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax
from jax.experimental import pallas as pl


def flushed(m, value):
    """`value` with subnormal results flushed to zero (sign kept), as the
    CPU runs compiled kernels; kernel values as they are."""
    if m is jnp:
        return value
    value = np.asarray(value, np.float32)
    return np.where(np.abs(value) < np.finfo(np.float32).tiny, np.copysign(np.float32(0), value), value)


def power(m, a, n):
    """a**n: lax.integer_pow in a kernel, JAX's squaring order in numpy."""
    if m is jnp:
        return lax.integer_pow(a, n)
    result, square, remaining = None, a, abs(n)
    while remaining:
        if remaining & 1:
            result = square if result is None else flushed(m, result * square)
        remaining >>= 1
        if remaining:
            square = flushed(m, square * square)
    if result is None:
        return np.ones_like(a)
    return flushed(m, np.float32(1) / result) if n < 0 else result


# Operations on a namespace `m`: jnp inside the kernel, np for the reference.
UNARY = {
    "neg": lambda m, a: -a,
    "abs": lambda m, a: m.abs(a),
    "sqrt_abs": lambda m, a: m.sqrt(m.abs(a)),
    "floor": lambda m, a: m.floor(a),
    "ceil": lambda m, a: m.ceil(a),
    "square": lambda m, a: lax.square(a) if m is jnp else a * a,
    "round": lambda m, a: m.round(a),
    "trunc": lambda m, a: m.trunc(a),
    "sign": lambda m, a: m.sign(a),
}
BINARY = {
    "add": lambda m, a, b: a + b,
    "sub": lambda m, a, b: a - b,
    "mul": lambda m, a, b: a * b,
    "div": lambda m, a, b: a / b,
    "max": lambda m, a, b: m.maximum(a, b),
    "min": lambda m, a, b: m.minimum(a, b),
    "rem": lambda m, a, b: lax.rem(a, b) if m is jnp else np.fmod(a, b),
    "select": lambda m, a, b: m.where(a > b, a, b * np.float32(0.5)),
}


def expression(rng, depth, inputs):
    """(text, fn(m, *xs)) of a random expression over `inputs` arguments."""
    if depth == 0 or rng.random() < 0.2:
        index = int(rng.integers(inputs))
        return f"x{index}", lambda m, *xs, index=index: xs[index]
    choice = rng.random()
    if choice < 0.25:
        name = str(rng.choice(list(UNARY)))
        text, inner = expression(rng, depth - 1, inputs)
        return f"{name}({text})", lambda m, *xs: flushed(m, UNARY[name](m, inner(m, *xs)))
    if choice < 0.4:
        n = int(rng.integers(-5, 8))
        text, inner = expression(rng, depth - 1, inputs)
        return f"({text})**{n}", lambda m, *xs: power(m, inner(m, *xs), n)
    name = str(rng.choice(list(BINARY)))
    (left_text, left), (right_text, right) = expression(rng, depth - 1, inputs), expression(rng, depth - 1, inputs)
    return f"{name}({left_text}, {right_text})", lambda m, *xs: flushed(m, BINARY[name](m, left(m, *xs), right(m, *xs)))


@pytest.mark.parametrize("seed", range(60))
def test_expressions_match_numpy(seed):
    rng = np.random.default_rng(seed)
    inputs = int(rng.integers(1, 4))
    text, fn = expression(rng, int(rng.integers(1, 5)), inputs)
    args = [rng.uniform(-3, 3, (8, 128)).astype(np.float32) for _ in range(inputs)]

    def kernel(*refs):
        refs[-1][...] = fn(jnp, *[ref[...] for ref in refs[:-1]])

    out = np.asarray(pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct((8, 128), jnp.float32))(*args))
    with np.errstate(all="ignore"):
        expected = np.asarray(fn(np, *args), np.float32)
    # Equal as floats (the sign of a zero from min/max of +0 and -0 is
    # the implementation's choice); NaN where numpy has NaN.
    nan = np.isnan(expected)
    np.testing.assert_array_equal(np.isnan(out), nan, err_msg=text)
    np.testing.assert_array_equal(out[~nan], expected[~nan], err_msg=text)


INTEGER_BINARY = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "div": lax.div,
    "rem": lax.rem,
    "floor_divide": jnp.floor_divide,
    "mod": jnp.mod,
    "shift_left": lax.shift_left,
    "shift_right_arithmetic": lax.shift_right_arithmetic,
    "shift_right_logical": lax.shift_right_logical,
    "and": lambda a, b: a & b,
    "or": lambda a, b: a | b,
    "xor": lambda a, b: a ^ b,
    "max": jnp.maximum,
    "min": jnp.minimum,
    "clamp": lambda a, b: lax.clamp(a, b, a ^ b),
}


def integer_expression(rng, depth, inputs):
    """(text, fn(*xs)) of a random integer expression."""
    if depth == 0 or rng.random() < 0.25:
        index = int(rng.integers(inputs))
        return f"x{index}", lambda *xs, index=index: xs[index]
    if rng.random() < 0.15:
        text, inner = integer_expression(rng, depth - 1, inputs)
        return f"-({text})", lambda *xs: -inner(*xs)
    name = str(rng.choice(list(INTEGER_BINARY)))
    (left_text, left), (right_text, right) = (integer_expression(rng, depth - 1, inputs),
                                              integer_expression(rng, depth - 1, inputs))
    return f"{name}({left_text}, {right_text})", lambda *xs: INTEGER_BINARY[name](left(*xs), right(*xs))


def edgy_integers(rng, dtype, shape):
    """Random integers of `dtype`, a third of them from the edges: 0, +-1,
    the extremes, the bit width and its neighbours."""
    info = np.iinfo(dtype)
    bits = info.bits
    edges = np.array([0, 1, -1, 2, -2, info.min, info.max, bits - 1, bits, bits + 1, 2 * bits, -bits], np.int64)
    edges = edges.astype(dtype)  # wraps the negatives of unsigned types
    values = rng.integers(info.min, int(info.max) + 1, shape, dtype=np.int64).astype(dtype)
    mask = rng.random(shape) < 0.35
    return np.where(mask, rng.choice(edges, shape), values).astype(dtype)


@pytest.mark.parametrize("seed", range(40))
def test_integer_expressions_match_xla(seed):
    rng = np.random.default_rng(1000 + seed)
    dtype = [np.int32, np.uint32, np.int8, np.uint16][seed % 4]
    inputs = int(rng.integers(1, 4))
    text, fn = integer_expression(rng, int(rng.integers(1, 4)), inputs)
    args = [edgy_integers(rng, dtype, (8, 128)) for _ in range(inputs)]

    def kernel(*refs):
        refs[-1][...] = fn(*[ref[...] for ref in refs[:-1]])

    expected = np.asarray(jax.jit(fn)(*args))
    out = pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct(expected.shape, expected.dtype))(*args)
    np.testing.assert_array_equal(np.asarray(out), expected, err_msg=f"{text} in {np.dtype(dtype).name}")
