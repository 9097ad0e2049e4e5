"""A `pallas_call` (kernel jaxpr + GridMapping) as a Tessel module: the
kernel function, an entry function taking the call's buffers (operands
then results, as XLA passes them), and the `grid.call` between them."""

from __future__ import annotations

import dataclasses
import re

import numpy as np
from jax._src import core
from jax._src.pallas import core as pallas_core

from tessel.jax._emit import Unsupported, Value, memref_type
from tessel.jax._kernel import KernelTranslator, _frame


@dataclasses.dataclass
class Translated:
    text: str
    entry: str


def _symbol(name: str) -> str:
    cleaned = re.sub(r"[^A-Za-z0-9_]", "_", name or "kernel")
    return cleaned if cleaned and not cleaned[0].isdigit() else f"k_{cleaned}"


class _Affine:
    """Index-map jaxprs as affine expressions over the grid indices."""

    def __init__(self, where: str):
        self.where = where

    def fail(self, what):
        raise Unsupported(f"{self.where}: Tessel cannot translate the index map: {what}")

    def evaluate(self, closed, args):
        jaxpr = closed.jaxpr if isinstance(closed, core.ClosedJaxpr) else closed
        consts = closed.consts if isinstance(closed, core.ClosedJaxpr) else []
        env = {}
        for var, const in zip(jaxpr.constvars, consts):
            env[var] = int(np.asarray(const))
        for var, arg in zip(jaxpr.invars, args):
            env[var] = arg

        def read(atom):
            if isinstance(atom, core.Literal):
                return int(np.asarray(atom.val))
            return env[atom]

        for eqn in jaxpr.eqns:
            name = eqn.primitive.name
            ins = [read(a) for a in eqn.invars]
            if name in ("pjit", "jit", "closed_call", "core_call"):
                inner = eqn.params.get("jaxpr") or eqn.params.get("call_jaxpr")
                outs = self.evaluate(inner, ins)
            elif name == "convert_element_type" or name == "multiple_of":
                outs = [ins[0]]
            elif name == "add":
                outs = [self.combine(ins, "+", lambda a, b: a + b)]
            elif name == "sub":
                outs = [self.combine(ins, "-", lambda a, b: a - b)]
            elif name == "mul":
                a, b = ins
                if not isinstance(a, int) and not isinstance(b, int):
                    self.fail("a product of two program ids")
                outs = [self.combine(ins, "*", lambda a, b: a * b)]
            elif name in ("div", "floordiv"):
                a, b = ins
                if not isinstance(b, int) or b <= 0:
                    self.fail("division by a value that is not a positive constant")
                outs = [a // b if isinstance(a, int) else f"({a}) floordiv {b}"]
            elif name == "rem":
                a, b = ins
                if not isinstance(b, int) or b <= 0:
                    self.fail("remainder by a value that is not a positive constant")
                outs = [a % b if isinstance(a, int) else f"({a}) mod {b}"]
            elif name == "neg":
                outs = [-ins[0] if isinstance(ins[0], int) else f"-({ins[0]})"]
            else:
                self.fail(f"the primitive '{name}' (non-affine index maps are not supported yet)")
            for var, out in zip(eqn.outvars, outs):
                env[var] = out
        return [read(v) for v in jaxpr.outvars]

    @staticmethod
    def combine(ins, symbol, fold):
        a, b = ins
        if isinstance(a, int) and isinstance(b, int):
            return fold(a, b)
        return f"({a}) {symbol} ({b})"


def _spec(mapping, grid_rank: int, num_scalars: int, where: str) -> str:
    sizes, unblocked, pads = [], False, []
    for dim in mapping.block_shape:
        if isinstance(dim, pallas_core.Squeezed) or dim is None:
            sizes.append(None)
            pads.append((0, 0))
        elif isinstance(dim, pallas_core.Element):
            unblocked = True
            sizes.append(int(dim.block_size))
            padding = tuple(getattr(dim, "padding", (0, 0)) or (0, 0))
            pads.append(padding)
        elif isinstance(dim, pallas_core.Blocked):
            sizes.append(int(dim.block_size))
            pads.append((0, 0))
        else:
            raise Unsupported(f"{where}: Tessel does not support the block dimension {dim!r}")
    dims = [f"d{i}" for i in range(grid_rank)]
    if num_scalars:
        raise Unsupported(f"{where}: Tessel does not support scalar prefetch from JAX yet")
    exprs = _Affine(where).evaluate(mapping.index_map_jaxpr, dims)
    if unblocked:
        # Element offsets in every dim: blocked dims' block indices scaled.
        exprs = [
            e if isinstance(dim, pallas_core.Element) else (e * (s or 1) if isinstance(e, int) else f"({e}) * {s or 1}")
            for e, dim, s in zip(exprs, mapping.block_shape, sizes)
        ]
    shape = ", ".join("squeezed" if s is None else str(s) for s in sizes)
    affine = f"({', '.join(dims)}) -> ({', '.join(str(e) for e in exprs)})"
    tail = ""
    if unblocked:
        tail = ", unblocked"
        if any(p != (0, 0) for p in pads):
            tail += " pad [" + ", ".join(f"[{lo}, {hi}]" for lo, hi in pads) + "]"
    return f"#grid.block<[{shape}], {affine}{tail}>"


def _knob_attributes(knobs: dict) -> str:
    if not knobs:
        return ""
    parts = []
    for name, value in sorted(knobs.items()):
        if value is None:
            continue
        if name == "register_tile":
            rows, columns = value
            parts.append(f"tessel.register_tile = array<i64: {int(rows)}, {int(columns)}>")
        elif name == "grid_order":
            parts.append(f"tessel.grid_order = {['row-major', 'column-major'].index(value)} : i64")
        else:
            parts.append(f"tessel.{name} = {int(value)} : i64")
    return f" attributes {{{', '.join(parts)}}}" if parts else ""


def translate(jaxpr, grid_mapping, input_output_aliases, name: str, knobs: dict) -> Translated:
    """The Tessel module of one `pallas_call`."""
    kernel_frame = None
    for eqn in jaxpr.eqns:
        kernel_frame = _frame(eqn.source_info)
        if kernel_frame is not None:
            break
    where = f"{kernel_frame.file_name}:{kernel_frame.start_line}" if kernel_frame else f"pallas_call {name}"
    grid = tuple(grid_mapping.grid)
    if any(not isinstance(g, (int, np.integer)) for g in grid):
        raise Unsupported(f"{where}: Tessel does not support dynamic grid sizes from JAX yet")
    vmapped = set(grid_mapping.vmapped_dims)
    program_axes = [axis for axis in range(len(grid)) if axis not in vmapped]
    num_scalars = grid_mapping.num_index_operands
    num_inputs, num_outputs = grid_mapping.num_inputs, grid_mapping.num_outputs
    symbol = _symbol(name)

    translator = KernelTranslator(program_axes)
    refs = []
    for index, var in enumerate(jaxpr.invars):
        aval = var.aval
        refs.append(Value(f"%r{index}", tuple(aval.shape), np.dtype(aval.inner_aval.dtype), ref=True))
    env = dict(zip(jaxpr.invars, refs))
    translator.jaxpr(jaxpr, env)
    body = "\n".join(translator.emit.lines)
    kernel_args = ", ".join(f"{r.name}: {r.type}" for r in refs)
    kernel = f"  func.func private @{symbol}_kernel({kernel_args}) {{\n{body}\n    return\n  }}"

    mappings = grid_mapping.block_mappings
    arrays = [m.array_aval for m in mappings[: num_inputs + num_outputs]]
    entry_args = [memref_type(tuple(a.shape), a.dtype, entry=True) for a in arrays]
    names = [f"%a{i}" for i in range(len(arrays))]
    aliases = dict(input_output_aliases or ())
    # Operands of the XLA call include the scalar-prefetch operands first.
    ins = []
    for i in range(num_inputs):
        operand = num_scalars + i
        ins.append(names[num_inputs + aliases[operand]] if operand in aliases else names[i])
    outs = names[num_inputs:]
    in_types = entry_args[:num_inputs]
    out_types = entry_args[num_inputs:]
    in_specs = [_spec(m, len(grid), num_scalars, where) for m in mappings[:num_inputs]]
    out_specs = [_spec(m, len(grid), num_scalars, where) for m in mappings[num_inputs:num_inputs + num_outputs]]
    scratch = ""
    if grid_mapping.scratch_avals:
        types = []
        for aval in grid_mapping.scratch_avals:
            inner = getattr(aval, "inner_aval", aval)
            if not hasattr(inner, "shape"):
                raise Unsupported(f"{where}: Tessel does not support the scratch {aval}")
            types.append(memref_type(tuple(inner.shape), inner.dtype))
        scratch = f" scratch({', '.join(types)})"
    call = (
        f"    grid.call @{symbol}_kernel grid [{', '.join(map(str, grid))}]\n"
        f"        ins({', '.join(ins)}{' : ' if ins else ''}{', '.join(in_types)})\n"
        f"        outs({', '.join(outs)} : {', '.join(out_types)}){scratch}\n"
        f"        in_specs [{', '.join(in_specs)}]\n"
        f"        out_specs [{', '.join(out_specs)}]"
    )
    entry_params = ", ".join(f"{n}: {t}" for n, t in zip(names, entry_args))
    entry = f"  func.func @{symbol}({entry_params}) {{\n{call}\n    return\n  }}"
    text = f"module{_knob_attributes(knobs)} {{\n{kernel}\n{entry}\n}}\n"
    return Translated(text=text, entry=symbol)
