"""JAX's own Pallas kernels, imported from the installed jax, through
Tessel: against their jnp references and against interpret=True."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.experimental.pallas.ops.gpu import layer_norm, rms_norm, softmax


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
