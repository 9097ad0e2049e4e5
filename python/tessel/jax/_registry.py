"""The kernel translator's one registry of JAX primitives, as JAX's own
Pallas lowerings keep theirs (`lowering_rules[primitive]` filled by a
decorator): each rule module (`_elementwise`, `_math`, `_shapes`,
`_reductions`, `_refs`, `_gather`, `_control`, `_random`, `_semaphores`,
`_pipelines`) registers a function per primitive with `@rule(...)`. The walk (`KernelTranslator.walk`) looks a
primitive up here and nowhere else; `supported_primitives()` and the
generated list in `docs/jax.md` read the same table."""

from __future__ import annotations

import dataclasses
import sys
from typing import Callable

import numpy as np

from tessel.jax._emit import Unsupported, Value


class RuleContext:
    """What a rule is given besides its operands: the translator (`tr`: the
    emitter and its helpers), the equation with its parameters and avals,
    and the environment, for rules that read atoms themselves."""

    __slots__ = ("tr", "eqn", "env")

    def __init__(self, tr, eqn, env):
        self.tr, self.eqn, self.env = tr, eqn, env

    @property
    def name(self) -> str:
        return self.eqn.primitive.name

    @property
    def params(self) -> dict:
        return self.eqn.params

    @property
    def avals_in(self) -> list:
        return [v.aval for v in self.eqn.invars]

    @property
    def avals_out(self) -> list:
        return [v.aval for v in self.eqn.outvars]

    @property
    def out_shape(self) -> tuple:
        return tuple(self.eqn.outvars[0].aval.shape)

    @property
    def out_dtype(self) -> np.dtype:
        return np.dtype(self.eqn.outvars[0].aval.dtype)

    def read(self, atom) -> Value:
        return self.tr.read(self.env, atom)

    def fail(self, what: str):
        self.tr.fail(what)


@dataclasses.dataclass(frozen=True)
class Rule:
    """How one primitive is translated."""

    primitive: str
    function: Callable
    # The rule reads its operands itself (ref indexers, whose static
    # indices stay Python ints; control flow's jaxprs) and gets none.
    reads_operands: bool
    # Its results are its operands' values, moved or selected: a sub-byte
    # integer or 8-bit float result is already of its type. Every other
    # rule's results of those types are brought back to their type
    # (`KernelTranslator.fit_sub_byte`, `fit_float8`).
    moves_values: bool
    # Bitwise combinations and remainders of integers in range stay in
    # range (implied by `moves_values`).
    keeps_sub_byte_range: bool

    def apply(self, ctx: RuleContext) -> list[Value]:
        operands = [ctx.read(atom) for atom in ctx.eqn.invars] if self.reads_operands else []
        results = self.function(ctx, *operands)
        if results is None:
            return []
        return [results] if isinstance(results, Value) else list(results)


RULES: dict[str, Rule] = {}


def rule(*primitives: str, reads_operands: bool = True, moves_values: bool = False,
         keeps_sub_byte_range: bool = False):
    """Registers the decorated function as the rule of `primitives`. It is
    called as `function(ctx, *operands)` (operands read from the
    environment, unless `reads_operands=False`) and returns a Value or a
    list of them."""

    def register(function: Callable) -> Callable:
        for primitive in primitives:
            if primitive in RULES:
                raise RuntimeError(f"two translation rules for the JAX primitive '{primitive}'")
            RULES[primitive] = Rule(primitive, function, reads_operands, moves_values,
                                    keeps_sub_byte_range or moves_values)
        return function

    return register


def lookup(primitive: str, where: str) -> Rule:
    found = RULES.get(primitive)
    if found is None:
        raise Unsupported(f"{where}: Tessel does not support the JAX primitive '{primitive}' in Pallas kernels")
    return found


def supported_primitives() -> list[str]:
    """The JAX primitives Tessel translates in Pallas kernels, sorted."""
    return sorted(RULES)


def markdown() -> str:
    """The generated list of `docs/jax-primitives.md`: every primitive of
    the registry under its rule module's first docstring line."""
    by_module: dict[str, list[str]] = {}
    for name, entry in RULES.items():
        by_module.setdefault(entry.function.__module__, []).append(name)
    lines = []
    for module in sorted(by_module):
        title = (sys.modules[module].__doc__ or module).strip().splitlines()[0].removesuffix(".")
        names = ", ".join(f"`{name}`" for name in sorted(by_module[module]))
        lines.append(f"- {title} (`{module.rsplit('.', 1)[-1]}.py`): {names}")
    return "\n".join(lines) + "\n"


def page() -> str:
    """`docs/reference/jax-primitives.md`: the registry as a page."""
    return ("<!-- Generated from tessel.jax's primitive registry (python/tessel/jax/_registry.py) by "
            "python/tests/test_registry.py; do not edit: scripts/generate-docs.sh rewrites it. -->\n\n"
            "# JAX primitives\n\n"
            "The JAX primitives Tessel translates in Pallas kernels, by the rule module that translates them "
            "(`tessel.jax.supported_primitives()` returns the same names). A kernel using any other raises "
            "`NotImplementedError` naming the primitive and the user's line. What they mean in Pallas terms, "
            "and the numerics, are in [../jax.md](../jax.md).\n\n" + markdown())
