"""Reductions, arg-max/arg-min and cumulative scans.

Sums, maxima, minima and products are `block.reduce`s; arg-max and
arg-min find the first extreme (NaN first, as JAX); boolean all/any/parity
reduce in i32; cumulative scans (`cumsum`, `cumprod`, `cummax`, `cummin`)
are log-depth shifted combines."""

from __future__ import annotations

import numpy as np

from tessel.jax._emit import Value, element, integer_range, is_float, is_unsigned, tensor_type
from tessel.jax._registry import rule

# Block reductions: primitive -> kind for (float, signed, unsigned).
REDUCE = {
    "reduce_sum": ("sum", "sum", "sum"),
    "reduce_max": ("max", "max", "umax"),
    "reduce_min": ("min", "min", "umin"),
    "reduce_prod": ("prod", "prod", "prod"),
}

# Cumulative primitives: (float op, signed op, unsigned op, identity kind).
CUMULATIVE = {
    "cumsum": ("arith.addf", "arith.addi", "arith.addi", "zero"),
    "cumprod": ("arith.mulf", "arith.muli", "arith.muli", "one"),
    "cummax": ("arith.maximumf", "arith.maxsi", "arith.maxui", "lowest"),
    "cummin": ("arith.minimumf", "arith.minsi", "arith.minui", "highest"),
}


def identity(kind: str, dtype):
    dtype = np.dtype(dtype)
    if kind in ("zero", "one"):
        return 0 if kind == "zero" else 1
    if is_float(dtype):
        return float("-inf") if kind == "lowest" else float("inf")
    smallest, largest = integer_range(dtype)
    return smallest if kind == "lowest" else largest


class ReductionOps:
    """The translator's reduction helpers (a mixin of `KernelTranslator`)."""

    def block_reduce(self, x: Value, kind: str, axis: int) -> Value:
        """`x` reduced along `axis` by a `block.reduce` kind, the axis kept
        as size 1 (so it broadcasts back against `x`)."""
        shape = tuple(n for d, n in enumerate(x.shape) if d != axis)
        result_type = f"tensor<{element(x.dtype)}>" if not shape else tensor_type(shape, x.dtype)
        reduced = self.emit.op(f"block.reduce {kind} {x.name} dims [{axis}] : {x.type} -> {result_type}",
                               shape, x.dtype)
        if not shape:
            reduced = self.emit.op(f"tensor.extract {reduced.name}[] : {result_type}", (), x.dtype)
        kept = tuple(1 if d == axis else n for d, n in enumerate(x.shape))
        return self.reshape(reduced, kept)

    def drop_axis(self, value: Value, axis: int) -> Value:
        return self.reshape(value, tuple(n for d, n in enumerate(value.shape) if d != axis))

    def first_where(self, condition: Value, axis: int) -> Value:
        """The first index along `axis` where `condition` holds (the axis's
        length where it never does), as i32 with the axis kept."""
        positions = self.emit.op(f"block.iota dim {axis} : {tensor_type(condition.shape, np.int32)}",
                                 condition.shape, np.int32)
        beyond = self.const_like(condition.shape[axis], positions)
        return self.block_reduce(self.pick(condition, positions, beyond), "min", axis)


@rule("reduce_max", "reduce_min", moves_values=True)
@rule("reduce_sum", "reduce_prod")
def reduce(ctx, x):
    tr = ctx.tr
    axes = tuple(ctx.params["axes"])
    kinds = REDUCE[ctx.name]
    kind = kinds[0] if is_float(x.dtype) else kinds[2] if is_unsigned(x.dtype) else kinds[1]
    shape = ctx.out_shape
    if not axes:
        return x
    result_type = f"tensor<{element(x.dtype)}>" if not shape else tensor_type(shape, x.dtype)
    reduced = tr.emit.op(
        f"block.reduce {kind} {x.name} dims [{', '.join(map(str, axes))}] : {x.type} -> {result_type}",
        shape, x.dtype)
    if not shape:
        # A rank-0 tensor to the scalar the rest of the kernel uses.
        return tr.emit.op(f"tensor.extract {reduced.name}[] : {result_type}", (), x.dtype)
    return reduced


@rule("argmax", "argmin")
def arg_extreme(ctx, x):
    tr = ctx.tr
    kind = "max" if ctx.name == "argmax" else "min"
    (axis,) = ctx.params["axes"]
    out_dtype = np.dtype(ctx.params["index_dtype"])
    if not x.shape:
        return tr.emit.constant(0, out_dtype)
    signed = "u" + kind if is_unsigned(x.dtype) and not is_float(x.dtype) else kind
    extreme = tr.splat(tr.block_reduce(x, signed, axis), x.shape)
    if is_float(x.dtype):
        match = tr.cmp("cmpf", "oeq", x, extreme)
    else:
        match = tr.cmp("cmpi", "eq", x, extreme)
    found = tr.first_where(match, axis)
    if is_float(x.dtype):
        # A NaN is the extreme for JAX: the first NaN wins.
        first_nan = tr.first_where(tr.cmp("cmpf", "uno", x, x), axis)
        has_nan = tr.cmp("cmpi", "slt", first_nan, tr.const_like(x.shape[axis], first_nan))
        found = tr.pick(has_nan, first_nan, found)
    return tr.convert(tr.drop_axis(found, axis), out_dtype)


# Boolean reductions: the i32 `block.reduce` kind of all, any and parity.
BOOLEAN = {"reduce_and": "min", "reduce_or": "max", "reduce_xor": "sum"}


@rule(*BOOLEAN)
def bool_reduce(ctx, x):
    tr, kind = ctx.tr, BOOLEAN[ctx.name]
    if x.dtype != np.bool_:
        ctx.fail(f"'{ctx.name}' on {x.dtype} (only on booleans)")
    value = tr.convert(x, np.int32)
    for axis in sorted(ctx.params["axes"], reverse=True):
        value = tr.drop_axis(tr.block_reduce(value, kind, axis), axis)
    if kind == "sum":
        value = tr.arith("arith.andi", value, tr.const_like(1, value))
    return tr.convert(value, np.bool_)


@rule("cummax", "cummin", moves_values=True)
@rule("cumsum", "cumprod")
def cumulative(ctx, x):
    tr = ctx.tr
    axis, reverse = int(ctx.params["axis"]), bool(ctx.params.get("reverse", False))
    float_op, signed_op, unsigned_op, kind = CUMULATIVE[ctx.name]
    op = float_op if is_float(x.dtype) else unsigned_op if is_unsigned(x.dtype) else signed_op
    if x.dtype == np.bool_:
        ctx.fail(f"'{ctx.name}' on booleans")
    # 16-bit float sums and products run in f32 and round once at the end,
    # as XLA's CPU code keeps them (excess precision) and as jnp.sum does
    # explicitly: rounding each of the log-depth steps to 8 or 11 bits
    # loses several ulps over a 32-long scan.
    narrow = x.dtype if is_float(x.dtype) and np.dtype(x.dtype).itemsize < 4 and kind in ("zero", "one") else None
    if narrow is not None:
        x = tr.convert(x, np.float32)
    length = x.shape[axis]
    fill = tr.const_like(identity(kind, x.dtype), x)
    shift = 1
    # Hillis-Steele: after the step with shift s, each element combines the
    # 2s elements ending (or, reversed, starting) at it.
    while shift < length:
        kept = tuple(length - shift if d == axis else n for d, n in enumerate(x.shape))
        source = [shift if d == axis and reverse else 0 for d in range(len(x.shape))]
        target = [shift if d == axis and not reverse else 0 for d in range(len(x.shape))]
        shifted = tr.insert_slice(tr.extract_slice(x, source, kept), fill, target)
        x = tr.arith(op, x, shifted)
        shift *= 2
    return tr.convert(x, narrow) if narrow is not None else x
