"""A `pallas_call` (kernel jaxpr + GridMapping) as a Tessel module: the
kernel function, an entry function taking the call's buffers (operands
then results, as XLA passes them), and the `grid.call` between them."""

from __future__ import annotations

import dataclasses
import re

import jax.numpy as jnp
import numpy as np
from jax._src import core, state
from jax._src.pallas import core as pallas_core
from jax._src.pallas.mosaic.random import is_pallas_impl

from tessel.jax._emit import ScalarWrite, Unsupported, Value, element, memref_type, physical
from tessel.jax._kernel import KernelTranslator, _frame
from tessel.jax._pipelines import expand_pipelines


@dataclasses.dataclass
class Translated:
    text: str
    entry: str
    # The kernel's debug_prints (`_debug.PrintSpec`), by site.
    prints: list = dataclasses.field(default_factory=list)


def _symbol(name: str) -> str:
    cleaned = re.sub(r"[^A-Za-z0-9_]", "_", name or "kernel")
    return cleaned if cleaned and not cleaned[0].isdigit() else f"k_{cleaned}"


class _Affine:
    """Index-map jaxprs as affine expressions over the grid indices."""

    def __init__(self, where: str, grid=()):
        self.where = where
        # Static grid sizes (num_programs in an index map is a constant).
        self.grid = tuple(grid)

    def fail(self, what):
        raise _NotAffine(f"{self.where}: the index map is not affine: {what}")

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
            if any(value is None for value in ins) and name not in ("pjit", "jit", "closed_call", "core_call"):
                self.fail("it reads scalar-prefetch refs")
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
            elif name == "num_programs":
                size = self.grid[int(eqn.params["axis"])] if int(eqn.params["axis"]) < len(self.grid) else None
                if not isinstance(size, (int, np.integer)):
                    self.fail("num_programs of a dynamic grid axis")
                outs = [int(size)]
            elif name == "neg":
                outs = [-ins[0] if isinstance(ins[0], int) else f"-({ins[0]})"]
            else:
                self.fail(f"the primitive '{name}'")
            for var, out in zip(eqn.outvars, outs):
                env[var] = out
        return [read(v) for v in jaxpr.outvars]

    @staticmethod
    def combine(ins, symbol, fold):
        a, b = ins
        if isinstance(a, int) and isinstance(b, int):
            return fold(a, b)
        return f"({a}) {symbol} ({b})"


def _is_semaphore(dtype) -> bool:
    return jnp.issubdtype(dtype, pallas_core.semaphore_dtype)


def _ref_dtype(dtype) -> np.dtype:
    """A ref's element type; semaphores of every kind (TPU scratch for DMAs
    and barriers, `dma_sem` included) are i32 counters."""
    if _is_semaphore(dtype):
        return np.dtype(np.int32)
    return np.dtype(dtype)


class _NotAffine(Unsupported):
    """An index map that is not affine in the program ids: it becomes an
    index function."""


def _index_function(closed, grid, scalars: list[Value], symbol: str) -> str:
    """A non-affine index map as `func.func @symbol(ids.., scalars..) ->
    (index, ..)`, its body translated like a kernel's (scalar arithmetic,
    selects, table lookups in the scalar-prefetch refs)."""
    jaxpr = closed.jaxpr if isinstance(closed, core.ClosedJaxpr) else closed
    consts = closed.consts if isinstance(closed, core.ClosedJaxpr) else []
    grid_rank = len(grid)
    translator = KernelTranslator([], index_map_grid=grid)
    emit = translator.emit
    env = {}
    ids = [f"%id{axis}" for axis in range(grid_rank)]
    for var, name in zip(jaxpr.invars[:grid_rank], ids):
        dtype = np.dtype(var.aval.dtype)
        env[var] = emit.op(f"arith.index_cast {name} : index to {element(dtype)}", (), dtype)
    for var, ref in zip(jaxpr.invars[grid_rank:], scalars):
        env[var] = ref
    for var, const in zip(jaxpr.constvars, consts):
        env[var] = emit.dense(np.asarray(const))
    translator.jaxpr(jaxpr, env)
    results = []
    for out in jaxpr.outvars:
        value = translator.read(env, out)
        if value.shape != ():
            raise Unsupported(f"{emit.where}: an index map returned a non-scalar block index")
        results.append(translator.as_index(value))
    params = ", ".join([f"{name}: index" for name in ids] + [f"{r.name}: {r.type}" for r in scalars])
    body = "\n".join(emit.lines)
    types = ", ".join(["index"] * len(results))
    return (f"  func.func private @{symbol}({params}) -> ({types}) {{\n{body}\n"
            f"    return {', '.join(results)} : {types}\n  }}")


def _spec(mapping, grid, scalars: list[Value], where: str, functions: list[str]) -> str:
    if str(getattr(mapping.transformed_block_aval, "memory_space", "")).lower() in ("any", "hbm"):
        # pl.ANY / HBM: the kernel gets the array itself (`full`), which
        # every program shares, not a copy of it per program: an input
        # aliased to an output is then the same memory, as on a TPU.
        return "#grid.block<full>"
    grid_rank = len(grid)
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
    # A block of PRNG keys is a block of their data: the key's own dims
    # whole (block index 0) after the array's.
    key_dims = physical(mapping.array_aval).shape[len(mapping.array_aval.shape):]
    sizes += list(key_dims)
    pads += [(0, 0)] * len(key_dims)
    dims = [f"d{i}" for i in range(grid_rank)]
    shape = ", ".join("squeezed" if s is None else str(s) for s in sizes)
    try:
        exprs = _Affine(where, grid).evaluate(mapping.index_map_jaxpr, dims + [None] * len(scalars))
        exprs = list(exprs) + [0] * len(key_dims)
    except _NotAffine:
        if key_dims:
            raise Unsupported(f"{where}: Tessel does not support blocks of PRNG keys picked by index functions") \
                from None
        if unblocked:
            raise Unsupported(f"{where}: Tessel does not support non-affine index maps of "
                              "element-indexed (pl.Element) blocks") from None
        symbol = f"index_map_{len(functions)}"
        functions.append(_index_function(mapping.index_map_jaxpr, grid, scalars, symbol))
        return f"#grid.block<[{shape}], @{symbol}>"
    if unblocked:
        # Element offsets in every dim: blocked dims' block indices scaled.
        exprs = [
            e if isinstance(dim, pallas_core.Element) else (e * (s or 1) if isinstance(e, int) else f"({e}) * {s or 1}")
            for e, dim, s in zip(exprs, mapping.block_shape, sizes)
        ]
    affine = f"({', '.join(dims)}) -> ({', '.join(str(e) for e in exprs)})"
    tail = ""
    if unblocked:
        tail = ", unblocked"
        if any(p != (0, 0) for p in pads):
            tail += " pad [" + ", ".join(f"[{lo}, {hi}]" for lo, hi in pads) + "]"
    return f"#grid.block<[{shape}], {affine}{tail}>"


def _semantics(dimension_semantics, rank: int, vmapped: set, has_scratch: bool, where: str) -> list[str] | None:
    """The call's axis semantics ("parallel" / "arbitrary" per grid axis),
    or None to let Tessel infer them from the output specs. Scratch persists from one program to the next, as on a
    TPU core (the accumulator idiom), so a program may read what an earlier
    one left there: where the params do not say which axes are parallel,
    a call with scratch runs its grid in order, as Mosaic does by default
    and the interpreter always does. Axes vmap added are parallel."""
    if dimension_semantics is None:
        if not has_scratch:
            return None
        kernel_axes = ["arbitrary"] * (rank - len(vmapped))
    else:
        kernel_axes = ["arbitrary" if "arbitrary" in str(s).lower() else "parallel" for s in dimension_semantics]
        if len(kernel_axes) != rank - len(vmapped):
            raise Unsupported(f"{where}: {len(kernel_axes)} dimension semantics for a grid of "
                              f"{rank - len(vmapped)} axes")
    own = iter(kernel_axes)
    return ["parallel" if axis in vmapped else next(own) for axis in range(rank)]


#: The DMA execution modes (``CompilerParams.dma_execution_mode``), in the
#: order of the ``tessel.dma_mode`` knob.
DMA_MODES = ("eager", "on_wait")


def _kernel_frame(jaxpr):
    """The user frame of a kernel's first equation that has one."""
    for eqn in jaxpr.eqns:
        frame = _frame(eqn.source_info)
        if frame is not None:
            return frame
    return None


def kernel_site(jaxpr, name: str) -> str:
    """`file:line` of a kernel's first equation with a user frame (what
    errors about the whole call name)."""
    frame = _kernel_frame(jaxpr)
    return f"{frame.file_name}:{frame.start_line}" if frame is not None else f"pallas_call {name}"


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
        elif name == "poison":
            parts.append("tessel.poison")
        elif name == "grid_order":
            parts.append(f"tessel.grid_order = {['row-major', 'column-major'].index(value)} : i64")
        elif name == "dma_execution_mode":
            parts.append(f"tessel.dma_mode = {DMA_MODES.index(value)} : i64")
        else:
            parts.append(f"tessel.{name} = {int(value)} : i64")
    return f" attributes {{{', '.join(parts)}}}" if parts else ""


def scopes(jaxpr) -> list:
    """The equations of a kernel that allocate buffers, `run_scoped` and
    `empty_ref` (`jax.empty_ref` in a kernel: a buffer from there on),
    nested ones and those in loop bodies, branches and calls included,
    outermost first."""
    found = []
    for eqn in jaxpr.eqns:
        if eqn.primitive.name in ("run_scoped", "empty_ref"):
            found.append(eqn)
        for inner in core.jaxprs_in_params(eqn.params):
            found += scopes(inner)
    return found


def _is_shared(aval) -> bool:
    """Whether a scratch ref is memory the cores share (`pltpu.VMEM_SHARED`)."""
    return "shared" in str(getattr(aval, "memory_space", "")).lower()


@dataclasses.dataclass(frozen=True)
class _Shared:
    """A scoped buffer's aval in memory the cores share."""

    inner_aval: object
    memory_space: str = "vmem_shared"


def _translate_kernel(jaxpr, program_axes, num_scalars: int, written: set, where: str, grid_names=None):
    """The kernel's body: its translator, its refs (the jaxpr's, then the
    scoped buffers' and the copies'), the avals of the scratch it adds
    and the copies as (scalar-prefetch ref, its copy). Raises
    `ScalarWrite` at a write to a scalar-prefetch ref not in `written`."""
    translator = KernelTranslator(program_axes)
    # Named grid axes (a pl.kernel/core_map mesh's): lax.axis_index of a
    # name is that axis's program id.
    translator.grid_names = {name: axis for axis, name in enumerate(grid_names or ()) if name is not None}
    refs = []
    for index, var in enumerate(jaxpr.invars):
        inner = physical(getattr(var.aval, "inner_aval", var.aval))
        refs.append(Value(f"%r{index}", tuple(inner.shape), _ref_dtype(inner.dtype), ref=True))
    env = dict(zip(jaxpr.invars, refs))
    for var, ref in zip(jaxpr.invars, refs):
        if not isinstance(var.aval, state.AbstractRef):
            # A value, not a ref: an array the kernel body captured (a
            # `pl.kernel` closing over a traced scalar), passed whole; the
            # kernel reads it where it starts.
            env[var] = translator.load(ref, None, ref.shape, ref.dtype)
    translator.read_only = {refs[i].name: i for i in range(num_scalars) if i not in written}
    # `pl.run_scoped` (and `jax.empty_ref`) buffers become more scratch of
    # the call: one buffer per scope, private to each program like the
    # call's own scratch, and uninitialized on entry as the scope's are.
    scoped_avals = []
    for scope in scopes(jaxpr):
        buffers = []
        allocated = scope.outvars if scope.primitive.name == "empty_ref" else scope.params["jaxpr"].invars
        for var in allocated:
            inner = var.aval.inner_aval
            if not hasattr(inner, "shape"):
                raise Unsupported(f"{where}: Tessel does not support the scoped allocation {var.aval}")
            # PRNG keys as their data; semaphores stay semaphores (scratch
            # semaphores start at zero).
            if not _is_semaphore(inner.dtype):
                inner = physical(inner)
            buffers.append(Value(f"%r{len(refs)}", tuple(inner.shape), _ref_dtype(inner.dtype), ref=True))
            refs.append(buffers[-1])
            scoped_avals.append(_Shared(inner) if _is_shared(var.aval) else inner)
        translator.scoped[id(scope)] = buffers
    # A written scalar-prefetch ref is read and written as scratch of the
    # same type, filled from the caller's array where the scratch starts
    # (`_copy_in`): the caller's buffer stays as it was, and parallel
    # workers each have their own copy, as TPU cores have their own SMEM.
    copies = []
    for index in sorted(written):
        scalar = refs[index]
        copy = Value(f"%r{len(refs)}", scalar.shape, scalar.dtype, ref=True)
        refs.append(copy)
        scoped_avals.append(jaxpr.invars[index].aval.inner_aval)
        env[jaxpr.invars[index]] = copy
        copies.append((scalar, copy))
    if _uses_tpu_prng(jaxpr):
        # The TPU core's PRNG state (key, counter; `_random.prng_seed`):
        # scratch of its own.
        translator.prng_state = Value(f"%r{len(refs)}", (3,), np.dtype(np.int32), ref=True)
        refs.append(translator.prng_state)
        scoped_avals.append(core.ShapedArray((3,), np.dtype(np.int32)))
    translator.jaxpr(jaxpr, env)
    return translator, refs, scoped_avals, copies


def _uses_tpu_prng(jaxpr) -> bool:
    """Whether `jaxpr` (or a jaxpr in its equations' parameters) seeds or
    draws from the TPU core's generator: its primitives, or `random_bits`
    of a Pallas key (which draws through them)."""
    def draws(eqn) -> bool:
        if eqn.primitive.name in ("prng_seed", "prng_random_bits"):
            return True
        impl = getattr(getattr(eqn.invars[0].aval, "dtype", None), "_impl", None) if eqn.invars else None
        return eqn.primitive.name == "random_bits" and is_pallas_impl(impl)

    return any(draws(eqn) or any(_uses_tpu_prng(inner) for inner in core.jaxprs_in_params(eqn.params))
               for eqn in jaxpr.eqns)


def _copy_in(copies, semantics: list[str] | None, rank: int) -> list[str]:
    """Kernel lines filling each copy of a written scalar-prefetch ref from
    the caller's array at the first program of the copy's lifetime.
    Scratch lives across the programs of the axes after the leading
    parallel ones (grid-to-loops makes every later axis ordered), so a
    scope starts where their program ids are all 0."""
    if not copies:
        return []
    leading = next((axis for axis, kind in enumerate(semantics or []) if kind != "parallel"), rank)
    lines = ["    %copy_in = arith.constant true"]
    if leading < rank:
        lines.append("    %copy_zero = arith.constant 0 : index")
    for axis in range(leading, rank):
        lines += [f"    %copy_id{axis} = grid.program_id {axis}",
                  f"    %copy_first{axis} = arith.cmpi eq, %copy_id{axis}, %copy_zero : index",
                  f"    %copy_in{axis} = arith.andi %copy_in{'' if axis == leading else axis - 1}, "
                  f"%copy_first{axis} : i1"]
    condition = f"%copy_in{rank - 1}" if leading < rank else "%copy_in"
    lines.append(f"    scf.if {condition} {{")
    lines += [f"      memref.copy {scalar.name}, {copy.name} : {scalar.type} to {copy.type}"
              for scalar, copy in copies]
    lines.append("    }")
    return lines


def _reads_scalars(closed, grid_rank: int, written: set) -> bool:
    """Whether an index map reads one of the `written` scalar-prefetch
    operands (they follow the grid indices among its inputs)."""
    jaxpr = getattr(closed, "jaxpr", closed)
    scalars = {var for i, var in enumerate(jaxpr.invars[grid_rank:]) if i in written}
    used = {var for eqn in jaxpr.eqns for var in eqn.invars if isinstance(var, core.Var)}
    used |= {var for var in jaxpr.outvars if isinstance(var, core.Var)}
    return bool(scalars & used)


def translate(jaxpr, grid_mapping, input_output_aliases, name: str, knobs: dict, dynamic_bounds=(),
              dimension_semantics=None, cores: bool = False) -> Translated:
    """The Tessel module of one `pallas_call`. `dynamic_bounds` are the
    avals of the operands holding the dynamic grid sizes (XLA passes them
    first); `dimension_semantics` the TPU compiler params' list, if any;
    `cores`: the leading grid axis is a TensorCore mesh (`pl.kernel`,
    `core_map`), whose cores run at once and signal each other."""
    where = kernel_site(jaxpr, name)
    # Dynamic sizes are read from their operands in the entry function.
    bound_names = [f"%b{i}" for i in range(len(dynamic_bounds))]
    bound_types = [memref_type(tuple(a.shape), a.dtype) for a in dynamic_bounds]
    if len(dynamic_bounds) != sum(not isinstance(g, (int, np.integer)) for g in grid_mapping.grid):
        raise Unsupported(f"{where}: Tessel needs the operands of the dynamic grid sizes")
    loads, grid, dynamic = [], [], iter(zip(bound_names, dynamic_bounds))
    for g in grid_mapping.grid:
        if isinstance(g, (int, np.integer)):
            grid.append(str(int(g)))
            continue
        bound, aval = next(dynamic)
        zeros = ", ".join(["%zero"] * len(aval.shape))
        cast = "arith.index_castui" if np.dtype(aval.dtype).kind == "u" else "arith.index_cast"
        loads.append(f"    {bound}v = memref.load {bound}[{zeros}] : {memref_type(tuple(aval.shape), aval.dtype)}")
        loads.append(f"    {bound}i = {cast} {bound}v : {element(aval.dtype)} to index")
        grid.append(f"{bound}i")
    if any(len(a.shape) for a in dynamic_bounds):
        loads.insert(0, "    %zero = arith.constant 0 : index")
    grid = tuple(grid)
    vmapped = set(grid_mapping.vmapped_dims)
    program_axes = [axis for axis in range(len(grid)) if axis not in vmapped]
    num_scalars = grid_mapping.num_index_operands
    num_inputs, num_outputs = grid_mapping.num_inputs, grid_mapping.num_outputs
    symbol = _symbol(name)

    # `emit_pipeline` equations (the primitive path) become the pipelines
    # Pallas emits for them, before anything looks for scoped buffers.
    jaxpr = expand_pipelines(jaxpr, getattr(grid_mapping, "grid_names", None) or (None,) * len(grid_mapping.grid),
                             tuple(grid_mapping.grid))

    # Scalar-prefetch refs the kernel writes (TPU kernels keep state in
    # SMEM scalars: paged attention's buffer index) become copies, found by
    # translating until no write to a read-only one is left.
    written: set[int] = set()
    while True:
        try:
            translator, refs, scoped_avals, copies = _translate_kernel(
                jaxpr, program_axes, num_scalars, written, where, getattr(grid_mapping, "grid_names", None))
            break
        except ScalarWrite as write:
            written.add(write.index)
    has_scratch = bool(grid_mapping.scratch_avals) or bool(copies)
    semantics = _semantics(dimension_semantics, len(grid), vmapped, has_scratch, where)
    if copies:
        for mapping in grid_mapping.block_mappings:
            if _reads_scalars(mapping.index_map_jaxpr, len(grid), written):
                raise Unsupported(f"{where}: an index map reads a scalar-prefetch array the kernel writes "
                                  "(Tessel's index maps see the values the call was given)")
    body = "\n".join(_copy_in(copies, semantics, len(grid)) + translator.emit.lines)
    # The dynamic grid sizes also go to the call as scalar arrays after the
    # kernel's own, for index functions to read `pl.num_programs` from;
    # the kernel takes them as refs it does not read.
    bound_refs = [Value(f"%rb{i}", tuple(a.shape), np.dtype(a.dtype), ref=True) for i, a in enumerate(dynamic_bounds)]
    kernel_refs = refs[:num_scalars] + bound_refs + refs[num_scalars:]
    kernel_args = ", ".join(f"{r.name}: {r.type}" for r in kernel_refs)
    kernel = f"  func.func private @{symbol}_kernel({kernel_args}) {{\n{body}\n    return\n  }}"

    mappings = grid_mapping.block_mappings
    arrays = [physical(m.array_aval) for m in mappings[: num_inputs + num_outputs]]
    scalar_avals = [physical(var.aval.inner_aval) for var in jaxpr.invars[:num_scalars]]
    # XLA passes the scalar-prefetch operands first, then inputs, then results.
    entry_args = [memref_type(tuple(a.shape), a.dtype, entry=True) for a in scalar_avals + arrays]
    names = [f"%a{i}" for i in range(len(entry_args))]
    scalar_names, array_names = names[:num_scalars], names[num_scalars:]
    for aval, ref in zip(scalar_avals, refs[:num_scalars]):
        if memref_type(tuple(aval.shape), aval.dtype, entry=True) != ref.type:
            raise Unsupported(f"{where}: Tessel does not support scalar-prefetch arrays of {aval.dtype}")
    aliases = dict(input_output_aliases or ())
    ins = []
    for i in range(num_inputs):
        operand = num_scalars + i
        ins.append(array_names[num_inputs + aliases[operand]] if operand in aliases else array_names[i])
    outs = array_names[num_inputs:]
    in_types = entry_args[num_scalars:num_scalars + num_inputs]
    out_types = entry_args[num_scalars + num_inputs:]
    scalar_refs = kernel_refs[:num_scalars + len(bound_refs)]
    scalars = [Value(f"%s{i}", r.shape, r.dtype, ref=True) for i, r in enumerate(scalar_refs)]
    functions: list[str] = []
    # Each grid axis's size for index maps: an int, or the scalar array
    # holding a dynamic size.
    bounds = iter(scalars[num_scalars:])
    index_map_grid = [int(g) if isinstance(g, (int, np.integer)) else next(bounds) for g in grid_mapping.grid]
    in_specs = [_spec(m, index_map_grid, scalars, where, functions) for m in mappings[:num_inputs]]
    out_specs = [_spec(m, index_map_grid, scalars, where, functions)
                 for m in mappings[num_inputs:num_inputs + num_outputs]]
    scalars_text = ""
    if scalars:
        scalars_text = (f" scalars({', '.join(scalar_names + bound_names)} : "
                        f"{', '.join(entry_args[:num_scalars] + bound_types)})")
    scratch = ""
    if grid_mapping.scratch_avals or scoped_avals:
        types = []
        for aval in list(grid_mapping.scratch_avals) + scoped_avals:
            inner = getattr(aval, "inner_aval", aval)
            if not hasattr(inner, "shape"):
                raise Unsupported(f"{where}: Tessel does not support the scratch {aval}")
            # Semaphores are zero where each worker starts (grid.call's
            # semaphore scratch), other scratch uninitialized; memory the
            # cores share (`pltpu.VMEM_SHARED`) one buffer for the call.
            if _is_semaphore(inner.dtype):
                kind = "semaphore "
            else:
                kind = "shared " if _is_shared(aval) else ""
            types.append(kind + memref_type(tuple(inner.shape), _ref_dtype(inner.dtype)))
        scratch = f" scratch({', '.join(types)})"
    semantics_text = f"\n        semantics [{', '.join(semantics)}]" if semantics is not None else ""
    # The call's errors (a block out of bounds at run time) name the
    # kernel's first line.
    frame = _kernel_frame(jaxpr)
    call_location = f' loc("{frame.file_name}":{frame.start_line}:1)' if frame is not None else ""
    call = (
        f"    grid.call @{symbol}_kernel grid [{', '.join(map(str, grid))}]{' cores' if cores else ''}"
        f"{scalars_text}\n"
        f"        ins({', '.join(ins)}{' : ' if ins else ''}{', '.join(in_types)})\n"
        f"        outs({', '.join(outs)}{' : ' if outs else ''}{', '.join(out_types)}){scratch}\n"
        f"        in_specs [{', '.join(in_specs)}]\n"
        f"        out_specs [{', '.join(out_specs)}]{semantics_text}{call_location}"
    )
    entry_params = ", ".join(f"{n}: {t}" for n, t in zip(bound_names + names, bound_types + entry_args))
    # Semaphores a call returns (futures a later call waits on) start at
    # zero, as a TPU's semaphores do; an aliased input's count carries over.
    aliased_outputs = set(aliases.values())
    for k, mapping in enumerate(mappings[num_inputs:num_inputs + num_outputs]):
        if _is_semaphore(mapping.array_aval.dtype) and k not in aliased_outputs:
            loads += [f"    %sem_zero{k} = arith.constant 0 : i32",
                      f"    linalg.fill ins(%sem_zero{k} : i32) outs({outs[k]} : {out_types[k]})"]
    prologue = "".join(f"{line}\n" for line in loads)
    entry = f"  func.func @{symbol}({entry_params}) {{\n{prologue}{call}\n    return\n  }}"
    index_functions = "".join(f"{function}\n" for function in functions)
    text = f"module{_knob_attributes(knobs)} {{\n{index_functions}{kernel}\n{entry}\n}}\n"
    return Translated(text=text, entry=symbol, prints=translator.prints)
