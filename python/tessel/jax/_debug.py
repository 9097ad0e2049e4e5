"""`pl.debug_print` (JAX's `debug_print` primitive) and
`pltpu.trace_value` in kernels.

Each print is a `block.print` whose site (`tessel.print_site`) indexes the
kernel's print specs: JAX's own parameters, kept here by kernel id. The
compiled kernel collects each line's values (ints and floats, widened);
after the call, the XLA handler hands them to `emit`, which rebuilds the
values in their dtypes and prints them with JAX's own formatting
(`sys.stdout`, as `jax.debug.print` does), in program order: a kernel that
prints runs its grid in order."""

from __future__ import annotations

import dataclasses
import sys

import numpy as np
from jax._src import debugging

from tessel.jax._registry import rule


@dataclasses.dataclass(frozen=True)
class PrintSpec:
    """One `debug_print`: JAX's formatting parameters and the dtypes and
    shapes of its dynamic values (arrays arrive one element at a time, in
    row-major order)."""
    params: dict
    dtypes: tuple
    shapes: tuple


# Kernel id -> its prints' specs, by site.
_SPECS: dict[str, list[PrintSpec]] = {}


def register(kernel_id: str, specs: list[PrintSpec]) -> None:
    if specs:
        _SPECS[kernel_id] = specs


def emit(kernel_id: str, lines) -> None:
    """Prints the lines a kernel printed: (site, values) each."""
    specs = _SPECS.get(kernel_id)
    for site, values in lines:
        if specs is None or site >= len(specs):
            # A kernel compiled from its text alone (JAX's persistent
            # cache): no JAX parameters to format with.
            sys.stdout.write(" ".join(map(str, values)) + "\n")
            continue
        spec = specs[site]
        params = spec.params
        flat = iter(values)
        dynamic = []
        for dtype, shape in zip(spec.dtypes, spec.shapes):
            elements = [next(flat) for _ in range(int(np.prod(shape, dtype=np.int64)))]
            dynamic.append(np.asarray(elements).astype(dtype).reshape(shape)[()])
        args, kwargs = debugging.merge_callback_args(params["in_tree"], dynamic, params["static_args"])
        debugging._format_print_callback(params["fmt"], dict(params["np_printoptions"]), params["has_placeholders"],
                                         params["logging_record"], *args, **kwargs)
    sys.stdout.flush()


def _mlir_string(text: str) -> str:
    """`text` as an MLIR string literal."""
    out = []
    for byte in text.encode("utf-8"):
        char = chr(byte)
        out.append(char if 32 <= byte < 127 and char not in '"\\' else f"\\{byte:02X}")
    return '"' + "".join(out) + '"'


@rule("debug_print")
def debug_print(ctx, *values):
    params = ctx.params
    if params.get("ordered"):
        ctx.fail("an ordered debug_print (kernels print in program order already)")
    tr = ctx.tr
    site = len(tr.prints)
    tr.prints.append(PrintSpec(params=dict(params), dtypes=tuple(np.dtype(v.dtype) for v in values),
                               shapes=tuple(tuple(v.shape) for v in values)))
    # The IR's own format: JAX's, whose `{}` the values fill (formatting
    # here is JAX's, by site; `tessel run` uses the IR's).
    fmt = params["fmt"] if params["has_placeholders"] else params["fmt"].replace("{", "{{").replace("}", "}}")
    operands = f" {', '.join(v.name for v in values)} : {', '.join(v.type for v in values)}" if values \
        else ""
    tr.emit.line(f"block.print {_mlir_string(fmt)}{operands} {{tessel.print_site = {site} : i64}}")
    return []


@rule("trace_value")
def trace_value(ctx, value):
    """`pltpu.trace_value(label, x)` appends a scalar to the enclosing xprof
    trace region of a TPU kernel: profiling metadata, which changes no
    result. CPU kernels have no xprof trace regions, so there is nothing
    to append it to (JAX checks the value, a scalar i32 or f32, when
    tracing)."""
    del ctx, value
    return []
