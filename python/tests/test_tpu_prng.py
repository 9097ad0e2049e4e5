"""The TPU core's stateful PRNG in kernels: `pltpu.prng_seed`,
`prng_random_bits`, the `stateful_*` samplers, Pallas keys from
`to_pallas_key` under `jax.random`, `fold_in` and `sample_block`.

Tessel's generator is documented (`tessel/jax/_random.py`): the seeds hash
to a Threefry key, draws are Threefry of a running counter. Checked bit
for bit against that definition computed by XLA, for determinism (same
seeds, same bits, whatever the schedule) and for the samplers' moments.
JAX's TPU interpreter returns zeros here."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax._src.random import threefry2x32
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

import tessel.jax

tessel.jax.install()


def threefry(k0, k1, x0, x1):
    return [np.asarray(w) for w in threefry2x32.threefry2x32_p.bind(
        jnp.uint32(k0), jnp.uint32(k1), jnp.asarray(x0, jnp.uint32), jnp.asarray(x1, jnp.uint32))]


def reference_draws(seeds, shapes):
    """The documented generator, on the host: key from the seeds, then one
    draw per shape from the running counter."""
    key = (np.uint32(0), np.uint32(0))
    for i, seed in enumerate(seeds):
        key = tuple(w[()] for w in threefry(key[0], key[1], np.uint32(np.int64(seed) & 0xFFFFFFFF), i))
    counter, draws = 0, []
    for shape in shapes:
        n = int(np.prod(shape))
        positions = (np.arange(n, dtype=np.uint64) + counter).astype(np.uint32)
        word, _ = threefry(key[0], key[1], positions, np.zeros(n, np.uint32))
        draws.append(word.view(np.int32).reshape(shape))
        counter += n
    return draws


def test_bits_follow_the_documented_generator():
    def kernel(s_ref, a_ref, b_ref):
        pltpu.prng_seed(s_ref[0], s_ref[1] + pl.program_id(0))
        a_ref[...] = pltpu.prng_random_bits(a_ref.shape)
        b_ref[...] = pltpu.prng_random_bits(b_ref.shape)

    call = pl.pallas_call(
        kernel, grid=(3,), in_specs=[pl.BlockSpec(memory_space=pltpu.SMEM)],
        out_specs=[pl.BlockSpec((8, 128), lambda i: (i, 0)), pl.BlockSpec((16, 128), lambda i: (i, 0))],
        out_shape=[jax.ShapeDtypeStruct((24, 128), jnp.int32), jax.ShapeDtypeStruct((48, 128), jnp.int32)])
    seeds = np.array([1234, -7], np.int32)
    a, b = (np.asarray(x) for x in jax.jit(call)(jnp.asarray(seeds)))
    for program in range(3):
        want_a, want_b = reference_draws([seeds[0], seeds[1] + program], [(8, 128), (16, 128)])
        np.testing.assert_array_equal(a[8 * program:8 * program + 8], want_a)
        np.testing.assert_array_equal(b[16 * program:16 * program + 16], want_b)
    assert len(np.unique(a)) > 0.99 * a.size


def test_draws_in_a_loop_advance_and_repeat_with_the_seed():
    def kernel(o_ref):
        def body(i, carry):
            @pl.when(i % 2 == 0)
            def _():
                pltpu.prng_seed(5)  # rows 0-1, 2-3, ... start over

            o_ref[pl.ds(i, 1), :] = pltpu.prng_random_bits((1, 128))
            return carry

        jax.lax.fori_loop(0, 8, body, 0)

    out = np.asarray(jax.jit(pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct((8, 128), jnp.int32)))())
    first, second = reference_draws([5], [(1, 128), (1, 128)])
    for row in range(8):
        np.testing.assert_array_equal(out[row], (first if row % 2 == 0 else second)[0])


def test_parallel_programs_are_deterministic():
    def kernel(o_ref):
        pltpu.prng_seed(pl.program_id(0), pl.program_id(1))
        o_ref[...] = pltpu.stateful_normal(o_ref.shape, jnp.float32)

    call = pl.pallas_call(kernel, grid=(4, 4), out_specs=pl.BlockSpec((8, 128), lambda i, j: (i, j)),
                          out_shape=jax.ShapeDtypeStruct((32, 512), jnp.float32),
                          compiler_params=pltpu.CompilerParams(dimension_semantics=("parallel", "parallel")))
    runs = [np.asarray(jax.jit(call)()) for _ in range(3)]
    np.testing.assert_array_equal(runs[0], runs[1])
    np.testing.assert_array_equal(runs[0], runs[2])
    assert abs(runs[0].mean()) < 0.02 and abs(runs[0].std() - 1) < 0.02


def test_stateful_samplers():
    def kernel(u_ref, b_ref, n_ref, bits_ref):
        pltpu.prng_seed(2024)
        u_ref[...] = pltpu.stateful_uniform(u_ref.shape, jnp.float32, minval=-2.0, maxval=3.0)
        b_ref[...] = pltpu.stateful_bernoulli(0.25, b_ref.shape).astype(jnp.int32)
        n_ref[...] = pltpu.stateful_normal(n_ref.shape, jnp.float32)
        bits_ref[...] = pltpu.stateful_bits(bits_ref.shape, jnp.uint32)

    shape = (256, 128)
    call = pl.pallas_call(kernel, out_shape=[jax.ShapeDtypeStruct(shape, jnp.float32),
                                             jax.ShapeDtypeStruct(shape, jnp.int32),
                                             jax.ShapeDtypeStruct(shape, jnp.float32),
                                             jax.ShapeDtypeStruct(shape, jnp.uint32)])
    u, b, n, bits = (np.asarray(x) for x in jax.jit(call)())
    assert u.min() >= -2.0 and u.max() < 3.0 and abs(u.mean() - 0.5) < 0.03
    assert abs(b.mean() - 0.25) < 0.01
    assert abs(n.mean()) < 0.02 and abs(n.std() - 1.0) < 0.02
    assert abs(bits.astype(np.float64).mean() / 2**32 - 0.5) < 0.01


def test_pallas_keys_under_jax_random():
    # to_pallas_key outside, jax.random inside the kernel: a Pallas key's
    # data is the generator's key (its bits are the first draw after
    # seeding with it); fold_in mixes each program's id in.
    key = pltpu.to_pallas_key(jax.random.key(11))

    def kernel(key_ref, b_ref, u_ref, f_ref):
        k = key_ref[0, ...]
        b_ref[...] = jax.random.bits(k, b_ref.shape)
        u_ref[...] = jax.random.uniform(k, u_ref.shape)
        f_ref[...] = jax.random.bits(jax.random.fold_in(k, pl.program_id(0)), f_ref.shape)

    call = pl.pallas_call(kernel, grid=(2,), in_specs=[pl.BlockSpec(memory_space=pltpu.SMEM)],
                          out_specs=[pl.BlockSpec((8, 128), lambda i: (i, 0))] * 3,
                          out_shape=[jax.ShapeDtypeStruct((16, 128), jnp.uint32),
                                     jax.ShapeDtypeStruct((16, 128), jnp.float32),
                                     jax.ShapeDtypeStruct((16, 128), jnp.uint32)])
    bits, u, folded = (np.asarray(x) for x in jax.jit(call)(key[None]))
    data = np.asarray(jax.random.key_data(key)).reshape(-1)
    n = 8 * 128
    want, _ = threefry(data[0], data[1], np.arange(n, dtype=np.uint32), np.zeros(n, np.uint32))
    np.testing.assert_array_equal(bits[:8], want.reshape(8, 128))
    np.testing.assert_array_equal(bits[8:], want.reshape(8, 128))
    np.testing.assert_array_equal(u[:8], u[8:])  # one key, one stream
    assert 0.4 < u.mean() < 0.6
    assert not np.array_equal(folded[:8], folded[8:])


def test_sample_block_is_invariant_to_the_block_shape():
    key = pltpu.to_pallas_key(jax.random.key(3))
    total = (32, 256)

    def sampled(block):
        def kernel(key_ref, o_ref):
            o_ref[...] = pltpu.sample_block(jax.random.uniform, key_ref[0, ...], block_size=block,
                                            tile_size=(8, 128), total_size=total)

        grid = (total[0] // block[0], total[1] // block[1])
        call = pl.pallas_call(kernel, grid=grid, in_specs=[pl.BlockSpec(memory_space=pltpu.SMEM)],
                              out_specs=pl.BlockSpec(block, lambda i, j: (i, j)),
                              out_shape=jax.ShapeDtypeStruct(total, jnp.float32))
        return np.asarray(jax.jit(call)(key[None]))

    small, large = sampled((8, 128)), sampled((16, 256))
    np.testing.assert_array_equal(small, large)
    assert 0.45 < small.mean() < 0.55


@pytest.mark.parametrize("shape", [(8, 128), (3, 5, 7)])
def test_prng_random_bits_shapes(shape):
    def kernel(o_ref):
        pltpu.prng_seed(9)
        o_ref[...] = pltpu.prng_random_bits(o_ref.shape)

    out = np.asarray(jax.jit(pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct(shape, jnp.int32)))())
    np.testing.assert_array_equal(out, reference_draws([9], [shape])[0])


def test_whole_key_ref_reads_and_pallas_impl_keys():
    # `key_ref[...]` of a single key in SMEM (no indexer), a key made with
    # impl="pallas_tpu": JAX's tpu_pallas_random_test reads keys so.
    key = jax.random.key(0, impl="pallas_tpu")

    def kernel(key_ref, o_ref):
        o_ref[...] = jax.random.bits(key_ref[...], o_ref.shape)

    out = np.asarray(jax.jit(pl.pallas_call(kernel, in_specs=[pl.BlockSpec(memory_space=pltpu.SMEM)],
                                            out_shape=jax.ShapeDtypeStruct((8, 128), jnp.uint32)))(key))
    data = np.asarray(jax.random.key_data(key)).reshape(-1)
    want, _ = threefry(data[0], data[1], np.arange(1024, dtype=np.uint32), np.zeros(1024, np.uint32))
    np.testing.assert_array_equal(out, want.reshape(8, 128))


def test_keys_copied_by_dma_and_returned():
    # A key copied whole between SMEM refs (its data), and returned as a
    # typed key from the call.
    key = pltpu.to_pallas_key(jax.random.key(0))

    def body(x_ref, o_ref):
        pltpu.sync_copy(x_ref, o_ref)

    call = pl.pallas_call(body, out_shape=jax.ShapeDtypeStruct((), jax.typeof(key).dtype),
                          in_specs=[pl.BlockSpec(memory_space=pltpu.SMEM)],
                          out_specs=pl.BlockSpec(memory_space=pltpu.SMEM))
    out = jax.jit(call)(key)
    np.testing.assert_array_equal(jax.random.key_data(out), jax.random.key_data(key))


def test_key_in_a_core_map_on_a_default_mesh():
    # create_tensorcore_mesh without num_cores asks the device for its
    # cores: with Tessel installed the CPU answers one.
    key = pltpu.to_pallas_key(jax.random.key(5))

    def main(refs):
        key_hbm, o_ref = refs

        @pl.core_map(pltpu.create_tensorcore_mesh("core"))
        def _():
            def scoped(key_smem, o_vmem):
                pltpu.sync_copy(key_hbm, key_smem)
                o_vmem[...] = jax.random.uniform(key_smem[...], shape=o_ref.shape)
                pltpu.sync_copy(o_vmem, o_ref)

            pl.run_scoped(scoped, pltpu.SMEM((), key_hbm.dtype), pltpu.VMEM(o_ref.shape, o_ref.dtype))

    @jax.jit
    def f(key):
        _, y = pl.run_state(main)((key, jnp.zeros((8, 128), jnp.float32)))
        return y

    y = np.asarray(f(key))
    assert 0.3 < y.mean() < 0.7 and len(np.unique(y)) > 1000
