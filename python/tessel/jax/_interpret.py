"""How Tessel runs a call made with JAX's TPU interpreter parameters
(``interpret=pltpu.InterpretParams(...)``) under
``install(include_interpret=True)``: one row per field of the installed
jax's ``InterpretParams``, saying how Tessel honours it. A field Tessel
cannot honour at the value given raises, naming the field; a field this
table does not know (a newer jax's) raises unless it has its default.
"""

from __future__ import annotations

import dataclasses
import sys
from typing import Any, Callable

from jax._src.pallas.mosaic.interpret import interpret_pallas_call as _tpu_interpreter
from jax._src.pallas.mosaic.interpret import params as _tpu_params
from jax._src.pallas.mosaic.interpret import race_detection_state as _race_state

from jax._src import core

from tessel.jax._call import scopes
from tessel.jax._emit import Unsupported
from tessel.jax._kernel import _frame

#: `InterpretParams`, the class whose instances Tessel takes.
InterpretParams = _tpu_params.InterpretParams

#: Values of the `tessel.out_of_bounds_reads` and
#: `tessel.uninitialized_memory` knobs, in their tables' order.
OUT_OF_BOUNDS_READS = ("unchecked", "raise", "uninitialized")
UNINITIALIZED_MEMORY = ("unset", "nan", "zero")


def _choice(knob: str, choices: tuple) -> Callable[[Any], dict]:
    def knobs(value):
        if value not in choices:
            raise ValueError(f"InterpretParams: {knob} must be one of {choices[1:]}, got {value!r}")
        return {knob: choices.index(value)}
    return knobs


def _refused_unless(default, why: str) -> Callable[[Any], dict]:
    """A field Tessel cannot honour yet: only its default is accepted."""
    def knobs(value):
        if value != default:
            raise Unsupported(why)
        return {}
    return knobs


def _no_knob(_value) -> dict:
    return {}


#: field -> (what Tessel does with it, the knobs a value gives).
FIELDS: dict[str, tuple[str, Callable[[Any], dict]]] = {
    "dma_execution_mode": (
        "honoured: when DMAs copy (`eager` or `on_wait`)",
        lambda mode: {"dma_execution_mode": mode},
    ),
    "out_of_bounds_reads": (
        "honoured: block indices, ref loads and stores and DMA windows are checked (`raise`), or out-of-bounds "
        "reads give uninitialized values (`uninitialized`; DMA reads still raise)",
        _choice("out_of_bounds_reads", OUT_OF_BOUNDS_READS),
    ),
    "uninitialized_memory": (
        "honoured: scratch, block padding and out-of-bounds reads hold NaN / the integer maximum / true "
        "(`nan`) or zeros (`zero`)",
        _choice("uninitialized_memory", UNINITIALIZED_MEMORY),
    ),
    "num_cores_or_threads": (
        "accepted: Tessel runs a call's parallel programs on all host threads; race-free kernels compute "
        "the same either way (a core mesh's cores come from the mesh)",
        _no_knob,
    ),
    "vector_clock_size": ("accepted: sizes the race detector's clocks, used only with detect_races", _no_knob),
    "detect_races": (
        "honoured: a core's reads of a DMA's destination and writes of its source or destination before a "
        "wait on its semaphore saw it complete, DMAs in flight on overlapping bytes, and a core mesh's cores' "
        "accesses no semaphore orders, are reported (`races_found`, and the two accesses' lines on stderr); "
        "the grid's programs then run in order on one thread. Refused with `num_cores_or_threads` > 1 "
        "(Tessel does not split a grid over emulated cores)",
        lambda detect: {"detect_races": 1, "num_threads": 1} if detect else {},
    ),
    "skip_floating_point_ops": (
        "refused when True",
        _refused_unless(False, "InterpretParams(skip_floating_point_ops=True): Tessel computes every operation"),
    ),
    "random_seed": (
        "refused when set (Tessel does not randomize the order of parallel programs)",
        _refused_unless(None, "InterpretParams(random_seed=...): Tessel does not randomize the order of "
                              "parallel grid programs"),
    ),
    "grid_point_recorder": (
        "refused when set",
        _refused_unless(None, "InterpretParams(grid_point_recorder=...): Tessel does not call back per grid point"),
    ),
    "logging_mode": (
        "refused when set",
        _refused_unless(None, "InterpretParams(logging_mode=...): Tessel does not log semaphores or memory"),
    ),
    "buffer_bounds": (
        "`logical` honoured (bounds are the refs' shapes); `padded` refused",
        _refused_unless("logical", "InterpretParams(buffer_bounds='padded'): Tessel checks accesses against "
                                   "refs' logical shapes only"),
    ),
    "allow_hbm_allocation_in_run_scoped": (
        "honoured: without it, a kernel allocating HBM (or ANY) memory in `run_scoped` raises ValueError, as "
        "JAX's interpreter does (`check_scopes`); with it, Tessel allocates it",
        _no_knob,
    ),
}


def _in_hbm(aval) -> bool:
    return str(getattr(aval, "memory_space", "")).lower().split(".")[-1] in ("hbm", "any")


def check_scopes(jaxpr, params, where: str) -> None:
    """Raises as JAX's TPU interpreter does for a `run_scoped` allocating
    HBM without `allow_hbm_allocation_in_run_scoped` (a TPU cannot)."""
    if params.allow_hbm_allocation_in_run_scoped:
        return
    for eqn in scopes(jaxpr):
        if eqn.primitive.name == "run_scoped" and any(_in_hbm(var.aval) for var in eqn.params["jaxpr"].invars):
            raise ValueError(f"{where}: Cannot allocate HBM in `run_scoped`.")


#: The primitives reading or writing a ref's elements, as JAX's
#: interpreter names them when it refuses an HBM ref.
_REF_ACCESSES = {"get": "get_p", "swap": "swap_p", "masked_load": "load_p", "masked_swap": "swap_p"}


def _equations(jaxpr):
    """Every equation of a kernel, nested ones (loop bodies, branches,
    scopes) included."""
    for eqn in jaxpr.eqns:
        yield eqn
        for inner in core.jaxprs_in_params(eqn.params):
            yield from _equations(inner)


def check_hbm_references(jaxpr, where: str) -> None:
    """Raises as JAX's TPU interpreter does for a kernel reading or writing
    the elements of an HBM (or ANY) ref itself (a TPU core can only copy
    them, by DMA): naming the access's line, else `where`."""
    for eqn in _equations(jaxpr):
        name = _REF_ACCESSES.get(eqn.primitive.name)
        if name is not None and eqn.invars and _in_hbm(eqn.invars[0].aval):
            frame = _frame(eqn.source_info)
            at = f"{frame.file_name}:{frame.start_line}" if frame is not None else where
            raise ValueError(f"{at}: {name}: Buffers with a memory space of HBM or ANY cannot be referenced "
                             "directly. Instead, use `pltpu.sync_copy` or `pltpu.async_copy`.")


@dataclasses.dataclass(frozen=True)
class JaxInterpretParams(InterpretParams):
    """`InterpretParams` Tessel leaves to JAX's TPU interpreter, even under
    `install(include_interpret=True)` (`tessel.jax.jax_interpreted`)."""


def jax_interpreted(params=None) -> JaxInterpretParams:
    """`params` (an `InterpretParams`, by default the default one) for a
    call JAX's own TPU interpreter runs, whatever `install` says: the
    per-call choice between Tessel and the interpreter."""
    params = InterpretParams() if params is None else params
    return JaxInterpretParams(**{field.name: getattr(params, field.name) for field in dataclasses.fields(params)})


def is_interpret_params(interpret) -> bool:
    """Whether Tessel takes a call made with `interpret` (under
    `include_interpret`): JAX's TPU interpreter parameters, unless the call
    asked for JAX's interpreter itself (`jax_interpreted`)."""
    return isinstance(interpret, InterpretParams) and not isinstance(interpret, JaxInterpretParams)


def interpret_knobs(params, where: str) -> dict:
    """Tessel's knobs for a call made with `params` (an `InterpretParams`);
    raises `Unsupported` naming a field Tessel cannot honour (and `where`,
    the kernel's line)."""
    if params.detect_races and params.num_cores_or_threads > 1:
        raise Unsupported(f"{where}: InterpretParams(detect_races=True) with num_cores_or_threads="
                          f"{params.num_cores_or_threads}: Tessel does not split a grid over emulated cores "
                          "to look for races between them (a core mesh's cores it checks)")
    knobs = {}
    for field in dataclasses.fields(params):
        value = getattr(params, field.name)
        row = FIELDS.get(field.name)
        try:
            if row is None:
                default = field.default if field.default is not dataclasses.MISSING else None
                if value != default:
                    raise Unsupported(f"InterpretParams({field.name}={value!r}): a field Tessel does not know")
                continue
            knobs |= row[1](value)
        except (Unsupported, ValueError) as error:
            raise type(error)(f"{where}: {error}") from None
    return knobs


def report_races(race: str | None) -> None:
    """Records a race-detecting call's outcome where JAX's tests read it
    (the TPU interpreter's `races.races_found`, fresh for each call as the
    interpreter makes it) and, for a race, prints its two accesses (the
    interpreter prints "RACE DETECTED" and its accesses too). Called by
    the native module after each such call."""
    state = _race_state.RaceDetectionState(num_cores=1)
    state.races_found = race is not None
    _tpu_interpreter.races = state
    if race is not None:
        print(f"RACE DETECTED (tessel): {race}", file=sys.stderr)
