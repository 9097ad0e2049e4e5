"""Kernel rules that reshape, move and combine block values: broadcasts,
reshapes, transposes, slices, concatenation, padding, iota, reductions
and contractions. A mixin of `KernelTranslator`."""

from __future__ import annotations

import numpy as np

from tessel.jax._emit import Value, element, is_float, is_unsigned, tensor_type

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
        names = []
        for start, size, dim in zip(starts, sizes, full):
            position = self.as_index(start)
            zero, last = self.emit.index(0), self.emit.index(dim - size)
            low, high = self.emit.fresh(), self.emit.fresh()
            self.emit.line(f"{low} = arith.maxsi {position}, {zero} : index")
            self.emit.line(f"{high} = arith.minsi {low}, {last} : index")
            names.append(high)
        return names

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
        dim = int(eqn.params["dimension"])
        out = eqn.outvars[0].aval
        shape, dtype = tuple(out.shape), np.dtype(out.dtype)
        result = self.emit.op(f"tensor.empty() : {tensor_type(shape, dtype)}", shape, dtype)
        offset = 0
        for part in parts:
            if part.shape[dim] == 0:
                continue  # (an empty part's offset may be past the end)
            part = self.convert(part, dtype)
            offsets = [offset if d == dim else 0 for d in range(len(shape))]
            result = self.insert_slice(part, result, offsets)
            offset += part.shape[dim]
        return [result]

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
        return [self.convert(iota, dtype)]

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
        a, b = [self.read(env, v) for v in eqn.invars]
        (contract_a, contract_b), (batch_a, batch_b) = eqn.params["dimension_numbers"]
        if batch_a or batch_b:
            self.fail("dot_general with batch dimensions")
        if len(a.shape) > 2 or len(b.shape) > 2 or len(contract_a) != 1:
            self.fail(f"dot_general of shapes {a.shape} x {b.shape}")
        if len(a.shape) == 1:
            a = self.reshape(a, (1, a.shape[0]))
            contract_a = (1,)
        if len(b.shape) == 1:
            b = self.reshape(b, (b.shape[0], 1))
            contract_b = (0,)
        if contract_a[0] == 0:
            a = self.transpose(a, (1, 0))
        if contract_b[0] == 1:
            b = self.transpose(b, (1, 0))
        out_dtype = np.dtype(eqn.outvars[0].aval.dtype)
        shape = (a.shape[0], b.shape[1])
        if a.dtype != b.dtype:
            common = np.promote_types(a.dtype, b.dtype)
            a, b = self.convert(a, common), self.convert(b, common)
        result = self.emit.op(
            f"block.dot {a.name}, {b.name} : {a.type}, {b.type} -> {tensor_type(shape, out_dtype)}",
            shape,
            out_dtype,
        )
        return [self.reshape(result, tuple(eqn.outvars[0].aval.shape))]

