"""Math without a single MLIR op: inverse and hyperbolic functions, bits.

Inverse and hyperbolic trigonometry, `erf_inv`, `nextafter`, bit casts and
bit counts. Each expands into ops Tessel lowers everywhere (exp, log1p,
atan2, integer bit operations), as numerically careful as XLA's own
expansions: `nextafter` and the bit operations are exact, the rest within
a few ulps."""

from __future__ import annotations

import jax.numpy as jnp
import ml_dtypes
import numpy as np
from jax import lax

from tessel.jax._emit import Value, bit_width, element, is_float, is_float8, sub_byte, tensor_type
from tessel.jax._registry import rule

# XLA's single-precision erf_inv polynomial (Giles, "Approximating the
# erfinv function"): coefficients for w < 5 and for w >= 5.
ERF_INV_SMALL = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
                 -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)
ERF_INV_LARGE = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
                 -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)


class MathOps:
    """The translator's arithmetic helpers (a mixin of `KernelTranslator`)."""

    # ----- helpers ------------------------------------------------------
    def float_operand(self, primitive: str, x: Value) -> tuple[Value, np.dtype]:
        """The operand, widened to f32 when narrower (as XLA computes
        16-bit float math), and its own dtype to round back to."""
        if not is_float(x.dtype):
            self.fail(f"'{primitive}' on {x.dtype}")
        if x.dtype.itemsize < 4:
            return self.convert(x, np.float32), x.dtype
        return x, x.dtype

    def flush_subnormal(self, x: Value) -> Value:
        """`x` with f32/f64/bf16 subnormals made zeros of the same sign, as
        XLA's threads read them (f16's widen to normal f32 numbers)."""
        if x.dtype.name not in ("float32", "float64", "bfloat16"):
            return x
        # bf16 has f32's exponent range, so f32's smallest normal.
        smallest_normal = np.finfo(np.float64 if x.dtype == np.float64 else np.float32).tiny
        small = self.cmp("cmpf", "olt", self.arith("math.absf", x), self.const_like(float(smallest_normal), x))
        return self.pick(small, self.arith("math.copysign", self.const_like(0, x), x), x)

    def flush_bf16_subnormals(self, x: Value) -> Value:
        """`x` with bf16 subnormals made signed zeros before a min or max:
        XLA computes those in f32 on threads whose denormals are zero, so
        min(-s, +s) of the smallest subnormal s is -0; LLVM's vector
        minimum on widened bf16 compared them as zeros but chose by the
        operands' bits (+s). f32's own lowering already agrees."""
        if x.dtype.name != "bfloat16":
            return x
        return self.flush_subnormal(x)

    def arith(self, op: str, *operands: Value) -> Value:
        """`op` on same-shaped operands (scalars splat to the first block's
        shape); the result has the first operand's type."""
        shape = next((v.shape for v in operands if v.shape), ())
        values = [self.splat(v, shape) for v in operands]
        names = ", ".join(v.name for v in values)
        return self.emit.op(f"{op} {names} : {values[0].type}", shape, values[0].dtype)

    def const_like(self, value, like: Value) -> Value:
        return self.splat(self.emit.constant(value, like.dtype), like.shape)

    def cmp(self, kind: str, predicate: str, a: Value, b: Value) -> Value:
        return self.emit.op(f"arith.{kind} {predicate}, {a.name}, {b.name} : {a.type}", a.shape, np.bool_)

    def pick(self, condition: Value, when_true: Value, when_false: Value) -> Value:
        return self.emit.op(
            f"arith.select {condition.name}, {when_true.name}, {when_false.name} : "
            f"{condition.type}, {when_true.type}", when_true.shape, when_true.dtype)

    def bitcast(self, value: Value, dtype) -> Value:
        dtype = np.dtype(dtype)
        if element(value.dtype) == element(dtype):
            return Value(value.name, value.shape, dtype)
        out = Value("", value.shape, dtype)
        return self.emit.op(f"arith.bitcast {value.name} : {value.type} to {out.type}", value.shape, dtype)

    # ----- hyperbolic and inverse trigonometric functions --------------
    def near_overflow(self, x: Value) -> tuple[Value, Value]:
        """(|x| past where e^|x| overflows but e^|x| / 2 may not, e^|x| / 2
        computed there as (e^(|x|/2) / 2) e^(|x|/2)). sinh and cosh of
        x in (88.7, 89.4] are finite in f32 while e^x is not: through e^x
        they came out infinite."""
        magnitude = self.arith("math.absf", x)
        limit = np.floor(np.log(np.finfo(x.dtype).max))  # 88 for f32, 709 for f64
        far = self.cmp("cmpf", "ogt", magnitude, self.const_like(float(limit), x))
        root = self.arith("math.exp", self.arith("arith.mulf", magnitude, self.const_like(0.5, x)))
        return far, self.arith("arith.mulf", self.arith("arith.mulf", root, self.const_like(0.5, x)), root)

    def cosine_side(self, x: Value) -> Value:
        """sqrt((1 - x)(1 + x)): sqrt(1 - x^2) without cancellation."""
        one = self.const_like(1.0, x)
        return self.arith("math.sqrt", self.arith("arith.mulf", self.arith("arith.subf", one, x),
                                                  self.arith("arith.addf", one, x)))

    # ----- exact bit-level operations ----------------------------------
    def tpu_bitcast(self, x: Value, dtype) -> Value:
        """`x` reinterpreted as `dtype` as a TPU does (`pltpu.bitcast`, and
        `ref.bitcast` views): elements of another width pack and unpack
        along the second-minor dim, the first the least significant;
        translated as JAX's own lowering spells it."""
        dtype = np.dtype(dtype)
        source, target = bit_width(x.dtype), bit_width(dtype)

        def spelled(v):
            if source < target:
                *leading, m, n = v.shape
                packing = target // source
                packed = jnp.swapaxes(v.reshape(*leading, m // packing, packing, n), -1, -2)
                return lax.bitcast_convert_type(packed, dtype)
            if source > target:
                unpacked = lax.bitcast_convert_type(v, dtype)
                *leading, m, n, packing = unpacked.shape
                return jnp.swapaxes(unpacked, -1, -2).reshape(*leading, m * packing, n)
            return lax.bitcast_convert_type(v, dtype)

        if source != target and (len(x.shape) < 2 or x.shape[-2] * source % target):
            self.fail(f"a bitcast of a {x.shape} {x.dtype} block to {dtype} (the second-minor dim packs)")
        (result,) = self.inline_traced(spelled, [x])
        return result

    def bitcast_value(self, x: Value, dtype) -> Value:
        """`lax.bitcast_convert_type` of a value of a type kernels hold as
        itself (not an 8-bit float)."""
        dtype = np.dtype(dtype)
        source, target = bit_width(x.dtype), bit_width(dtype)
        if np.bool_ in (x.dtype, dtype):
            self.fail(f"bitcast_convert_type from {x.dtype} to {dtype}")
        if source == target:
            return self.bitcast(x, dtype)
        if source > target:
            return self.bitcast_to_narrower(x, dtype)
        return self.bitcast_to_wider(x, dtype)

    def float8_bits(self, x: Value) -> Value:
        """The uint8 encoding of 8-bit float values held in f32 (each
        exactly a value of the type): sign, the exponent re-biased, the
        mantissa's top bits; subnormals as multiples of the smallest;
        every NaN as the type's canonical NaN (`np.nan` cast to it)."""
        dtype = x.dtype
        info = ml_dtypes.finfo(dtype)
        mantissa_bits, minimum_exponent = int(info.nmant), int(info.minexp)
        bias = 1 - minimum_exponent
        special = np.array([np.nan, np.inf], np.float32).astype(dtype).view(np.uint8).astype(np.int64)
        f = Value(x.name, x.shape, np.dtype(np.float32))
        bits = self.bitcast(f, np.int32)
        sign = self.arith("arith.andi", self.arith("arith.shrui", bits, self.const_like(24, bits)),
                          self.const_like(0x80, bits))
        exponent = self.arith("arith.andi", self.arith("arith.shrui", bits, self.const_like(23, bits)),
                              self.const_like(0xFF, bits))
        biased = self.arith("arith.addi", exponent, self.const_like(bias - 127, bits))
        mantissa = self.arith("arith.shrui", self.arith("arith.andi", bits, self.const_like(0x7FFFFF, bits)),
                              self.const_like(23 - mantissa_bits, bits))
        normal = self.arith("arith.ori", self.arith("arith.shli", biased, self.const_like(mantissa_bits, bits)),
                            mantissa)
        magnitude = self.arith("math.absf", f)
        quantum = self.const_like(2.0 ** (minimum_exponent - mantissa_bits), f)
        subnormal = self.emit.op(
            f"arith.fptosi {self.arith('arith.divf', magnitude, quantum).name} : {f.type} to {bits.type}",
            f.shape, np.int32)
        tiny = self.cmp("cmpf", "olt", magnitude, self.const_like(float(info.tiny), f))
        encoded = self.arith("arith.ori", sign, self.pick(tiny, subnormal, normal))
        if dtype.name.endswith("fnuz"):
            # No negative zero: a zero is 0x00 whatever its sign.
            zero = self.cmp("cmpf", "oeq", magnitude, self.const_like(0.0, f))
            encoded = self.pick(zero, self.const_like(0, bits), encoded)
        if ml_dtypes.finfo(dtype).bits == 8 and np.isinf(np.float32(np.inf).astype(dtype)):
            infinite = self.cmp("cmpf", "oeq", magnitude, self.const_like(float("inf"), f))
            encoded = self.pick(infinite, self.arith("arith.ori", sign, self.const_like(int(special[1]), bits)),
                                encoded)
        nan = self.cmp("cmpf", "uno", f, f)
        encoded = self.pick(nan, self.const_like(int(special[0]), bits), encoded)
        narrow = np.dtype(np.uint8)
        return self.emit.op(f"arith.trunci {encoded.name} : {encoded.type} to {tensor_type(x.shape, narrow)}",
                            x.shape, narrow)

    def float8_from_bits(self, bits: Value, dtype) -> Value:
        """The 8-bit float values (held in f32) uint8 `bits` encode: a
        256-entry table of the type's values, read at each element."""
        from tessel.jax._gather import generic_by_position

        dtype = np.dtype(dtype)
        table = self.emit.dense(np.arange(256, dtype=np.uint8).view(dtype).astype(np.float32))
        emit = self.emit

        def value_of(byte: str) -> str:
            index = emit.assign(f"arith.index_castui {byte} : i8 to index")
            return emit.assign(f"tensor.extract {table.name}[{index}] : {table.type}")

        if not bits.shape:
            # A scalar (an SMEM element): no tensor to build.
            return Value(value_of(bits.name), (), dtype)

        def element_at(positions):
            return value_of(emit.assign(f"tensor.extract {bits.name}[{', '.join(positions)}] : {bits.type}"))

        value = generic_by_position(emit, bits.shape, np.float32, element_at)
        return Value(value.name, bits.shape, dtype)

    def container_bits(self, x: Value) -> Value:
        """`x`'s bits as an unsigned integer of its container's width: a
        sub-byte value's own bits only, zero-extended over its byte."""
        if sub_byte(x.dtype):
            return self.bitcast(self.sub_byte_bits(x, extend_sign=False), np.uint8)
        return self.bitcast(x, np.dtype(f"uint{bit_width(x.dtype)}"))

    def bitcast_to_narrower(self, x: Value, dtype) -> Value:
        """Each element's bits as a new last dim of narrower elements, the
        least significant first (XLA's order). A sub-byte result holds its
        field in the low bits of its byte (the walk sign-extends it)."""
        source, target = bit_width(x.dtype), bit_width(dtype)
        count, narrow = source // target, np.dtype(f"uint{max(target, 8)}")
        bits = self.container_bits(x)
        parts = []
        for k in range(count):
            part = self.arith("arith.shrui", bits, self.const_like(k * target, bits)) if k else bits
            if element(part.dtype) != element(narrow):
                part = self.emit.op(f"arith.trunci {part.name} : {part.type} to {tensor_type(x.shape, narrow)}",
                                    x.shape, narrow)
            parts.append(self.reshape(part, x.shape + (1,)))
        packed = self.concatenate(parts, len(x.shape), x.shape + (count,), narrow)
        return self.bitcast(packed, dtype)

    def bitcast_to_wider(self, x: Value, dtype) -> Value:
        """The last dim's narrow elements joined into one wider element
        each, the first the least significant."""
        source, target = bit_width(x.dtype), bit_width(dtype)
        count, wide = target // source, np.dtype(f"uint{max(target, 8)}")
        shape = x.shape[:-1]
        joined = None
        for k in range(count):
            part = self.container_bits(self.reshape(self.extract_slice(x, [0] * (len(shape)) + [k], shape + (1,)),
                                                    shape))
            if element(part.dtype) != element(wide):
                part = self.emit.op(f"arith.extui {part.name} : {part.type} to {tensor_type(shape, wide)}", shape,
                                    wide)
            if k:
                part = self.arith("arith.shli", part, self.const_like(k * source, part))
            joined = part if joined is None else self.arith("arith.ori", joined, part)
        return self.bitcast(joined, dtype)


@rule("sinh")
def sinh(ctx, x):
    tr = ctx.tr
    # (expm1(x) - expm1(-x)) / 2 keeps sinh's precision near zero.
    x, dtype = tr.float_operand(ctx.name, x)
    up = tr.arith("math.expm1", x)
    down = tr.arith("math.expm1", tr.arith("arith.negf", x))
    half = tr.const_like(0.5, x)
    near = tr.arith("arith.mulf", tr.arith("arith.subf", up, down), half)
    far, large = tr.near_overflow(x)
    return tr.convert(tr.pick(far, tr.arith("math.copysign", large, x), near), dtype)


@rule("cosh")
def cosh(ctx, x):
    tr = ctx.tr
    x, dtype = tr.float_operand(ctx.name, x)
    up = tr.arith("math.exp", x)
    down = tr.arith("math.exp", tr.arith("arith.negf", x))
    half = tr.const_like(0.5, x)
    near = tr.arith("arith.mulf", tr.arith("arith.addf", up, down), half)
    far, large = tr.near_overflow(x)
    return tr.convert(tr.pick(far, large, near), dtype)


@rule("asinh")
def asinh(ctx, x):
    tr = ctx.tr
    # sign(x) * log1p(|x| + x^2 / (1 + sqrt(1 + x^2))); past 2^60,
    # x^2 would overflow and asinh(|x|) = log(|x|) + log(2).
    x, dtype = tr.float_operand(ctx.name, x)
    one = tr.const_like(1.0, x)
    magnitude = tr.arith("math.absf", x)
    square = tr.arith("arith.mulf", magnitude, magnitude)
    root = tr.arith("math.sqrt", tr.arith("arith.addf", one, square))
    near = tr.arith("math.log1p", tr.arith(
        "arith.addf", magnitude, tr.arith("arith.divf", square, tr.arith("arith.addf", one, root))))
    far = tr.arith("arith.addf", tr.arith("math.log", magnitude), tr.const_like(float(np.log(2.0)), x))
    large = tr.cmp("cmpf", "ogt", magnitude, tr.const_like(2.0**60, x))
    result = tr.arith("math.copysign", tr.pick(large, far, near), x)
    return tr.convert(result, dtype)


@rule("acosh")
def acosh(ctx, x):
    tr = ctx.tr
    # log1p(t + sqrt(t) * sqrt(t + 2)) with t = x - 1 (NaN below 1);
    # past 2^60, log(x) + log(2).
    x, dtype = tr.float_operand(ctx.name, x)
    t = tr.arith("arith.subf", x, tr.const_like(1.0, x))
    root = tr.arith("arith.mulf", tr.arith("math.sqrt", t),
                      tr.arith("math.sqrt", tr.arith("arith.addf", t, tr.const_like(2.0, x))))
    near = tr.arith("math.log1p", tr.arith("arith.addf", t, root))
    far = tr.arith("arith.addf", tr.arith("math.log", x), tr.const_like(float(np.log(2.0)), x))
    large = tr.cmp("cmpf", "ogt", x, tr.const_like(2.0**60, x))
    return tr.convert(tr.pick(large, far, near), dtype)


@rule("atanh")
def atanh(ctx, x):
    tr = ctx.tr
    # sign(x) log1p(2|x| / (1 - |x|)) / 2: 1 - |x| is exact near 1 and
    # the ratio never cancels against the 1 in log1p; NaN past ±1, ±inf
    # at ±1.
    x, dtype = tr.float_operand(ctx.name, x)
    magnitude = tr.arith("math.absf", x)
    ratio = tr.arith("arith.divf", tr.arith("arith.addf", magnitude, magnitude),
                       tr.arith("arith.subf", tr.const_like(1.0, x), magnitude))
    result = tr.arith("arith.mulf", tr.arith("math.log1p", ratio), tr.const_like(0.5, x))
    return tr.convert(tr.arith("math.copysign", result, x), dtype)


@rule("asin")
def asin(ctx, x):
    tr = ctx.tr
    x, dtype = tr.float_operand(ctx.name, x)
    return tr.convert(tr.arith("math.atan2", x, tr.cosine_side(x)), dtype)


@rule("acos")
def acos(ctx, x):
    tr = ctx.tr
    x, dtype = tr.float_operand(ctx.name, x)
    return tr.convert(tr.arith("math.atan2", tr.cosine_side(x), x), dtype)


@rule("atan")
def atan(ctx, x):
    tr = ctx.tr
    x, dtype = tr.float_operand(ctx.name, x)
    return tr.convert(tr.arith("math.atan2", x, tr.const_like(1.0, x)), dtype)


@rule("erf_inv")
def erf_inv(ctx, x):
    """XLA's expansion: a degree-8 polynomial in w = -log1p(-x^2)
    (shifted, or its square root for the tails); ±inf at ±1."""
    tr = ctx.tr
    x, dtype = tr.float_operand(ctx.name, x)
    w = tr.arith("arith.negf", tr.arith("math.log1p", tr.arith(
        "arith.mulf", x, tr.arith("arith.negf", x))))
    small = tr.cmp("cmpf", "olt", w, tr.const_like(5.0, x))
    w = tr.pick(small, tr.arith("arith.subf", w, tr.const_like(2.5, x)),
                  tr.arith("arith.subf", tr.arith("math.sqrt", w), tr.const_like(3.0, x)))

    def coefficient(i):
        return tr.pick(small, tr.const_like(ERF_INV_SMALL[i], x), tr.const_like(ERF_INV_LARGE[i], x))

    p = coefficient(0)
    for i in range(1, len(ERF_INV_SMALL)):
        p = tr.arith("arith.addf", coefficient(i), tr.arith("arith.mulf", p, w))
    result = tr.arith("arith.mulf", p, x)
    edge = tr.cmp("cmpf", "oeq", tr.arith("math.absf", x), tr.const_like(1.0, x))
    infinite = tr.arith("arith.mulf", x, tr.const_like(float("inf"), x))
    return tr.convert(tr.pick(edge, infinite, result), dtype)


@rule("nextafter")
def nextafter(ctx, x, y):
    """The float after `x` towards `y`, by stepping x's bit pattern (as
    XLA does): `y` when equal, the smallest subnormal signed like `y`
    from zero, NaN when either is NaN."""
    tr = ctx.tr
    shape = ctx.out_shape
    x, y = tr.splat(x, shape), tr.splat(y, shape)
    if not is_float(x.dtype):
        ctx.fail(f"'nextafter' on {x.dtype}")
    bits = np.dtype(f"int{8 * x.dtype.itemsize}")
    xi, yi = tr.bitcast(x, bits), tr.bitcast(y, bits)
    sign = tr.const_like(-(1 << (8 * bits.itemsize - 1)), xi)
    magnitude_mask = tr.const_like((1 << (8 * bits.itemsize - 1)) - 1, xi)
    x_abs, y_abs = tr.arith("arith.andi", xi, magnitude_mask), tr.arith("arith.andi", yi, magnitude_mask)
    x_sign, y_sign = tr.arith("arith.andi", xi, sign), tr.arith("arith.andi", yi, sign)
    zero, one = tr.const_like(0, xi), tr.const_like(1, xi)
    shrink = tr.arith("arith.ori", tr.cmp("cmpi", "sgt", x_abs, y_abs), tr.cmp("cmpi", "ne", x_sign, y_sign))
    stepped = tr.arith("arith.addi", xi, tr.pick(shrink, tr.const_like(-1, xi), one))
    from_zero = tr.pick(tr.cmp("cmpi", "eq", y_abs, zero), yi, tr.arith("arith.ori", y_sign, one))
    result = tr.pick(tr.cmp("cmpi", "eq", x_abs, zero), from_zero, stepped)
    result = tr.pick(tr.cmp("cmpi", "eq", xi, yi), yi, result)
    nan = tr.arith("arith.ori", tr.cmp("cmpf", "uno", x, x), tr.cmp("cmpf", "uno", y, y))
    quiet_nan = tr.bitcast(tr.const_like(float("nan"), x), bits)
    return tr.bitcast(tr.pick(nan, quiet_nan, result), x.dtype)


@rule("bitcast_convert_type")
def bitcast_convert_type(ctx, x):
    tr = ctx.tr
    dtype = np.dtype(ctx.params["new_dtype"])
    if is_float8(dtype):
        # The bits as uint8 first, then the value they encode.
        as_bits = tr.bitcast_value(x, np.dtype(np.uint8)) if not is_float8(x.dtype) else tr.float8_bits(x)
        return tr.float8_from_bits(as_bits, dtype)
    if is_float8(x.dtype):
        x = tr.float8_bits(x)
    return tr.bitcast_value(x, dtype)


@rule("bitcast")
def pltpu_bitcast(ctx, x):
    """`pltpu.bitcast`: Mosaic's bitcast packs and unpacks along the
    second-minor dim."""
    return ctx.tr.tpu_bitcast(x, np.dtype(ctx.params["ty"]))


@rule("population_count")
def population_count(ctx, x):
    tr = ctx.tr
    if sub_byte(x.dtype):
        # The narrow type's own bits. (XLA's CPU code counts an int4's
        # sign-extended byte, 5 for -8, but an int2's own two bits.)
        return tr.arith("math.ctpop", tr.sub_byte_bits(x, extend_sign=False))
    return tr.arith("math.ctpop", x)


@rule("clz")
def clz(ctx, x):
    tr = ctx.tr
    if sub_byte(x.dtype):
        # Leading zeros of the narrow type's bits, not of its container.
        bits, _ = sub_byte(x.dtype)
        leading = tr.arith("math.ctlz", tr.sub_byte_bits(x, extend_sign=False))
        return tr.arith("arith.subi", leading, tr.const_like(8 - bits, x))
    return tr.arith("math.ctlz", x)
