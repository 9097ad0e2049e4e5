"""The translator's primitive registry: one rule per primitive, the only
place the walk looks, and what `supported_primitives()` reports."""

import os
from pathlib import Path

import jax
import jax.numpy as jnp
import pytest
from jax.experimental import pallas as pl

import tessel.jax
from tessel.jax import _registry


def test_supported_primitives_are_the_registry():
    names = tessel.jax.supported_primitives()
    assert names == sorted(_registry.RULES)
    # A few of every concern.
    for name in ["add", "exp", "dot_general", "reduce_max", "cumsum", "get", "swap", "dma_start", "gather",
                 "scatter-add", "cond", "while", "pjit", "program_id", "nextafter", "roll"]:
        assert name in names, name


def test_a_primitive_has_one_rule():
    with pytest.raises(RuntimeError, match="two translation rules for the JAX primitive 'add'"):
        _registry.rule("add")(lambda ctx, a, b: a)


def test_a_primitive_without_a_rule_is_named_with_the_users_line():
    def kernel(x_ref, o_ref):
        o_ref[...] = jax.lax.erf_inv(x_ref[...]) + jax.lax.igamma(x_ref[...], x_ref[...])

    x = jnp.full((8, 128), 0.5, jnp.float32)
    with pytest.raises(NotImplementedError, match=r"test_registry\.py:\d+: .*'igamma'"):
        jax.jit(pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype)))(x)
    assert "igamma" not in tessel.jax.supported_primitives()


def test_the_generated_page_lists_the_registry():
    page = Path(__file__).resolve().parents[2] / "docs" / "reference" / "jax-primitives.md"
    expected = _registry.page()
    if os.environ.get("TESSEL_UPDATE_DOCS"):
        page.write_text(expected)
    assert page.read_text() == expected, f"{page} is out of date: run scripts/generate-docs.sh"
