"""The Pallas quickstart's matmul with a fused activation, under jax.jit on
the CPU, compiled by Tessel.

Unmodified Pallas code: `tessel.jax.install()` is the only Tessel line. JAX
on its own refuses this call on the CPU unless `interpret=True`.

    .venv/bin/python examples/python/matmul.py
"""

from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl

import tessel.jax


def matmul_kernel(x_ref, y_ref, z_ref, *, activation):
    z_ref[...] = activation(x_ref[...] @ y_ref[...])


def matmul(x: jax.Array, y: jax.Array, *, activation):
    return pl.pallas_call(
        partial(matmul_kernel, activation=activation),
        out_shape=jax.ShapeDtypeStruct((x.shape[0], y.shape[1]), x.dtype),
        grid=(2, 2),
        in_specs=[
            pl.BlockSpec((x.shape[0] // 2, x.shape[1]), lambda i, j: (i, 0)),
            pl.BlockSpec((y.shape[0], y.shape[1] // 2), lambda i, j: (0, j)),
        ],
        out_specs=pl.BlockSpec(
            (x.shape[0] // 2, y.shape[1] // 2), lambda i, j: (i, j)
        ),
    )(x, y)


def main():
    tessel.jax.install()
    k1, k2 = jax.random.split(jax.random.key(0))
    x = jax.random.normal(k1, (1024, 1024))
    y = jax.random.normal(k2, (1024, 1024))
    fused = jax.jit(partial(matmul, activation=jax.nn.relu))

    lowered = fused.lower(x, y).as_text()
    assert f"@{tessel.jax.TARGET}" in lowered, "the pallas_call did not go to Tessel"
    z = np.asarray(fused(x, y))
    reference = np.asarray(jax.nn.relu(jnp.matmul(x, y, precision="highest")))

    np.set_printoptions(precision=4, threshold=8, edgeitems=2)
    print(f"relu(x @ y) for 1024x1024 f32 under jax.jit, through the custom call "
          f"@{tessel.jax.TARGET}:")
    print(z)
    error = np.max(np.abs(z - reference))
    scale = np.max(np.abs(reference))
    print(f"max |tessel - jnp| = {error:.3g} (relative to max |jnp| {error / scale:.3g})")
    np.testing.assert_allclose(z, reference, rtol=1e-4, atol=1e-3)
    print("agrees with jnp")


if __name__ == "__main__":
    main()
