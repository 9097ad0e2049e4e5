"""Kernel rules that reshape, move and combine block values: broadcasts,
reshapes, transposes, slices, concatenation, padding, iota, reductions
and contractions. A mixin of `KernelTranslator`."""

from __future__ import annotations

import numpy as np
from jax._src import core

from tessel.jax._emit import Value, element, is_float, is_unsigned, tensor_type
from tessel.jax._gather import generic_by_position

# Block reductions: primitive -> kind for (float, signed, unsigned).
REDUCE = {
    "reduce_sum": ("sum", "sum", "sum"),
    "reduce_max": ("max", "max", "umax"),
    "reduce_min": ("min", "min", "umin"),
    "reduce_prod": ("prod", "prod", "prod"),
}


class ShapeRules:
    def rule_broadcast_in_dim(self, eqn, env):
        (x,) = [self.read(env, a) for a in eqn.invars[:1]]
        shape = tuple(eqn.params["shape"])
        dims = tuple(eqn.params["broadcast_dimensions"])
        # Put the operand's dims where they go, then broadcast size-1 dims.
        placed = [1] * len(shape)
        for source, target in enumerate(dims):
            placed[target] = x.shape[source]
        if list(dims) != sorted(dims):
            self.fail("broadcast_in_dim that reorders dimensions")
        return [self.splat(self.reshape(x, tuple(placed)), shape)]

    def rule_broadcast_to(self, eqn, env):
        (x,) = [self.read(env, a) for a in eqn.invars[:1]]
        return [self.splat(x, tuple(eqn.outvars[0].aval.shape))]

    def rule_reshape(self, eqn, env):
        (x,) = [self.read(env, a) for a in eqn.invars[:1]]
        if eqn.params.get("dimensions") is not None:
            self.fail("reshape with dimensions")
        return [self.reshape(x, tuple(eqn.params["new_sizes"]))]

    def rule_squeeze(self, eqn, env):
        (x,) = [self.read(env, a) for a in eqn.invars]
        return [self.reshape(x, tuple(eqn.outvars[0].aval.shape))]

    def rule_expand_dims(self, eqn, env):
        return self.rule_squeeze(eqn, env)

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

    def rule_transpose(self, eqn, env):
        (x,) = [self.read(env, a) for a in eqn.invars]
        return [self.transpose(x, eqn.params["permutation"])]

    def rule_tile(self, eqn, env):
        """`jnp.tile`: each dim of size n repeated r times is a size-1 dim
        broadcast to r next to it, the pairs then merged."""
        (x,) = [self.read(env, a) for a in eqn.invars]
        reps = tuple(int(r) for r in eqn.params["reps"])
        interleaved = tuple(d for n in x.shape for d in (1, n))
        repeated = tuple(d for r, n in zip(reps, x.shape) for d in (r, n))
        spread = self.splat(self.reshape(x, interleaved), repeated)
        return [self.reshape(spread, tuple(eqn.outvars[0].aval.shape))]

    def rule_slice(self, eqn, env):
        (x,) = [self.read(env, a) for a in eqn.invars]
        starts = [int(v) for v in eqn.params["start_indices"]]
        strides = [int(v) for v in (eqn.params["strides"] or [1] * len(starts))]
        shape = tuple(eqn.outvars[0].aval.shape)
        return [self.extract_slice(x, [str(v) for v in starts], shape, strides)]

    def rule_split(self, eqn, env):
        """`jnp.split`: consecutive slices along one axis."""
        (x,) = [self.read(env, a) for a in eqn.invars]
        axis = int(eqn.params["axis"])
        parts, offset = [], 0
        for size in (int(v) for v in eqn.params["sizes"]):
            shape = tuple(size if d == axis else n for d, n in enumerate(x.shape))
            offsets = [offset if d == axis else 0 for d in range(len(shape))]
            parts.append(self.extract_slice(x, offsets, shape))
            offset += size
        return parts

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

    def rule_dynamic_slice(self, eqn, env):
        x, *starts = [self.read(env, a) for a in eqn.invars]
        sizes = tuple(int(v) for v in eqn.params["slice_sizes"])
        return [self.extract_slice(x, self.clamped_starts(starts, sizes, x.shape), sizes)]

    def rule_dynamic_update_slice(self, eqn, env):
        x, update, *starts = [self.read(env, a) for a in eqn.invars]
        offsets = self.clamped_starts(starts, update.shape, x.shape)
        return [self.insert_slice(update, x, offsets)]

    def insert_slice(self, part: Value, into: Value, offsets) -> Value:
        return self.emit.op(
            f"tensor.insert_slice {part.name} into {into.name}[{', '.join(map(str, offsets))}] "
            f"[{', '.join(map(str, part.shape))}] [{', '.join(['1'] * len(part.shape))}] : "
            f"{part.type} into {into.type}",
            into.shape, into.dtype)

    def rule_concatenate(self, eqn, env):
        parts = [self.read(env, a) for a in eqn.invars]
        out = eqn.outvars[0].aval
        return [self.concatenate(parts, int(eqn.params["dimension"]), tuple(out.shape), np.dtype(out.dtype))]

    def rule_pad(self, eqn, env):
        x, fill = [self.read(env, a) for a in eqn.invars]
        config = [tuple(int(v) for v in c) for c in eqn.params["padding_config"]]
        if any(interior != 0 for _, _, interior in config):
            self.fail("'pad' with interior padding")
        # Negative edges crop: slice first, then pad by the positive parts.
        crop = [max(-low, 0) for low, _, _ in config]
        kept = [n - crop[d] - max(-high, 0) for d, (n, (_, high, _)) in enumerate(zip(x.shape, config))]
        if crop != [0] * len(crop) or list(kept) != list(x.shape):
            x = self.extract_slice(x, crop, tuple(kept))
        shape = tuple(eqn.outvars[0].aval.shape)
        result = self.splat(self.convert(fill, x.dtype), shape)
        return [self.insert_slice(x, result, [max(low, 0) for low, _, _ in config])]

    def rule_iota(self, eqn, env):
        shape = tuple(eqn.params["shape"])
        dtype = np.dtype(eqn.params["dtype"])
        dimension = int(eqn.params["dimension"])
        base = np.int32 if is_float(dtype) or dtype.itemsize < 4 or is_unsigned(dtype) else dtype
        iota = self.emit.op(f"block.iota dim {dimension} : {tensor_type(shape, base)}", shape, base)
        result = self.convert(iota, dtype)
        if len(shape) == 1 and not is_float(dtype):
            self.contiguous[result.name] = None
        return [result]

    def reduce(self, eqn, env) -> Value:
        (x,) = [self.read(env, a) for a in eqn.invars]
        axes = tuple(eqn.params["axes"])
        kinds = REDUCE[eqn.primitive.name]
        kind = kinds[0] if is_float(x.dtype) else kinds[2] if is_unsigned(x.dtype) else kinds[1]
        shape = tuple(eqn.outvars[0].aval.shape)
        if not axes:
            return x
        result_type = f"tensor<{element(x.dtype)}>" if not shape else tensor_type(shape, x.dtype)
        reduced = self.emit.op(
            f"block.reduce {kind} {x.name} dims [{', '.join(map(str, axes))}] : {x.type} -> {result_type}",
            shape,
            x.dtype,
        )
        if not shape:
            # A rank-0 tensor to the scalar the rest of the kernel uses.
            return self.emit.op(f"tensor.extract {reduced.name}[] : {result_type}", (), x.dtype)
        return reduced

    def rule_dot_general(self, eqn, env):
        """Any `dot_general` as batched matrix products: each operand is
        transposed to (batch, free, contracted) / (batch, contracted, free)
        and flattened to rank 3, one `block.dot` runs per batch entry, and
        the (batch, lhs free, rhs free) result is unflattened."""
        a, b = [self.read(env, v) for v in eqn.invars]
        (contract_a, contract_b), (batch_a, batch_b) = eqn.params["dimension_numbers"]
        contract_a, contract_b = tuple(map(int, contract_a)), tuple(map(int, contract_b))
        batch_a, batch_b = tuple(map(int, batch_a)), tuple(map(int, batch_b))
        free_a = tuple(d for d in range(len(a.shape)) if d not in contract_a and d not in batch_a)
        free_b = tuple(d for d in range(len(b.shape)) if d not in contract_b and d not in batch_b)
        if a.dtype != b.dtype:
            common = np.promote_types(a.dtype, b.dtype)
            a, b = self.convert(a, common), self.convert(b, common)

        def size(x, dims):
            return int(np.prod([x.shape[d] for d in dims], dtype=np.int64))

        batch, m, k, n = size(a, batch_a), size(a, free_a), size(a, contract_a), size(b, free_b)
        a = self.reshape(self.transpose(a, batch_a + free_a + contract_a), (batch, m, k))
        b = self.reshape(self.transpose(b, batch_b + contract_b + free_b), (batch, k, n))
        out_dtype = np.dtype(eqn.outvars[0].aval.dtype)
        # f16/bf16 results accumulate in f32 and round once, as XLA (and
        # Triton, and the matrix units) do: `block.dot` accumulates in its
        # result type, and a bf16 sum of 128 products came out 8x further
        # from the exact value than jax.jit's.
        accumulated = np.dtype(np.float32) if is_float(out_dtype) and out_dtype.itemsize < 4 else out_dtype
        products = []
        for index in range(batch):
            lhs = self.reshape(self.extract_slice(a, [index, 0, 0], (1, m, k)), (m, k))
            rhs = self.reshape(self.extract_slice(b, [index, 0, 0], (1, k, n)), (k, n))
            product = self.emit.op(
                f"block.dot {lhs.name}, {rhs.name} : {lhs.type}, {rhs.type} -> {tensor_type((m, n), accumulated)}",
                (m, n), accumulated)
            products.append(self.reshape(self.convert(product, out_dtype), (1, m, n)))
        result = products[0] if batch == 1 else self.concatenate(products, 0, (batch, m, n), out_dtype)
        return [self.reshape(result, tuple(eqn.outvars[0].aval.shape))]

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

    def rule_stack(self, eqn, env):
        parts = [self.read(env, a) for a in eqn.invars]
        axis = int(eqn.params["axis"])
        out = eqn.outvars[0].aval
        expanded = [self.reshape(p, p.shape[:axis] + (1,) + p.shape[axis:]) for p in parts]
        return [self.concatenate(expanded, axis, tuple(out.shape), np.dtype(out.dtype))]

    def rule_unstack(self, eqn, env):
        (x,) = [self.read(env, a) for a in eqn.invars]
        axis = int(eqn.params["axis"])
        one = tuple(1 if d == axis else n for d, n in enumerate(x.shape))
        rest = tuple(n for d, n in enumerate(x.shape) if d != axis)
        return [self.reshape(self.extract_slice(x, [i if d == axis else 0 for d in range(len(x.shape))], one), rest)
                for i in range(x.shape[axis])]

    def rule_rev(self, eqn, env):
        """`jnp.flip`, `x[::-1]`: element i of a reversed dimension of size n
        is x's element n - 1 - i (a generic reading x by position)."""
        (x,) = [self.read(env, a) for a in eqn.invars]
        reversed_dims = {int(d) for d in eqn.params["dimensions"]}
        if not reversed_dims:
            return [x]
        emit = self.emit

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

        return [generic_by_position(emit, x.shape, x.dtype, element_at)]

    def rule_roll(self, eqn, env):
        """`pltpu.roll`: element i moves to i + shift (mod the axis); with a
        stride, slice j along `stride_axis` rolls by shift + j * stride."""
        x = self.read(env, eqn.invars[0])
        # A static shift (a literal) folds into the slice offsets.
        shift = eqn.invars[1].val if isinstance(eqn.invars[1], core.Literal) else self.read(env, eqn.invars[1])
        axis, stride, stride_axis = eqn.params["axis"], eqn.params["stride"], eqn.params["stride_axis"]
        if stride is None:
            return [self.rolled(x, shift, int(axis), 0)]
        stride_axis = int(stride_axis)
        one = tuple(1 if d == stride_axis else n for d, n in enumerate(x.shape))
        rows = []
        for row in range(x.shape[stride_axis]):
            offsets = [row if d == stride_axis else 0 for d in range(len(x.shape))]
            rows.append(self.rolled(self.extract_slice(x, offsets, one), shift, int(axis), row * int(stride)))
        return [self.concatenate(rows, stride_axis, x.shape, x.dtype)]

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

