"""The Python examples of the seeds (Pallas quickstart, grid/BlockSpec
docs) run through Tessel and print the docs' results."""

from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl


def add_vectors_kernel(x_ref, y_ref, o_ref):
    x, y = x_ref[...], y_ref[...]
    o_ref[...] = x + y


@jax.jit
def add_vectors(x, y):
    return pl.pallas_call(add_vectors_kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype))(x, y)


def test_add_vectors_prints_the_docs_result():
    result = add_vectors(jnp.arange(8), jnp.arange(8))
    assert repr(result) == "Array([ 0,  2,  4,  6,  8, 10, 12, 14], dtype=int32)"


def test_lowered_program_calls_tessel():
    text = add_vectors.lower(jnp.arange(8), jnp.arange(8)).as_text()
    assert "stablehlo.custom_call @tessel_pallas_call" in text
    assert "interpret" not in text


def iota_kernel(o_ref):
    i = pl.program_id(0)
    o_ref[i] = i


def test_iota_with_program_ids():
    result = pl.pallas_call(iota_kernel, out_shape=jax.ShapeDtypeStruct((8,), jnp.int32), grid=(8,))()
    assert repr(result) == "Array([0, 1, 2, 3, 4, 5, 6, 7], dtype=int32)"


def matmul_kernel(x_ref, y_ref, z_ref, *, activation):
    z_ref[...] = activation(x_ref[...] @ y_ref[...])


def matmul(x, y, *, activation):
    return pl.pallas_call(
        partial(matmul_kernel, activation=activation),
        out_shape=jax.ShapeDtypeStruct((x.shape[0], y.shape[1]), x.dtype),
        grid=(2, 2),
        in_specs=[
            pl.BlockSpec((x.shape[0] // 2, x.shape[1]), lambda i, j: (i, 0)),
            pl.BlockSpec((y.shape[0], y.shape[1] // 2), lambda i, j: (0, j)),
        ],
        out_specs=pl.BlockSpec((x.shape[0] // 2, y.shape[1] // 2), lambda i, j: (i, j)),
    )(x, y)


def test_matmul_with_activation():
    k1, k2 = jax.random.split(jax.random.key(0))
    x = jax.random.normal(k1, (1024, 1024))
    y = jax.random.normal(k2, (1024, 1024))
    z = jax.jit(partial(matmul, activation=jax.nn.relu))(x, y)
    reference = jax.nn.relu(np.asarray(x, np.float64) @ np.asarray(y, np.float64))
    np.testing.assert_allclose(z, reference, rtol=1e-4, atol=1e-3)


def test_vmap_of_matmul():
    k1, k2 = jax.random.split(jax.random.key(0))
    x = jax.random.normal(k1, (4, 256, 128))
    y = jax.random.normal(k2, (4, 128, 256))
    z = jax.jit(jax.vmap(partial(matmul, activation=jax.nn.relu)))(x, y)
    reference = np.maximum(np.einsum("bij,bjk->bik", np.asarray(x, np.float64), np.asarray(y, np.float64)), 0)
    np.testing.assert_allclose(z, reference, rtol=1e-4, atol=1e-3)


def show_program_ids(x_shape, block_shape, grid, index_map=lambda i, j: (i, j)):
    def program_ids_kernel(o_ref):
        axes = 0
        for axis in range(len(grid)):
            axes += pl.program_id(axis) * 10 ** (len(grid) - 1 - axis)
        o_ref[...] = jnp.full(o_ref.shape, axes)

    res = pl.pallas_call(
        program_ids_kernel,
        out_shape=jax.ShapeDtypeStruct(x_shape, dtype=np.int32),
        grid=grid,
        in_specs=[],
        out_specs=pl.BlockSpec(block_shape, index_map),
    )()
    return str(np.asarray(res))


def docs(text):
    return "\n".join(line.strip() for line in text.strip().splitlines())


def test_show_program_ids_blocks():
    assert show_program_ids((8, 6), (2, 3), (4, 2)) == docs("""
        [[ 0  0  0  1  1  1]
         [ 0  0  0  1  1  1]
         [10 10 10 11 11 11]
         [10 10 10 11 11 11]
         [20 20 20 21 21 21]
         [20 20 20 21 21 21]
         [30 30 30 31 31 31]
         [30 30 30 31 31 31]]""").replace("\n", "\n ")


def test_show_program_ids_out_of_bounds_blocks():
    assert show_program_ids((7, 5), (2, 3), (4, 2)) == docs("""
        [[ 0  0  0  1  1]
         [ 0  0  0  1  1]
         [10 10 10 11 11]
         [10 10 10 11 11]
         [20 20 20 21 21]
         [20 20 20 21 21]
         [30 30 30 31 31]]""").replace("\n", "\n ")


def test_show_program_ids_array_smaller_than_block():
    assert show_program_ids((1, 2), (2, 3), (1, 1)) == "[[0 0]]"


def test_show_program_ids_revisited_output():
    assert show_program_ids((8, 6), (2, 3), (4, 2, 10), lambda i, j, k: (i, j)) == docs("""
        [[  9   9   9  19  19  19]
         [  9   9   9  19  19  19]
         [109 109 109 119 119 119]
         [109 109 109 119 119 119]
         [209 209 209 219 219 219]
         [209 209 209 219 219 219]
         [309 309 309 319 319 319]
         [309 309 309 319 319 319]]""").replace("\n", "\n ")


def test_squeezed_block_dimension():
    def kernel(o_ref):
        assert o_ref.shape == (2,)
        o_ref[...] = jnp.full((2,), 10 * pl.program_id(1) + pl.program_id(0))

    result = pl.pallas_call(
        kernel,
        jax.ShapeDtypeStruct((3, 4), dtype=np.int32),
        out_specs=pl.BlockSpec((None, 2), lambda i, j: (i, j)),
        grid=(3, 2),
    )()
    assert repr(result) == docs("""
        Array([[ 0,  0, 10, 10],
               [ 1,  1, 11, 11],
               [ 2,  2, 12, 12]], dtype=int32)""").replace("\n[", "\n       [")


def test_whole_array_blocks_and_default_index_maps():
    expected = docs("""
        [[12 12 12 12]
         [12 12 12 12]
         [12 12 12 12]
         [12 12 12 12]]""").replace("\n", "\n ")
    assert show_program_ids((4, 4), None, (2, 3), None) == expected
    assert show_program_ids((4, 4), (4, 4), (2, 3), None) == expected
