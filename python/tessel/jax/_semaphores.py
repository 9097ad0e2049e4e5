"""TPU semaphores and DMAs: signal, wait, read, async copies.

Semaphore scratch (`pltpu.SemaphoreType.REGULAR/DMA/BARRIER`, in
`scratch_shapes` or `run_scoped`) is i32 counters, zero where a worker's
programs start, as a TPU core's are. `pl.semaphore_signal/wait/read` are
`block.semaphore_*` ops; an async copy's start is a `block.dma_start`,
which copies when it starts (as JAX's interpreter does in its eager mode)
and counts its bytes on its semaphore, and its wait a semaphore wait for
the source window's bytes (a window of traced size: a loop of one-row
DMAs, and a wait for their bytes). A worker's semaphores are its own, so a wait
its count cannot satisfy is reported where it stands (the kernel's line),
never a hang. On a TensorCore mesh (`pl.kernel`, `core_map`) the cores run
at once and signal each other (`core_index=`): a wait there waits until
another core signals, up to the wait timeout (`TESSEL_WAIT_TIMEOUT`,
seconds), then fails at its line."""

from __future__ import annotations

import numpy as np
from jax import tree_util
from jax._src import core
from jax._src.state import indexing

from tessel.jax._emit import Value, is_float
from tessel.jax._refs import DynamicWindow, view_aval, view_type
from tessel.jax._registry import rule
from tessel.jax._views import ref_and_transforms, split_transforms


def semaphore_at(ctx, sem, transforms) -> tuple[Value, list[str]]:
    """The semaphore ref and the index of the one semaphore its indexers
    select (every dimension indexed by a scalar)."""
    tr = ctx.tr
    ref, transforms, env = tr.unview(ctx.env, ctx.read(sem), transforms)
    leading, rest = split_transforms(transforms)
    if rest:
        ctx.fail("a semaphore through a reshape or bitcast view")
    access = tr.access(env, ref, leading)
    if access is None:
        if ref.shape:
            ctx.fail(f"a {ref.shape} array of semaphores where one semaphore is needed")
        return ref, []
    if not isinstance(access, tuple) or access[3] is not None or len(access[2]) != len(ref.shape):
        ctx.fail("a window of semaphores where one semaphore is needed")
    return ref, list(access[0])


def _semaphore_text(ref: Value, indices: list[str]) -> str:
    return f"{ref.name}[{', '.join(indices)}]" if indices else ref.name


def _count(ctx, op: str, ref: Value, indices: list[str], amount: Value, core: str | None = None) -> None:
    """`block.semaphore_<op>` (signal or wait) of `amount` (i32) on one
    semaphore; a signal with `core` (an index) to that core's."""
    target = f" core {core}" if core is not None else ""
    ctx.tr.emit.line(f"block.semaphore_{op} {_semaphore_text(ref, indices)}, {amount.name}{target} : {ref.type}")


@rule("semaphore_signal", reads_operands=False)
def semaphore_signal(ctx):
    sem, transforms, inc, device_id, core_index = tree_util.tree_unflatten(ctx.params["args_tree"], ctx.eqn.invars)
    if device_id is not None:
        core_index = _core_of(ctx, device_id, core_index)
    ref, indices = semaphore_at(ctx, sem, transforms)
    amount = ctx.tr.convert(ctx.read(inc), np.int32)
    # To another core of the mesh (`core_index`): that core's semaphore.
    core = ctx.tr.as_index(ctx.read(core_index)) if core_index is not None else None
    _count(ctx, "signal", ref, indices, amount, core)
    return []


def _core_of(ctx, device_id, core_index):
    """The core a signal's `device_id` names when it names the kernel's
    own core axis (`device_id={"core": i}` in a `core_map`: a core of the
    mesh, not another device)."""
    names = getattr(ctx.tr, "grid_names", {})
    if isinstance(device_id, dict) and len(device_id) == 1 and core_index is None:
        ((name, index),) = device_id.items()
        if names.get(name) == 0:
            return index
    ctx.fail("a semaphore signal to another device (device_id)")


@rule("semaphore_wait", reads_operands=False)
def semaphore_wait(ctx):
    sem, transforms, value, decrement = tree_util.tree_unflatten(ctx.params["args_tree"], ctx.eqn.invars)
    if decrement is not None and not bool(getattr(decrement, "val", decrement)):
        ctx.fail("a semaphore wait without decrement (decrement=False)")
    ref, indices = semaphore_at(ctx, sem, transforms)
    amount = ctx.tr.convert(ctx.read(value), np.int32)
    _count(ctx, "wait", ref, indices, amount)
    return []


@rule("semaphore_read", reads_operands=False)
def semaphore_read(ctx):
    sem, transforms = tree_util.tree_unflatten(ctx.params["args_tree"], ctx.eqn.invars)
    ref, indices = semaphore_at(ctx, sem, transforms)
    return ctx.tr.emit.op(f"block.semaphore_read {_semaphore_text(ref, indices)} : {ref.type}", (), np.int32)


def _dma_bytes(ctx, src) -> int:
    shape, dtype = _static_view(ctx, src)
    return int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize


def _dma_count(ctx, src) -> Value:
    """The i32 bytes of a DMA's source window, computed at run time for a
    window of traced size (its rows' bytes times their number)."""
    tr = ctx.tr
    rows = _traced_slices(ref_and_transforms(src)[1])
    if not rows:
        return tr.emit.constant(_dma_bytes(ctx, src), np.int32)
    if len(rows) != 1:
        ctx.fail("a DMA of windows of traced size other than one pl.ds of traced size on each side")
    inner = view_aval(src)
    row_bytes = int(np.prod([d for d in inner.shape if isinstance(d, (int, np.integer))], dtype=np.int64)) * \
        np.dtype(inner.dtype).itemsize
    number = tr.convert(ctx.read(rows[0].size), np.int32)
    return tr.arith("arith.muli", number, tr.emit.constant(row_bytes, np.int32))


def _static_view(ctx, ref):
    """`view_type(ref)`; a window of dynamic size is refused at the
    user's line (DMA sizes are static in Tessel's IR)."""
    try:
        return view_type(ref)
    except DynamicWindow as window:
        ctx.fail(f"a DMA of {window}")


def _window(ctx, env, ref: Value, transforms):
    """` [offsets] [sizes]` of a DMA side (empty for the whole ref), or None
    when the side needs views or index arrays (copied through values)."""
    leading, rest = split_transforms(transforms)
    if rest:
        return None
    access = ctx.tr.access(env, ref, leading)
    if access is None:
        return ""
    if not isinstance(access, tuple) or access[3] is not None:
        return None
    offsets, sizes = access[0], access[1]
    return f"[{', '.join(offsets)}] [{', '.join(map(str, sizes))}]"


@rule("dma_start", reads_operands=False)
def dma_start(ctx):
    """A TPU local async copy (`pltpu.async_copy`, `make_async_copy`,
    `sync_copy`): copied when it starts, `add=True` adding into the
    destination, its bytes counted on the destination's semaphore."""
    tr = ctx.tr
    src, dst, dst_sem, src_sem, device_id = ctx.params["tree"].unflatten(ctx.eqn.invars)
    if device_id is not None:
        ctx.fail("a remote DMA (device_id)")
    (src_ref, src_transforms), (dst_ref, dst_transforms) = ref_and_transforms(src), ref_and_transforms(dst)
    sem_ref, sem_transforms = ref_and_transforms(dst_sem)
    semaphore, indices = semaphore_at(ctx, sem_ref, sem_transforms)
    source, src_transforms, src_env = tr.unview(ctx.env, ctx.read(src_ref), src_transforms)
    target, dst_transforms, dst_env = tr.unview(ctx.env, ctx.read(dst_ref), dst_transforms)
    add = " add" if ctx.params.get("add") else ""

    def start(src_window, dst_window):
        tr.emit.line(f"block.dma_start {source.name}{src_window}, {target.name}{dst_window}, "
                     f"{_semaphore_text(semaphore, indices)}{add} : {source.type}, {target.type}, {semaphore.type}")

    rows = _traced_slices(src_transforms), _traced_slices(dst_transforms)
    if any(rows):
        _dma_by_rows(ctx, (src_env, source, src_transforms), (dst_env, target, dst_transforms), rows, start)
        return []
    (src_shape, src_dtype), (dst_shape, dst_dtype) = _static_view(ctx, src), _static_view(ctx, dst)
    if src_shape != dst_shape or src_dtype != dst_dtype:
        ctx.fail(f"a DMA from a {src_shape} {src_dtype} window to a {dst_shape} {dst_dtype} one")
    src_window = _window(ctx, src_env, source, src_transforms)
    dst_window = _window(ctx, dst_env, target, dst_transforms)
    if src_window is not None and dst_window is not None:
        start(src_window, dst_window)
        return []
    # Through views or index arrays: the copy as values, then its count.
    value = tr.load_view(src_env, source, src_transforms, src_shape, src_dtype)
    if ctx.params.get("add"):
        old = tr.load_view(dst_env, target, dst_transforms, dst_shape, dst_dtype)
        value = tr.arith("arith.addf" if is_float(dst_dtype) else "arith.addi", old, value)
    tr.store_view(dst_env, target, dst_transforms, value)
    count = tr.emit.constant(_dma_bytes(ctx, src), np.int32)
    _count(ctx, "signal", semaphore, indices, count)
    return []


def _traced_slices(transforms) -> list:
    """The `pl.ds` slices of traced size among a chain's indexers (a
    `pl.BoundedSlice` block's window)."""
    return [index for transform in transforms if isinstance(transform, indexing.NDIndexer)
            for index in transform.indices
            if isinstance(index, indexing.Slice) and isinstance(index.size, core.Var)]


def _dma_by_rows(ctx, src_side, dst_side, rows, start) -> None:
    """A DMA between windows of a traced size along one dim (the same on
    both sides) as a loop of one-row DMAs on the same semaphore: Tessel's
    DMA windows have static sizes, and the rows' bytes add up to the
    window's, which its wait waits for (`_dma_count`)."""
    tr = ctx.tr
    (src_env, source, src_transforms), (dst_env, target, dst_transforms) = src_side, dst_side
    (src_rows, dst_rows) = rows
    if len(src_rows) != 1 or len(dst_rows) != 1 or split_transforms(src_transforms)[1] or \
            split_transforms(dst_transforms)[1]:
        ctx.fail("a DMA of windows of traced size other than one pl.ds of traced size on each side")
    (src_row,), (dst_row,) = src_rows, dst_rows
    count = tr.as_index(tr.read(src_env, src_row.size))
    step, row = tr.emit.index(1), tr.emit.fresh()
    loc = tr.emit.loc
    tr.emit.line(f"scf.for {row} = {tr.emit.index(0)} to {count} step {step} {{", located=False)
    tr.emit.depth += 1
    tr.row_slices = {id(src_row): tr.offset_plus(tr.offset(src_env, src_row.start), (row, None), 1),
                     id(dst_row): tr.offset_plus(tr.offset(dst_env, dst_row.start), (row, None), 1)}
    try:
        start(_window(ctx, src_env, source, src_transforms), _window(ctx, dst_env, target, dst_transforms))
    finally:
        tr.row_slices = {}
    tr.emit.depth -= 1
    tr.emit.lines.append("  " * tr.emit.depth + "} " + loc)


@rule("dma_wait", reads_operands=False)
def dma_wait(ctx):
    """A copy's wait: its destination semaphore's count for the source
    window's bytes (any copy of as many bytes on it satisfies it, as on a
    TPU)."""
    src, _, dst_sem, _, device_id = ctx.params["tree"].unflatten(ctx.eqn.invars)
    if device_id is not None:
        ctx.fail("a remote DMA (device_id)")
    sem_ref, sem_transforms = ref_and_transforms(dst_sem)
    semaphore, indices = semaphore_at(ctx, sem_ref, sem_transforms)
    _count(ctx, "wait", semaphore, indices, _dma_count(ctx, src))
    return []
