"""MLIR text for the kernel translator: values, types, constants, locations."""

from __future__ import annotations

import dataclasses
import math

import jax
import ml_dtypes
import numpy as np
from jax._src import core as jax_core

# Integer types narrower than a byte: (bits, signed). Kernels keep them in
# an 8-bit container whose value is always in the narrow type's range
# (`KernelTranslator.fit_sub_byte`); the call widens them to 8 bits on the
# way in and narrows them on the way out, in XLA.
SUB_BYTE = {"int4": (4, True), "uint4": (4, False), "int2": (2, True), "uint2": (2, False)}


# 8-bit floats kernels compute on in f32 containers, each result rounded
# to its type (`KernelTranslator.fit_float8`); the call widens them to f32
# and narrows the results (exactly) in XLA.
FLOAT8 = ("float8_e4m3fn", "float8_e5m2", "float8_e4m3b11fnuz", "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e4m3",
          "float8_e3m4")


def physical(aval):
    """`aval` as kernels and XLA hold it: JAX's extended dtypes as their
    physical data — typed PRNG keys as uint32 (the key's shape trailing,
    as Mosaic physicalizes them), semaphores (a call's results, waited on
    by a later call) as int32 counts."""
    if jax.dtypes.issubdtype(getattr(aval, "dtype", None), jax.dtypes.extended):
        return jax_core.physical_aval(aval)
    return aval


class Unsupported(NotImplementedError):
    """A JAX construct Tessel cannot translate (raised with the user's line)."""


class ScalarWrite(Exception):
    """A kernel writes the scalar-prefetch operand `index`: translated again
    with that operand as a per-worker copy (never leaves `tessel.jax`)."""

    def __init__(self, index: int):
        super().__init__(index)
        self.index = index


def element(dtype) -> str:
    """The signless MLIR element type kernels use for a numpy/JAX dtype."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return "i1"
    if dtype.name == "bfloat16":
        return "bf16"
    if dtype.kind == "f" and dtype.name in ("float16", "float32", "float64"):
        return {2: "f16", 4: "f32", 8: "f64"}[dtype.itemsize]
    if dtype.name in SUB_BYTE:
        return "i8"
    if dtype.name in FLOAT8:
        return "f32"
    if dtype.kind in "iu" and dtype.name in ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                                              "uint64"):
        return f"i{8 * dtype.itemsize}"
    raise Unsupported(f"dtype {dtype} is not supported by Tessel")


def entry_element(dtype) -> str:
    """The element type of an entry function's array (unsigned kept)."""
    dtype = np.dtype(dtype)
    if dtype.kind == "u" or dtype.name in ("uint4", "uint2"):
        return f"ui{8 * dtype.itemsize}"
    return element(dtype)


def is_float(dtype) -> bool:
    dtype = np.dtype(dtype)
    return dtype.kind == "f" or dtype.name == "bfloat16" or dtype.name in FLOAT8


def is_float8(dtype) -> bool:
    return np.dtype(dtype).name in FLOAT8


def is_unsigned(dtype) -> bool:
    dtype = np.dtype(dtype)
    return dtype.kind == "u" or dtype == np.bool_ or dtype.name in ("uint4", "uint2")


def sub_byte(dtype) -> tuple[int, bool] | None:
    """(bits, signed) of an integer type narrower than a byte, else None."""
    return SUB_BYTE.get(np.dtype(dtype).name)


def bit_width(dtype) -> int:
    """Bits of one element (a sub-byte type's own, not its container's)."""
    narrow = sub_byte(dtype)
    return narrow[0] if narrow else 8 * np.dtype(dtype).itemsize


def integer_range(dtype) -> tuple[int, int]:
    """The smallest and largest value of an integer type (sub-byte ones too)."""
    info = ml_dtypes.iinfo(np.dtype(dtype))
    return int(info.min), int(info.max)


def tensor_type(shape, dtype) -> str:
    """A block value's type: a scalar for rank 0, else a tensor."""
    if len(shape) == 0:
        return element(dtype)
    return f"tensor<{'x'.join(map(str, shape))}x{element(dtype)}>"


def memref_type(shape, dtype, entry: bool = False) -> str:
    elem = entry_element(dtype) if entry else element(dtype)
    if len(shape) == 0:
        return f"memref<{elem}>"
    return f"memref<{'x'.join(map(str, shape))}x{elem}>"


@dataclasses.dataclass(frozen=True)
class Value:
    """An SSA value: a block (tensor), a scalar, or a ref (memref)."""

    name: str
    shape: tuple
    dtype: np.dtype
    ref: bool = False

    @property
    def type(self) -> str:
        return memref_type(self.shape, self.dtype) if self.ref else tensor_type(self.shape, self.dtype)


# The bits of a non-finite float literal are written in the MLIR element
# type's own width: an 8-bit float's container is f32 (its infinities and
# NaNs are f32's there), so the dtype's own width would be the wrong one.
_CONTAINER_BITS = {"f16": np.uint16, "bf16": np.uint16, "f32": np.uint32, "f64": np.uint64}
_CONTAINER_FLOAT = {"f16": np.float16, "f32": np.float32, "f64": np.float64}


def float_literal(value, dtype) -> str:
    value = float(value)
    if math.isfinite(value):
        return f"{value:.17e}"
    elem = element(dtype)
    if elem == "bf16":
        bits = int(np.array(value, np.float32).view(np.uint32)) >> 16
        return f"0x{bits:04X}"
    bits = int(np.array(value, _CONTAINER_FLOAT[elem]).view(_CONTAINER_BITS[elem]))
    return f"0x{bits:X}"


def scalar_literal(value, dtype) -> str:
    if is_float(dtype):
        return float_literal(value, dtype)
    if np.dtype(dtype) == np.bool_:
        return "true" if bool(value) else "false"
    value = int(value)
    if is_unsigned(dtype):
        # Signless: the bit pattern as a signed number.
        bits = 8 * np.dtype(dtype).itemsize
        if value >= 1 << (bits - 1):
            value -= 1 << bits
    return str(value)


def location(frame) -> str:
    if frame is None:
        return "loc(unknown)"
    name = frame.file_name.replace("\\", "\\\\").replace('"', '\\"')
    return f'loc("{name}":{frame.start_line}:{max(frame.start_column, 0) + 1})'


class Emitter:
    """Collects a function's lines with fresh SSA names and locations."""

    def __init__(self):
        self.lines: list[str] = []
        self.depth = 1
        self.counter = 0
        self.loc = "loc(unknown)"
        self.where = "<unknown>"

    def fresh(self) -> str:
        self.counter += 1
        return f"%v{self.counter}"

    def line(self, text: str, located: bool = True) -> None:
        suffix = f" {self.loc}" if located else ""
        self.lines.append("  " * self.depth + text + suffix)

    def assign(self, text: str) -> str:
        """A fresh SSA name bound to the op `text` (its name alone)."""
        name = self.fresh()
        self.line(f"{name} = {text}")
        return name

    def op(self, text: str, shape, dtype) -> Value:
        name = self.fresh()
        self.line(f"{name} = {text}")
        return Value(name, tuple(shape), np.dtype(dtype))

    def constant(self, value, dtype) -> Value:
        literal = scalar_literal(value, dtype)
        # `true`/`false` are typed (i1) attributes already.
        typed = literal if np.dtype(dtype) == np.bool_ else f"{literal} : {element(dtype)}"
        return self.op(f"arith.constant {typed}", (), dtype)

    def index(self, value: int) -> str:
        name = self.fresh()
        self.line(f"{name} = arith.constant {int(value)} : index")
        return name

    def clamp_index(self, position: str, last: int) -> str:
        """The index `position` clamped into [0, last]."""
        low, high = self.fresh(), self.fresh()
        self.line(f"{low} = arith.maxsi {position}, {self.index(0)} : index")
        self.line(f"{high} = arith.minsi {low}, {self.index(last)} : index")
        return high

    def index_within(self, position: str, last: int, also: str | None = None) -> str:
        """The i1 0 <= position <= last (and `also`, an i1, when given)."""
        above, below, both = self.fresh(), self.fresh(), self.fresh()
        self.line(f"{above} = arith.cmpi sge, {position}, {self.index(0)} : index")
        self.line(f"{below} = arith.cmpi sle, {position}, {self.index(last)} : index")
        self.line(f"{both} = arith.andi {above}, {below} : i1")
        if also is None:
            return both
        joined = self.fresh()
        self.line(f"{joined} = arith.andi {also}, {both} : i1")
        return joined

    def dense(self, array: np.ndarray) -> Value:
        array = np.asarray(array)
        if array.ndim == 0:
            return self.constant(array.item(), array.dtype)
        if array.size and np.all(array == array.flat[0]):
            body = scalar_literal(array.flat[0], array.dtype)
        else:
            body = "[" + ", ".join(scalar_literal(v, array.dtype) for v in array.flat) + "]"
            if array.ndim > 1:
                raise Unsupported("constant arrays of rank above 1 in kernels")
        type_text = tensor_type(array.shape, array.dtype)
        return self.op(f"arith.constant dense<{body}> : {type_text}", array.shape, array.dtype)
