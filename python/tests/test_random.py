"""Random bits in kernels: JAX's threefry hash and counters bit for bit,
and JAX's Pallas TPU random kernels (threefry, philox) unmodified."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax._src.random import threefry2x32
from jax.experimental import pallas as pl
from jax.experimental.pallas.ops.tpu.random import philox, threefry


@pytest.mark.parametrize("shape", [(8, 128), (3, 5, 7)])
def test_threefry_hash_matches_jax_bit_for_bit(shape):
    # threefry2x32 with a broadcast (1, 1) key, as the TPU kernels call it,
    # against XLA's own lowering of the same primitive.
    rng = np.random.default_rng(0)
    keys = rng.integers(0, 2**32, (2, 1, 1), dtype=np.uint64).astype(np.uint32)
    counts = rng.integers(0, 2**32, (2, *shape), dtype=np.uint64).astype(np.uint32)
    keys, counts = keys.reshape((2,) + (1,) * len(shape)), jnp.asarray(counts)

    def kernel(k1_ref, k2_ref, x1_ref, x2_ref, o1_ref, o2_ref):
        o1, o2 = threefry2x32.threefry2x32_p.bind(k1_ref[...], k2_ref[...], x1_ref[...], x2_ref[...])
        o1_ref[...], o2_ref[...] = o1, o2

    out = jax.ShapeDtypeStruct(shape, jnp.uint32)
    args = (jnp.asarray(keys[0]), jnp.asarray(keys[1]), counts[0], counts[1])
    got = jax.jit(pl.pallas_call(kernel, out_shape=(out, out)))(*args)
    want = jax.jit(lambda *a: threefry2x32.threefry2x32_p.bind(*a))(*args)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))


def test_random_bits_in_a_kernel_match_jax_random_bits():
    # jax.random.bits of a raw uint32 key inside a kernel: the counters
    # (iota_2x32_shape) and the hash, as jax.random.bits computes them.
    key = jax.random.PRNGKey(42)

    def bits(raw_key):
        return jax.random.bits(jax.random.wrap_key_data(raw_key, impl="threefry2x32"), (16, 128))

    def kernel(key_ref, o_ref):
        o_ref[...] = bits(key_ref[...])

    got = jax.jit(pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct((16, 128), jnp.uint32)))(key)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(bits(key)))


@pytest.mark.parametrize("shape", [(256, 256), (512, 384), (7, 300)])
def test_pallas_tpu_threefry_kernel_unmodified(shape):
    # JAX's ops/tpu threefry kernel (blocked counters, the hash in a
    # kernel, padded shapes sliced) gives jax.random.bits' bits.
    key = jax.random.key(7, impl="threefry2x32")
    got = jax.jit(lambda k: threefry.plthreefry_random_bits(k, 32, shape))(jax.random.key_data(key))
    np.testing.assert_array_equal(np.asarray(got), np.asarray(jax.random.bits(key, shape)))


def test_pallas_tpu_philox_kernel_unmodified():
    # JAX's ops/tpu philox kernel against the same kernel in JAX's
    # interpreter (the bits are philox's, not threefry's).
    key = jnp.array([0, 1234], jnp.uint32)
    shape = (256, 512)
    got = jax.jit(lambda k: philox.philox_random_bits(k, 32, shape))(key)
    from jax._src.pallas import pallas_call as pallas_call_module

    original = pallas_call_module.pallas_call

    def interpreted(*args, **kwargs):
        kwargs["interpret"] = True
        return original(*args, **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(philox.pl, "pallas_call", interpreted)
        want = jax.jit(lambda k: philox.philox_random_bits(k, 32, shape))(key)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


def test_typed_keys_folded_in_a_kernel():
    # A typed key made from a seed, folded with the program id, then bits:
    # the key implementation's own seed, fold_in and random_bits.
    def bits(seed, program):
        key = jax.random.fold_in(jax.random.key(seed, impl="threefry2x32"), program)
        return jax.random.bits(key, (8, 128))

    def kernel(seed_ref, o_ref):
        o_ref[...] = bits(seed_ref[0], pl.program_id(0))

    seed = jnp.array([2024], jnp.int32)
    got = jax.jit(pl.pallas_call(kernel, grid=(3,), in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
                                 out_specs=pl.BlockSpec((None, 8, 128), lambda i: (i, 0, 0)),
                                 out_shape=jax.ShapeDtypeStruct((3, 8, 128), jnp.uint32)))(seed)
    want = np.stack([np.asarray(bits(seed[0], i)) for i in range(3)])
    np.testing.assert_array_equal(np.asarray(got), want)
