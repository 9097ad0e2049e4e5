"""Kernel rules for reductions beyond `block.reduce`'s kinds: arg-max and
arg-min (NaN first, as JAX), boolean all/any/parity, and cumulative scans
(`cumsum`, `cumprod`, `cummax`, `cummin`) as log-depth shifted combines.
A mixin of `KernelTranslator`."""

from __future__ import annotations

import numpy as np

from tessel.jax._emit import Value, element, integer_range, is_float, is_unsigned, tensor_type

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


class ReductionRules:
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

    def arg_extreme(self, eqn, env, kind: str):
        (x,) = [self.read(env, a) for a in eqn.invars]
        (axis,) = eqn.params["axes"]
        out_dtype = np.dtype(eqn.params["index_dtype"])
        if not x.shape:
            return [self.emit.constant(0, out_dtype)]
        signed = "u" + kind if is_unsigned(x.dtype) and not is_float(x.dtype) else kind
        extreme = self.splat(self.block_reduce(x, signed, axis), x.shape)
        if is_float(x.dtype):
            match = self.cmp("cmpf", "oeq", x, extreme)
        else:
            match = self.cmp("cmpi", "eq", x, extreme)
        found = self.first_where(match, axis)
        if is_float(x.dtype):
            # A NaN is the extreme for JAX: the first NaN wins.
            first_nan = self.first_where(self.cmp("cmpf", "uno", x, x), axis)
            has_nan = self.cmp("cmpi", "slt", first_nan, self.const_like(x.shape[axis], first_nan))
            found = self.pick(has_nan, first_nan, found)
        return [self.convert(self.drop_axis(found, axis), out_dtype)]

    def rule_argmax(self, eqn, env):
        return self.arg_extreme(eqn, env, "max")

    def rule_argmin(self, eqn, env):
        return self.arg_extreme(eqn, env, "min")

    def bool_reduce(self, eqn, env, kind: str):
        (x,) = [self.read(env, a) for a in eqn.invars]
        if x.dtype != np.bool_:
            self.fail(f"'{eqn.primitive.name}' on {x.dtype} (only on booleans)")
        value = self.convert(x, np.int32)
        for axis in sorted(eqn.params["axes"], reverse=True):
            value = self.drop_axis(self.block_reduce(value, kind, axis), axis)
        if kind == "sum":
            value = self.arith("arith.andi", value, self.const_like(1, value))
        return [self.convert(value, np.bool_)]

    def rule_reduce_and(self, eqn, env):
        return self.bool_reduce(eqn, env, "min")

    def rule_reduce_or(self, eqn, env):
        return self.bool_reduce(eqn, env, "max")

    def rule_reduce_xor(self, eqn, env):
        return self.bool_reduce(eqn, env, "sum")

    def cumulative(self, eqn, env):
        (x,) = [self.read(env, a) for a in eqn.invars]
        axis, reverse = int(eqn.params["axis"]), bool(eqn.params.get("reverse", False))
        float_op, signed_op, unsigned_op, kind = CUMULATIVE[eqn.primitive.name]
        op = float_op if is_float(x.dtype) else unsigned_op if is_unsigned(x.dtype) else signed_op
        if x.dtype == np.bool_:
            self.fail(f"'{eqn.primitive.name}' on booleans")
        # 16-bit float sums and products run in f32 and round once at the
        # end, as XLA's CPU code keeps them (excess precision) and as
        # jnp.sum does explicitly: rounding each of the log-depth steps to
        # 8 or 11 bits loses several ulps over a 32-long scan.
        narrow = x.dtype if is_float(x.dtype) and np.dtype(x.dtype).itemsize < 4 and kind in ("zero", "one") else None
        if narrow is not None:
            x = self.convert(x, np.float32)
        length = x.shape[axis]
        fill = self.const_like(identity(kind, x.dtype), x)
        shift = 1
        # Hillis-Steele: after the step with shift s, each element combines
        # the 2s elements ending (or, reversed, starting) at it.
        while shift < length:
            kept = tuple(length - shift if d == axis else n for d, n in enumerate(x.shape))
            source = [shift if d == axis and reverse else 0 for d in range(len(x.shape))]
            target = [shift if d == axis and not reverse else 0 for d in range(len(x.shape))]
            shifted = self.insert_slice(self.extract_slice(x, source, kept), fill, target)
            x = self.arith(op, x, shifted)
            shift *= 2
        return [self.convert(x, narrow) if narrow is not None else x]

    def rule_cumsum(self, eqn, env):
        return self.cumulative(eqn, env)

    def rule_cumprod(self, eqn, env):
        return self.cumulative(eqn, env)

    def rule_cummax(self, eqn, env):
        return self.cumulative(eqn, env)

    def rule_cummin(self, eqn, env):
        return self.cumulative(eqn, env)
