"""Ref reads and writes and scoped allocations.

`get`/`swap`/`addupdate` and masked loads and stores, with `pl.ds`
windows, scalar indices and index arrays (one 1-D array: `block.load ...
gather`; anything else: `_gather`), through views (`_views`); `run_scoped`.
DMAs and semaphores are `_semaphores`'. Ref rules read their operands
themselves: an indexer's static starts stay Python ints."""

from __future__ import annotations

import numpy as np
from jax import tree_util
from jax._src import core
from jax._src.state import indexing

from tessel.jax import _gather
from tessel.jax._emit import ScalarWrite, Value, is_float, physical, tensor_type
from tessel.jax._registry import rule
from tessel.jax._views import RefView, ref_and_transforms


class RefOps:
    """The translator's ref access helpers (a mixin of `KernelTranslator`)."""

    def access(self, env, ref: Value, transforms):
        """(offsets, sizes, squeezed dims, gather) of an access through
        `transforms` (indexers only: `ViewOps` handles views), an
        `IndexArrays` for index arrays, or None for the whole ref."""
        if not transforms:
            return None
        if not all(isinstance(transform, indexing.NDIndexer) for transform in transforms):
            self.fail("ref transforms other than indexers here")
        dims = [self.index_kind(env, index) for index in transforms[0].indices]
        for inner in transforms[1:]:
            # `.at[...].at[...]`: the chain as one indexer of the ref.
            dims = self.compose(dims, [self.index_kind(env, index) for index in inner.indices])
        # Negative entries of index arrays count from the end (NumPy's and
        # the interpreter's rule), before any clamping.
        dims = [(kind[0], self.wrapped(kind[1], ref.shape[d]), *kind[2:])
                if kind[0] == "array" and len(kind) == 2 else kind for d, kind in enumerate(dims)]
        strided = [kind for kind in dims if kind[0] == "strided"]
        scalars = any(kind[0] == "scalar" for kind in dims)
        arrays = [kind for kind in dims if kind[0] == "array"]
        if len(strided) == 1 and not arrays and not scalars:
            # One strided slice among plain ones: a gather along its dim.
            dims = [("array", self.strided_positions(*kind[1:]), "strided") if kind[0] == "strided" else kind
                    for kind in dims]
            arrays = [kind for kind in dims if kind[0] == "array"]
        elif strided or len(arrays) > 1 or any(len(kind[1].shape) != 1 for kind in arrays) or (arrays and scalars):
            # Offsets as index names alone from here on; strided slices stay
            # slice dims (where NumPy's rules put them), stepping by their
            # stride.
            return _gather.index_arrays([
                ("slice", k[1][0], k[2], k[3]) if k[0] == "strided" else
                (k[0], k[1] if k[0] == "array" else k[1][0], *k[2:]) for k in dims])
        offsets, sizes, squeezed = [], [], []
        self.gather = None
        for dim, kind in enumerate(dims):
            if kind[0] == "slice":
                offsets.append(kind[1])
                sizes.append(kind[2])
            elif kind[0] == "scalar":
                offsets.append(kind[1])
                sizes.append(1)
                squeezed.append(dim)
            else:
                self.gather = (kind[1], dim)
                offsets.append((self.emit.index(0), 0))
                sizes.append(kind[1].shape[0])
        full = not squeezed and self.gather is None and all(
            s == d and o[1] == 0 for s, d, o in zip(sizes, ref.shape, offsets))
        if full:
            return None
        return [o[0] for o in offsets], sizes, squeezed, self.gather

    def index_kind(self, env, index):
        """One indexer entry: ("slice", offset, size), ("strided", offset,
        size, stride), ("scalar", offset) or ("array", i32 Value); offsets
        are (index name, static value or None)."""
        if isinstance(index, indexing.Slice):
            if id(index) in self.row_slices:
                # One row of a window of traced size (`_semaphores._dma_by_rows`).
                return ("slice", self.row_slices[id(index)], 1)
            if isinstance(index.size, core.Var):
                self.fail("a load or store of a window of traced size (pl.ds of a traced size; DMAs copy those)")
            if index.stride != 1:
                return ("strided", self.offset(env, index.start), int(index.size), int(index.stride))
            return ("slice", self.offset(env, index.start), int(index.size))
        shape = tuple(index.aval.shape) if hasattr(index, "aval") else tuple(np.shape(index))
        if shape == ():
            return ("scalar", self.offset(env, index))
        indices = self.read(env, index) if not isinstance(index, (np.ndarray, int)) else \
            self.emit.dense(np.asarray(index))
        if indices.name in self.contiguous and len(indices.shape) == 1:
            # offset + arange(n) (Triton's column indices): a window, read
            # as one block rather than gathered element by element.
            offset = self.contiguous[indices.name]
            start = (self.emit.index(0), 0) if offset is None else (self.as_index(offset), None)
            return ("slice", start, indices.shape[0])
        if indices.dtype != np.dtype(np.int32):
            indices = self.convert(indices, np.int32)
        return ("array", indices)

    def wrapped(self, indices: Value, size: int) -> Value:
        """`indices` with negative entries moved up by `size`."""
        negative = self.cmp("cmpi", "slt", indices, self.const_like(0, indices))
        return self.pick(negative, self.arith("arith.addi", indices, self.const_like(size, indices)), indices)

    def strided_positions(self, start, size: int, stride: int) -> Value:
        """The i32 positions start + stride * i (i < size) of a strided
        `pl.ds` (start an offset), read as a gather along its dim."""
        steps = np.arange(size, dtype=np.int32) * stride
        if start[1] is not None:
            return self.emit.dense(steps + start[1])
        first = self.emit.op(f"arith.index_cast {start[0]} : index to i32", (), np.int32)
        steps = self.emit.dense(steps)
        return self.emit.op(f"arith.addi {steps.name}, {self.splat(first, (size,)).name} : {steps.type}",
                            (size,), np.int32)

    def compose(self, outer: list, inner: list) -> list:
        """The index kinds of `inner` applied to the view `outer` selects
        (its dims those `outer` does not index with a scalar), as kinds of
        the underlying ref: starts add up (scaled by the outer stride),
        strides multiply."""
        if any(kind[0] == "array" for kind in outer + inner):
            self.fail("index arrays in a chain of ref indexers (.at[...].at[...])")
        view = iter(inner)
        composed = []
        for kind in outer:
            if kind[0] == "scalar":
                composed.append(kind)
                continue
            nested = next(view)
            stride = kind[3] if kind[0] == "strided" else 1
            start = self.offset_plus(kind[1], nested[1], stride)
            if nested[0] == "scalar":
                composed.append(("scalar", start))
                continue
            stride *= nested[3] if nested[0] == "strided" else 1
            composed.append(("strided", start, nested[2], stride) if stride != 1 else ("slice", start, nested[2]))
        return composed

    def offset_plus(self, base, offset, scale: int):
        """The offset base + scale * offset (offsets as `offset` gives)."""
        if base[1] is not None and offset[1] is not None:
            total = base[1] + scale * offset[1]
            return self.emit.index(total), total
        scaled = offset[0]
        if scale != 1:
            factor, scaled = self.emit.index(scale), self.emit.fresh()
            self.emit.line(f"{scaled} = arith.muli {offset[0]}, {factor} : index")
        total = self.emit.fresh()
        self.emit.line(f"{total} = arith.addi {base[0]}, {scaled} : index")
        return total, None

    def offset(self, env, start):
        """(index SSA name, static value or None) of an offset."""
        if isinstance(start, (int, np.integer)):
            return self.emit.index(int(start)), int(start)
        if isinstance(start, core.Literal):
            return self.emit.index(int(start.val)), int(start.val)
        value = self.read(env, start)
        return self.as_index(value), None

    def mask_text(self, mask, other, window, dtype) -> str:
        """` mask %m [other %o]` for a masked access of `window` shape."""
        if mask is None:
            return ""
        mask = self.reshape(self.splat(mask, self.kept_shape(mask, window)), tuple(window)) \
            if mask.shape != tuple(window) else mask
        text = f" mask {mask.name}"
        if other is not None:
            if other.shape != ():
                self.fail("a masked load whose `other` is not a scalar")
            text += f" other {self.convert(other, dtype).name}"
        return text

    def kept_shape(self, mask, window):
        """The shape a mask broadcasts to before the squeezed window dims
        come back: the access's result shape."""
        return self.result_shape if self.result_shape is not None else tuple(window)

    def load(self, ref: Value, access, shape, dtype, mask=None, other=None) -> Value:
        if access is None:
            if not ref.shape:
                return self.emit.op(f"memref.load {ref.name}[] : {ref.type}", (), dtype)
            self.result_shape = ref.shape
            masked = self.mask_text(mask, other, ref.shape, dtype)
            return self.emit.op(f"block.load {ref.name}{masked} : {ref.type} -> {tensor_type(ref.shape, dtype)}",
                                ref.shape, dtype)
        if isinstance(access, _gather.IndexArrays):
            self.result_shape = access.shape
            return self.reshape(_gather.gather(self, ref, access, dtype, mask, other), tuple(shape))
        offsets, sizes, squeezed, gather = access
        if len(squeezed) == len(sizes) and mask is None:
            return self.emit.op(f"memref.load {ref.name}[{', '.join(offsets)}] : {ref.type}", (), dtype)
        self.result_shape = tuple(shape)
        masked = self.mask_text(mask, other, sizes, dtype)
        gathered, index_type = "", ""
        if gather is not None:
            gathered, index_type = f" gather {gather[0].name} dim {gather[1]}", f", {gather[0].type}"
        window = self.emit.op(
            f"block.load {ref.name}[{', '.join(offsets)}] [{', '.join(map(str, sizes))}]{gathered}{masked} : "
            f"{ref.type}{index_type} -> {tensor_type(sizes, dtype)}",
            tuple(sizes),
            dtype,
        )
        return self.reshape(window, tuple(shape))

    def store(self, ref: Value, access, value: Value, mask=None) -> None:
        if ref.name in self.read_only:
            # TPU kernels may keep state in SMEM scalars (paged attention's
            # buffer index). The refs are the caller's XLA buffers, shared
            # by parallel workers: the kernel is translated again with this
            # one as a per-worker copy (`_call.translate`).
            raise ScalarWrite(self.read_only[ref.name])
        if access is None:
            if not ref.shape:
                self.emit.line(f"memref.store {value.name}, {ref.name}[] : {ref.type}")
                return
            value = self.splat(value, ref.shape)
            self.result_shape = ref.shape
            masked = self.mask_text(mask, None, ref.shape, value.dtype)
            self.emit.line(f"block.store {value.name}, {ref.name}{masked} : {value.type}, {ref.type}")
            return
        if isinstance(access, _gather.IndexArrays):
            _gather.scatter(self, ref, access, value, mask)
            return
        offsets, sizes, squeezed, gather = access
        if len(squeezed) == len(sizes) and mask is None:
            self.emit.line(f"memref.store {value.name}, {ref.name}[{', '.join(offsets)}] : {ref.type}")
            return
        kept = tuple(s for d, s in enumerate(sizes) if d not in squeezed)
        value = self.reshape(self.splat(value, kept), tuple(sizes))
        self.result_shape = kept
        masked = self.mask_text(mask, None, sizes, value.dtype)
        scattered, index_type = "", ""
        if gather is not None:
            scattered, index_type = f" scatter {gather[0].name} dim {gather[1]}", f", {gather[0].type}"
        self.emit.line(
            f"block.store {value.name}, {ref.name}[{', '.join(offsets)}]{scattered}{masked} : {value.type}, "
            f"{ref.type}{index_type}"
        )


@rule("run_scoped", moves_values=True)
def run_scoped(ctx, *consts):
    """`pl.run_scoped`: the body with its allocations bound to the scratch
    refs `translate` set aside for this scope."""
    tr = ctx.tr
    if any(ctx.params.get("ref_transforms") or ()) or ctx.params.get("collective_axes"):
        ctx.fail("run_scoped with ref transforms or collective axes")
    body = ctx.params["jaxpr"]
    inner = dict(zip(body.constvars, consts))
    inner.update(zip(body.invars, tr.scoped[id(ctx.eqn)]))
    return tr.jaxpr(body, inner)


@rule("empty_ref", reads_operands=False, moves_values=True)
def empty_ref(ctx):
    """`jax.empty_ref(...)` in a kernel: an uninitialized buffer, the scratch
    ref `translate` set aside for it (as for a `run_scoped` allocation)."""
    return ctx.tr.scoped[id(ctx.eqn)]


@rule("masked_load", reads_operands=False, moves_values=True)
def masked_load(ctx):
    tr = ctx.tr
    ref, transforms, mask, other = tree_util.tree_unflatten(ctx.params["args_tree"], ctx.eqn.invars)
    ref = ctx.read(ref)
    mask = None if mask is None else ctx.read(mask)
    other = None if other is None else ctx.read(other)
    if mask is not None and other is None:
        other = tr.emit.constant(0, ctx.out_dtype)
    return tr.load_view(ctx.env, ref, transforms, ctx.out_shape, ctx.out_dtype, mask, other)


@rule("masked_swap", reads_operands=False)
def masked_swap(ctx):
    tr = ctx.tr
    ref, transforms, value, mask = tree_util.tree_unflatten(ctx.params["args_tree"], ctx.eqn.invars)
    ref = ctx.read(ref)
    value = ctx.read(value)
    mask = None if mask is None else ctx.read(mask)
    shape, dtype = ctx.out_shape, ctx.out_dtype
    old = None
    if ctx.eqn.outvars[0] in tr.used:
        zero = tr.emit.constant(0, dtype) if mask is not None else None
        old = tr.load_view(ctx.env, ref, transforms, shape, dtype, mask, zero)
        if mask is not None:
            # JAX's masked swap returns the old value where the mask holds
            # and the stored value elsewhere.
            where = tr.splat(mask, shape)
            stored = tr.convert(tr.splat(value, shape), dtype)
            old = tr.emit.op(f"arith.select {where.name}, {old.name}, {stored.name} : {where.type}, {old.type}",
                             shape, old.dtype)
    tr.store_view(ctx.env, ref, transforms, value, mask)
    return old if old is not None else value


@rule("get", reads_operands=False, moves_values=True)
def get(ctx):
    tr = ctx.tr
    ref = ctx.read(ctx.eqn.invars[0])
    transforms = tree_util.tree_unflatten(ctx.params["tree"], ctx.eqn.invars[1:])
    if isinstance(ref, RefView):
        # A pipeline body's block ref (keys are not pipelined).
        return tr.load_view(ctx.env, ref, transforms, ctx.out_shape, ctx.out_dtype)
    key_dims = ref.shape[len(ctx.avals_in[0].shape):]
    if key_dims:
        # A read of PRNG keys reads their data: the key's dims whole.
        if len(transforms) > 1 or not all(isinstance(t, indexing.NDIndexer) for t in transforms):
            ctx.fail("a read of PRNG keys through views")
        if transforms:
            indexer = transforms[0]
            whole = tuple(indexing.Slice(0, size) for size in key_dims)
            transforms = [indexing.NDIndexer(tuple(indexer.indices) + whole, ref.shape, indexer.int_indexer_shape)]
        return tr.load_view(ctx.env, ref, transforms, tuple(ctx.out_shape) + key_dims, ref.dtype)
    return tr.load_view(ctx.env, ref, transforms, ctx.out_shape, ctx.out_dtype)


@rule("swap", reads_operands=False, moves_values=True)
def swap(ctx):
    tr = ctx.tr
    ref, value = ctx.read(ctx.eqn.invars[0]), ctx.read(ctx.eqn.invars[1])
    transforms = tree_util.tree_unflatten(ctx.params["tree"], ctx.eqn.invars[2:])
    old = None
    if ctx.eqn.outvars[0] in tr.used:
        old = tr.load_view(ctx.env, ref, transforms, ctx.out_shape, ctx.out_dtype)
    tr.store_view(ctx.env, ref, transforms, value)
    return old if old is not None else value


@rule("addupdate", reads_operands=False)
def addupdate(ctx):
    tr = ctx.tr
    ref, value = ctx.read(ctx.eqn.invars[0]), ctx.read(ctx.eqn.invars[1])
    transforms = tree_util.tree_unflatten(ctx.params["tree"], ctx.eqn.invars[2:])
    old = tr.load_view(ctx.env, ref, transforms, value.shape, value.dtype)
    op = "arith.addf" if is_float(value.dtype) else "arith.addi"
    total = tr.emit.op(f"{op} {old.name}, {value.name} : {old.type}", value.shape, value.dtype)
    tr.store_view(ctx.env, ref, transforms, total)
    return []


def view_aval(ref):
    """The aval of a ref (a jaxpr variable, or a `TransformedRef` of one)
    seen through its transforms (its dims of traced size not ints)."""
    ref, transforms = ref_and_transforms(ref)
    aval = ref.aval
    for transform in transforms:
        aval = transform.transform_type(aval)
    return physical(getattr(aval, "inner_aval", aval))


def view_type(ref) -> tuple[tuple[int, ...], np.dtype]:
    """(shape, dtype) of a ref (a jaxpr variable, or a `TransformedRef` of
    one) seen through its transforms."""
    inner = view_aval(ref)
    if not all(isinstance(d, (int, np.integer)) for d in inner.shape):
        shape = ", ".join(str(int(d)) if isinstance(d, (int, np.integer)) else "?" for d in inner.shape)
        raise DynamicWindow(f"a window of dynamic size ({shape}) (pl.BoundedSlice, pl.ds of a traced size)")
    return tuple(int(d) for d in inner.shape), np.dtype(inner.dtype)


class DynamicWindow(Exception):
    """A ref's window whose size is only known at run time."""
