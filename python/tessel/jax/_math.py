"""Kernel rules for element-wise math without a single MLIR op: inverse
and hyperbolic trigonometry, `erf_inv`, `nextafter`, bit casts and bit
counts. Each expands into ops Tessel lowers everywhere (exp, log1p, atan2,
integer bit operations), as numerically careful as XLA's own expansions:
`nextafter` and the bit operations are exact, the rest within a few ulps.
A mixin of `KernelTranslator`."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from tessel.jax._emit import Value, bit_width, element, is_float, is_float8, sub_byte, tensor_type

# XLA's single-precision erf_inv polynomial (Giles, "Approximating the
# erfinv function"): coefficients for w < 5 and for w >= 5.
ERF_INV_SMALL = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
                 -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)
ERF_INV_LARGE = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
                 -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)


class MathRules:
    # ----- helpers ------------------------------------------------------
    def float_operand(self, eqn, env) -> tuple[Value, np.dtype]:
        """The operand, widened to f32 when narrower (as XLA computes
        16-bit float math), and its own dtype to round back to."""
        (x,) = [self.read(env, a) for a in eqn.invars]
        if not is_float(x.dtype):
            self.fail(f"'{eqn.primitive.name}' on {x.dtype}")
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

    def rule_sinh(self, eqn, env):
        # (expm1(x) - expm1(-x)) / 2 keeps sinh's precision near zero.
        x, dtype = self.float_operand(eqn, env)
        up = self.arith("math.expm1", x)
        down = self.arith("math.expm1", self.arith("arith.negf", x))
        half = self.const_like(0.5, x)
        near = self.arith("arith.mulf", self.arith("arith.subf", up, down), half)
        far, large = self.near_overflow(x)
        return [self.convert(self.pick(far, self.arith("math.copysign", large, x), near), dtype)]

    def rule_cosh(self, eqn, env):
        x, dtype = self.float_operand(eqn, env)
        up = self.arith("math.exp", x)
        down = self.arith("math.exp", self.arith("arith.negf", x))
        half = self.const_like(0.5, x)
        near = self.arith("arith.mulf", self.arith("arith.addf", up, down), half)
        far, large = self.near_overflow(x)
        return [self.convert(self.pick(far, large, near), dtype)]

    def rule_asinh(self, eqn, env):
        # sign(x) * log1p(|x| + x^2 / (1 + sqrt(1 + x^2))); past 2^60,
        # x^2 would overflow and asinh(|x|) = log(|x|) + log(2).
        x, dtype = self.float_operand(eqn, env)
        one = self.const_like(1.0, x)
        magnitude = self.arith("math.absf", x)
        square = self.arith("arith.mulf", magnitude, magnitude)
        root = self.arith("math.sqrt", self.arith("arith.addf", one, square))
        near = self.arith("math.log1p", self.arith(
            "arith.addf", magnitude, self.arith("arith.divf", square, self.arith("arith.addf", one, root))))
        far = self.arith("arith.addf", self.arith("math.log", magnitude), self.const_like(float(np.log(2.0)), x))
        large = self.cmp("cmpf", "ogt", magnitude, self.const_like(2.0**60, x))
        result = self.arith("math.copysign", self.pick(large, far, near), x)
        return [self.convert(result, dtype)]

    def rule_acosh(self, eqn, env):
        # log1p(t + sqrt(t) * sqrt(t + 2)) with t = x - 1 (NaN below 1);
        # past 2^60, log(x) + log(2).
        x, dtype = self.float_operand(eqn, env)
        t = self.arith("arith.subf", x, self.const_like(1.0, x))
        root = self.arith("arith.mulf", self.arith("math.sqrt", t),
                          self.arith("math.sqrt", self.arith("arith.addf", t, self.const_like(2.0, x))))
        near = self.arith("math.log1p", self.arith("arith.addf", t, root))
        far = self.arith("arith.addf", self.arith("math.log", x), self.const_like(float(np.log(2.0)), x))
        large = self.cmp("cmpf", "ogt", x, self.const_like(2.0**60, x))
        return [self.convert(self.pick(large, far, near), dtype)]

    def rule_atanh(self, eqn, env):
        # sign(x) log1p(2|x| / (1 - |x|)) / 2: 1 - |x| is exact near 1 and
        # the ratio never cancels against the 1 in log1p; NaN past ±1, ±inf
        # at ±1.
        x, dtype = self.float_operand(eqn, env)
        magnitude = self.arith("math.absf", x)
        ratio = self.arith("arith.divf", self.arith("arith.addf", magnitude, magnitude),
                           self.arith("arith.subf", self.const_like(1.0, x), magnitude))
        result = self.arith("arith.mulf", self.arith("math.log1p", ratio), self.const_like(0.5, x))
        return [self.convert(self.arith("math.copysign", result, x), dtype)]

    def cosine_side(self, x: Value) -> Value:
        """sqrt((1 - x)(1 + x)): sqrt(1 - x^2) without cancellation."""
        one = self.const_like(1.0, x)
        return self.arith("math.sqrt", self.arith("arith.mulf", self.arith("arith.subf", one, x),
                                                  self.arith("arith.addf", one, x)))

    def rule_asin(self, eqn, env):
        x, dtype = self.float_operand(eqn, env)
        return [self.convert(self.arith("math.atan2", x, self.cosine_side(x)), dtype)]

    def rule_acos(self, eqn, env):
        x, dtype = self.float_operand(eqn, env)
        return [self.convert(self.arith("math.atan2", self.cosine_side(x), x), dtype)]

    def rule_atan(self, eqn, env):
        x, dtype = self.float_operand(eqn, env)
        return [self.convert(self.arith("math.atan2", x, self.const_like(1.0, x)), dtype)]

    def rule_erf_inv(self, eqn, env):
        """XLA's expansion: a degree-8 polynomial in w = -log1p(-x^2)
        (shifted, or its square root for the tails); ±inf at ±1."""
        x, dtype = self.float_operand(eqn, env)
        w = self.arith("arith.negf", self.arith("math.log1p", self.arith(
            "arith.mulf", x, self.arith("arith.negf", x))))
        small = self.cmp("cmpf", "olt", w, self.const_like(5.0, x))
        w = self.pick(small, self.arith("arith.subf", w, self.const_like(2.5, x)),
                      self.arith("arith.subf", self.arith("math.sqrt", w), self.const_like(3.0, x)))

        def coefficient(i):
            return self.pick(small, self.const_like(ERF_INV_SMALL[i], x), self.const_like(ERF_INV_LARGE[i], x))

        p = coefficient(0)
        for i in range(1, len(ERF_INV_SMALL)):
            p = self.arith("arith.addf", coefficient(i), self.arith("arith.mulf", p, w))
        result = self.arith("arith.mulf", p, x)
        edge = self.cmp("cmpf", "oeq", self.arith("math.absf", x), self.const_like(1.0, x))
        infinite = self.arith("arith.mulf", x, self.const_like(float("inf"), x))
        return [self.convert(self.pick(edge, infinite, result), dtype)]

    # ----- exact bit-level operations ----------------------------------
    def rule_nextafter(self, eqn, env):
        """The float after `x` towards `y`, by stepping x's bit pattern (as
        XLA does): `y` when equal, the smallest subnormal signed like `y`
        from zero, NaN when either is NaN."""
        shape = tuple(eqn.outvars[0].aval.shape)
        x, y = [self.splat(self.read(env, a), shape) for a in eqn.invars]
        if not is_float(x.dtype):
            self.fail(f"'nextafter' on {x.dtype}")
        bits = np.dtype(f"int{8 * x.dtype.itemsize}")
        xi, yi = self.bitcast(x, bits), self.bitcast(y, bits)
        sign = self.const_like(-(1 << (8 * bits.itemsize - 1)), xi)
        magnitude_mask = self.const_like((1 << (8 * bits.itemsize - 1)) - 1, xi)
        x_abs, y_abs = self.arith("arith.andi", xi, magnitude_mask), self.arith("arith.andi", yi, magnitude_mask)
        x_sign, y_sign = self.arith("arith.andi", xi, sign), self.arith("arith.andi", yi, sign)
        zero, one = self.const_like(0, xi), self.const_like(1, xi)
        shrink = self.arith("arith.ori", self.cmp("cmpi", "sgt", x_abs, y_abs), self.cmp("cmpi", "ne", x_sign, y_sign))
        stepped = self.arith("arith.addi", xi, self.pick(shrink, self.const_like(-1, xi), one))
        from_zero = self.pick(self.cmp("cmpi", "eq", y_abs, zero), yi, self.arith("arith.ori", y_sign, one))
        result = self.pick(self.cmp("cmpi", "eq", x_abs, zero), from_zero, stepped)
        result = self.pick(self.cmp("cmpi", "eq", xi, yi), yi, result)
        nan = self.arith("arith.ori", self.cmp("cmpf", "uno", x, x), self.cmp("cmpf", "uno", y, y))
        quiet_nan = self.bitcast(self.const_like(float("nan"), x), bits)
        return [self.bitcast(self.pick(nan, quiet_nan, result), x.dtype)]

    def rule_bitcast_convert_type(self, eqn, env):
        (x,) = [self.read(env, a) for a in eqn.invars]
        dtype = np.dtype(eqn.params["new_dtype"])
        if is_float8(x.dtype) or is_float8(dtype):
            self.fail(f"bitcast_convert_type from {x.dtype} to {dtype} (8-bit floats compute in f32)")
        source, target = bit_width(x.dtype), bit_width(dtype)
        if np.bool_ in (x.dtype, dtype) or (source != target and (sub_byte(x.dtype) or sub_byte(dtype))):
            self.fail(f"bitcast_convert_type from {x.dtype} to {dtype}")
        if source == target:
            return [self.bitcast(x, dtype)]
        if source > target:
            return [self.bitcast_to_narrower(x, dtype)]
        return [self.bitcast_to_wider(x, dtype)]

    def bitcast_to_narrower(self, x: Value, dtype) -> Value:
        """Each element's bits as a new last dim of narrower elements, the
        least significant first (XLA's order)."""
        source, target = bit_width(x.dtype), bit_width(dtype)
        count, narrow = source // target, np.dtype(f"uint{target}")
        bits = self.bitcast(x, np.dtype(f"uint{source}"))
        parts = []
        for k in range(count):
            shifted = self.arith("arith.shrui", bits, self.const_like(k * target, bits)) if k else bits
            part = self.emit.op(f"arith.trunci {shifted.name} : {shifted.type} to {tensor_type(x.shape, narrow)}",
                                x.shape, narrow)
            parts.append(self.reshape(part, x.shape + (1,)))
        packed = self.concatenate(parts, len(x.shape), x.shape + (count,), narrow)
        return self.bitcast(packed, dtype)

    def bitcast_to_wider(self, x: Value, dtype) -> Value:
        """The last dim's narrow elements joined into one wider element
        each, the first the least significant."""
        source, target = bit_width(x.dtype), bit_width(dtype)
        count, wide = target // source, np.dtype(f"uint{target}")
        shape = x.shape[:-1]
        joined = None
        for k in range(count):
            part = self.reshape(self.extract_slice(x, [0] * (len(shape)) + [k], shape + (1,)), shape)
            part = self.bitcast(part, np.dtype(f"uint{source}"))
            part = self.emit.op(f"arith.extui {part.name} : {part.type} to {tensor_type(shape, wide)}", shape, wide)
            if k:
                part = self.arith("arith.shli", part, self.const_like(k * source, part))
            joined = part if joined is None else self.arith("arith.ori", joined, part)
        return self.bitcast(joined, dtype)

    def rule_bitcast(self, eqn, env):
        """`pltpu.bitcast`: Mosaic's bitcast packs and unpacks along the
        second-minor dim; translated as JAX's own lowering spells it."""
        (x,) = [self.read(env, a) for a in eqn.invars]
        dtype = np.dtype(eqn.params["ty"])
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

        return self.inline(jax.make_jaxpr(spelled)(jax.ShapeDtypeStruct(x.shape, x.dtype)), [x])

    def rule_population_count(self, eqn, env):
        (x,) = [self.read(env, a) for a in eqn.invars]
        if sub_byte(x.dtype):
            # The narrow type's own bits. (XLA's CPU code counts an int4's
            # sign-extended byte, 5 for -8, but an int2's own two bits.)
            return [self.arith("math.ctpop", self.sub_byte_bits(x, extend_sign=False))]
        return [self.arith("math.ctpop", x)]

    def rule_clz(self, eqn, env):
        (x,) = [self.read(env, a) for a in eqn.invars]
        if sub_byte(x.dtype):
            # Leading zeros of the narrow type's bits, not of its container.
            bits, _ = sub_byte(x.dtype)
            leading = self.arith("math.ctlz", self.sub_byte_bits(x, extend_sign=False))
            return [self.arith("arith.subi", leading, self.const_like(8 - bits, x))]
        return [self.arith("math.ctlz", x)]
