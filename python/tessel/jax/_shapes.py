"""Broadcasts, reshapes, transposes, slices, padding, iota and contractions.

Each reshapes, moves or combines block values: `broadcast_in_dim`,
`reshape`, `squeeze`, `expand_dims`, `transpose`, `tile`, `slice`,
`split`, `dynamic_slice`, `dynamic_update_slice`, `concatenate`, `stack`,
`unstack`, `pad`, `rev`, `iota`, `pltpu.roll`, and `dot_general` of any
dimension numbers as batched `block.dot`s."""

from __future__ import annotations

import numpy as np
from jax._src import core

from tessel.jax._emit import Value, is_float, is_unsigned, tensor_type
from tessel.jax._gather import generic_by_position
from tessel.jax._registry import rule


class ShapeOps:
    """The translator's shape helpers (a mixin of `KernelTranslator`)."""

    def transpose(self, x: Value, permutation) -> Value:
        permutation = tuple(permutation)
        if permutation == tuple(range(len(permutation))):
            return x
        shape = tuple(x.shape[p] for p in permutation)
        out_type = tensor_type(shape, x.dtype)
        empty = self.emit.op(f"tensor.empty() : {out_type}", shape, x.dtype)
        return self.emit.op(
            f"linalg.transpose ins({x.name} : {x.type}) outs({empty.name} : {out_type}) "
            f"permutation = [{', '.join(map(str, permutation))}]",
            shape,
            x.dtype,
        )

    def extract_slice(self, x: Value, offsets, shape, strides=None) -> Value:
        strides = strides or [1] * len(shape)
        return self.emit.op(
            f"tensor.extract_slice {x.name}[{', '.join(map(str, offsets))}] [{', '.join(map(str, shape))}] "
            f"[{', '.join(map(str, strides))}] : {x.type} to {tensor_type(shape, x.dtype)}",
            shape, x.dtype)

    def clamped_starts(self, starts, sizes, full) -> list[str]:
        """`dynamic_slice`'s start indices clamped as JAX's: into
        [0, dim - size] so the window lies inside the operand."""
        return [self.emit.clamp_index(self.as_index(start), dim - size)
                for start, size, dim in zip(starts, sizes, full)]

    def insert_slice(self, part: Value, into: Value, offsets, strides=None) -> Value:
        strides = strides or [1] * len(part.shape)
        return self.emit.op(
            f"tensor.insert_slice {part.name} into {into.name}[{', '.join(map(str, offsets))}] "
            f"[{', '.join(map(str, part.shape))}] [{', '.join(map(str, strides))}] : "
            f"{part.type} into {into.type}",
            into.shape, into.dtype)

    def concatenate(self, parts, dim: int, shape, dtype) -> Value:
        result = self.emit.op(f"tensor.empty() : {tensor_type(shape, dtype)}", shape, dtype)
        offset = 0
        for part in parts:
            if part.shape[dim] == 0:
                continue  # (an empty part's offset may be past the end)
            part = self.convert(part, dtype)
            offsets = [offset if d == dim else 0 for d in range(len(shape))]
            result = self.insert_slice(part, result, offsets)
            offset += part.shape[dim]
        return result

    def rolled(self, x: Value, shift, axis: int, extra: int) -> Value:
        """`x` rolled by `shift + extra` along `axis`: the window of x
        concatenated with itself that starts at length - shift (mod length)."""
        length = x.shape[axis]
        if length == 0:
            return x
        doubled_shape = tuple(2 * n if d == axis else n for d, n in enumerate(x.shape))
        doubled = self.concatenate([x, x], axis, doubled_shape, x.dtype)
        if isinstance(shift, Value):
            amount = self.as_index(shift)
            total, modulus, start = self.emit.fresh(), self.emit.fresh(), self.emit.fresh()
            extra_index, length_index = self.emit.index(extra), self.emit.index(length)
            self.emit.line(f"{total} = arith.addi {amount}, {extra_index} : index")
            self.emit.line(f"{modulus} = arith.remsi {total}, {length_index} : index")
            # (length - s mod length) mod length, with s mod length in (-length, length).
            self.emit.line(f"{start} = arith.subi {length_index}, {modulus} : index")
            wrapped = self.emit.fresh()
            self.emit.line(f"{wrapped} = arith.remsi {start}, {length_index} : index")
            begin = wrapped
        else:
            begin = (length - (int(shift) + extra) % length) % length
        offsets = [begin if d == axis else 0 for d in range(len(x.shape))]
        return self.extract_slice(doubled, offsets, x.shape)


@rule("broadcast_in_dim", moves_values=True)
def broadcast_in_dim(ctx, x, *_):
    tr = ctx.tr
    shape = tuple(ctx.params["shape"])
    dims = tuple(ctx.params["broadcast_dimensions"])
    # Put the operand's dims where they go, then broadcast size-1 dims.
    placed = [1] * len(shape)
    for source, target in enumerate(dims):
        placed[target] = x.shape[source]
    if list(dims) != sorted(dims):
        ctx.fail("broadcast_in_dim that reorders dimensions")
    return tr.splat(tr.reshape(x, tuple(placed)), shape)


@rule("broadcast_to", moves_values=True)
def broadcast_to(ctx, x, *_):
    return ctx.tr.splat(x, ctx.out_shape)


@rule("reshape", moves_values=True)
def reshape(ctx, x, *_):
    tr = ctx.tr
    if ctx.params.get("dimensions") is not None:
        ctx.fail("reshape with dimensions")
    return tr.reshape(x, tuple(ctx.params["new_sizes"]))


@rule("squeeze", "expand_dims", moves_values=True)
def squeeze(ctx, x):
    return ctx.tr.reshape(x, ctx.out_shape)


@rule("transpose", moves_values=True)
def transpose(ctx, x):
    return ctx.tr.transpose(x, ctx.params["permutation"])


@rule("tile", moves_values=True)
def tile(ctx, x):
    """`jnp.tile`: each dim of size n repeated r times is a size-1 dim
    broadcast to r next to it, the pairs then merged."""
    tr = ctx.tr
    reps = tuple(int(r) for r in ctx.params["reps"])
    interleaved = tuple(d for n in x.shape for d in (1, n))
    repeated = tuple(d for r, n in zip(reps, x.shape) for d in (r, n))
    spread = tr.splat(tr.reshape(x, interleaved), repeated)
    return tr.reshape(spread, ctx.out_shape)


@rule("slice", moves_values=True)
def slice_(ctx, x):
    tr = ctx.tr
    starts = [int(v) for v in ctx.params["start_indices"]]
    strides = [int(v) for v in (ctx.params["strides"] or [1] * len(starts))]
    shape = ctx.out_shape
    return tr.extract_slice(x, [str(v) for v in starts], shape, strides)


@rule("split", moves_values=True)
def split(ctx, x):
    """`jnp.split`: consecutive slices along one axis."""
    tr = ctx.tr
    axis = int(ctx.params["axis"])
    parts, offset = [], 0
    for size in (int(v) for v in ctx.params["sizes"]):
        shape = tuple(size if d == axis else n for d, n in enumerate(x.shape))
        offsets = [offset if d == axis else 0 for d in range(len(shape))]
        parts.append(tr.extract_slice(x, offsets, shape))
        offset += size
    return parts


@rule("dynamic_slice", moves_values=True)
def dynamic_slice(ctx, x, *starts):
    tr = ctx.tr
    sizes = tuple(int(v) for v in ctx.params["slice_sizes"])
    return tr.extract_slice(x, tr.clamped_starts(starts, sizes, x.shape), sizes)


@rule("dynamic_update_slice", moves_values=True)
def dynamic_update_slice(ctx, x, update, *starts):
    tr = ctx.tr
    offsets = tr.clamped_starts(starts, update.shape, x.shape)
    return tr.insert_slice(update, x, offsets)


@rule("concatenate", moves_values=True)
def concatenate(ctx, *parts):
    return ctx.tr.concatenate(parts, int(ctx.params["dimension"]), ctx.out_shape, ctx.out_dtype)


@rule("pad", moves_values=True)
def pad(ctx, x, fill):
    tr = ctx.tr
    config = [tuple(int(v) for v in c) for c in ctx.params["padding_config"]]
    if any(interior != 0 for _, _, interior in config):
        ctx.fail("'pad' with interior padding")
    # Negative edges crop: slice first, then pad by the positive parts.
    crop = [max(-low, 0) for low, _, _ in config]
    kept = [n - crop[d] - max(-high, 0) for d, (n, (_, high, _)) in enumerate(zip(x.shape, config))]
    if crop != [0] * len(crop) or list(kept) != list(x.shape):
        x = tr.extract_slice(x, crop, tuple(kept))
    shape = ctx.out_shape
    result = tr.splat(tr.convert(fill, x.dtype), shape)
    return tr.insert_slice(x, result, [max(low, 0) for low, _, _ in config])


@rule("iota")
def iota(ctx, *operands):
    tr = ctx.tr
    shape = tuple(ctx.params["shape"])
    dtype = np.dtype(ctx.params["dtype"])
    dimension = int(ctx.params["dimension"])
    base = np.int32 if is_float(dtype) or dtype.itemsize < 4 or is_unsigned(dtype) else dtype
    iota = tr.emit.op(f"block.iota dim {dimension} : {tensor_type(shape, base)}", shape, base)
    result = tr.convert(iota, dtype)
    if len(shape) == 1 and not is_float(dtype):
        tr.contiguous[result.name] = None
    return result


@rule("dot_general")
def dot_general(ctx, a, b):
    """Any `dot_general` as batched matrix products: each operand is
    transposed to (batch, free, contracted) / (batch, contracted, free)
    and flattened to rank 3, one `block.dot` runs per batch entry, and
    the (batch, lhs free, rhs free) result is unflattened."""
    tr = ctx.tr
    (contract_a, contract_b), (batch_a, batch_b) = ctx.params["dimension_numbers"]
    contract_a, contract_b = tuple(map(int, contract_a)), tuple(map(int, contract_b))
    batch_a, batch_b = tuple(map(int, batch_a)), tuple(map(int, batch_b))
    free_a = tuple(d for d in range(len(a.shape)) if d not in contract_a and d not in batch_a)
    free_b = tuple(d for d in range(len(b.shape)) if d not in contract_b and d not in batch_b)
    if a.dtype != b.dtype:
        common = np.promote_types(a.dtype, b.dtype)
        a, b = tr.convert(a, common), tr.convert(b, common)

    def size(x, dims):
        return int(np.prod([x.shape[d] for d in dims], dtype=np.int64))

    batch, m, k, n = size(a, batch_a), size(a, free_a), size(a, contract_a), size(b, free_b)
    a = tr.reshape(tr.transpose(a, batch_a + free_a + contract_a), (batch, m, k))
    b = tr.reshape(tr.transpose(b, batch_b + contract_b + free_b), (batch, k, n))
    out_dtype = ctx.out_dtype
    # f16/bf16 results accumulate in f32 and round once, as XLA (and
    # Triton, and the matrix units) do: `block.dot` accumulates in its
    # result type, and a bf16 sum of 128 products came out 8x further
    # from the exact value than jax.jit's.
    accumulated = np.dtype(np.float32) if is_float(out_dtype) and out_dtype.itemsize < 4 else out_dtype
    products = []
    for index in range(batch):
        lhs = tr.reshape(tr.extract_slice(a, [index, 0, 0], (1, m, k)), (m, k))
        rhs = tr.reshape(tr.extract_slice(b, [index, 0, 0], (1, k, n)), (k, n))
        product = tr.emit.op(
            f"block.dot {lhs.name}, {rhs.name} : {lhs.type}, {rhs.type} -> {tensor_type((m, n), accumulated)}",
            (m, n), accumulated)
        products.append(tr.reshape(tr.convert(product, out_dtype), (1, m, n)))
    result = products[0] if batch == 1 else tr.concatenate(products, 0, (batch, m, n), out_dtype)
    return tr.reshape(result, ctx.out_shape)


@rule("stack", moves_values=True)
def stack(ctx, *parts):
    tr = ctx.tr
    axis = int(ctx.params["axis"])
    expanded = [tr.reshape(p, p.shape[:axis] + (1,) + p.shape[axis:]) for p in parts]
    return tr.concatenate(expanded, axis, ctx.out_shape, ctx.out_dtype)


@rule("unstack", moves_values=True)
def unstack(ctx, x):
    tr = ctx.tr
    axis = int(ctx.params["axis"])
    one = tuple(1 if d == axis else n for d, n in enumerate(x.shape))
    rest = tuple(n for d, n in enumerate(x.shape) if d != axis)
    return [tr.reshape(tr.extract_slice(x, [i if d == axis else 0 for d in range(len(x.shape))], one), rest)
            for i in range(x.shape[axis])]


@rule("rev", moves_values=True)
def rev(ctx, x):
    """`jnp.flip`, `x[::-1]`: element i of a reversed dimension of size n
    is x's element n - 1 - i (a generic reading x by position)."""
    tr = ctx.tr
    reversed_dims = {int(d) for d in ctx.params["dimensions"]}
    if not reversed_dims:
        return x
    emit = tr.emit

    def element_at(positions):
        at = []
        for d, position in enumerate(positions):
            if d in reversed_dims:
                mirrored = emit.fresh()
                emit.line(f"{mirrored} = arith.subi {emit.index(x.shape[d] - 1)}, {position} : index")
                position = mirrored
            at.append(position)
        value = emit.fresh()
        emit.line(f"{value} = tensor.extract {x.name}[{', '.join(at)}] : {x.type}")
        return value

    return generic_by_position(emit, x.shape, x.dtype, element_at)


@rule("roll", reads_operands=False, moves_values=True)
def roll(ctx):
    """`pltpu.roll`: element i moves to i + shift (mod the axis); with a
    stride, slice j along `stride_axis` rolls by shift + j * stride."""
    tr, (x_atom, shift_atom) = ctx.tr, ctx.eqn.invars
    x = ctx.read(x_atom)
    # A static shift (a literal) folds into the slice offsets.
    shift = shift_atom.val if isinstance(shift_atom, core.Literal) else ctx.read(shift_atom)
    axis, stride, stride_axis = ctx.params["axis"], ctx.params["stride"], ctx.params["stride_axis"]
    if stride is None:
        return tr.rolled(x, shift, int(axis), 0)
    stride_axis = int(stride_axis)
    one = tuple(1 if d == stride_axis else n for d, n in enumerate(x.shape))
    rows = []
    for row in range(x.shape[stride_axis]):
        offsets = [row if d == stride_axis else 0 for d in range(len(x.shape))]
        rows.append(tr.rolled(tr.extract_slice(x, offsets, one), shift, int(axis), row * int(stride)))
    return tr.concatenate(rows, stride_axis, x.shape, x.dtype)
