"""Ref indexing beyond windows, value slicing, scalar prefetch and
non-affine index maps, under jax.jit through Tessel, against numpy.

`test_random_index_arrays` is a differential generator: random mixes of
`pl.ds` slices, scalar indices and broadcasting index arrays on refs of
rank 2 and 3, loaded and stored, compared with numpy's advanced indexing
(whose placement rules Pallas' NDIndexer follows); `test_random_strided_indexers`
adds strided slices and `test_random_chains_of_ref_indexers` chains of `.at[]`;
`test_random_scatters_into_values` uses the indexers in `x.at[...].set/add/...`
on loaded values (`lax.scatter`). `test_random_gathers_of_values`
applies the same indexers, `jnp.take` and `take_along_axis` to loaded
values (`lax.gather`), against jax.jit."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jax.experimental.pallas import triton as plgpu

import tessel.jax

CASES = 60


def _random_indexer(rng, shape, strides=(1,), arrays_required=True):
    """(kinds, numpy indexer) for a ref of `shape`: per dim a slice
    ("slice", start, size, stride), a scalar ("scalar", i) or an index
    array ("array", values) whose shapes broadcast together."""
    while True:
        kinds = [rng.choice(["slice", "scalar", "array"], p=[0.35, 0.2, 0.45]) for _ in shape]
        if "array" in kinds or not arrays_required:
            break
    arrays = [d for d, kind in enumerate(kinds) if kind == "array"]
    broadcast = tuple(int(rng.integers(2, 5)) for _ in range(int(rng.integers(1, 3))))
    out = []
    for d, (kind, n) in enumerate(zip(kinds, shape)):
        if kind == "slice":
            stride = int(rng.choice(strides)) if len(strides) > 1 else 1
            size = int(rng.integers(1, (n - 1) // stride + 2))
            out.append(("slice", int(rng.integers(0, n - stride * (size - 1))), size, stride))
        elif kind == "scalar":
            out.append(("scalar", int(rng.integers(0, n))))
        else:
            array_shape = list(broadcast[len(broadcast) - int(rng.integers(1, len(broadcast) + 1)):])
            if len(arrays) > 1:
                array_shape = [s if rng.random() < 0.6 else 1 for s in array_shape]
            out.append(("array", rng.integers(0, n, size=tuple(array_shape)).astype(np.int32)))
    numpy_indexer = tuple(_numpy_slice(k) if k[0] == "slice" else k[1] for k in out)
    return out, numpy_indexer


def _numpy_slice(kind):
    _, start, size, stride = kind
    return slice(start, start + stride * (size - 1) + 1, stride)


def _pallas_indexer(kinds, index_refs):
    arrays = iter(index_refs)
    return tuple(
        pl.ds(*k[1:]) if k[0] == "slice" else k[1] if k[0] == "scalar" else next(arrays)[...]
        for k in kinds
    )


def _gather_call(kinds, x, arrays, result_shape):
    def kernel(x_ref, *refs):
        *index_refs, o_ref = refs
        o_ref[...] = x_ref[_pallas_indexer(kinds, index_refs)]

    return pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct(result_shape, x.dtype))(x, *arrays)


def _scatter_call(kinds, x, values, arrays):
    def kernel(x_ref, v_ref, *refs):
        *index_refs, o_ref = refs
        o_ref[...] = x_ref[...]
        o_ref[_pallas_indexer(kinds, index_refs)] = v_ref[...]

    return pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype))(x, values, *arrays)


@pytest.mark.parametrize("seed", range(CASES))
def test_random_index_arrays(seed):
    rng = np.random.default_rng(seed)
    shape = tuple(int(n) for n in rng.integers(3, 7, size=int(rng.integers(2, 4))))
    _check_indexer(rng, shape, *_random_indexer(rng, shape))


@pytest.mark.parametrize("seed", range(CASES))
def test_random_strided_indexers(seed):
    # Strided `pl.ds` slices mixed with scalars, index arrays and other
    # strided slices: slice dims stay where NumPy puts them. (Once 'cannot
    # translate a strided slice together with scalar indices'.)
    rng = np.random.default_rng(9000 + seed)
    shape = tuple(int(n) for n in rng.integers(3, 10, size=int(rng.integers(2, 5))))
    _check_indexer(rng, shape, *_random_indexer(rng, shape, strides=(1, 2, 3), arrays_required=False))


def _check_indexer(rng, shape, kinds, indexer):
    """Loads and stores `x_ref[indexer]` through Tessel against numpy."""
    x = rng.standard_normal(shape).astype(np.float32)
    arrays = [k[1] for k in kinds if k[0] == "array"]
    expected = x[indexer]
    gathered = jax.jit(functools.partial(_gather_call, kinds, result_shape=expected.shape))(x, arrays)
    np.testing.assert_array_equal(np.asarray(gathered), expected, err_msg=f"load x[{indexer}]")

    # Stores need distinct positions (numpy and Pallas leave duplicates'
    # order unspecified).
    positions = np.arange(x.size).reshape(shape)[indexer]
    if np.unique(positions).size != positions.size:
        return
    values = rng.standard_normal(expected.shape).astype(np.float32)
    stored = jax.jit(functools.partial(_scatter_call, kinds))(x, values, arrays)
    reference = x.copy()
    reference[indexer] = values
    np.testing.assert_array_equal(np.asarray(stored), reference, err_msg=f"store x[{indexer}]")


@pytest.mark.parametrize("seed", range(24))
def test_random_chains_of_ref_indexers(seed):
    # `x_ref.at[...].at[...]...[...]`: each indexer (static or dynamic
    # slices, strided or not, and scalars) applies to the view the ones
    # before it select; numpy's views compose the same way.
    rng = np.random.default_rng(12000 + seed)
    shape = tuple(int(n) for n in rng.integers(4, 12, size=int(rng.integers(2, 4))))
    chain, view_shape = [], shape
    for _ in range(int(rng.integers(2, 4))):
        kinds, _ = _random_indexer(rng, view_shape, strides=(1, 2, 3), arrays_required=False)
        kinds = [k if k[0] != "array" else ("scalar", int(k[1].flat[0])) for k in kinds]
        if all(k[0] == "scalar" for k in kinds):
            kinds[-1] = ("slice", 0, view_shape[-1], 1)
        chain.append(kinds)
        view_shape = tuple(k[2] for k in kinds if k[0] == "slice")
    dynamic = bool(seed % 2)
    starts = np.array([k[1] for kinds in chain for k in kinds], np.int32)

    def indexers(s_ref):
        read = iter(range(len(starts)))
        for kinds in chain:
            yield tuple(pl.ds(s_ref[next(read)] if dynamic else k[1], *k[2:]) if k[0] == "slice" else
                        (s_ref[next(read)] if dynamic else k[1]) for k in kinds)

    def kernel(s_ref, x_ref, y_ref, z_ref):
        view, out = x_ref, z_ref
        z_ref[...] = jnp.zeros_like(z_ref)
        for indexer in indexers(s_ref):
            view, out = view.at[indexer], out.at[indexer]
        y_ref[...] = view[...]
        out[...] = view[...] + 1

    x = rng.standard_normal(shape).astype(np.float32)
    expected_view, expected_z = x, np.zeros_like(x)
    z_view = expected_z
    for kinds in chain:
        indexer = tuple(_numpy_slice(k) if k[0] == "slice" else k[1] for k in kinds)
        expected_view, z_view = expected_view[indexer], z_view[indexer]
    z_view[...] = expected_view + 1
    y, z = jax.jit(pl.pallas_call(
        kernel, out_shape=(jax.ShapeDtypeStruct(expected_view.shape, jnp.float32),
                           jax.ShapeDtypeStruct(shape, jnp.float32)),
        in_specs=[pl.BlockSpec(memory_space=pltpu.SMEM), pl.BlockSpec()]))(starts, x)
    np.testing.assert_array_equal(np.asarray(y), expected_view, err_msg=str(chain))
    np.testing.assert_array_equal(np.asarray(z), expected_z, err_msg=str(chain))


@pytest.mark.parametrize("seed", range(CASES))
def test_random_gathers_of_values(seed):
    # `lax.gather` of a loaded value: the random indexers above applied to
    # x_ref[...], jnp.take in each mode with out-of-range entries, and
    # take_along_axis, against jax.jit. Once 'unsupported primitive gather'.
    rng = np.random.default_rng(5000 + seed)
    shape = tuple(int(n) for n in rng.integers(3, 7, size=int(rng.integers(2, 4))))
    x = rng.standard_normal(shape).astype(np.float32)
    kinds, _ = _random_indexer(rng, shape)
    arrays = [k[1] for k in kinds if k[0] == "array"]
    axis = int(rng.integers(len(shape)))
    wild = rng.integers(-2 * shape[axis], 2 * shape[axis], int(rng.integers(1, 9))).astype(np.int32)
    along = rng.integers(0, shape[axis], shape[:axis] + (3,) + shape[axis + 1:]).astype(np.int32)
    mode = ["fill", "clip", None][seed % 3]

    def compute(value, arrays, wild, along):
        given = iter(arrays)
        indexer = tuple(_numpy_slice(k) if k[0] == "slice" else k[1] if k[0] == "scalar" else next(given)
                        for k in kinds)
        return (value[indexer], jnp.take(value, wild, axis=axis, mode=mode),
                jnp.take_along_axis(value, along, axis=axis))

    def kernel(x_ref, w_ref, a_ref, *refs):
        index_refs, outs = refs[:len(arrays)], refs[len(arrays):]
        for o_ref, result in zip(outs, compute(x_ref[...], [r[...] for r in index_refs], w_ref[...], a_ref[...])):
            o_ref[...] = result

    expected = jax.jit(compute)(x, arrays, wild, along)
    shapes = [jax.ShapeDtypeStruct(e.shape, e.dtype) for e in expected]
    out = pl.pallas_call(kernel, out_shape=shapes)(x, wild, along, *arrays)
    for what, got, want in zip(["x[...][indexer]", f"take mode={mode}", "take_along_axis"], out, expected):
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want), err_msg=f"{what} of {shape}")


@pytest.mark.parametrize("seed", range(CASES))
def test_random_scatters_into_values(seed):
    # `x.at[indexer].set/add/mul/min/max(v)` on a loaded value (lax.scatter
    # and its combining forms) with the random indexers above, strided
    # slices included, and `x.at[wild].add(v, mode=...)` with out-of-range
    # entries, against jax.jit. Small integers in floats keep duplicate
    # positions' sums and products exact in any order. Once 'unsupported
    # primitive scatter'.
    rng = np.random.default_rng(15000 + seed)
    shape = tuple(int(n) for n in rng.integers(3, 7, size=int(rng.integers(2, 4))))
    x = rng.integers(-4, 5, shape).astype(np.float32)
    kinds, indexer = _random_indexer(rng, shape, strides=(1, 2), arrays_required=False)
    arrays = [k[1] for k in kinds if k[0] == "array"]
    op = ["set", "add", "mul", "min", "max"][seed % 5]
    positions = np.arange(x.size).reshape(shape)[indexer]
    if op == "set" and np.unique(positions).size != positions.size:
        op = "add"  # which duplicate wins a set is unspecified
    updates = rng.integers(-3, 4, positions.shape).astype(np.float32)
    wild = rng.integers(-2 * shape[0], 2 * shape[0], int(rng.integers(1, 9))).astype(np.int32)
    wild_updates = rng.integers(-3, 4, (wild.size,) + shape[1:]).astype(np.float32)
    mode = ["clip", "drop", None][seed % 3]

    def compute(value, arrays, updates, wild, wild_updates):
        given = iter(arrays)
        index = tuple(_numpy_slice(k) if k[0] == "slice" else k[1] if k[0] == "scalar" else next(given) for k in kinds)
        return getattr(value.at[index], op)(updates), value.at[wild].add(wild_updates, mode=mode)

    def kernel(x_ref, u_ref, w_ref, wu_ref, *refs):
        index_refs, outs = refs[:len(arrays)], refs[len(arrays):]
        results = compute(x_ref[...], [r[...] for r in index_refs], u_ref[...], w_ref[...], wu_ref[...])
        for o_ref, result in zip(outs, results):
            o_ref[...] = result

    expected = jax.jit(compute)(x, arrays, updates, wild, wild_updates)
    shapes = [jax.ShapeDtypeStruct(e.shape, e.dtype) for e in expected]
    out = pl.pallas_call(kernel, out_shape=shapes)(x, updates, wild, wild_updates, *arrays)
    for what, got, want in zip([f"x.at[{indexer}].{op}", f"x.at[{wild}].add mode={mode}"], out, expected):
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want), err_msg=f"{what} of {shape}")


def test_scatters_into_integer_values_combine_with_integer_ops():
    x = jnp.asarray(np.arange(-6, 6, dtype=np.int32).reshape(3, 4))
    rows = jnp.asarray(np.array([2, 0, 2], np.int32))

    def compute(value, rows):
        return (value.at[rows].add(7), value.at[rows, 1].min(-9), value.at[:, ::2].max(3),
                value.astype(jnp.uint8).at[rows].min(jnp.uint8(200)))

    def kernel(x_ref, r_ref, *outs):
        for o_ref, result in zip(outs, compute(x_ref[...], r_ref[...])):
            o_ref[...] = result

    expected = jax.jit(compute)(x, rows)
    out = pl.pallas_call(kernel, out_shape=[jax.ShapeDtypeStruct(e.shape, e.dtype) for e in expected])(x, rows)
    for got, want in zip(out, expected):
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


def test_diagonal_of_a_value():
    # JAX's ops_test: jnp.diagonal is a gather in platform_dependent's CPU
    # branch.
    x = jnp.arange(256 * 256, dtype=jnp.float32).reshape(256, 256)

    def kernel(x_ref, o_ref):
        o_ref[...] = jnp.diagonal(x_ref[...])

    out = pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct((256,), jnp.float32))(x)
    np.testing.assert_array_equal(out, np.diagonal(np.asarray(x)))


def test_masked_outer_product_gather_clamps_and_fills():
    """The layer-norm backward pattern with a ragged edge: positions past the
    ref are clamped, then masked to `other`."""

    def kernel(x_ref, o_ref):
        rows = jnp.arange(8)
        cols = 3 + jnp.arange(8)
        mask = (rows[:, None] < 5) & (cols[None, :] < 9)
        o_ref[...] = plgpu.load(x_ref.at[rows[:, None], cols[None]], mask=mask, other=-1.0)

    x = np.arange(5 * 9, dtype=np.float32).reshape(5, 9)
    out = jax.jit(lambda x: pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct((8, 8), jnp.float32))(x))(x)
    expected = np.full((8, 8), -1.0, np.float32)
    expected[:5, :6] = x[:, 3:9]
    np.testing.assert_array_equal(np.asarray(out), expected)


def test_value_slicing_ops():
    """lax.slice / dynamic_slice (clamped as JAX's) / dynamic_update_slice /
    concatenate / pad / tile on block values."""

    def kernel(x_ref, o_ref):
        x = x_ref[...]
        i = pl.program_id(0)
        corner = jax.lax.slice(x, (1, 2), (5, 8), (2, 3))
        window = jax.lax.dynamic_slice(x, (i + 5, 1), (4, 4))
        updated = jax.lax.dynamic_update_slice(x, jnp.zeros((2, 3), x.dtype), (i, 6))
        joined = jnp.concatenate([corner, window[:2]], axis=1)
        padded = jax.lax.pad(joined, np.float32(7.0), ((1, -1, 0), (0, 2, 0)))
        tiled = jnp.tile(padded, (4, 1))
        o_ref[...] = jnp.concatenate([updated[:, :8], jnp.zeros((8, 0), x.dtype)], axis=1) + tiled

    def reference(x, i):
        corner = x[1:5:2, 2:8:3]
        start = min(max(i + 5, 0), 8 - 4)
        window = x[start:start + 4, 1:5]
        updated = x.copy()
        column = min(max(6, 0), 8 - 3)
        updated[i:i + 2, column:column + 3] = 0
        joined = np.concatenate([corner, window[:2]], axis=1)
        padded = np.pad(joined, ((1, 0), (0, 2)), constant_values=7.0)[:-1]
        return updated + np.tile(padded, (4, 1))

    x = np.arange(64, dtype=np.float32).reshape(8, 8)
    out = jax.jit(lambda x: pl.pallas_call(
        kernel, grid=(2,), out_shape=jax.ShapeDtypeStruct((16, 8), jnp.float32),
        in_specs=[pl.BlockSpec((8, 8), lambda i: (0, 0))],
        out_specs=pl.BlockSpec((8, 8), lambda i: (i, 0)))(x))(x)
    expected = np.concatenate([reference(x, 0), reference(x, 1)])
    np.testing.assert_array_equal(np.asarray(out), expected)


def test_split_into_uneven_parts():
    def kernel(x_ref, o_ref):
        a, b, c = jnp.split(x_ref[...], [1, 5], axis=1)
        o_ref[...] = jnp.concatenate([c, a * 10, b], axis=1)

    x = np.arange(24, dtype=np.int32).reshape(3, 8)
    out = jax.jit(pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct((3, 8), jnp.int32)))(x)
    a, b, c = np.split(x, [1, 5], axis=1)
    np.testing.assert_array_equal(np.asarray(out), np.concatenate([c, a * 10, b], axis=1))


def test_scalar_prefetch_and_table_index_maps():
    """PrefetchScalarGridSpec: the table reaches index maps (a lookup, so an
    index function) and the kernel (as its first ref)."""

    def kernel(tables_ref, x_ref, o_ref):
        i = pl.program_id(0)
        o_ref[...] = x_ref[...] + tables_ref[i].astype(jnp.float32)

    @jax.jit
    def gather_rows(tables, x):
        return pl.pallas_call(
            kernel, out_shape=jax.ShapeDtypeStruct((4, 8), jnp.float32),
            grid_spec=pltpu.PrefetchScalarGridSpec(
                num_scalar_prefetch=1, grid=(4,),
                in_specs=[pl.BlockSpec((1, 8), lambda i, t: (t[i], 0))],
                out_specs=pl.BlockSpec((1, 8), lambda i, t: (i, 0))))(tables, x)

    tables = np.array([3, 0, 2, 1], np.int32)
    x = np.arange(32, dtype=np.float32).reshape(4, 8)
    text = gather_rows.lower(tables, x).as_text()
    assert f"@{tessel.jax.TARGET}" in text
    np.testing.assert_array_equal(np.asarray(gather_rows(tables, x)), x[tables] + tables[:, None])


def test_non_affine_index_map():
    """Causal attention's clamp: program (i, j) reads block min(i, j) through
    `lax.select` in the index map, summed over j."""

    def kernel(x_ref, o_ref):
        @pl.when(pl.program_id(1) == 0)
        def _():
            o_ref[...] = jnp.zeros_like(o_ref)

        o_ref[...] += x_ref[...]

    @jax.jit
    def clamped_sums(x):
        return pl.pallas_call(
            kernel, grid=(3, 3), out_shape=jax.ShapeDtypeStruct((3, 4), jnp.float32),
            in_specs=[pl.BlockSpec((1, 4), lambda i, j: (jax.lax.select(j > i, i, j), 0))],
            out_specs=pl.BlockSpec((1, 4), lambda i, j: (i, 0)))(x)

    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    expected = np.stack([sum(x[min(i, j)] for j in range(3)) for i in range(3)])
    np.testing.assert_array_equal(np.asarray(clamped_sums(x)), expected)


@pytest.mark.parametrize("seed", range(12))
def test_strided_slices_load_and_store(seed):
    # One strided dim (static or dynamic start, any stride, 0 included)
    # among plain slices: a gather on load, a scatter on store.
    rng = np.random.default_rng(seed)
    shape = (7, 9, 16)
    dim = int(rng.integers(0, 3))
    stride = int(rng.integers(0, 4))
    start = int(rng.integers(0, 3))
    size = int(rng.integers(1, 4)) if stride == 0 else (shape[dim] - start + stride - 1) // stride
    dynamic = bool(rng.integers(0, 2))

    def indexer(first):
        return tuple(pl.ds(first, size, stride) if d == dim else slice(None) for d in range(3))

    def kernel(s_ref, x_ref, y_ref, z_ref):
        first = s_ref[0] if dynamic else start
        y_ref[...] = x_ref[indexer(first)]
        z_ref[...] = jnp.zeros_like(z_ref)
        if stride != 0:
            z_ref[indexer(first)] = y_ref[...] * 2

    x = jnp.arange(np.prod(shape), dtype=jnp.float32).reshape(shape)
    positions = [start + stride * i for i in range(size)]
    picked = np.take(np.asarray(x), positions, axis=dim)
    y, z = pl.pallas_call(
        kernel, out_shape=(jax.ShapeDtypeStruct(picked.shape, jnp.float32), jax.ShapeDtypeStruct(shape, jnp.float32)),
        in_specs=[pl.BlockSpec(memory_space=pltpu.SMEM), pl.BlockSpec()],
    )(jnp.array([start], jnp.int32), x)
    np.testing.assert_array_equal(y, picked)
    if stride != 0:
        expected = np.zeros(shape, np.float32)
        index = [slice(None)] * 3
        index[dim] = positions
        expected[tuple(index)] = picked * 2
        np.testing.assert_array_equal(z, expected)


@pytest.mark.parametrize("n", [200, 256])
def test_offset_plus_arange_indices_are_windows(n):
    # Triton-style column blocks, `i * block + arange(block)` masked past
    # the row: read and written as windows (a partial last block for 200).
    block = 64

    def kernel(x_ref, o_ref):
        def body(i, total):
            cols = i * block + jnp.arange(block)
            mask = cols < n
            v = plgpu.load(x_ref.at[cols], mask=mask, other=0.0)
            plgpu.store(o_ref.at[cols], v * 2, mask=mask)
            return total + v.sum()

        total = jax.lax.fori_loop(0, pl.cdiv(n, block), body, 0.0)
        o_ref[0] = total

    x = jnp.arange(n, dtype=jnp.float32)
    out = pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct((n,), jnp.float32))(x)
    expected = np.asarray(x) * 2
    expected[0] = float(np.asarray(x).sum())
    np.testing.assert_array_equal(out, expected)


def test_negative_index_array_entries_count_from_the_end():
    # NumPy's rule (and the interpreter's): -1 is the last row.
    idx = jnp.array([1, 0, 2, 2, -1, 1], jnp.int32)

    def kernel(x_ref, i_ref, o_ref):
        i = i_ref[...]
        o_ref[...] = x_ref[i, i]

    x = jnp.arange(4 * 3 * 2, dtype=jnp.float32).reshape(4, 3, 2)
    out = pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct((6, 2), jnp.float32))(x, idx)
    np.testing.assert_array_equal(out, np.asarray(x)[np.asarray(idx), np.asarray(idx)])
