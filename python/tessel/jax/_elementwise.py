"""Element-wise arithmetic, comparisons, selects and conversions.

Binary ops, comparisons and unary math are table entries of one rule
each; the rest (neg, abs, not, round, logistic, square, integer_pow, sign,
is_finite, select_n, clamp, convert_element_type) are rules of their own.
16-bit floats compute transcendental functions in f32 and round once, as
XLA does."""

from __future__ import annotations

import numpy as np

from tessel.jax._emit import Value, is_float, is_unsigned, sub_byte
from tessel.jax._registry import rule

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
    "erfc": "math.erfc",
}

# Ops whose C-library implementation reads the input's bits: a subnormal
# input would not count as zero the way XLA's threads (denormals are zero)
# count it everywhere else. glibc's logf normalizes a subnormal by
# multiplying it by 2^23, which denormals-are-zero turns into 0, and reads
# the exponent of that: log(1e-40) came out as -103.97, neither the true
# -92.1 nor XLA's -inf.
FLUSHES_SUBNORMAL_INPUT = {"math.log"}

# Binary primitives whose result is one of the operands (min, max) or a
# bitwise combination or remainder, which keeps sub-byte integers in range.
_SELECTS = ("max", "min")
_STAYS_IN_RANGE = ("and", "or", "xor", "rem")


def _pick(ops: tuple, dtype):
    return ops[0] if is_float(dtype) else ops[2] if is_unsigned(dtype) else ops[1]


def _same_shape(ctx, values) -> list[Value]:
    shape = ctx.out_shape
    return [ctx.tr.splat(v, shape) if v.shape != shape else v for v in values]


@rule(*_SELECTS, moves_values=True)
@rule(*_STAYS_IN_RANGE, keeps_sub_byte_range=True)
@rule(*(name for name in BINARY if name not in _SELECTS + _STAYS_IN_RANGE))
def binary(ctx, a, b):
    tr, name = ctx.tr, ctx.name
    a, b = _same_shape(ctx, [a, b])
    dtype = a.dtype
    op = _pick(BINARY[name], dtype)
    if op is None:
        ctx.fail(f"'{name}' on {dtype}")
    if name == "pow" and not is_float(b.dtype):
        # A float to an integer power (lax.pow allows it): the C library's
        # pow takes integral float exponents of negative bases exactly
        # (LLVM's powi needs a compiler runtime).
        b = tr.convert(b, dtype)
    b = Value(b.name, b.shape, dtype)
    if name in _SELECTS:
        a, b = tr.flush_bf16_subnormals(a), tr.flush_bf16_subnormals(b)
    if name.startswith("shift_right") and sub_byte(dtype):
        # The narrow type's bits, its top bit as the sign for an arithmetic
        # shift (of unsigned types too, as XLA shifts them).
        a = tr.sub_byte_bits(a, extend_sign=name == "shift_right_arithmetic")
    # Integer division by zero, INT_MIN / -1 and shifts by the width or
    # more get XLA's results from every pipeline (tessel-total-division,
    # tessel-saturating-shifts): the plain arith op is enough here.
    result = tr.emit.op(f"{op} {a.name}, {b.name} : {a.type}", a.shape, dtype)
    if name == "add" and len(a.shape) == 1 and not is_float(dtype):
        tr.track_contiguous(result, a, b)
    return result


@rule(*COMPARE)
def compare(ctx, a, b):
    a, b = _same_shape(ctx, [a, b])
    predicates = COMPARE[ctx.name]
    if is_float(a.dtype):
        return ctx.tr.emit.op(f"arith.cmpf {predicates[0]}, {a.name}, {b.name} : {a.type}", a.shape, np.bool_)
    predicate = predicates[2] if is_unsigned(a.dtype) else predicates[1]
    return ctx.tr.emit.op(f"arith.cmpi {predicate}, {a.name}, {b.name} : {a.type}", a.shape, np.bool_)


@rule(*UNARY_FLOAT)
def unary_float(ctx, x):
    # 16-bit floats are computed in f32 and rounded once, as XLA does: left
    # in f16/bf16, `math.rsqrt` became 1 / sqrt(x) rounded twice (1.5 ulp).
    # A bf16 subnormal widens to an f32 subnormal.
    tr, op = ctx.tr, UNARY_FLOAT[ctx.name]
    x, dtype = tr.float_operand(ctx.name, x)
    if op in FLUSHES_SUBNORMAL_INPUT:
        x = tr.flush_subnormal(x)
    return tr.convert(tr.emit.op(f"{op} {x.name} : {x.type}", x.shape, x.dtype), dtype)


@rule("neg")
def neg(ctx, x):
    tr = ctx.tr
    if is_float(x.dtype):
        return tr.emit.op(f"arith.negf {x.name} : {x.type}", x.shape, x.dtype)
    zero = tr.splat(tr.emit.constant(0, x.dtype), x.shape)
    return tr.emit.op(f"arith.subi {zero.name}, {x.name} : {x.type}", x.shape, x.dtype)


@rule("abs")
def abs_(ctx, x):
    op = "math.absf" if is_float(x.dtype) else "math.absi"
    return ctx.tr.emit.op(f"{op} {x.name} : {x.type}", x.shape, x.dtype)


@rule("not")
def not_(ctx, x):
    tr = ctx.tr
    ones = tr.splat(tr.emit.constant(-1 if x.dtype != np.bool_ else 1, x.dtype), x.shape)
    return tr.emit.op(f"arith.xori {x.name}, {ones.name} : {x.type}", x.shape, x.dtype)


@rule("round")
def round_(ctx, x):
    method = int(ctx.params.get("rounding_method", 0))
    op = "math.roundeven" if method == 1 else "math.round"
    return ctx.tr.emit.op(f"{op} {x.name} : {x.type}", x.shape, x.dtype)


@rule("logistic")
def logistic(ctx, x):
    tr = ctx.tr
    one = tr.splat(tr.emit.constant(1.0, x.dtype), x.shape)
    negated = tr.emit.op(f"arith.negf {x.name} : {x.type}", x.shape, x.dtype)
    exp = tr.emit.op(f"math.exp {negated.name} : {x.type}", x.shape, x.dtype)
    denominator = tr.emit.op(f"arith.addf {one.name}, {exp.name} : {x.type}", x.shape, x.dtype)
    return tr.emit.op(f"arith.divf {one.name}, {denominator.name} : {x.type}", x.shape, x.dtype)


@rule("square")
def square(ctx, x):
    op = "arith.mulf" if is_float(x.dtype) else "arith.muli"
    return ctx.tr.emit.op(f"{op} {x.name}, {x.name} : {x.type}", x.shape, x.dtype)


@rule("integer_pow")
def integer_pow(ctx, x):
    # Square-and-multiply in the order of JAX's own lowering
    # (`lax._integer_pow`): x**4 is (x*x)*(x*x), not ((x*x)*x)*x, and the
    # two differ in the last bit of a float.
    tr = ctx.tr
    power = int(ctx.params["y"])
    op = "arith.mulf" if is_float(x.dtype) else "arith.muli"

    def multiply(a, b):
        return tr.emit.op(f"{op} {a.name}, {b.name} : {x.type}", x.shape, x.dtype)

    if power == 0:
        return tr.splat(tr.emit.constant(1, x.dtype), x.shape)
    remaining, square, result = abs(power), x, None
    while remaining > 0:
        if remaining & 1:
            result = square if result is None else multiply(result, square)
        remaining >>= 1
        if remaining > 0:
            square = multiply(square, square)
    if power < 0:
        one = tr.splat(tr.emit.constant(1, x.dtype), x.shape)
        result = tr.emit.op(f"arith.divf {one.name}, {result.name} : {x.type}", x.shape, x.dtype)
    return result


@rule("sign")
def sign(ctx, x):
    tr, emit = ctx.tr, ctx.tr.emit
    zero = tr.splat(emit.constant(0, x.dtype), x.shape)
    one = tr.splat(emit.constant(1, x.dtype), x.shape)
    if is_float(x.dtype):
        # copysign(1, x) for nonzero numbers; ±0 and NaN kept, and
        # subnormals (zero on XLA's threads, so they fail `one`) made zeros
        # rather than passed through.
        x = tr.flush_subnormal(x)
        magnitude = emit.op(f"math.copysign {one.name}, {x.name} : {x.type}", x.shape, x.dtype)
        nonzero = emit.op(f"arith.cmpf one, {x.name}, {zero.name} : {x.type}", x.shape, np.bool_)
        return emit.op(f"arith.select {nonzero.name}, {magnitude.name}, {x.name} : {nonzero.type}, {x.type}",
                       x.shape, x.dtype)
    if is_unsigned(x.dtype):
        positive = emit.op(f"arith.cmpi ne, {x.name}, {zero.name} : {x.type}", x.shape, np.bool_)
        return emit.op(f"arith.extui {positive.name} : {positive.type} to {x.type}", x.shape, x.dtype)
    positive = emit.op(f"arith.cmpi sgt, {x.name}, {zero.name} : {x.type}", x.shape, np.bool_)
    negative = emit.op(f"arith.cmpi slt, {x.name}, {zero.name} : {x.type}", x.shape, np.bool_)
    up = emit.op(f"arith.extui {positive.name} : {positive.type} to {x.type}", x.shape, x.dtype)
    down = emit.op(f"arith.extui {negative.name} : {negative.type} to {x.type}", x.shape, x.dtype)
    return emit.op(f"arith.subi {up.name}, {down.name} : {x.type}", x.shape, x.dtype)


@rule("is_finite")
def is_finite(ctx, x):
    tr = ctx.tr
    magnitude = tr.emit.op(f"math.absf {x.name} : {x.type}", x.shape, x.dtype)
    infinity = tr.splat(tr.emit.constant(float("inf"), x.dtype), x.shape)
    return tr.emit.op(f"arith.cmpf olt, {magnitude.name}, {infinity.name} : {x.type}", x.shape, np.bool_)


@rule("select_n", moves_values=True)
def select_n(ctx, which, *cases):
    tr, shape = ctx.tr, ctx.out_shape
    cases = [tr.splat(case, shape) for case in cases]
    if which.shape != shape and which.shape != ():
        which = tr.splat(which, shape)
    result = cases[0]
    for index, case in enumerate(cases[1:], start=1):
        if which.dtype == np.bool_:
            condition = which
        else:
            constant = tr.splat(tr.emit.constant(index, which.dtype), which.shape)
            condition = tr.emit.op(f"arith.cmpi eq, {which.name}, {constant.name} : {which.type}", which.shape,
                                   np.bool_)
        result = tr.emit.op(
            f"arith.select {condition.name}, {case.name}, {result.name} : {condition.type}, {case.type}",
            shape, case.dtype)
    return result


@rule("clamp", moves_values=True)
def clamp(ctx, low, x, high):
    tr, shape = ctx.tr, ctx.out_shape
    low, x, high = [tr.flush_bf16_subnormals(tr.splat(v, shape)) for v in (low, x, high)]
    if is_float(x.dtype):
        ops = ("arith.minimumf", "arith.maximumf")
    elif is_unsigned(x.dtype):
        ops = ("arith.minui", "arith.maxui")
    else:
        ops = ("arith.minsi", "arith.maxsi")
    # XLA's order, min(max(x, low), high): where low > high the result is
    # high (the other order would give low).
    raised = tr.emit.op(f"{ops[1]} {x.name}, {low.name} : {x.type}", shape, x.dtype)
    return tr.emit.op(f"{ops[0]} {raised.name}, {high.name} : {x.type}", shape, x.dtype)


@rule("convert_element_type")
def convert_element_type(ctx, x):
    return ctx.tr.convert(x, ctx.params["new_dtype"])


@rule("multiple_of", "copy", "copy_p", "optimization_barrier", "pvary", "stop_gradient", moves_values=True)
def identity(ctx, *operands):
    """Primitives that return their operands (hints and barriers)."""
    return list(operands)
