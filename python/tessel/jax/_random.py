"""Random bits: JAX's threefry hash and counters, bit for bit.

`threefry2x32` is JAX's own unrolled lowering of the hash
(`jax._src.random.threefry2x32._threefry2x32_lowering`), traced and
inlined, as Mosaic lowers it on TPUs; `iota_2x32_shape`, the counters
`jax.random.bits` hashes, is Mosaic's lowering of it, likewise. Both are
integer adds, xors and shifts of uint32 blocks, so the bits are JAX's
exactly (`pallas.ops.tpu.random.threefry` runs unmodified).

Typed keys (`jax.random.key`, `wrap_key_data`) are their uint32 data in a
kernel: `random_wrap` and `random_unwrap` pass it on, and `random_bits`,
`random_split`, `random_fold_in` and `random_seed` inline the key
implementation's own functions of that data (scalar keys)."""

from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax._src.random import threefry2x32

from tessel.jax._registry import rule


@rule("threefry2x32")
def threefry(ctx, key1, key2, x1, x2):
    """The Threefry-2x32 hash of (x1, x2) under (key1, key2), operands
    broadcast against each other as the primitive allows."""
    shape = ctx.out_shape
    operands = [ctx.tr.splat(v, shape) if v.shape != shape else v for v in (key1, key2, x1, x2)]
    return ctx.tr.inline_traced(partial(threefry2x32._threefry2x32_lowering, use_rolled_loops=False), operands)


def _iota_2x32(shape):
    """The (high, low) 32-bit halves of each element's row-major position
    in `shape` (positions below 2^31: the high half is zero)."""
    low = jnp.zeros(shape, dtype=jnp.uint32)
    multiplier = 1
    for dim in range(len(shape) - 1, -1, -1):
        low = low + lax.broadcasted_iota(jnp.uint32, shape, dim) * np.uint32(multiplier)
        multiplier *= shape[dim]
    return jnp.zeros(shape, dtype=jnp.uint32), low


@rule("iota_2x32_shape")
def iota_2x32_shape(ctx):
    shape = tuple(ctx.params["shape"])
    if int(np.prod(shape, dtype=np.int64)) > np.iinfo(np.int32).max:
        ctx.fail(f"iota_2x32_shape of {shape} (over 2^31 elements)")
    return ctx.tr.inline_traced(lambda: _iota_2x32(shape), [])


def is_key(aval) -> bool:
    """Whether `aval` holds typed PRNG keys (their data is what kernels hold)."""
    return jax.dtypes.issubdtype(aval.dtype, jax.dtypes.prng_key)


def _impl(ctx, aval):
    if aval.shape != ():
        ctx.fail(f"'{ctx.name}' of a {aval.shape} array of keys (only single keys)")
    return aval.dtype._impl


@rule("random_wrap", "random_unwrap", moves_values=True)
def key_data(ctx, data):
    """Keys are their data: wrapping and unwrapping change nothing."""
    return data


@rule("random_bits")
def random_bits(ctx, keys):
    impl = _impl(ctx, ctx.avals_in[0])
    bit_width, shape = int(ctx.params["bit_width"]), tuple(ctx.params["shape"])
    return ctx.tr.inline_traced(lambda key: impl.random_bits(key, bit_width, shape), [keys])


@rule("random_split")
def random_split(ctx, keys):
    impl = _impl(ctx, ctx.avals_in[0])
    shape = tuple(ctx.params["shape"])
    return ctx.tr.inline_traced(lambda key: impl.split(key, shape), [keys])


@rule("random_fold_in")
def random_fold_in(ctx, keys, data):
    impl = _impl(ctx, ctx.avals_in[0])
    return ctx.tr.inline_traced(lambda key, value: impl.fold_in(key, value), [keys, data])


@rule("random_seed")
def random_seed(ctx, seeds):
    impl = ctx.params["impl"]
    if ctx.avals_in[0].shape != ():
        ctx.fail("'random_seed' of an array of seeds (only single keys)")
    return ctx.tr.inline_traced(lambda seed: impl.seed(seed), [seeds])
