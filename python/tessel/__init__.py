"""Tessel: Pallas-style block kernels compiled with MLIR to native code.

``tessel.compile`` compiles a module written in Tessel's ``grid``/``block``
dialects (text or a ``.mlir`` path) for this machine's CPU, in process; the
result's entries are called on numpy arrays (or DLPack objects), in place::

    module = tessel.compile(open("examples/matmul.mlir").read())
    module.matmul(x, y, z)          # z is written

``tessel.jax.install()`` makes every CPU ``pallas_call`` under ``jax.jit``
run as Tessel-compiled code.
"""

from __future__ import annotations

import json
import os
from typing import Any

import numpy as np

from tessel import _tessel
from tessel._errors import CompileError

__all__ = ["CompileError", "Module", "compile", "knob_names", "tune"]

# MLIR element types and the numpy dtypes that hold them.
_DTYPES = {
    "f16": np.dtype(np.float16),
    "f32": np.dtype(np.float32),
    "f64": np.dtype(np.float64),
    "i1": np.dtype(np.bool_),
    "i8": np.dtype(np.int8),
    "i16": np.dtype(np.int16),
    "i32": np.dtype(np.int32),
    "i64": np.dtype(np.int64),
    "ui8": np.dtype(np.uint8),
    "ui16": np.dtype(np.uint16),
    "ui32": np.dtype(np.uint32),
    "ui64": np.dtype(np.uint64),
    "index": np.dtype(np.int64),
}


def _dtype_of(element: str) -> np.dtype:
    if element == "bf16":
        import ml_dtypes  # shipped with jax; bf16 arrays need it

        return np.dtype(ml_dtypes.bfloat16)
    return _DTYPES[element]


class Entry:
    """A callable function of a compiled module: ``entry(*arrays)``.

    Every argument is an array of the function's element type and shape,
    C-contiguous and writable; the call works on it in place (outputs are
    written into the arrays given). Returns ``None``.
    """

    def __init__(self, native: Any, name: str, arguments: list[tuple[str, list[int]]]):
        self._native = native
        self.name = name
        self.arguments = [(element, tuple(shape)) for element, shape in arguments]

    def __repr__(self) -> str:
        args = ", ".join(f"{e}[{','.join(map(str, s))}]" for e, s in self.arguments)
        return f"<tessel entry @{self.name}({args})>"

    def __call__(self, *arrays: Any) -> None:
        if len(arrays) != len(self.arguments):
            raise TypeError(f"@{self.name} takes {len(self.arguments)} arrays, got {len(arrays)}")
        checked = [self._check(index, array) for index, array in enumerate(arrays)]
        self._native.call_addresses(self.name, [array.ctypes.data for array in checked])

    def _check(self, index: int, array: Any) -> np.ndarray:
        element, shape = self.arguments[index]
        if not isinstance(array, np.ndarray):
            if hasattr(array, "__dlpack__"):
                array = np.from_dlpack(array)
            else:
                raise TypeError(
                    f"argument {index} of @{self.name} must be a numpy array or a DLPack object, "
                    f"got {type(array).__name__}"
                )
        expected = _dtype_of(element)
        if array.dtype != expected:
            raise TypeError(
                f"argument {index} of @{self.name} must have dtype {expected} ({element}), got {array.dtype}")
        if array.shape != shape:
            raise ValueError(f"argument {index} of @{self.name} must have shape {shape}, got {array.shape}")
        if not array.flags.c_contiguous:
            raise ValueError(f"argument {index} of @{self.name} must be C-contiguous (use np.ascontiguousarray)")
        if not array.flags.writeable:
            raise ValueError(f"argument {index} of @{self.name} must be writable: entries work in place")
        return array


class Module:
    """A module compiled for this CPU. Its entries (public functions that
    are not kernels) are attributes: ``module.matmul(x, y, z)``."""

    def __init__(self, native: Any):
        self._native = native
        self.entries = {name: Entry(native, name, arguments) for name, arguments in native.signatures()}

    def __getattr__(self, name: str) -> Entry:
        entries = self.__dict__.get("entries", {})
        if name in entries:
            return entries[name]
        raise AttributeError(f"the module has no entry @{name}; its entries are {sorted(entries)}")

    def __getitem__(self, name: str) -> Entry:
        return self.entries[name]

    def __dir__(self) -> list[str]:
        return sorted(set(super().__dir__()) | set(self.entries))


def _read(source: str | os.PathLike) -> tuple[str, str]:
    """(text, name for diagnostics) of MLIR text or a ``.mlir`` path."""
    if isinstance(source, os.PathLike) or (isinstance(source, str) and "\n" not in source and source.endswith(".mlir")):
        path = os.fspath(source)
        with open(path, encoding="utf-8") as file:
            return file.read(), path
    if isinstance(source, str):
        return source, "<string>"
    raise TypeError(f"source must be MLIR text or a path, got {type(source).__name__}")


def compile(source: str | os.PathLike, target: str = "cpu", **knobs: Any) -> Module:
    """Compiles a Tessel module for this machine's CPU.

    ``source`` is MLIR text or the path of a ``.mlir`` file. ``knobs`` are
    the schedule knobs of ``tessel run`` with underscores
    (``register_tile=(4, 16)``, ``num_threads=2``, ``k_chunk=64``...;
    ``knob_names()`` lists them); unset knobs take the schedule
    ``tessel tune`` cached for this module, else the defaults. Every
    schedule computes the same results.

    Raises ``CompileError`` with located diagnostics when the module does
    not compile, ``ValueError`` for unknown knobs or targets.
    """
    if target != "cpu":
        raise ValueError(f"target {target!r}: tessel.compile builds for the host CPU ('cpu') only")
    text, name = _read(source)
    return Module(_tessel.compile(text, name, knobs))


def tune(source: str | os.PathLike, entry: str, *, budget: float = 40.0, beam: int = 4, use_cache: bool = True,
         compile_timeout: float = 60.0) -> dict:
    """Searches ``entry``'s CPU schedule by measurement, as ``tessel tune``
    does: a BEAM search (``beam`` schedules kept per round) timed on random
    inputs within ``budget`` seconds (the default schedule is always
    measured), candidates compiling longer than ``compile_timeout`` dropped.
    The winner goes to Tessel's cache (``$TESSEL_CACHE_DIR``, else
    ``~/.cache/tessel``), which ``compile`` (without knobs), ``tessel run``
    and ``tessel compile`` then use; a cached answer is returned at once
    unless ``use_cache=False``.

    Returns ``tessel tune``'s JSON line as a dict: ``default_s``,
    ``best_s``, ``candidates``, ``cached`` and ``best`` (the knobs, under
    the CLI's names). Raises ``CompileError`` when the module does not
    compile, ``ValueError`` for an unknown entry or bad options,
    ``RuntimeError`` when the default schedule cannot run.
    """
    text, name = _read(source)
    if isinstance(beam, bool) or not isinstance(beam, int) or beam < 1:
        raise ValueError(f"beam must be a positive integer, got {beam!r}")
    line = _tessel.tune(text, name, entry, (float(budget), beam, bool(use_cache), float(compile_timeout)))
    return json.loads(line)


def knob_names() -> list[str]:
    """The schedule knobs ``compile`` accepts."""
    return list(_tessel.knob_names())
