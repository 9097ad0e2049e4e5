"""Shared by tests: a function of whole blocks run as a kernel (the dtype
tests), a double-buffered DMA pipeline (the semaphore and race tests)."""

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def in_kernel(fn, *args):
    """`fn` applied to whole loaded blocks inside a jitted pallas_call."""
    out = jax.eval_shape(fn, *args)

    def kernel(*refs):
        refs[-1][...] = fn(*(ref[...] for ref in refs[:-1]))

    return jax.jit(pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct(out.shape, out.dtype)))(*args)


#: The faults `pipeline_kernel` can inject into program `victim`.
PIPELINE_FAULTS = ("none", "missing_wait", "late_wait", "slot_reused_early", "page_out_of_bounds")


def pipeline_kernel(pages: int, slots: int, ahead: int, fault: str = "none", victim: int = -1):
    """A kernel streaming `pages` pages from HBM through `slots` buffers,
    `ahead` copies in flight: program i starts page i + ahead's copy (the
    first also pages 0..ahead-1), waits for its own page, computes. Race-free
    for 0 < ahead < slots and no fault. A fault: program `victim` never
    waits for its page (`missing_wait`) or waits after reading it
    (`late_wait`); the copy of page `victim` reads one page past the end
    (`page_out_of_bounds`); `slot_reused_early` is `ahead == slots` (a copy
    lands in the slot of a page not read yet)."""

    def kernel(x_hbm, o_ref, buf, sems):
        i = pl.program_id(0)

        def copy(page):
            past_end = (pages - page) * (page == victim) if fault == "page_out_of_bounds" else 0
            slot = page % slots
            return pltpu.make_async_copy(x_hbm.at[page + past_end], buf.at[slot], sems.at[slot])

        @pl.when(i == 0)
        def _():
            for page in range(ahead):
                copy(page).start()

        @pl.when(i + ahead < pages)
        def _():
            copy(i + ahead).start()

        @pl.when(jnp.logical_or(i != victim, fault not in ("missing_wait", "late_wait")))
        def _():
            copy(i).wait()

        o_ref[...] = buf[i % slots] * 2 + i.astype(o_ref.dtype)

        @pl.when(jnp.logical_and(i == victim, fault == "late_wait"))
        def _():
            copy(i).wait()

    return kernel
