"""JAX's own Pallas kernels, imported from the installed jax, through
Tessel: against their jnp references and against interpret=True."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.experimental.pallas.ops.gpu import attention, decode_attention, layer_norm, paged_attention, rms_norm, softmax
from jax.experimental.pallas.ops.tpu import flash_attention
from jax.experimental.pallas.ops.tpu import matmul as tpu_matmul


@pytest.fixture
def x():
    return jax.random.normal(jax.random.key(0), (2, 32, 200), jnp.float32)


@pytest.fixture
def weights():
    return jax.random.normal(jax.random.key(1), (200,)), jax.random.normal(jax.random.key(2), (200,))


def test_softmax(x):
    rows = x[0]
    ours = softmax.softmax(rows, axis=-1)
    np.testing.assert_allclose(ours, jax.nn.softmax(rows, axis=-1), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ours, softmax.softmax(rows, axis=-1, interpret=True), rtol=1e-5, atol=1e-6)


def test_layer_norm_forward(x, weights):
    w, b = weights
    ours = layer_norm.layer_norm(x, w, b)
    np.testing.assert_allclose(ours, layer_norm.layer_norm_reference(x, w, b), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(ours, layer_norm.layer_norm(x, w, b, interpret=True), rtol=1e-4, atol=1e-4)


def test_rms_norm_forward(x, weights):
    w, b = weights
    ours = rms_norm.rms_norm(x, w, b)
    np.testing.assert_allclose(ours, rms_norm.rms_norm_reference(x, w, b), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(ours, rms_norm.rms_norm(x, w, b, interpret=True), rtol=1e-4, atol=1e-4)


def test_kernels_run_as_tessel_custom_calls(x, weights):
    w, b = weights
    text = jax.jit(layer_norm.layer_norm).lower(x, w, b).as_text()
    assert "@tessel_pallas_call" in text
    text = jax.jit(lambda r: softmax.softmax(r, axis=-1, interpret=True)).lower(x[0]).as_text()
    assert "tessel_pallas_call" not in text


def _grads(f, *args):
    return jax.jit(jax.grad(lambda *a: f(*a).sum(), argnums=tuple(range(len(args)))))(*args)


def _close(ours, *references, tol=2e-4):
    for reference in references:
        for a, b in zip(jax.tree.leaves(ours), jax.tree.leaves(reference)):
            np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


@pytest.mark.parametrize("kernel", [layer_norm, rms_norm], ids=["layer_norm", "rms_norm"])
def test_norm_backward(kernel, x, weights):
    """The backward kernels gather outer-product windows
    (`x_ref.at[rows[:, None], cols[None]]`)."""
    w, b = weights
    fused = kernel.layer_norm if kernel is layer_norm else kernel.rms_norm
    reference = kernel.layer_norm_reference if kernel is layer_norm else kernel.rms_norm_reference
    ours = _grads(fused, x, w, b)
    _close(ours, _grads(reference, x, w, b), _grads(lambda *a: fused(*a, interpret=True), x, w, b))


@pytest.fixture
def qkv():
    keys = jax.random.split(jax.random.key(3), 3)
    return [jax.random.normal(k, (1, 128, 2, 32), jnp.float32) for k in keys]


@pytest.mark.parametrize("causal", [False, True])
def test_attention_forward(causal, qkv):
    sizes = attention.BlockSizes(block_q=64, block_k=32)
    ours = jax.jit(lambda q, k, v: attention.mha(q, k, v, None, causal=causal, block_sizes=sizes))(*qkv)
    interpreted = attention.mha(*qkv, None, causal=causal, block_sizes=sizes, interpret=True)
    _close(ours, attention.mha_reference(*qkv, None, causal=causal), interpreted, tol=1e-4)


@pytest.mark.parametrize("causal", [False, True])
def test_attention_backward(causal, qkv):
    sizes = attention.BlockSizes(block_q=64, block_k=32, block_q_dkv=32, block_kv_dkv=64,
                                 block_q_dq=64, block_kv_dq=32)
    ours = _grads(lambda q, k, v: attention.mha(q, k, v, None, causal=causal, block_sizes=sizes), *qkv)
    reference = _grads(lambda q, k, v: attention.mha_reference(q, k, v, None, causal=causal), *qkv)
    _close(ours, reference, tol=5e-4)


def test_decode_attention():
    keys = jax.random.split(jax.random.key(4), 3)
    q = jax.random.normal(keys[0], (2, 16, 32))
    k = jax.random.normal(keys[1], (2, 256, 32))
    v = jax.random.normal(keys[2], (2, 256, 32))
    ours = jax.jit(lambda q, k, v: decode_attention.mqa(q, k, v, k_splits=4, block_k=32))(q, k, v)
    interpreted = decode_attention.mqa(q, k, v, k_splits=4, block_k=32, interpret=True)
    _close(ours, decode_attention.mqa_reference(q, k, v), interpreted, tol=1e-5)


def test_paged_attention():
    """Page tables read in the kernel index the pages' refs (1-D index
    arrays along the page dim)."""
    keys = jax.random.split(jax.random.key(5), 4)
    batch, pages_per_sequence, page_size, heads, kv_heads, head_dim = 2, 8, 16, 32, 2, 32
    k_pages = jax.random.normal(keys[0], (kv_heads, batch * pages_per_sequence, page_size, head_dim))
    v_pages = jax.random.normal(keys[1], (kv_heads, batch * pages_per_sequence, page_size, head_dim))
    tables = jax.random.permutation(keys[2], batch * pages_per_sequence).astype(jnp.int32)
    tables = tables.reshape(batch, pages_per_sequence)
    q = jax.random.normal(keys[3], (batch, heads, head_dim))
    lengths = jnp.array([37, 128], jnp.int32)
    run = lambda **flags: paged_attention.paged_attention(  # noqa: E731
        q, k_pages, v_pages, tables, lengths, block_h=16, pages_per_compute_block=4, k_splits=2, **flags)
    ours = jax.jit(lambda: run())()
    k = jnp.swapaxes(k_pages[:, tables].reshape(kv_heads, batch, -1, head_dim), 0, 1)
    v = jnp.swapaxes(v_pages[:, tables].reshape(kv_heads, batch, -1, head_dim), 0, 1)
    reference = paged_attention.paged_attention_reference(q, jnp.swapaxes(k, 1, 2), jnp.swapaxes(v, 1, 2),
                                                          lengths)
    _close(ours, reference, run(interpret=True), tol=1e-4)


def test_tpu_matmul():
    keys = jax.random.split(jax.random.key(6), 2)
    x = jax.random.normal(keys[0], (256, 384))
    y = jax.random.normal(keys[1], (384, 256))
    ours = jax.jit(lambda x, y: tpu_matmul.matmul(x, y, block_shape=(128, 128), block_k=128))(x, y)
    _close(ours, jnp.matmul(x, y, precision="highest"), tol=1e-3)


@pytest.mark.parametrize("causal", [False, True])
def test_tpu_flash_attention(causal):
    """Causal blocks above the diagonal are skipped through an index map
    that selects (a non-affine index function)."""
    keys = jax.random.split(jax.random.key(7), 3)
    q, k, v = [jax.random.normal(key, (1, 2, 256, 64)) for key in keys]
    sizes = flash_attention.BlockSizes(
        block_q=128, block_k_major=128, block_k=128, block_b=1,
        block_q_major_dkv=128, block_k_major_dkv=128, block_k_dkv=128, block_q_dkv=128,
        block_k_major_dq=128, block_k_dq=128, block_q_dq=128)
    fused = lambda q, k, v: flash_attention.flash_attention(q, k, v, causal=causal, block_sizes=sizes)  # noqa: E731
    reference = lambda q, k, v: flash_attention.mha_reference(q, k, v, None, causal=causal)  # noqa: E731
    _close(jax.jit(fused)(q, k, v), reference(q, k, v), tol=1e-4)
    _close(_grads(fused, q, k, v), _grads(reference, q, k, v), tol=5e-4)
