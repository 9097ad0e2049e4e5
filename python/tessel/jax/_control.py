"""Control flow, calls and the program's place in the grid.

`cond` (`pl.when`) becomes `scf.if`, scans without `xs` (`fori_loop`)
`scf.for`, `while_loop` `scf.while`; calls (`jit`, `custom_jvp`,
`custom_vjp`, `remat`) are inlined; `lax.platform_dependent` takes the
"cpu" branch; `program_id`/`num_programs` and `axis_index` of a named
grid axis read the grid."""

from __future__ import annotations

import numpy as np

from tessel.jax._emit import Value, tensor_type
from tessel.jax._registry import rule

# Primitives that wrap a jaxpr and mean "call it": the parameter holding it.
CALLS = {"pjit": "jaxpr", "jit": "jaxpr", "closed_call": "call_jaxpr", "core_call": "call_jaxpr", "remat": "jaxpr",
         "checkpoint": "jaxpr", "custom_jvp_call": "call_jaxpr", "custom_vjp_call": "call_jaxpr",
         "custom_vjp_call_jaxpr": "fun_jaxpr"}


class ControlFlowOps:
    """The translator's helpers for nested regions (a mixin of
    `KernelTranslator`)."""

    def cond(self, eqn, branches, index: Value, operands, first: int):
        """scf.if choosing branch `first` or a later one (for a boolean
        index: branch 1 when true, else 0)."""
        if len(branches) - first == 1:
            return self.inline(branches[first], operands)
        boolean = index.dtype == np.bool_
        if boolean:
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
        self.emit.depth += 1
        self.yield_(self.inline(branches[1 if boolean else first], operands))
        self.emit.depth -= 1
        self.emit.line("} else {", located=False)
        self.emit.depth += 1
        if boolean:
            values = self.inline(branches[0], operands)
        else:
            values = self.cond(eqn, branches, index, operands, first + 1)
        self.yield_(values)
        self.emit.depth -= 1
        self.emit.lines.append("  " * self.emit.depth + "} " + loc)
        return [Value(n, tuple(o.shape), np.dtype(o.dtype)) for n, o in zip(names, outs)]

    def yield_(self, values):
        if values:
            self.emit.line(f"scf.yield {', '.join(v.name for v in values)} : {', '.join(v.type for v in values)}")


@rule(*CALLS, moves_values=True)
def call(ctx, *args):
    closed = ctx.params[CALLS[ctx.name]]
    if ctx.name == "custom_vjp_call":
        args = args[: len((closed.jaxpr if hasattr(closed, "jaxpr") else closed).invars)]
    return ctx.tr.inline(closed, list(args))


@rule("platform_index")
def platform_index(ctx, *operands):
    """`lax.platform_dependent`'s branch index: Tessel's kernels run on the
    CPU, so the branch for "cpu", else the default one (as JAX's
    interpreter picks on the CPU)."""
    platforms = ctx.params["platforms"]
    chosen = next((i for i, names in enumerate(platforms) if names is not None and "cpu" in names), None)
    if chosen is None:
        chosen = next((i for i, names in enumerate(platforms) if names is None), None)
    if chosen is None:
        ctx.fail(f"platform_dependent without a CPU or default branch (platforms {platforms})")
    return ctx.tr.emit.constant(chosen, np.int32)


@rule("cond", moves_values=True)
def cond(ctx, index, *operands):
    return ctx.tr.cond(ctx.eqn, ctx.params["branches"], index, list(operands), 0)


@rule("scan", moves_values=True)
def scan(ctx, *args):
    tr, emit, p = ctx.tr, ctx.tr.emit, ctx.params
    num_consts, num_carry = p["num_consts"], p["num_carry"]
    if len(ctx.eqn.invars) != num_consts + num_carry or len(ctx.eqn.outvars) != num_carry:
        ctx.fail("scan over arrays (only fori_loop-style scans are supported)")
    consts, carry = list(args[:num_consts]), list(args[num_consts:])
    lower, upper, step = emit.index(0), emit.index(int(p["length"])), emit.index(1)
    names = [emit.fresh() for _ in carry]
    induction = emit.fresh()
    iter_names = [emit.fresh() for _ in carry]
    iter_args = ", ".join(f"{n} = {c.name}" for n, c in zip(iter_names, carry))
    loc = emit.loc
    results = f"{', '.join(names)} = " if names else ""
    iter_text = f" iter_args({iter_args}) -> ({', '.join(c.type for c in carry)})" if carry else ""
    emit.line(f"{results}scf.for {induction} = {lower} to {upper} step {step}{iter_text} {{", located=False)
    emit.depth += 1
    inner = [Value(n, c.shape, c.dtype) for n, c in zip(iter_names, carry)]
    values = tr.inline(p["jaxpr"], consts + inner)
    values = [tr.splat(v, c.shape) if v.shape != c.shape else v for v, c in zip(values, carry)]
    tr.yield_(values)
    emit.depth -= 1
    emit.lines.append("  " * emit.depth + "} " + loc)
    return [Value(n, c.shape, c.dtype) for n, c in zip(names, carry)]


@rule("while", moves_values=True)
def while_(ctx, *args):
    tr, emit, p = ctx.tr, ctx.tr.emit, ctx.params
    cond_n, body_n = p["cond_nconsts"], p["body_nconsts"]
    cond_consts, body_consts = list(args[:cond_n]), list(args[cond_n:cond_n + body_n])
    carry = list(args[cond_n + body_n:])
    names = [emit.fresh() for _ in carry]
    before = [emit.fresh() for _ in carry]
    after = [emit.fresh() for _ in carry]
    types = ", ".join(c.type for c in carry)
    inits = ", ".join(f"{b} = {c.name}" for b, c in zip(before, carry))
    loc = emit.loc
    results = f"{', '.join(names)} = " if names else ""
    emit.line(f"{results}scf.while ({inits}) : ({types}) -> ({types}) {{", located=False)
    emit.depth += 1
    (condition,) = tr.inline(p["cond_jaxpr"], cond_consts + [Value(b, c.shape, c.dtype)
                                                              for b, c in zip(before, carry)])
    emit.line(f"scf.condition({condition.name}) {', '.join(before)} : {types}")
    emit.depth -= 1
    block_args = ", ".join(f"{a}: {c.type}" for a, c in zip(after, carry))
    emit.line(f"}} do {{\n{'  ' * (emit.depth + 1)}^bb0({block_args}):", located=False)
    emit.depth += 1
    values = tr.inline(p["body_jaxpr"], body_consts + [Value(a, c.shape, c.dtype) for a, c in zip(after, carry)])
    values = [tr.splat(v, c.shape) if v.shape != c.shape else v for v, c in zip(values, carry)]
    emit.line(f"scf.yield {', '.join(v.name for v in values)} : {types}")
    emit.depth -= 1
    emit.lines.append("  " * emit.depth + "} " + loc)
    return [Value(n, c.shape, c.dtype) for n, c in zip(names, carry)]


def pipeline_axis(tr, axis: int):
    """(the pipeline level whose grid `axis` is in, the axis there), or
    (None, the kernel's axis). In a pipeline body (`_pipelines`) the axes
    are the pipeline's, then the enclosing ones' (as Mosaic numbers them:
    the kernel's come after every pipeline's)."""
    for level in reversed(tr.pipeline_levels):
        if axis < len(level.indices):
            return level, axis
        axis -= len(level.indices)
    return None, axis


@rule("program_id")
def program_id(ctx):
    tr = ctx.tr
    level, axis = pipeline_axis(tr, int(ctx.params["axis"]))
    if level is not None:
        return level.indices[axis]
    index = tr.emit.assign(f"grid.program_id {tr.program_axes[axis]}")
    return tr.emit.op(f"arith.index_cast {index} : index to i32", (), np.int32)


@rule("num_programs")
def num_programs(ctx):
    tr, emit = ctx.tr, ctx.tr.emit
    if tr.index_map_grid is not None:
        size = tr.index_map_grid[int(ctx.params["axis"])]
        if isinstance(size, Value):
            # A dynamic size, read from the scalar array holding it.
            zeros = ", ".join([emit.index(0)] * len(size.shape)) if size.shape else ""
            loaded = emit.op(f"memref.load {size.name}[{zeros}] : {size.type}", (), size.dtype)
            return tr.convert(loaded, np.int32)
        return emit.constant(int(size), np.int32)
    level, axis = pipeline_axis(tr, int(ctx.params["axis"]))
    if level is not None:
        if level.sizes[axis] is None:
            ctx.fail("num_programs of a dynamic emit_pipeline grid axis in its body")
        return emit.constant(int(level.sizes[axis]), np.int32)
    index = emit.assign(f"grid.num_programs {tr.program_axes[axis]}")
    return emit.op(f"arith.index_cast {index} : index to i32", (), np.int32)


@rule("axis_index")
def axis_index(ctx):
    """`lax.axis_index` of a named grid axis (a `pl.kernel`/`core_map`
    mesh's core axis): its program id."""
    tr, name = ctx.tr, ctx.params["axis_name"]
    names = name if isinstance(name, tuple) else (name,)
    axes = getattr(tr, "grid_names", {})
    if len(names) != 1 or names[0] not in axes:
        ctx.fail(f"axis_index of {name!r} (only the kernel's own named grid axes: {sorted(map(str, axes))})")
    index = tr.emit.assign(f"grid.program_id {tr.program_axes[axes[names[0]]]}")
    return tr.emit.op(f"arith.index_cast {index} : index to i32", (), np.int32)
