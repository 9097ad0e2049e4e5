"""Gathers and scatters: index arrays on refs and values.

Ref accesses with index arrays beyond one 1-D array: numpy's advanced
indexing on refs (`x_ref.at[rows[:, None], cols[None]]`, the layer-norm
backward kernels' outer-product windows; several or N-D index arrays mixed
with `pl.ds` slices and scalars).

`block.load`/`block.store` gather and scatter along one dim only, so these
become upstream ops: a load reads the whole ref as a tensor (in place when
nothing writes the ref) and a `linalg.generic` over the result shape
extracts each element at its computed position; a store is a loop nest of
`memref.store`s. Positions are those `NDIndexer.get_indexer_shape` gives:
the broadcast index arrays' dims in place of the first indexed dim when the
indexed dims are contiguous, first otherwise (numpy's rule). Loads clamp
positions into the ref, as JAX's gathers do (masked-off elements then read
`other`); stores skip positions outside it and masked-off elements.
`gather_values` is `lax.gather` of a value (indexing a loaded block) in
the same form: a generic extracting each element; `scatter_values` is
`lax.scatter` (`x.at[i].set/add/mul/min/max(v)`) into a value.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tessel.jax._elementwise import BINARY
from tessel.jax._emit import Value, element, integer_range, is_float, is_unsigned, tensor_type
from tessel.jax._registry import rule


@dataclass
class IndexArrays:
    """An access with index arrays, dim by dim of the ref."""

    # Per ref dim: ("slice", start index name, size[, stride]), ("array",
    # Value) or ("scalar", index name).
    dims: list
    # The index arrays' broadcast shape.
    broadcast: tuple
    # The access's result shape.
    shape: tuple

    def arrays_at(self) -> int:
        """The result dim where the broadcast index arrays' dims start."""
        return next((p for k, p in zip(self.dims, self.result_dims()) if k[0] != "slice"), 0)

    def result_dims(self):
        """Per ref dim: the result dim a slice runs along, or the first
        result dim of the broadcast index arrays (None for scalars)."""
        indexed = [d for d, kind in enumerate(self.dims) if kind[0] != "slice"]
        if not indexed:
            # Only (strided) slices: each runs along its own dim.
            return list(range(len(self.dims)))
        contiguous = all(b - a == 1 for a, b in zip(indexed, indexed[1:]))
        first = indexed[0] if contiguous else 0
        slices_before = sum(1 for d in range(first) if self.dims[d][0] == "slice") if contiguous else 0
        arrays_at = slices_before
        after = arrays_at + len(self.broadcast)
        out, next_slice = [], 0
        for kind in self.dims:
            if kind[0] == "slice":
                position = next_slice if next_slice < slices_before else after + next_slice - slices_before
                out.append(position)
                next_slice += 1
            else:
                out.append(arrays_at)
        return out


def index_arrays(dims) -> IndexArrays:
    arrays = [kind[1].shape for kind in dims if kind[0] == "array"]
    broadcast = tuple(np.broadcast_shapes(*arrays)) if arrays else ()
    access = IndexArrays(dims, broadcast, ())
    positions = access.result_dims()
    rank = len(broadcast) + sum(1 for kind in dims if kind[0] == "slice")
    shape = [0] * rank
    for kind, position in zip(dims, positions):
        if kind[0] == "slice":
            shape[position] = kind[2]
    first = access.arrays_at()
    shape[first:first + len(broadcast)] = broadcast
    access.shape = tuple(shape)
    return access


def _array_map(array: Value, access: IndexArrays, first: int) -> str:
    """The affine map from the result's dims to an index array's (numpy
    broadcasting: trailing dims align, size-1 dims stay at 0)."""
    rank = len(access.shape)
    lead = len(access.broadcast) - len(array.shape)
    results = []
    for j, size in enumerate(array.shape):
        results.append("0" if size == 1 else f"d{first + lead + j}")
    dims = ", ".join(f"d{i}" for i in range(rank))
    return f"affine_map<({dims}) -> ({', '.join(results)})>"


def _positions(tr, access: IndexArrays, ref: Value, indices: dict, clamp: bool):
    """Emits each ref dim's position (index SSA names) inside a region whose
    result-dim indices are `indices` (result dim -> name) and whose index
    array elements are bound in `arrays` order. Returns (positions, in
    bounds i1 name or None)."""
    emit = tr.emit
    positions, in_bounds = [], None
    result_dims = access.result_dims()
    for d, (kind, result_dim) in enumerate(zip(access.dims, result_dims)):
        if kind[0] == "slice":
            step = indices[result_dim]
            if len(kind) > 3 and kind[3] != 1:
                stride, step = emit.index(kind[3]), emit.fresh()
                emit.line(f"{step} = arith.muli {indices[result_dim]}, {stride} : index")
            position = emit.fresh()
            emit.line(f"{position} = arith.addi {kind[1]}, {step} : index")
        elif kind[0] == "scalar":
            position = kind[1]
        else:
            element_name = kind[2]
            position = emit.fresh()
            cast = "arith.index_castui" if is_unsigned(kind[1].dtype) else "arith.index_cast"
            emit.line(f"{position} = {cast} {element_name} : {element(kind[1].dtype)} to index")
        if clamp:
            position = emit.clamp_index(position, ref.shape[d] - 1)
        else:
            in_bounds = emit.index_within(position, ref.shape[d] - 1, in_bounds)
        positions.append(position)
    return positions, in_bounds


def gather(tr, ref: Value, access: IndexArrays, dtype, mask=None, other=None) -> Value:
    """Loads `ref` at `access` (a tensor of `access.shape`)."""
    emit = tr.emit
    whole = emit.op(f"block.load {ref.name} : {ref.type} -> {tensor_type(ref.shape, dtype)}", ref.shape, dtype)
    arrays = [kind for kind in access.dims if kind[0] == "array"]
    first = access.arrays_at()
    shape, rank = access.shape, len(access.shape)
    out_type = tensor_type(shape, dtype)
    empty = emit.op(f"tensor.empty() : {out_type}", shape, dtype)
    identity = f"affine_map<({', '.join(f'd{i}' for i in range(rank))}) -> ({', '.join(f'd{i}' for i in range(rank))})>"
    maps = [_array_map(kind[1], access, first) for kind in arrays] + [identity]
    ins = ", ".join(kind[1].name for kind in arrays)
    in_types = ", ".join(kind[1].type for kind in arrays)
    ins_text = f"ins({ins} : {in_types}) " if arrays else ""
    result = emit.fresh()
    loc = emit.loc
    iterators = ", ".join(['"parallel"'] * rank)
    emit.line(
        f"{result} = linalg.generic {{indexing_maps = [{', '.join(maps)}], "
        f"iterator_types = [{iterators}]}} "
        f"{ins_text}outs({empty.name} : {out_type}) {{",
        located=False,
    )
    elements = [emit.fresh() for _ in arrays]
    out_arg = emit.fresh()
    block_args = [f"{name}: {element(kind[1].dtype)}" for name, kind in zip(elements, arrays)]
    block_args.append(f"{out_arg}: {element(dtype)}")
    emit.line(f"^bb0({', '.join(block_args)}):", located=False)
    emit.depth += 1
    bound = iter(elements)
    access.dims = [(k[0], k[1], next(bound)) if k[0] == "array" else k for k in access.dims]
    indices = {}
    for d in range(rank):
        indices[d] = emit.fresh()
        emit.line(f"{indices[d]} = linalg.index {d} : index")
    positions, _ = _positions(tr, access, ref, indices, clamp=True)
    value = emit.fresh()
    emit.line(f"{value} = tensor.extract {whole.name}[{', '.join(positions)}] : {whole.type}")
    emit.line(f"linalg.yield {value} : {element(dtype)}")
    emit.depth -= 1
    emit.lines.append("  " * emit.depth + f"}} -> {out_type} " + loc)
    gathered = Value(result, shape, dtype)
    if mask is None or other is None:
        return gathered
    mask = tr.splat(mask, shape)
    fill = tr.splat(tr.convert(other, dtype), shape)
    return emit.op(f"arith.select {mask.name}, {gathered.name}, {fill.name} : {mask.type}, {out_type}",
                   shape, dtype)


def scatter(tr, ref: Value, access: IndexArrays, value: Value, mask=None) -> None:
    """Stores `value` (broadcast to `access.shape`) into `ref` at `access`."""
    emit = tr.emit
    shape, rank = access.shape, len(access.shape)
    value = tr.splat(value, shape)
    mask = tr.splat(mask, shape) if mask is not None else None
    arrays = [kind for kind in access.dims if kind[0] == "array"]
    full_arrays = [tr.splat(kind[1], access.broadcast) for kind in arrays]
    first = access.arrays_at()
    zero, one = emit.index(0), emit.index(1)
    loc = emit.loc
    indices = {}
    for d in range(rank):
        upper = emit.index(shape[d])
        indices[d] = emit.fresh()
        emit.line(f"scf.for {indices[d]} = {zero} to {upper} step {one} {{", located=False)
        emit.depth += 1
    array_positions = ", ".join(indices[first + j] for j in range(len(access.broadcast)))
    elements = []
    for full in full_arrays:
        name = emit.fresh()
        emit.line(f"{name} = tensor.extract {full.name}[{array_positions}] : {full.type}")
        elements.append(name)
    bound = iter(elements)
    access.dims = [(k[0], k[1], next(bound)) if k[0] == "array" else k for k in access.dims]
    positions, in_bounds = _positions(tr, access, ref, indices, clamp=False)
    all_indices = ", ".join(indices[d] for d in range(rank))
    condition = in_bounds
    if mask is not None:
        selected = emit.fresh()
        emit.line(f"{selected} = tensor.extract {mask.name}[{all_indices}] : {mask.type}")
        if condition is None:
            condition = selected
        else:
            joined = emit.fresh()
            emit.line(f"{joined} = arith.andi {condition}, {selected} : i1")
            condition = joined
    item = emit.fresh()
    emit.line(f"{item} = tensor.extract {value.name}[{all_indices}] : {value.type}")
    store = f"memref.store {item}, {ref.name}[{', '.join(positions)}] : {ref.type}"
    if condition is not None:
        emit.line(f"scf.if {condition} {{", located=False)
        emit.depth += 1
        emit.line(store)
        emit.depth -= 1
        emit.lines.append("  " * emit.depth + "} " + loc)
    else:
        emit.line(store)
    for _ in range(rank):
        emit.depth -= 1
        emit.lines.append("  " * emit.depth + "} " + loc)


def gather_values(tr, operand: Value, indices: Value, params, shape) -> Value:
    """`lax.gather` of a value (numpy indexing of an array, `jnp.take`,
    `jnp.diagonal`): a `linalg.generic` over the result extracting each
    element. A result position is batch dims (the index arrays' leading
    dims) and offset dims (`offset_dims`, walking the operand's
    uncollapsed dims within the slice); the slice starts where the index
    vector says along `start_index_map`, clamped into the operand as XLA
    clamps (batching dims follow the index arrays'), or, in `fill` mode,
    the whole slice is `fill_value` when its start is out of range."""
    numbers = params["dimension_numbers"]
    emit, dtype = tr.emit, operand.dtype
    sizes, offset_dims = [int(s) for s in params["slice_sizes"]], [int(d) for d in numbers.offset_dims]
    collapsed, start_map = {int(d) for d in numbers.collapsed_slice_dims}, [int(d) for d in numbers.start_index_map]
    fill = "FILL" in str(params["mode"])
    if fill:
        value = params["fill_value"]
        if value is None:
            value = (np.nan if np.issubdtype(dtype, np.inexact) or dtype.name == "bfloat16" else True
                     if dtype == np.bool_ else integer_range(dtype)[1 if is_unsigned(dtype) else 0])
        fill_value = emit.constant(value, dtype)

    def element_at(positions):
        batch = [positions[d] for d in range(len(positions)) if d not in offset_dims]
        cast = "arith.index_castui" if is_unsigned(indices.dtype) else "arith.index_cast"
        starts = {}
        for k, d in enumerate(start_map):
            raw = emit.assign(f"tensor.extract {indices.name}[{', '.join(batch + [emit.index(k)])}] : {indices.type}")
            starts[d] = emit.assign(f"{cast} {raw} : {element(indices.dtype)} to index")
        zero, in_range, within = emit.index(0), None, iter(positions[d] for d in offset_dims)
        # Batching dims (`take_along_axis`): the operand's follows the indices'.
        paired = dict(zip((int(d) for d in numbers.operand_batching_dims),
                          (batch[int(d)] for d in numbers.start_indices_batching_dims)))
        at = []
        for d, size in enumerate(operand.shape):
            if d in paired:
                at.append(paired[d])
                continue
            start = starts.get(d)
            if start is not None:
                if fill:
                    in_range = emit.index_within(start, size - sizes[d], in_range)
                start = emit.clamp_index(start, size - sizes[d])
            if d in collapsed:
                at.append(start or zero)
            else:
                offset = next(within)
                at.append(emit.assign(f"arith.addi {start}, {offset} : index") if start else offset)
        value = emit.assign(f"tensor.extract {operand.name}[{', '.join(at)}] : {operand.type}")
        if fill and in_range is not None:
            value = emit.assign(f"arith.select {in_range}, {value}, {fill_value.name} : {element(dtype)}")
        return value

    return generic_by_position(emit, shape, dtype, element_at)


def generic_by_position(emit, shape, dtype, element_at) -> Value:
    """A tensor of `shape` whose element at each position is the scalar
    `element_at(positions)` emits in a `linalg.generic` body, given the
    names of the position's `linalg.index`es."""
    rank, out_type = len(shape), tensor_type(shape, dtype)
    empty = emit.op(f"tensor.empty() : {out_type}", shape, dtype)
    dims = ", ".join(f"d{i}" for i in range(rank))
    result, loc = emit.fresh(), emit.loc
    iterators = ", ".join(['"parallel"'] * rank)
    emit.line(f"{result} = linalg.generic {{indexing_maps = [affine_map<({dims}) -> ({dims})>], "
              f"iterator_types = [{iterators}]}} outs({empty.name} : {out_type}) {{", located=False)
    emit.line(f"^bb0({emit.fresh()}: {element(dtype)}):", located=False)
    emit.depth += 1
    positions = []
    for d in range(rank):
        positions.append(emit.fresh())
        emit.line(f"{positions[-1]} = linalg.index {d} : index")
    value = element_at(positions)
    emit.line(f"linalg.yield {value} : {element(dtype)}")
    emit.depth -= 1
    emit.lines.append("  " * emit.depth + f"}} -> {out_type} " + loc)
    return Value(result, tuple(shape), dtype)


def scatter_values(tr, operand: Value, indices: Value, updates: Value, params, combine: str | None) -> Value:
    """`lax.scatter` (and scatter-add, -mul, -min, -max) into a value
    (`x.at[i].set(v)` on a loaded block): a loop nest over the updates
    carrying the operand tensor, each element inserted (or combined with
    the element there by the arith op `combine`) at its position. An
    update's window starts where the index vector says along
    `scatter_dims_to_operand_dims`, walking the operand's dims outside
    `inserted_window_dims` along `update_window_dims`; in `clip` mode the
    start is clamped as XLA clamps, otherwise a window that does not fit
    in the operand is dropped whole (XLA's rule). Duplicate positions
    apply in row-major order of the updates."""
    numbers = params["dimension_numbers"]
    emit, dtype = tr.emit, operand.dtype
    window_dims = [int(d) for d in numbers.update_window_dims]
    inserted = {int(d) for d in numbers.inserted_window_dims}
    to_operand = [int(d) for d in numbers.scatter_dims_to_operand_dims]
    batching = [int(d) for d in numbers.operand_batching_dims]
    clip = "CLIP" in str(params["mode"])
    window_operand_dims = [d for d in range(len(operand.shape)) if d not in inserted and d not in batching]
    window_size = {d: updates.shape[u] for d, u in zip(window_operand_dims, window_dims)}

    zero, one, loc = emit.index(0), emit.index(1), emit.loc
    carried, positions, results = operand.name, [], []
    for size in updates.shape:
        position, inner = emit.fresh(), emit.fresh()
        results.append(emit.fresh())
        emit.line(f"{results[-1]} = scf.for {position} = {zero} to {emit.index(size)} step {one} "
                  f"iter_args({inner} = {carried}) -> ({operand.type}) {{", located=False)
        emit.depth += 1
        positions.append(position)
        carried = inner
    batch = [positions[d] for d in range(len(positions)) if d not in window_dims]
    cast = "arith.index_castui" if is_unsigned(indices.dtype) else "arith.index_cast"
    paired = dict(zip(batching, (batch[int(d)] for d in numbers.scatter_indices_batching_dims)))
    valid, at = None, []
    windows = iter(positions[u] for u in window_dims)
    for d, size in enumerate(operand.shape):
        if d in paired:
            at.append(paired[d])
            continue
        start = None
        if d in to_operand:
            vector_entry = emit.index(to_operand.index(d))
            raw = emit.assign(f"tensor.extract {indices.name}[{', '.join(batch + [vector_entry])}] : {indices.type}")
            start = emit.assign(f"{cast} {raw} : {element(indices.dtype)} to index")
            if clip:
                start = emit.clamp_index(start, size - window_size.get(d, 1))
            else:
                valid = emit.index_within(start, size - window_size.get(d, 1), valid)
        if d in inserted:
            at.append(start or zero)
        else:
            offset = next(windows)
            at.append(emit.assign(f"arith.addi {start}, {offset} : index") if start else offset)
    item = emit.assign(f"tensor.extract {updates.name}[{', '.join(positions)}] : {updates.type}") if positions \
        else updates.name
    if valid is not None:
        # Positions of a dropped window may lie outside the operand: the
        # access happens only under the check.
        updated = emit.fresh()
        emit.line(f"{updated} = scf.if {valid} -> ({operand.type}) {{", located=False)
        emit.depth += 1
    place = ", ".join(at)
    if combine is not None:
        old = emit.assign(f"tensor.extract {carried}[{place}] : {operand.type}")
        item = emit.assign(f"{combine} {old}, {item} : {element(dtype)}")
    result = emit.assign(f"tensor.insert {item} into {carried}[{place}] : {operand.type}")
    if valid is not None:
        emit.line(f"scf.yield {result} : {operand.type}", located=False)
        emit.lines.append("  " * (emit.depth - 1) + "} else {")
        emit.line(f"scf.yield {carried} : {operand.type}", located=False)
        emit.depth -= 1
        emit.lines.append("  " * emit.depth + "} " + loc)
        result = updated
    for loop in reversed(results):
        emit.line(f"scf.yield {result} : {operand.type}", located=False)
        emit.depth -= 1
        emit.lines.append("  " * emit.depth + "} " + loc)
        result = loop
    return Value(result, operand.shape, dtype)


@rule("gather", moves_values=True)
def gather_rule(ctx, operand, indices):
    return gather_values(ctx.tr, operand, indices, ctx.params, ctx.out_shape)


# Scatters into values: the binary primitive combining the element there
# with the update (None: replace it).
SCATTERS = {"scatter": None, "scatter-add": "add", "scatter-sub": "sub", "scatter-mul": "mul", "scatter-min": "min",
            "scatter-max": "max"}


@rule("scatter", moves_values=True)
@rule(*(name for name in SCATTERS if name != "scatter"))
def scatter_rule(ctx, operand, indices, updates):
    combine, op = SCATTERS[ctx.name], None
    if combine is not None:
        ops, dtype = BINARY[combine], operand.dtype
        op = ops[0] if is_float(dtype) else ops[2] if is_unsigned(dtype) else ops[1]
        if op is None or dtype == np.bool_:
            ctx.fail(f"'{ctx.name}' on {dtype}")
    return scatter_values(ctx.tr, operand, indices, updates, ctx.params, op)
