"""Pallas kernel jaxprs to Tessel's block dialect (MLIR text).

Each jaxpr equation becomes a few ops located at the user's line; blocks
are tensors, rank-0 values scalars, refs memrefs. Anything without a rule
raises ``Unsupported`` (a ``NotImplementedError``) naming the primitive and
the line.
"""

from __future__ import annotations

import jax
import ml_dtypes
import numpy as np
from jax._src import core, source_info_util

# The rule modules register their primitives on import.
from tessel.jax import (_control, _debug, _elementwise, _gather, _math, _packing, _pipelines,  # noqa: F401
                        _random, _reductions, _refs, _semaphores, _shapes)
from tessel.jax._control import ControlFlowOps
from tessel.jax._emit import (Emitter, Unsupported, Value, element, integer_range, is_float, is_float8, is_unsigned,
                              location, sub_byte, tensor_type)
from tessel.jax._math import MathOps
from tessel.jax._reductions import ReductionOps
from tessel.jax._refs import RefOps
from tessel.jax._registry import RuleContext, lookup
from tessel.jax._shapes import ShapeOps
from tessel.jax._views import ViewOps


def _frame(source_info):
    try:
        return source_info_util.user_frame(source_info.traceback)
    except Exception:  # source info is best effort
        return None


class KernelTranslator(ShapeOps, RefOps, ViewOps, ControlFlowOps, MathOps, ReductionOps):
    """Translates one kernel jaxpr into a `func.func` body."""

    def __init__(self, program_axes: list[int], index_map_grid=None):
        self.emit = Emitter()
        # Translating an index map: the grid's sizes (ints, or for a
        # dynamic size the scalar array ref holding it).
        self.index_map_grid = index_map_grid
        # Kernel program_id(axis) -> grid axis (vmap prepends grid axes the
        # kernel does not see).
        self.program_axes = program_axes
        # The shape a masked access's mask broadcasts to (its result's).
        self.result_shape = None
        # 1-D integer blocks known to be `offset + iota` (offset a scalar
        # Value, or None for 0): index arrays of that form are windows.
        self.contiguous: dict[str, Value | None] = {}
        # Blocks splatted from a scalar: name -> the scalar.
        self.splat_of: dict[str, Value] = {}
        # id(run_scoped equation) -> the scratch refs of its allocations.
        self.scoped: dict[int, list[Value]] = {}
        # Names of the caller's scalar-prefetch arrays -> their operand
        # index: a write to one raises `ScalarWrite` (see `_call.translate`).
        self.read_only: dict[str, int] = {}
        # The PRNG state scratch (key, counter) when the kernel seeds or
        # draws from the TPU core's generator (`_random.prng_seed`).
        self.prng_state: Value | None = None
        # The kernel's debug_prints (`_debug.PrintSpec`), by site.
        self.prints: list = []
        # The pipeline bodies being translated, outermost first
        # (`_pipelines.PipelineLevel`: their program ids).
        self.pipeline_levels: list = []
        # id(a pl.ds of traced size) -> the offset of the one row a DMA
        # copies now (`_semaphores._dma_by_rows`).
        self.row_slices: dict = {}

    # ----- values -------------------------------------------------------
    def read(self, env, atom) -> Value:
        if isinstance(atom, core.Literal):
            value = np.asarray(atom.val, dtype=atom.aval.dtype)
            return self.emit.dense(value)
        return env[atom]

    def fail(self, what: str):
        raise Unsupported(f"{self.emit.where}: Tessel cannot translate {what}")

    def splat(self, value: Value, shape) -> Value:
        """`value` (a scalar or a block) as a block of `shape` (numpy
        broadcasting)."""
        shape = tuple(shape)
        if value.shape == shape:
            return value
        if len(value.shape) == 0:
            splatted = self.emit.op(f"tensor.splat {value.name} : {tensor_type(shape, value.dtype)}", shape,
                                    value.dtype)
            self.splat_of[splatted.name] = value
            return splatted
        if len(value.shape) != len(shape):
            # Leading dims added (numpy rule): reshape to the full rank first.
            value = self.reshape(value, (1,) * (len(shape) - len(value.shape)) + value.shape)
        kept = [d for d in range(len(shape)) if value.shape[d] == shape[d]]
        added = [d for d in range(len(shape)) if value.shape[d] != shape[d]]
        if any(value.shape[d] != 1 for d in added):
            self.fail(f"broadcasting {value.shape} to {shape}")
        squeezed = self.reshape(value, tuple(value.shape[d] for d in kept))
        if len(squeezed.shape) == 0:
            return self.splat(squeezed, shape)
        dims = ", ".join(map(str, added))
        return self.emit.op(
            f"block.broadcast {squeezed.name} dims [{dims}] : {squeezed.type} -> {tensor_type(shape, value.dtype)}",
            shape,
            value.dtype,
        )

    def reshape(self, value: Value, shape) -> Value:
        shape = tuple(shape)
        if value.shape == shape:
            return value
        if len(value.shape) == 0:
            return self.splat(value, shape)
        flat = value
        if len(value.shape) != 1:
            groups = "[[" + ", ".join(map(str, range(len(value.shape)))) + "]]"
            size = int(np.prod(value.shape))
            flat = self.emit.op(
                f"tensor.collapse_shape {value.name} {groups} : {value.type} into {tensor_type((size,), value.dtype)}",
                (size,),
                value.dtype,
            )
        if len(shape) == 0:
            zero = self.emit.index(0)
            return self.emit.op(f"tensor.extract {flat.name}[{zero}] : {flat.type}", (), value.dtype)
        if len(shape) == 1:
            return flat
        groups = "[[" + ", ".join(map(str, range(len(shape)))) + "]]"
        sizes = ", ".join(map(str, shape))
        return self.emit.op(
            f"tensor.expand_shape {flat.name} {groups} output_shape [{sizes}] : {flat.type} into "
            f"{tensor_type(shape, value.dtype)}",
            shape,
            value.dtype,
        )

    def as_index(self, value: Value) -> str:
        name = self.emit.fresh()
        cast = "arith.index_castui" if is_unsigned(value.dtype) else "arith.index_cast"
        self.emit.line(f"{name} = {cast} {value.name} : {element(value.dtype)} to index")
        return name

    def convert(self, value: Value, dtype) -> Value:
        dtype = np.dtype(dtype)
        source, target = element(value.dtype), element(dtype)
        shape = value.shape
        out_type = tensor_type(shape, dtype)
        if source == target:
            return Value(value.name, shape, dtype)
        if is_float(value.dtype) and is_float(dtype):
            width = {"f16": 16, "bf16": 16, "f32": 32, "f64": 64}
            if width[source] == width[target]:
                wide = self.emit.op(f"arith.extf {value.name} : {value.type} to {tensor_type(shape, np.float32)}",
                                    shape, np.float32)
                return self.emit.op(f"arith.truncf {wide.name} : {wide.type} to {out_type}", shape, dtype)
            op = "arith.extf" if width[target] > width[source] else "arith.truncf"
            return self.emit.op(f"{op} {value.name} : {value.type} to {out_type}", shape, dtype)
        if dtype == np.bool_:
            if value.dtype.name == "bfloat16":
                # On the bits (any bit but the sign's set), as XLA converts
                # bf16; other floats compare with zero, which on XLA's threads
                # (denormals-are-zero) calls subnormals zero, as XLA does.
                raw = self.bitcast(value, np.int16)
                value = self.arith("arith.andi", raw, self.const_like(0x7FFF, raw))
            zero = self.splat(self.emit.constant(0, value.dtype), shape)
            if is_float(value.dtype):
                return self.emit.op(f"arith.cmpf une, {value.name}, {zero.name} : {value.type}", shape, dtype)
            return self.emit.op(f"arith.cmpi ne, {value.name}, {zero.name} : {value.type}", shape, dtype)
        if not is_float(value.dtype) and not is_float(dtype):
            bits = {"i1": 1, "i8": 8, "i16": 16, "i32": 32, "i64": 64}
            if bits[target] > bits[source]:
                op = "arith.extui" if is_unsigned(value.dtype) else "arith.extsi"
            else:
                op = "arith.trunci"
            return self.emit.op(f"{op} {value.name} : {value.type} to {out_type}", shape, dtype)
        if not is_float(value.dtype):
            op = "arith.uitofp" if is_unsigned(value.dtype) else "arith.sitofp"
            return self.emit.op(f"{op} {value.name} : {value.type} to {out_type}", shape, dtype)
        return self.float_to_int(value, dtype)

    def float_to_int(self, value: Value, dtype) -> Value:
        """Float to integer as XLA does it: truncation, saturating at the
        integer range, NaN to 0 (fptosi alone is undefined out of range)."""
        smallest, largest = integer_range(dtype)
        shape, ftype = value.shape, value.type
        low = self.splat(self.emit.constant(float(smallest), value.dtype), shape)
        high = self.splat(self.emit.constant(float(largest) + 1.0, value.dtype), shape)
        zero = self.splat(self.emit.constant(0.0, value.dtype), shape)
        ge_low = self.emit.op(f"arith.cmpf oge, {value.name}, {low.name} : {ftype}", shape, np.bool_)
        lt_high = self.emit.op(f"arith.cmpf olt, {value.name}, {high.name} : {ftype}", shape, np.bool_)
        inside = self.emit.op(f"arith.andi {ge_low.name}, {lt_high.name} : {ge_low.type}", shape, np.bool_)
        safe = self.emit.op(f"arith.select {inside.name}, {value.name}, {zero.name} : {inside.type}, {ftype}",
                            shape, value.dtype)
        op = "arith.fptoui" if is_unsigned(dtype) else "arith.fptosi"
        out_type = tensor_type(shape, dtype)
        converted = self.emit.op(f"{op} {safe.name} : {ftype} to {out_type}", shape, dtype)
        top = self.splat(self.emit.constant(largest, dtype), shape)
        bottom = self.splat(self.emit.constant(smallest, dtype), shape)
        above = self.emit.op(f"arith.cmpf oge, {value.name}, {high.name} : {ftype}", shape, np.bool_)
        below = self.emit.op(f"arith.cmpf olt, {value.name}, {low.name} : {ftype}", shape, np.bool_)
        clipped = self.emit.op(f"arith.select {above.name}, {top.name}, {converted.name} : {above.type}, {out_type}",
                               shape, dtype)
        return self.emit.op(f"arith.select {below.name}, {bottom.name}, {clipped.name} : {below.type}, {out_type}",
                            shape, dtype)

    def fit_sub_byte(self, value: Value) -> Value:
        """A sub-byte integer computed in its 8-bit container, brought back
        into its type's range: its low bits, sign-extended for a signed type
        (the two's-complement wrap-around XLA's narrow arithmetic has)."""
        return self.sub_byte_bits(value, extend_sign=sub_byte(value.dtype)[1])

    def fit_float8(self, value: Value) -> Value:
        """An 8-bit float computed in its f32 container, rounded to its type
        as XLA (and ml_dtypes) convert f32: to nearest, ties to even, on the
        type's precision at the value's binade (its subnormals' below the
        smallest normal); past the largest finite value infinity, or NaN
        for types without one; the fnuz types' zero has no sign."""
        dtype = value.dtype
        info = ml_dtypes.finfo(dtype)
        has_infinity = bool(np.isinf(np.array(np.inf, np.float32).astype(dtype).astype(np.float32)))
        x = Value(value.name, value.shape, np.dtype(np.float32))
        magnitude = self.arith("math.absf", x)
        bits = self.bitcast(magnitude, np.uint32)
        exponent_bits = self.arith("arith.andi", bits, self.const_like(0x7F800000, bits))
        binade = self.arith("arith.maximumf", self.bitcast(exponent_bits, np.float32),
                            self.const_like(2.0 ** int(info.minexp), x))
        quantum = self.arith("arith.mulf", binade, self.const_like(2.0 ** -int(info.nmant), x))
        rounded = self.arith("arith.mulf", self.arith("math.roundeven", self.arith("arith.divf", magnitude, quantum)),
                             quantum)
        special = self.const_like(float("inf") if has_infinity else float("nan"), x)
        # (An infinite input's quotient by its quantum is NaN.)
        infinite = self.cmp("cmpf", "oeq", magnitude, self.const_like(float("inf"), x))
        overflow = self.cmp("cmpf", "ogt", rounded, self.const_like(float(info.max), x))
        rounded = self.pick(self.arith("arith.ori", infinite, overflow), special, rounded)
        result = self.arith("math.copysign", rounded, x)
        if dtype.name.endswith("fnuz"):
            zero = self.const_like(0.0, x)
            result = self.pick(self.cmp("cmpf", "oeq", result, zero), zero, result)
        return Value(result.name, value.shape, dtype)

    def sub_byte_bits(self, value: Value, extend_sign: bool) -> Value:
        """The low bits of a sub-byte value's container (the type's own
        bits), zero- or sign-extended across the container."""
        bits, _ = sub_byte(value.dtype)
        if extend_sign:
            shift = self.const_like(8 - bits, value)
            return self.arith("arith.shrsi", self.arith("arith.shli", value, shift), shift)
        return self.arith("arith.andi", value, self.const_like((1 << bits) - 1, value))

    # ----- the walk -----------------------------------------------------
    def jaxpr(self, jaxpr: core.Jaxpr, env: dict) -> list[Value]:
        outer = getattr(self, "used", set())
        # Variables something reads: a swap whose old value nobody reads
        # (every `o_ref[...] = x`) loads nothing.
        self.used = {v for e in jaxpr.eqns for v in e.invars if isinstance(v, core.Var)} | \
            {v for v in jaxpr.outvars if isinstance(v, core.Var)}
        try:
            return self.walk(jaxpr, env)
        finally:
            self.used = outer

    def walk(self, jaxpr: core.Jaxpr, env: dict) -> list[Value]:
        for eqn in jaxpr.eqns:
            frame = _frame(eqn.source_info)
            if frame is not None:
                self.emit.loc = location(frame)
                self.emit.where = f"{frame.file_name}:{frame.start_line}"
            # else: inside a call JAX traced elsewhere (jax.nn.relu's
            # body): the enclosing equation's line stands.
            rule = lookup(eqn.primitive.name, self.emit.where)
            outs = rule.apply(RuleContext(self, eqn, env))
            for var, value in zip(eqn.outvars, outs):
                if isinstance(var, core.DropVar):
                    continue
                if value.ref or _random.is_key(var.aval):
                    # Refs keep their own type; typed keys are their data.
                    env[var] = value
                    continue
                value = Value(value.name, tuple(var.aval.shape), np.dtype(var.aval.dtype))
                if sub_byte(value.dtype) and not rule.keeps_sub_byte_range:
                    value = self.fit_sub_byte(value)
                if is_float8(value.dtype) and not rule.moves_values:
                    value = self.fit_float8(value)
                env[var] = value
        return [self.read(env, v) for v in jaxpr.outvars]

    def inline(self, closed, args: list[Value]) -> list[Value]:
        jaxpr = closed.jaxpr if isinstance(closed, core.ClosedJaxpr) else closed
        consts = closed.consts if isinstance(closed, core.ClosedJaxpr) else []
        env = {}
        for var, const in zip(jaxpr.constvars, consts):
            env[var] = self.emit.dense(np.asarray(const))
        for var, arg in zip(jaxpr.invars, args):
            env[var] = arg
        return self.jaxpr(jaxpr, env)

    def inline_traced(self, function, args: list[Value]) -> list[Value]:
        """`function` of `args` (JAX code: jnp, lax) traced to a jaxpr and
        translated in place, as Mosaic's `lower_fun` does for primitives
        JAX defines through others."""
        avals = [jax.ShapeDtypeStruct(v.shape, v.dtype) for v in args]
        return self.inline(jax.make_jaxpr(function)(*avals), args)

    def track_contiguous(self, result: Value, a: Value, b: Value) -> None:
        """Records `result` = offset + iota when one operand is such a block
        and the other a splatted scalar."""
        for run, other in ((a, b), (b, a)):
            if run.name in self.contiguous and other.name in self.splat_of:
                scalar, offset = self.splat_of[other.name], self.contiguous[run.name]
                if offset is not None:
                    scalar = self.emit.op(f"arith.addi {offset.name}, {scalar.name} : {scalar.type}", (),
                                          scalar.dtype)
                self.contiguous[result.name] = scalar
                return
