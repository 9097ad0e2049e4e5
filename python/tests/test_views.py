"""Accesses through ref views (`ref.reshape`, `ref.bitcast`, chained with
indexers), reads and writes, against numpy; and JAX's ragged paged
attention kernel, which reads its DMA'd pages through them, unmodified
against its own reference (JAX's TPU interpreter cannot run it)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.experimental import pallas as pl
from jax.experimental.pallas.ops.tpu import ragged_paged_attention as rpa


def tpu_bitcast(array: np.ndarray, dtype) -> np.ndarray:
    """numpy's version of a TPU bitcast: elements of another width pack
    along the second-minor dim, the first the least significant."""
    dtype = np.dtype(dtype)
    source, target = array.dtype.itemsize, dtype.itemsize
    *leading, m, n = array.shape
    if source == target:
        return array.view(dtype)
    if source < target:
        packing = target // source
        packed = np.swapaxes(array.reshape(*leading, m // packing, packing, n), -1, -2)
        return np.ascontiguousarray(packed).view(dtype).reshape(*leading, m // packing, n)
    packing = source // target
    unpacked = np.ascontiguousarray(array).view(dtype).reshape(*leading, m, n, packing)
    return np.swapaxes(unpacked, -1, -2).reshape(*leading, m * packing, n)


def random_view(rng):
    """(ref shape, dtype, leading rows, reshape, bitcast dtype or None,
    (start, step) of a strided slice along the view's rows)."""
    dtype = [np.float32, np.int32, jnp.bfloat16, np.int8][int(rng.integers(4))]
    rows, columns = int(rng.choice([4, 8, 16])), int(rng.choice([8, 16, 32]))
    blocks = int(rng.integers(1, 4))
    lead = (int(rng.integers(blocks)), rows) if rng.random() < 0.5 else None
    view_rows = rows if lead else rows * blocks
    factor = int(rng.choice([1, 2, 4]))
    shape = (view_rows * factor, columns // factor) if columns % factor == 0 else (view_rows, columns)
    bitcast = None
    if rng.random() < 0.6:
        itemsize = np.dtype(dtype).itemsize
        target = np.uint32 if itemsize < 4 else np.uint32
        if shape[0] % (4 // itemsize) == 0:
            bitcast = target
    step = int(rng.choice([1, 2]))
    return (rows * blocks, columns), dtype, lead, shape, bitcast, step


def reference_view(array, lead, shape, bitcast, step):
    window = array if lead is None else array[lead[0] * lead[1]:(lead[0] + 1) * lead[1]]
    view = window.reshape(shape)
    if bitcast is not None:
        view = tpu_bitcast(view, bitcast)
    return view[1::step] if step > 1 else view


def kernel_view(ref, lead, shape, bitcast, step):
    if lead is not None:
        ref = ref.at[pl.ds(lead[0] * lead[1], lead[1])]
    ref = ref.reshape(*shape)
    if bitcast is not None:
        ref = ref.bitcast(bitcast)
    return ref, (pl.ds(1, (ref.shape[0] - 1) // step + (1 if (ref.shape[0] - 1) % step else 0), stride=step)
                 if step > 1 else slice(None))


@pytest.mark.parametrize("seed", range(12))
def test_random_views_read_and_write_like_numpy(seed):
    rng = np.random.default_rng(seed)
    shape, dtype, lead, view_shape, bitcast, step = random_view(rng)
    data = (rng.standard_normal(shape) * 40).astype(dtype)
    expected_read = reference_view(data, lead, view_shape, bitcast, step)

    def read_kernel(x_ref, o_ref):
        view, rows = kernel_view(x_ref, lead, view_shape, bitcast, step)
        o_ref[...] = view[rows, :]

    read = jax.jit(pl.pallas_call(read_kernel, out_shape=jax.ShapeDtypeStruct(expected_read.shape,
                                                                               expected_read.dtype)))
    got = np.asarray(read(jnp.asarray(data)))
    np.testing.assert_array_equal(got.view(np.uint8), np.ascontiguousarray(expected_read).view(np.uint8))

    new = (rng.integers(0, 100, expected_read.shape)).astype(expected_read.dtype)
    expected_write = data.copy()
    window = expected_write if lead is None else expected_write[lead[0] * lead[1]:(lead[0] + 1) * lead[1]]
    view = window.reshape(view_shape)
    if bitcast is not None:
        typed = tpu_bitcast(view, bitcast).copy()
        (typed[1::step] if step > 1 else typed)[...] = new
        view[...] = tpu_bitcast(typed, dtype)
    else:
        (view[1::step] if step > 1 else view)[...] = new

    def write_kernel(x_ref, n_ref, o_ref):
        o_ref[...] = x_ref[...]
        view, rows = kernel_view(o_ref, lead, view_shape, bitcast, step)
        view[rows, :] = n_ref[...]

    write = jax.jit(pl.pallas_call(write_kernel, out_shape=jax.ShapeDtypeStruct(shape, dtype)))
    got = np.asarray(write(jnp.asarray(data), jnp.asarray(new)))
    np.testing.assert_array_equal(got.view(np.uint8), expected_write.view(np.uint8))


def ragged_case(seq_lens, num_heads=(4, 2), head_dim=128, page_size=16, num_pages=64, dtype=jnp.float32,
                kv_dtype=None, **options):
    rng = np.random.default_rng(sum(q * 7 + kv for q, kv in seq_lens))
    kv_dtype = kv_dtype or dtype
    max_num_seqs = len(seq_lens) + 1
    num_q_heads, num_kv_heads = num_heads
    cumulative = np.cumsum([0] + [q for q, _ in seq_lens])
    tokens = int(cumulative[-1])
    q = jnp.asarray(rng.standard_normal((-(-tokens // 8) * 8, num_q_heads, head_dim)), dtype)
    kv_pages = jnp.asarray(rng.standard_normal((num_pages, page_size, 2 * num_kv_heads, head_dim)), kv_dtype)
    pages_per_seq = max(-(-kv // page_size) for _, kv in seq_lens)
    kv_lens = np.zeros(max_num_seqs, np.int32)
    kv_lens[:len(seq_lens)] = [kv for _, kv in seq_lens]
    page_indices = rng.permutation(num_pages)[:max_num_seqs * pages_per_seq].reshape(max_num_seqs, pages_per_seq)
    cu_q_lens = np.full(max_num_seqs + 1, tokens, np.int32)
    cu_q_lens[:len(cumulative)] = cumulative
    args = (q, kv_pages, jnp.asarray(kv_lens), jnp.asarray(page_indices, jnp.int32), jnp.asarray(cu_q_lens),
            jnp.asarray([len(seq_lens)], jnp.int32))
    got = jax.jit(lambda *a: rpa.ragged_paged_attention(*a, num_kv_pages_per_block=2, num_queries_per_block=8,
                                                        **options))(*args)
    want = rpa.ref_ragged_paged_attention(*args, **options)
    return np.asarray(got)[:tokens].astype(np.float32), np.asarray(want)[:tokens].astype(np.float32)


@pytest.mark.parametrize("dtype, kv_dtype, options, tolerance", [
    (jnp.float32, None, {}, 1e-5),
    (jnp.float32, None, {"sliding_window": 16, "soft_cap": 20.0}, 1e-5),
    (jnp.bfloat16, None, {}, 2e-2),
    (jnp.bfloat16, jnp.int8, {"k_scale": 0.5, "v_scale": 0.25}, 2e-2),
    (jnp.bfloat16, jnp.float8_e4m3fn, {"k_scale": 0.5, "v_scale": 0.25}, 2e-2),
], ids=["f32", "f32-window-softcap", "bf16", "int8-kv", "fp8-kv"])
def test_ragged_paged_attention_unmodified(dtype, kv_dtype, options, tolerance):
    # Mixed prefill and decode: sequences of 5, 1 and 8 queries over 20,
    # 33 and 64 keys (pages in random order, double-buffered DMAs of two
    # pages, K and V interleaved by heads and read back strided through a
    # reshaped, for packed types bitcast, view of the buffer).
    got, want = ragged_case([(5, 20), (1, 33), (8, 64)], dtype=dtype, kv_dtype=kv_dtype, **options)
    np.testing.assert_allclose(got, want, atol=tolerance, rtol=tolerance)


def test_ragged_paged_attention_grouped_query_heads():
    got, want = ragged_case([(2, 17), (9, 50), (1, 1)], num_heads=(8, 2))
    np.testing.assert_allclose(got, want, atol=1e-5, rtol=1e-5)
