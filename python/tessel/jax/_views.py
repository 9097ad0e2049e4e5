"""Ref views: accesses through `ref.reshape(...)`, `ref.bitcast(dtype)` and
transposes, chained with indexers, on refs of every memory space.

A chain of transforms splits into its leading indexers, which select a
window of the ref as any access does (`RefOps.access`), and the rest,
applied to the window's value: a reshape is row-major over the view's
shape, a bitcast packs or unpacks along the second-minor dim as a TPU
does (`MathOps.tpu_bitcast`), an indexer after them slices the value.
A read loads the window and applies them; a write loads the window,
applies them, inserts the value into the last view and undoes each step
back to the window, which it stores: a read-modify-write of the window
(exact for the kernel's own buffers; a window of an array other programs
write at the same time needs its own leading indexers, as on a TPU).
JAX's TPU interpreter runs none of this (its indexers only)."""

from __future__ import annotations

import collections
import dataclasses

import numpy as np
from jax import tree_util
from jax._src import core, state
from jax._src.state import indexing, types

from tessel.jax._emit import Value


def ref_and_transforms(ref) -> tuple:
    """(the ref variable, its transforms) of a ref or a `TransformedRef`."""
    if isinstance(ref, state.TransformedRef):
        return ref.ref, ref.transforms
    return ref, ()


def split_transforms(transforms) -> tuple[list, list]:
    """(the leading indexers, the transforms from the first view on)."""
    transforms = list(transforms or ())
    first = next((k for k, t in enumerate(transforms) if not isinstance(t, indexing.NDIndexer)), len(transforms))
    return transforms[:first], transforms[first:]


@dataclasses.dataclass(frozen=True)
class RefView(Value):
    """A ref handed on through transforms (a pipeline body's block ref: a
    buffer's current slot): the base ref's value with the transforms its
    accesses go through first. `scope` holds the values of the variables
    in `prefix` (the scope that made the view), so the view stays
    meaningful in nested jaxprs."""

    prefix: tuple = ()
    scope: dict = dataclasses.field(default_factory=dict, compare=False, hash=False)


class ViewOps:
    """The translator's ref-view helpers (a mixin of `KernelTranslator`)."""

    def ref_view(self, env, ref) -> Value:
        """The value of `ref` (a ref variable, or a `TransformedRef` of one
        whose variables `env` holds), a `RefView` when it has transforms."""
        base, transforms = ref_and_transforms(ref)
        value = self.read(env, base)
        if not transforms:
            return value
        value, prefix, scope = self.unview(env, value, transforms)
        variables = {var for transform in prefix for var in _variables(transform)}
        return RefView(value.name, value.shape, value.dtype, True, tuple(prefix), {v: scope[v] for v in variables})

    def unview(self, env, ref: Value, transforms):
        """(the base ref, the whole chain of transforms from it, the
        environment their variables are read in) of an access of `ref`
        through `transforms`."""
        if not isinstance(ref, RefView):
            return ref, list(transforms or ()), env
        base = Value(ref.name, ref.shape, ref.dtype, True)
        return base, list(ref.prefix) + list(transforms or ()), collections.ChainMap(env, ref.scope)

    def window_shape(self, ref: Value, leading) -> tuple[int, ...]:
        return tuple(int(d) for d in leading[-1].get_indexer_shape()) if leading else ref.shape

    def view_steps(self, env, window: Value, rest) -> list[Value]:
        """The window's value and each view of it, in order."""
        values = [window]
        for transform in rest:
            values.append(self.apply_view(env, values[-1], transform))
        return values

    def apply_view(self, env, value: Value, transform) -> Value:
        if isinstance(transform, types.ReshapeTransform):
            shape = tuple(int(d) for d in transform.shape)
            if int(np.prod(shape)) != int(np.prod(value.shape)):
                self.fail(f"a reshape of a {value.shape} ref to {shape}")
            return self.reshape(value, shape)
        if isinstance(transform, types.BitcastTransform):
            return self.tpu_bitcast(value, np.dtype(transform.dtype))
        if isinstance(transform, types.TransposeTransform):
            return self.transpose(value, transform.permutation)
        if isinstance(transform, indexing.NDIndexer):
            offsets, sizes, strides, squeezed = self.value_window(env, value, transform)
            part = self.extract_slice(value, offsets, sizes, strides)
            return self.reshape(part, tuple(s for d, s in enumerate(sizes) if d not in squeezed))
        self.fail(f"the ref transform {type(transform).__name__}")

    def undo_view(self, env, before: Value, transform, after: Value) -> Value:
        """`before` with its view through `transform` replaced by `after`."""
        if isinstance(transform, types.ReshapeTransform):
            return self.reshape(after, before.shape)
        if isinstance(transform, types.BitcastTransform):
            return self.tpu_bitcast(after, before.dtype)
        if isinstance(transform, types.TransposeTransform):
            inverse = [0] * len(transform.permutation)
            for position, dim in enumerate(transform.permutation):
                inverse[dim] = position
            return self.transpose(after, inverse)
        offsets, sizes, strides, _ = self.value_window(env, before, transform)
        part = self.reshape(self.convert(after, before.dtype), tuple(sizes))
        return self.insert_slice(part, before, offsets, strides)

    def value_window(self, env, value: Value, indexer):
        """(offsets, sizes, strides, squeezed dims) of an indexer applied to
        a value: slices, strided slices and scalars (index arrays only at
        the ref itself)."""
        offsets, sizes, strides, squeezed = [], [], [], []
        for dim, index in enumerate(indexer.indices):
            kind = self.index_kind(env, index)
            if kind[0] == "array":
                self.fail("index arrays after a reshape or bitcast of a ref")
            offsets.append(kind[1][0])
            sizes.append(1 if kind[0] == "scalar" else kind[2])
            strides.append(kind[3] if kind[0] == "strided" else 1)
            if kind[0] == "scalar":
                squeezed.append(dim)
        return offsets, sizes, strides, squeezed

    def load_view(self, env, ref: Value, transforms, shape, dtype, mask=None, other=None) -> Value:
        """A read of `ref` through `transforms` (indexers and views)."""
        ref, transforms, env = self.unview(env, ref, transforms)
        leading, rest = split_transforms(transforms)
        if not rest:
            return self.load(ref, self.access(env, ref, leading), shape, dtype, mask, other)
        window = self.load(ref, self.access(env, ref, leading), self.window_shape(ref, leading), ref.dtype)
        value = self.view_steps(env, window, rest)[-1]
        if mask is not None:
            mask = self.splat(mask, value.shape)
            fill = self.splat(self.convert(other, value.dtype), value.shape)
            value = self.pick(mask, value, fill)
        return self.reshape(value, tuple(shape))

    def store_view(self, env, ref: Value, transforms, value: Value, mask=None) -> None:
        """A write of `value` to `ref` through `transforms`."""
        ref, transforms, env = self.unview(env, ref, transforms)
        leading, rest = split_transforms(transforms)
        access = self.access(env, ref, leading)
        if not rest:
            self.store(ref, access, value, mask)
            return
        window = self.load(ref, access, self.window_shape(ref, leading), ref.dtype)
        steps = self.view_steps(env, window, rest)
        new = self.convert(self.splat(value, steps[-1].shape), steps[-1].dtype)
        if mask is not None:
            new = self.pick(self.splat(mask, new.shape), new, steps[-1])
        for transform, before in zip(reversed(rest), reversed(steps[:-1])):
            new = self.undo_view(env, before, transform, new)
        self.store(ref, access, new)


def _variables(transform) -> list:
    """The variables a transform holds (an indexer's dynamic starts and
    sizes)."""
    return [leaf for leaf in tree_util.tree_leaves(transform) if isinstance(leaf, core.Var)]
