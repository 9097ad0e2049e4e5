"""Random bits: JAX's threefry hash and counters bit for bit; the TPU core's generator.

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

from tessel.jax._emit import Value
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
    if impl.name == "pallas_tpu":
        # The Pallas key's own mixing (mosaic/random.py `_fold_in`), on its
        # (1, 2) data rather than through its scalar split and join.
        def folded(key, value):
            key = _u32(key)
            k0, k1 = threefry2x32.apply_round([key[0, 0], key[0, 1] + _u32(value)], 13)
            return jnp.stack([k0, k1]).reshape(1, 2)

        return ctx.tr.inline_traced(folded, [keys, data])[0]
    return ctx.tr.inline_traced(lambda key, value: impl.fold_in(key, value), [keys, data])


@rule("random_seed")
def random_seed(ctx, seeds):
    impl = ctx.params["impl"]
    if ctx.avals_in[0].shape != ():
        ctx.fail("'random_seed' of an array of seeds (only single keys)")
    return ctx.tr.inline_traced(lambda seed: impl.seed(seed), [seeds])


# ----- the TPU core's stateful generator --------------------------------
#
# A TPU core has a hardware generator: `pltpu.prng_seed` sets it,
# `pltpu.prng_random_bits` draws from it (and through them
# `stateful_bits/uniform/bernoulli/normal`, `sample_block`, and
# `jax.random` on keys from `to_pallas_key`). Its bits are not published;
# JAX's TPU interpreter returns zeros. Tessel's is counter-based, on
# JAX's Threefry-2x32: the seed material hashes to a 64-bit key
# (prng_seed(s0, ..., sn): k = (0, 0), then k = threefry(k, (s_i, i)) for
# each seed; a Pallas key's (1, 2) data is the key itself), the counter
# restarts at 0, and a draw of n elements is word 0 of threefry(k,
# (counter + position, 0)) for each row-major position, the counter then
# advancing by n. State lives in a scratch buffer per worker, as a TPU
# core's: the same seeds give the same bits on every run, core and
# schedule; bits drawn before any seed are unspecified.


def _state(ctx) -> Value:
    state = ctx.tr.prng_state
    if state is None:
        ctx.fail("the TPU PRNG outside a kernel's body")
    return state


def _load_state(ctx) -> list[Value]:
    state, emit = _state(ctx), ctx.tr.emit
    return [emit.op(f"memref.load {state.name}[{emit.index(k)}] : {state.type}", (), np.int32) for k in range(3)]


def _store_state(ctx, values: list[Value]) -> None:
    state, emit = _state(ctx), ctx.tr.emit
    for k, value in enumerate(values):
        emit.line(f"memref.store {value.name}, {state.name}[{emit.index(k)}] : {state.type}")


def _u32(x):
    return lax.bitcast_convert_type(x, jnp.uint32) if x.dtype == jnp.int32 else x.astype(jnp.uint32)


def _i32(x):
    return lax.bitcast_convert_type(x, jnp.int32)


@rule("prng_seed")
def prng_seed(ctx, *seeds):
    if len(seeds) == 1 and seeds[0].shape == (1, 2):
        # A Pallas key's data (`to_pallas_key`, a key's random_bits).
        def seeded(data):
            data = _u32(data)
            return _i32(data[0, 0]), _i32(data[0, 1]), jnp.int32(0)
    else:
        if any(seed.shape != () for seed in seeds):
            ctx.fail(f"pltpu.prng_seed of {[seed.shape for seed in seeds]} (scalar seeds or a Pallas key)")

        def seeded(*values):
            key = (jnp.uint32(0), jnp.uint32(0))
            for i, value in enumerate(values):
                key = threefry2x32.threefry2x32_p.bind(*key, _u32(value), jnp.uint32(i))
            return _i32(key[0]), _i32(key[1]), jnp.int32(0)

    _store_state(ctx, ctx.tr.inline_traced(seeded, list(seeds)))
    return []


@rule("prng_random_bits")
def prng_random_bits(ctx):
    shape = tuple(ctx.params["shape"])
    count = int(np.prod(shape, dtype=np.int64))
    if count >= 2**31:
        ctx.fail(f"pltpu.prng_random_bits of {shape} (over 2^31 elements)")

    def draw(k0, k1, counter):
        _, positions = _iota_2x32(shape)
        zeros = jnp.zeros(shape, jnp.uint32)
        words = threefry2x32.threefry2x32_p.bind(_u32(k0) + zeros, _u32(k1) + zeros, positions + _u32(counter), zeros)
        return _i32(words[0]), counter + jnp.int32(count)

    k0, k1, counter = _load_state(ctx)
    bits, advanced = ctx.tr.inline_traced(draw, [k0, k1, counter])
    _store_state(ctx, [k0, k1, advanced])
    return bits


@rule("prng_split")
def prng_split(ctx, key):
    """A Pallas key's two scalars (`unwrap_pallas_seed`)."""
    return ctx.tr.inline_traced(lambda data: (_u32(data)[0, 0], _u32(data)[0, 1]), [key])


@rule("prng_join")
def prng_join(ctx, *scalars):
    """Scalars joined into a Pallas key's (1, N) data (`wrap_pallas_seed`)."""
    return ctx.tr.inline_traced(lambda *values: jnp.stack([_u32(v) for v in values]).reshape(1, -1), list(scalars))[0]
