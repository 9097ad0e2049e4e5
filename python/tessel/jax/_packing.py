"""TPU element packing and stochastic rounding.

`pltpu.pack_elementwise`, `pltpu.unpack_elementwise` and
`pltpu.stochastic_round`, each spelled in jnp/lax and inlined (JAX's
interpreter has no rule for them; these follow their docstrings and the
bounds JAX's TPU test checks)."""

from __future__ import annotations

import jax.numpy as jnp
import ml_dtypes
import numpy as np
from jax import lax

from tessel.jax._emit import bit_width
from tessel.jax._registry import rule


def _unsigned(bits: int):
    return np.dtype(f"uint{bits}") if bits >= 8 else np.dtype(getattr(ml_dtypes, f"uint{bits}"))


def _signed(bits: int):
    return np.dtype(f"int{bits}") if bits >= 8 else np.dtype(getattr(ml_dtypes, f"int{bits}"))


@rule("pack_elementwise")
def pack_elementwise(ctx, *xs):
    """xs[k] in bits [k·w, (k+1)·w) of each element (w the packed type's
    width): f32 rounded to bfloat16 (to nearest even), integers
    truncated."""
    packed = np.dtype(ctx.params["packed_dtype"])
    width = bit_width(packed)
    wide = bit_width(xs[0].dtype)
    container = _unsigned(wide)

    def spelled(*values):
        out = jnp.zeros(values[0].shape, container)
        for k, v in enumerate(values):
            if v.dtype == np.float32:
                field = lax.bitcast_convert_type(v.astype(jnp.bfloat16), jnp.uint16).astype(container)
            else:
                field = lax.bitcast_convert_type(v, _unsigned(wide)) & container.type((1 << width) - 1)
            out = out | (field << container.type(k * width))
        return out

    (result,) = ctx.tr.inline_traced(spelled, list(xs))
    return result


@rule("unpack_elementwise")
def unpack_elementwise(ctx, x):
    """Field `index` of each element: a bfloat16 widened to f32, or an
    integer sign-extended (signed packed types) or zero-extended."""
    index, packed = ctx.params["index"], np.dtype(ctx.params["packed_dtype"])
    unpacked = np.dtype(ctx.params["unpacked_dtype"])
    width, wide = bit_width(packed), bit_width(x.dtype)
    container, signed = _unsigned(wide), _signed(wide)

    def spelled(v):
        bits = lax.bitcast_convert_type(v, container)
        field = (bits >> container.type(index * width)) & container.type((1 << width) - 1)
        if packed == ml_dtypes.bfloat16:
            return lax.bitcast_convert_type(field << container.type(wide - width), unpacked)
        # (jnp's test: NumPy does not count ml_dtypes' int4 and int2 as signed.)
        if jnp.issubdtype(packed, jnp.signedinteger):
            shift = signed.type(wide - width)
            extended = lax.bitcast_convert_type(field << container.type(wide - width), signed) >> shift
            return lax.bitcast_convert_type(extended, unpacked)
        return lax.bitcast_convert_type(field, unpacked)

    (result,) = ctx.tr.inline_traced(spelled, [x])
    return result


@rule("stochastic_round")
def stochastic_round(ctx, x, random_bits):
    """f32 rounded to `target_dtype`'s neighbour below or above |x|, up
    with the probability of the fraction of the step it lies past the one
    below: bfloat16 by adding the 16 random low bits and truncating (the
    carry comes with that probability); 8-bit floats by comparing the
    fraction with the random bits' top 24 as a number in [0, 1). NaN stays
    NaN; past the type's largest finite value it saturates there."""
    target = np.dtype(ctx.params["target_dtype"])
    if x.dtype != np.float32:
        ctx.fail(f"pltpu.stochastic_round of {x.dtype} (TPUs round float32)")
    if target == ml_dtypes.bfloat16:

        def spelled(v, r):
            raw = lax.bitcast_convert_type(v, jnp.uint32)
            rounded = (raw + (r & jnp.uint32(0xFFFF))) & jnp.uint32(0xFFFF0000)
            up = lax.bitcast_convert_type(rounded, jnp.float32)
            return jnp.where(jnp.isnan(v), v, up).astype(jnp.bfloat16)

    elif target in (np.dtype(ml_dtypes.float8_e5m2), np.dtype(ml_dtypes.float8_e4m3fn),
                    np.dtype(ml_dtypes.float8_e4m3b11fnuz)):
        info = ml_dtypes.finfo(target)
        mantissa, lowest_exponent, largest = int(info.nmant), int(info.minexp), float(info.max)

        def spelled(v, r):
            magnitude = jnp.abs(v)
            raw = lax.bitcast_convert_type(magnitude, jnp.int32)
            exponent = jnp.maximum((raw >> 23) - 127, lowest_exponent)
            # The type's step at |x|: 2^(exponent - mantissa bits), built
            # from its bits (a normal f32 for every 8-bit type).
            step = lax.bitcast_convert_type((exponent - mantissa + 127) << 23, jnp.float32)
            steps = magnitude / step
            below = jnp.floor(steps)
            uniform = (r >> jnp.uint32(8)).astype(jnp.float32) * jnp.float32(2.0**-24)
            rounded = (below + (uniform < steps - below).astype(jnp.float32)) * step
            rounded = jnp.minimum(rounded, jnp.float32(largest))
            return jnp.where(jnp.isnan(v), v, jnp.where(v < 0, -rounded, rounded)).astype(target)

    else:
        ctx.fail(f"pltpu.stochastic_round to {target} (TPUs round to bfloat16 and 8-bit floats)")
    (result,) = ctx.tr.inline_traced(spelled, [x, random_bits])
    return result
