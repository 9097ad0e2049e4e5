"""Pallas kernel jaxprs to Tessel's block dialect (MLIR text).

Each jaxpr equation becomes a few ops located at the user's line; blocks
are tensors, rank-0 values scalars, refs memrefs. Anything without a rule
raises ``Unsupported`` (a ``NotImplementedError``) naming the primitive and
the line.
"""

from __future__ import annotations

import numpy as np
from jax._src import core, source_info_util
from jax._src.state import indexing
from jax import tree_util

from tessel.jax._emit import Emitter, Unsupported, Value, element, is_float, is_unsigned, location, tensor_type

# Element-wise binary primitives: (float op, signed op, unsigned op).
BINARY = {
    "add": ("arith.addf", "arith.addi", "arith.addi"),
    "add_any": ("arith.addf", "arith.addi", "arith.addi"),
    "sub": ("arith.subf", "arith.subi", "arith.subi"),
    "mul": ("arith.mulf", "arith.muli", "arith.muli"),
    "div": ("arith.divf", "arith.divsi", "arith.divui"),
    "rem": ("arith.remf", "arith.remsi", "arith.remui"),
    "max": ("arith.maximumf", "arith.maxsi", "arith.maxui"),
    "min": ("arith.minimumf", "arith.minsi", "arith.minui"),
    "pow": ("math.powf", None, None),
    "atan2": ("math.atan2", None, None),
    "and": (None, "arith.andi", "arith.andi"),
    "or": (None, "arith.ori", "arith.ori"),
    "xor": (None, "arith.xori", "arith.xori"),
    "shift_left": (None, "arith.shli", "arith.shli"),
    "shift_right_arithmetic": (None, "arith.shrsi", "arith.shrsi"),
    "shift_right_logical": (None, "arith.shrui", "arith.shrui"),
}

# Comparisons: (float predicate, signed, unsigned).
COMPARE = {
    "eq": ("oeq", "eq", "eq"),
    "ne": ("une", "ne", "ne"),
    "lt": ("olt", "slt", "ult"),
    "le": ("ole", "sle", "ule"),
    "gt": ("ogt", "sgt", "ugt"),
    "ge": ("oge", "sge", "uge"),
}

# Float unary math.
UNARY_FLOAT = {
    "exp": "math.exp",
    "exp2": "math.exp2",
    "log": "math.log",
    "log1p": "math.log1p",
    "expm1": "math.expm1",
    "sqrt": "math.sqrt",
    "rsqrt": "math.rsqrt",
    "cbrt": "math.cbrt",
    "tanh": "math.tanh",
    "sin": "math.sin",
    "cos": "math.cos",
    "tan": "math.tan",
    "floor": "math.floor",
    "ceil": "math.ceil",
    "erf": "math.erf",
}

# Block reductions: primitive -> kind for (float, signed, unsigned).
REDUCE = {
    "reduce_sum": ("sum", "sum", "sum"),
    "reduce_max": ("max", "max", "umax"),
    "reduce_min": ("min", "min", "umin"),
    "reduce_prod": ("prod", "prod", "prod"),
}

# Primitives that wrap a jaxpr and mean "call it": inlined.
CALLS = {"pjit": "jaxpr", "jit": "jaxpr", "closed_call": "call_jaxpr", "core_call": "call_jaxpr", "remat": "jaxpr",
         "checkpoint": "jaxpr", "custom_jvp_call": "call_jaxpr", "custom_vjp_call": "call_jaxpr",
         "custom_vjp_call_jaxpr": "fun_jaxpr"}

# Primitives that return their operand.
IDENTITY = {"multiple_of", "copy", "copy_p", "optimization_barrier", "pvary", "stop_gradient"}


def _frame(source_info):
    try:
        return source_info_util.user_frame(source_info.traceback)
    except Exception:  # source info is best effort
        return None


class KernelTranslator:
    """Translates one kernel jaxpr into a `func.func` body."""

    def __init__(self, program_axes: list[int]):
        self.emit = Emitter()
        # Kernel program_id(axis) -> grid axis (vmap prepends grid axes the
        # kernel does not see).
        self.program_axes = program_axes
        # The shape a masked access's mask broadcasts to (its result's).
        self.result_shape = None

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
            return self.emit.op(f"tensor.splat {value.name} : {tensor_type(shape, value.dtype)}", shape, value.dtype)
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
        if value.dtype == np.dtype(np.int64) and False:
            return value.name
        name = self.emit.fresh()
        cast = "arith.index_castui" if is_unsigned(value.dtype) else "arith.index_cast"
        self.emit.line(f"{name} = {cast} {value.name} : {element(value.dtype)} to index")
        return name

    def convert(self, value: Value, dtype) -> Value:
        dtype = np.dtype(dtype)
        source, target = element(value.dtype), element(dtype)
        shape = value.shape
        out_type = tensor_type(shape, dtype)
        if source == target and is_unsigned(value.dtype) == is_unsigned(dtype):
            return Value(value.name, shape, dtype)
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
        info = np.iinfo(dtype)
        shape, ftype = value.shape, value.type
        low = self.splat(self.emit.constant(float(info.min), value.dtype), shape)
        high = self.splat(self.emit.constant(float(info.max) + 1.0, value.dtype), shape)
        zero = self.splat(self.emit.constant(0.0, value.dtype), shape)
        ge_low = self.emit.op(f"arith.cmpf oge, {value.name}, {low.name} : {ftype}", shape, np.bool_)
        lt_high = self.emit.op(f"arith.cmpf olt, {value.name}, {high.name} : {ftype}", shape, np.bool_)
        inside = self.emit.op(f"arith.andi {ge_low.name}, {lt_high.name} : {ge_low.type}", shape, np.bool_)
        safe = self.emit.op(f"arith.select {inside.name}, {value.name}, {zero.name} : {inside.type}, {ftype}",
                            shape, value.dtype)
        op = "arith.fptoui" if is_unsigned(dtype) else "arith.fptosi"
        out_type = tensor_type(shape, dtype)
        converted = self.emit.op(f"{op} {safe.name} : {ftype} to {out_type}", shape, dtype)
        top = self.splat(self.emit.constant(info.max, dtype), shape)
        bottom = self.splat(self.emit.constant(info.min, dtype), shape)
        above = self.emit.op(f"arith.cmpf oge, {value.name}, {high.name} : {ftype}", shape, np.bool_)
        below = self.emit.op(f"arith.cmpf olt, {value.name}, {low.name} : {ftype}", shape, np.bool_)
        clipped = self.emit.op(f"arith.select {above.name}, {top.name}, {converted.name} : {above.type}, {out_type}",
                               shape, dtype)
        return self.emit.op(f"arith.select {below.name}, {bottom.name}, {clipped.name} : {below.type}, {out_type}",
                            shape, dtype)

    # ----- the walk -----------------------------------------------------
    def jaxpr(self, jaxpr: core.Jaxpr, env: dict) -> list[Value]:
        for eqn in jaxpr.eqns:
            frame = _frame(eqn.source_info)
            if frame is not None:
                self.emit.loc = location(frame)
                self.emit.where = f"{frame.file_name}:{frame.start_line}"
            # else: inside a call JAX traced elsewhere (jax.nn.relu's
            # body): the enclosing equation's line stands.
            name = eqn.primitive.name
            rule = getattr(self, "rule_" + name, None)
            if rule is not None:
                outs = rule(eqn, env)
            elif name in BINARY:
                outs = [self.binary(eqn, env)]
            elif name in COMPARE:
                outs = [self.compare(eqn, env)]
            elif name in UNARY_FLOAT:
                outs = [self.unary_float(eqn, env, UNARY_FLOAT[name])]
            elif name in REDUCE:
                outs = [self.reduce(eqn, env)]
            elif name in CALLS:
                outs = self.call(eqn, env, CALLS[name])
            elif name in IDENTITY:
                outs = [self.read(env, a) for a in eqn.invars]
            else:
                raise Unsupported(
                    f"{self.emit.where}: Tessel does not support the JAX primitive '{name}' in Pallas kernels"
                )
            for var, value in zip(eqn.outvars, outs):
                if not isinstance(var, core.DropVar):
                    env[var] = Value(value.name, tuple(var.aval.shape), np.dtype(var.aval.dtype)) \
                        if not value.ref else value
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

    def call(self, eqn, env, param):
        closed = eqn.params[param]
        args = [self.read(env, a) for a in eqn.invars]
        if eqn.primitive.name == "custom_vjp_call":
            args = args[: len((closed.jaxpr if hasattr(closed, "jaxpr") else closed).invars)]
        return self.inline(closed, args)

    # ----- element-wise -------------------------------------------------
    def operands(self, eqn, env):
        shape = tuple(eqn.outvars[0].aval.shape)
        values = [self.read(env, a) for a in eqn.invars]
        return shape, [self.splat(v, shape) if v.shape != shape else v for v in values]

    def binary(self, eqn, env) -> Value:
        shape, (a, b) = self.operands(eqn, env)
        dtype = a.dtype
        ops = BINARY[eqn.primitive.name]
        op = ops[0] if is_float(dtype) else ops[2] if is_unsigned(dtype) else ops[1]
        if op is None:
            self.fail(f"'{eqn.primitive.name}' on {dtype}")
        b = Value(b.name, b.shape, dtype)
        return self.emit.op(f"{op} {a.name}, {b.name} : {a.type}", shape, dtype)

    def compare(self, eqn, env) -> Value:
        shape, (a, b) = self.operands(eqn, env)
        predicates = COMPARE[eqn.primitive.name]
        if is_float(a.dtype):
            return self.emit.op(f"arith.cmpf {predicates[0]}, {a.name}, {b.name} : {a.type}", shape, np.bool_)
        predicate = predicates[2] if is_unsigned(a.dtype) else predicates[1]
        return self.emit.op(f"arith.cmpi {predicate}, {a.name}, {b.name} : {a.type}", shape, np.bool_)

    def unary_float(self, eqn, env, op) -> Value:
        (x,) = [self.read(env, a) for a in eqn.invars]
        if not is_float(x.dtype):
            self.fail(f"'{eqn.primitive.name}' on {x.dtype}")
        return self.emit.op(f"{op} {x.name} : {x.type}", x.shape, x.dtype)

    def rule_neg(self, eqn, env):
        (x,) = [self.read(env, a) for a in eqn.invars]
        if is_float(x.dtype):
            return [self.emit.op(f"arith.negf {x.name} : {x.type}", x.shape, x.dtype)]
        zero = self.splat(self.emit.constant(0, x.dtype), x.shape)
        return [self.emit.op(f"arith.subi {zero.name}, {x.name} : {x.type}", x.shape, x.dtype)]

    def rule_abs(self, eqn, env):
        (x,) = [self.read(env, a) for a in eqn.invars]
        op = "math.absf" if is_float(x.dtype) else "math.absi"
        return [self.emit.op(f"{op} {x.name} : {x.type}", x.shape, x.dtype)]

    def rule_not(self, eqn, env):
        (x,) = [self.read(env, a) for a in eqn.invars]
        ones = self.splat(self.emit.constant(-1 if x.dtype != np.bool_ else 1, x.dtype), x.shape)
        return [self.emit.op(f"arith.xori {x.name}, {ones.name} : {x.type}", x.shape, x.dtype)]

    def rule_round(self, eqn, env):
        (x,) = [self.read(env, a) for a in eqn.invars]
        method = int(eqn.params.get("rounding_method", 0))
        op = "math.roundeven" if method == 1 else "math.round"
        return [self.emit.op(f"{op} {x.name} : {x.type}", x.shape, x.dtype)]

    def rule_logistic(self, eqn, env):
        (x,) = [self.read(env, a) for a in eqn.invars]
        one = self.splat(self.emit.constant(1.0, x.dtype), x.shape)
        negated = self.emit.op(f"arith.negf {x.name} : {x.type}", x.shape, x.dtype)
        exp = self.emit.op(f"math.exp {negated.name} : {x.type}", x.shape, x.dtype)
        denominator = self.emit.op(f"arith.addf {one.name}, {exp.name} : {x.type}", x.shape, x.dtype)
        return [self.emit.op(f"arith.divf {one.name}, {denominator.name} : {x.type}", x.shape, x.dtype)]

    def rule_square(self, eqn, env):
        (x,) = [self.read(env, a) for a in eqn.invars]
        op = "arith.mulf" if is_float(x.dtype) else "arith.muli"
        return [self.emit.op(f"{op} {x.name}, {x.name} : {x.type}", x.shape, x.dtype)]

    def rule_integer_pow(self, eqn, env):
        (x,) = [self.read(env, a) for a in eqn.invars]
        power = int(eqn.params["y"])
        op = "arith.mulf" if is_float(x.dtype) else "arith.muli"
        result = self.splat(self.emit.constant(1, x.dtype), x.shape)
        for _ in range(abs(power)):
            result = self.emit.op(f"{op} {result.name}, {x.name} : {x.type}", x.shape, x.dtype)
        if power < 0:
            one = self.splat(self.emit.constant(1, x.dtype), x.shape)
            result = self.emit.op(f"arith.divf {one.name}, {result.name} : {x.type}", x.shape, x.dtype)
        return [result]

    def rule_sign(self, eqn, env):
        (x,) = [self.read(env, a) for a in eqn.invars]
        zero = self.splat(self.emit.constant(0, x.dtype), x.shape)
        one = self.splat(self.emit.constant(1, x.dtype), x.shape)
        if is_float(x.dtype):
            # copysign(1, x) for nonzero numbers; ±0 and NaN kept.
            magnitude = self.emit.op(f"math.copysign {one.name}, {x.name} : {x.type}", x.shape, x.dtype)
            nonzero = self.emit.op(f"arith.cmpf one, {x.name}, {zero.name} : {x.type}", x.shape, np.bool_)
            return [self.emit.op(f"arith.select {nonzero.name}, {magnitude.name}, {x.name} : "
                                 f"{nonzero.type}, {x.type}", x.shape, x.dtype)]
        if is_unsigned(x.dtype):
            positive = self.emit.op(f"arith.cmpi ne, {x.name}, {zero.name} : {x.type}", x.shape, np.bool_)
            return [self.emit.op(f"arith.extui {positive.name} : {positive.type} to {x.type}", x.shape, x.dtype)]
        positive = self.emit.op(f"arith.cmpi sgt, {x.name}, {zero.name} : {x.type}", x.shape, np.bool_)
        negative = self.emit.op(f"arith.cmpi slt, {x.name}, {zero.name} : {x.type}", x.shape, np.bool_)
        up = self.emit.op(f"arith.extui {positive.name} : {positive.type} to {x.type}", x.shape, x.dtype)
        down = self.emit.op(f"arith.extui {negative.name} : {negative.type} to {x.type}", x.shape, x.dtype)
        return [self.emit.op(f"arith.subi {up.name}, {down.name} : {x.type}", x.shape, x.dtype)]

    def rule_is_finite(self, eqn, env):
        (x,) = [self.read(env, a) for a in eqn.invars]
        magnitude = self.emit.op(f"math.absf {x.name} : {x.type}", x.shape, x.dtype)
        infinity = self.splat(self.emit.constant(float("inf"), x.dtype), x.shape)
        return [self.emit.op(f"arith.cmpf olt, {magnitude.name}, {infinity.name} : {x.type}", x.shape, np.bool_)]

    def rule_select_n(self, eqn, env):
        shape = tuple(eqn.outvars[0].aval.shape)
        which = self.read(env, eqn.invars[0])
        cases = [self.splat(self.read(env, a), shape) for a in eqn.invars[1:]]
        if which.shape != shape and which.shape != ():
            which = self.splat(which, shape)
        result = cases[0]
        for index, case in enumerate(cases[1:], start=1):
            if which.dtype == np.bool_:
                condition = which
            else:
                constant = self.splat(self.emit.constant(index, which.dtype), which.shape)
                condition = self.emit.op(f"arith.cmpi eq, {which.name}, {constant.name} : {which.type}",
                                         which.shape, np.bool_)
            result = self.emit.op(
                f"arith.select {condition.name}, {case.name}, {result.name} : {condition.type}, {case.type}",
                shape,
                case.dtype,
            )
        return [result]

    def rule_clamp(self, eqn, env):
        shape = tuple(eqn.outvars[0].aval.shape)
        low, x, high = [self.splat(self.read(env, a), shape) for a in eqn.invars]
        if is_float(x.dtype):
            ops = ("arith.minimumf", "arith.maximumf")
        elif is_unsigned(x.dtype):
            ops = ("arith.minui", "arith.maxui")
        else:
            ops = ("arith.minsi", "arith.maxsi")
        capped = self.emit.op(f"{ops[0]} {x.name}, {high.name} : {x.type}", shape, x.dtype)
        return [self.emit.op(f"{ops[1]} {capped.name}, {low.name} : {x.type}", shape, x.dtype)]

    def rule_convert_element_type(self, eqn, env):
        (x,) = [self.read(env, a) for a in eqn.invars]
        return [self.convert(x, eqn.params["new_dtype"])]

    # ----- shapes ---------------------------------------------------------
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

    # ----- grid ---------------------------------------------------------
    def rule_program_id(self, eqn, env):
        axis = self.program_axes[int(eqn.params["axis"])]
        index = self.emit.fresh()
        self.emit.line(f"{index} = grid.program_id {axis}")
        return [self.emit.op(f"arith.index_cast {index} : index to i32", (), np.int32)]

    def rule_num_programs(self, eqn, env):
        axis = self.program_axes[int(eqn.params["axis"])]
        index = self.emit.fresh()
        self.emit.line(f"{index} = grid.num_programs {axis}")
        return [self.emit.op(f"arith.index_cast {index} : index to i32", (), np.int32)]

    # ----- refs ---------------------------------------------------------
    def indexer(self, eqn, env, ref: Value, leaves):
        """(offsets, sizes, squeezed dims) of a ref access, or None for the
        whole ref."""
        return self.access(env, ref, tree_util.tree_unflatten(eqn.params["tree"], leaves))

    def access(self, env, ref: Value, transforms):
        if not transforms:
            return None
        if len(transforms) > 1 or not isinstance(transforms[0], indexing.NDIndexer):
            self.fail("ref transforms other than one indexer (nested .at[] or bitcasts)")
        offsets, sizes, squeezed = [], [], []
        self.gather = None
        for dim, index in enumerate(transforms[0].indices):
            if isinstance(index, indexing.Slice):
                if index.stride != 1:
                    self.fail("strided ref slices (pl.ds with a stride)")
                offsets.append(self.offset(env, index.start))
                sizes.append(int(index.size))
                continue
            shape = tuple(index.aval.shape) if hasattr(index, "aval") else tuple(np.shape(index))
            if shape == ():
                offsets.append(self.offset(env, index))
                sizes.append(1)
                squeezed.append(dim)
                continue
            if len(shape) != 1 or self.gather is not None:
                self.fail("indexing a ref with index arrays other than one 1-D array")
            indices = self.read(env, index) if not isinstance(index, (np.ndarray, int)) else \
                self.emit.dense(np.asarray(index))
            if indices.dtype != np.dtype(np.int32):
                indices = self.convert(indices, np.int32)
            self.gather = (indices, dim)
            offsets.append((self.emit.index(0), 0))
            sizes.append(shape[0])
        if self.gather is not None and squeezed:
            self.fail("indexing a ref with an index array and scalar indices together")
        full = not squeezed and self.gather is None and all(
            s == d and o[1] == 0 for s, d, o in zip(sizes, ref.shape, offsets))
        if full:
            return None
        return [o[0] for o in offsets], sizes, squeezed, self.gather

    def offset(self, env, start):
        """(index SSA name, static value or None) of an offset."""
        if isinstance(start, (int, np.integer)):
            return self.emit.index(int(start)), int(start)
        if isinstance(start, core.Literal):
            return self.emit.index(int(start.val)), int(start.val)
        value = self.read(env, start)
        return self.as_index(value), None

    def mask_text(self, mask, other, window, dtype) -> str:
        """` mask %m [other %o]` for a masked access of `window` shape."""
        if mask is None:
            return ""
        mask = self.reshape(self.splat(mask, self.kept_shape(mask, window)), tuple(window)) \
            if mask.shape != tuple(window) else mask
        text = f" mask {mask.name}"
        if other is not None:
            if other.shape != ():
                self.fail("a masked load whose `other` is not a scalar")
            text += f" other {self.convert(other, dtype).name}"
        return text

    def kept_shape(self, mask, window):
        """The shape a mask broadcasts to before the squeezed window dims
        come back: the access's result shape."""
        return self.result_shape if self.result_shape is not None else tuple(window)

    def load(self, ref: Value, access, shape, dtype, mask=None, other=None) -> Value:
        if access is None:
            if not ref.shape:
                return self.emit.op(f"memref.load {ref.name}[] : {ref.type}", (), dtype)
            self.result_shape = ref.shape
            masked = self.mask_text(mask, other, ref.shape, dtype)
            return self.emit.op(f"block.load {ref.name}{masked} : {ref.type} -> {tensor_type(ref.shape, dtype)}",
                                ref.shape, dtype)
        offsets, sizes, squeezed, gather = access
        if len(squeezed) == len(sizes) and mask is None:
            return self.emit.op(f"memref.load {ref.name}[{', '.join(offsets)}] : {ref.type}", (), dtype)
        self.result_shape = tuple(shape)
        masked = self.mask_text(mask, other, sizes, dtype)
        gathered, index_type = "", ""
        if gather is not None:
            gathered, index_type = f" gather {gather[0].name} dim {gather[1]}", f", {gather[0].type}"
        window = self.emit.op(
            f"block.load {ref.name}[{', '.join(offsets)}] [{', '.join(map(str, sizes))}]{gathered}{masked} : "
            f"{ref.type}{index_type} -> {tensor_type(sizes, dtype)}",
            tuple(sizes),
            dtype,
        )
        return self.reshape(window, tuple(shape))

    def store(self, ref: Value, access, value: Value, mask=None) -> None:
        if access is None:
            if not ref.shape:
                self.emit.line(f"memref.store {value.name}, {ref.name}[] : {ref.type}")
                return
            value = self.splat(value, ref.shape)
            self.result_shape = ref.shape
            masked = self.mask_text(mask, None, ref.shape, value.dtype)
            self.emit.line(f"block.store {value.name}, {ref.name}{masked} : {value.type}, {ref.type}")
            return
        offsets, sizes, squeezed, gather = access
        if len(squeezed) == len(sizes) and mask is None:
            self.emit.line(f"memref.store {value.name}, {ref.name}[{', '.join(offsets)}] : {ref.type}")
            return
        kept = tuple(s for d, s in enumerate(sizes) if d not in squeezed)
        value = self.reshape(self.splat(value, kept), tuple(sizes))
        self.result_shape = kept
        masked = self.mask_text(mask, None, sizes, value.dtype)
        scattered, index_type = "", ""
        if gather is not None:
            scattered, index_type = f" scatter {gather[0].name} dim {gather[1]}", f", {gather[0].type}"
        self.emit.line(
            f"block.store {value.name}, {ref.name}[{', '.join(offsets)}]{scattered}{masked} : {value.type}, "
            f"{ref.type}{index_type}"
        )

    def rule_masked_load(self, eqn, env):
        ref, transforms, mask, other = tree_util.tree_unflatten(eqn.params["args_tree"], eqn.invars)
        ref = self.read(env, ref)
        access = self.access(env, ref, transforms)
        out = eqn.outvars[0].aval
        mask = None if mask is None else self.read(env, mask)
        other = None if other is None else self.read(env, other)
        if mask is not None and other is None:
            other = self.emit.constant(0, out.dtype)
        return [self.load(ref, access, tuple(out.shape), np.dtype(out.dtype), mask, other)]

    def rule_masked_swap(self, eqn, env):
        ref, transforms, value, mask = tree_util.tree_unflatten(eqn.params["args_tree"], eqn.invars)
        ref = self.read(env, ref)
        access = self.access(env, ref, transforms)
        value = self.read(env, value)
        mask = None if mask is None else self.read(env, mask)
        out = eqn.outvars[0].aval
        old = None
        if not isinstance(eqn.outvars[0], core.DropVar):
            zero = self.emit.constant(0, out.dtype) if mask is not None else None
            old = self.load(ref, access, tuple(out.shape), np.dtype(out.dtype), mask, zero)
        self.store(ref, access, value, mask)
        return [old if old is not None else value]

    def rule_get(self, eqn, env):
        ref = self.read(env, eqn.invars[0])
        access = self.indexer(eqn, env, ref, eqn.invars[1:])
        out = eqn.outvars[0].aval
        return [self.load(ref, access, tuple(out.shape), np.dtype(out.dtype))]

    def rule_swap(self, eqn, env):
        ref = self.read(env, eqn.invars[0])
        value = self.read(env, eqn.invars[1])
        access = self.indexer(eqn, env, ref, eqn.invars[2:])
        out = eqn.outvars[0].aval
        old = None
        if not isinstance(eqn.outvars[0], core.DropVar):
            old = self.load(ref, access, tuple(out.shape), np.dtype(out.dtype))
        self.store(ref, access, value)
        return [old] if old is not None else [value]

    def rule_addupdate(self, eqn, env):
        ref = self.read(env, eqn.invars[0])
        value = self.read(env, eqn.invars[1])
        access = self.indexer(eqn, env, ref, eqn.invars[2:])
        old = self.load(ref, access, value.shape, value.dtype)
        op = "arith.addf" if is_float(value.dtype) else "arith.addi"
        total = self.emit.op(f"{op} {old.name}, {value.name} : {old.type}", value.shape, value.dtype)
        self.store(ref, access, total)
        return []

    # ----- control flow ---------------------------------------------------
    def region(self, closed, args, results_of) -> list[Value]:
        """Inlines `closed` one level deeper; returns its results."""
        self.emit.depth += 1
        try:
            return self.inline(closed, args)
        finally:
            self.emit.depth -= 1

    def rule_cond(self, eqn, env):
        branches = eqn.params["branches"]
        index = self.read(env, eqn.invars[0])
        operands = [self.read(env, a) for a in eqn.invars[1:]]
        return self.cond(eqn, branches, index, operands, 0)

    def cond(self, eqn, branches, index: Value, operands, first: int):
        """scf.if choosing branch `first` or a later one."""
        if len(branches) - first == 1:
            return self.inline_flat(branches[first], operands)
        if index.dtype == np.bool_:
            condition = index
        else:
            constant = self.emit.constant(first, index.dtype)
            condition = self.emit.op(f"arith.cmpi eq, {index.name}, {constant.name} : {index.type}", (), np.bool_)
        outs = [v.aval for v in eqn.outvars]
        result_types = [tensor_type(o.shape, o.dtype) for o in outs]
        names = [self.emit.fresh() for _ in outs]
        results = f"{', '.join(names)} = " if names else ""
        types = f" -> ({', '.join(result_types)})" if names else ""
        loc = self.emit.loc
        self.emit.line(f"{results}scf.if {condition.name}{types} {{", located=False)
        # Branch `first` when equal (for bools: branch 1 when true).
        taken, other = (first, None) if index.dtype != np.bool_ else (1, 0)
        self.emit.depth += 1
        values = self.inline(branches[taken], operands) if other is not None or True else []
        if index.dtype == np.bool_:
            pass
        self.yield_(values)
        self.emit.depth -= 1
        self.emit.line("} else {", located=False)
        self.emit.depth += 1
        if index.dtype == np.bool_:
            values = self.inline(branches[0], operands)
        else:
            values = self.cond(eqn, branches, index, operands, first + 1)
        self.yield_(values)
        self.emit.depth -= 1
        self.emit.lines.append("  " * self.emit.depth + "} " + loc)
        return [Value(n, tuple(o.shape), np.dtype(o.dtype)) for n, o in zip(names, outs)]

    def inline_flat(self, closed, operands):
        return self.inline(closed, operands)

    def yield_(self, values):
        if values:
            self.emit.line(f"scf.yield {', '.join(v.name for v in values)} : {', '.join(v.type for v in values)}")

    def rule_scan(self, eqn, env):
        p = eqn.params
        num_consts, num_carry = p["num_consts"], p["num_carry"]
        if len(eqn.invars) != num_consts + num_carry or len(eqn.outvars) != num_carry:
            self.fail("scan over arrays (only fori_loop-style scans are supported)")
        args = [self.read(env, a) for a in eqn.invars]
        consts, carry = args[:num_consts], args[num_consts:]
        lower, upper, step = self.emit.index(0), self.emit.index(int(p["length"])), self.emit.index(1)
        names = [self.emit.fresh() for _ in carry]
        induction = self.emit.fresh()
        iter_names = [self.emit.fresh() for _ in carry]
        iter_args = ", ".join(f"{n} = {c.name}" for n, c in zip(iter_names, carry))
        loc = self.emit.loc
        results = f"{', '.join(names)} = " if names else ""
        iter_text = f" iter_args({iter_args}) -> ({', '.join(c.type for c in carry)})" if carry else ""
        self.emit.line(f"{results}scf.for {induction} = {lower} to {upper} step {step}{iter_text} {{", located=False)
        self.emit.depth += 1
        inner = [Value(n, c.shape, c.dtype) for n, c in zip(iter_names, carry)]
        values = self.inline(p["jaxpr"], consts + inner)
        values = [self.splat(v, c.shape) if v.shape != c.shape else v for v, c in zip(values, carry)]
        if values:
            self.yield_(values)
        self.emit.depth -= 1
        self.emit.lines.append("  " * self.emit.depth + "} " + loc)
        return [Value(n, c.shape, c.dtype) for n, c in zip(names, carry)]

    def rule_while(self, eqn, env):
        p = eqn.params
        cond_n, body_n = p["cond_nconsts"], p["body_nconsts"]
        args = [self.read(env, a) for a in eqn.invars]
        cond_consts, body_consts, carry = args[:cond_n], args[cond_n:cond_n + body_n], args[cond_n + body_n:]
        names = [self.emit.fresh() for _ in carry]
        before = [self.emit.fresh() for _ in carry]
        after = [self.emit.fresh() for _ in carry]
        types = ", ".join(c.type for c in carry)
        inits = ", ".join(f"{b} = {c.name}" for b, c in zip(before, carry))
        loc = self.emit.loc
        results = f"{', '.join(names)} = " if names else ""
        self.emit.line(f"{results}scf.while ({inits}) : ({types}) -> ({types}) {{", located=False)
        self.emit.depth += 1
        (condition,) = self.inline(p["cond_jaxpr"], cond_consts + [Value(b, c.shape, c.dtype)
                                                                    for b, c in zip(before, carry)])
        self.emit.line(f"scf.condition({condition.name}) {', '.join(before)} : {types}")
        self.emit.depth -= 1
        block_args = ", ".join(f"{a}: {c.type}" for a, c in zip(after, carry))
        self.emit.line(f"}} do {{\n{'  ' * (self.emit.depth + 1)}^bb0({block_args}):", located=False)
        self.emit.depth += 1
        values = self.inline(p["body_jaxpr"], body_consts + [Value(a, c.shape, c.dtype)
                                                               for a, c in zip(after, carry)])
        values = [self.splat(v, c.shape) if v.shape != c.shape else v for v, c in zip(values, carry)]
        self.emit.line(f"scf.yield {', '.join(v.name for v in values)} : {types}")
        self.emit.depth -= 1
        self.emit.lines.append("  " * self.emit.depth + "} " + loc)
        return [Value(n, c.shape, c.dtype) for n, c in zip(names, carry)]
