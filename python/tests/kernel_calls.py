"""Shared by the dtype tests: a function of whole blocks run as a kernel."""

import jax
from jax.experimental import pallas as pl


def in_kernel(fn, *args):
    """`fn` applied to whole loaded blocks inside a jitted pallas_call."""
    out = jax.eval_shape(fn, *args)

    def kernel(*refs):
        refs[-1][...] = fn(*(ref[...] for ref in refs[:-1]))

    return jax.jit(pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct(out.shape, out.dtype)))(*args)
