"""Run Pallas kernels under ``jax.jit`` on the CPU as Tessel-compiled code.

    import tessel.jax
    tessel.jax.install()        # or: with tessel.jax.installed(): ...

From then on every CPU ``pallas_call`` without ``interpret=True`` is
translated to Tessel's dialects, compiled for this CPU and called from the
XLA program through a typed FFI custom call (``tessel_pallas_call``), with
no copies. ``interpret=True`` calls keep JAX's interpreter.
``compiler_params=tessel.jax.CompilerParams(...)`` sets Tessel's schedule
knobs per call.
"""

from __future__ import annotations

import contextlib
import ctypes
import dataclasses
import hashlib
from typing import Iterator

import jax
import numpy as np

_SUPPORTED = ((0, 10, 2), (0, 11, 0))  # [lowest, first unsupported)


def _check_version() -> None:
    parts = []
    for piece in jax.__version__.split(".")[:3]:
        digits = "".join(ch for ch in piece if ch.isdigit())
        parts.append(int(digits or 0))
    version = tuple(parts)
    low, high = _SUPPORTED
    if not (low <= version < high):
        raise ImportError(
            f"tessel.jax supports jax >= {'.'.join(map(str, low))} and < {'.'.join(map(str, high))} "
            f"(it relies on Pallas internals that change between releases); this is jax {jax.__version__}. "
            f"Install a supported one: pip install 'tessel[jax]'"
        )


_check_version()

from jax._src.pallas import core as pallas_core  # noqa: E402
from jax._src.pallas import mpmd as _mpmd  # noqa: E402
from jax._src.pallas import pallas_call as _pallas_call  # noqa: E402
from jax._src.pallas.mosaic import core as _tpu_core  # noqa: E402
from jax._src.pallas.mosaic import tpu_info as _tpu_info  # noqa: E402
from jax.experimental.pallas import tpu as _pltpu  # noqa: E402
from jax._src.interpreters import mlir as _mlir  # noqa: E402
from jax.interpreters import mlir  # noqa: E402

from tessel import _tessel  # noqa: E402
from tessel.jax import _debug  # noqa: E402
from tessel.jax import _interpret  # noqa: E402
from tessel.jax._call import DMA_MODES, kernel_site, translate  # noqa: E402
from tessel.jax._emit import Unsupported, is_float8, physical, sub_byte  # noqa: E402
from tessel.jax._interpret import jax_interpreted  # noqa: E402
from tessel.jax._registry import supported_primitives  # noqa: E402

__all__ = ["CompilerParams", "DMA_MODES", "install", "installed", "uninstall", "is_installed", "translate_call",
           "TARGET", "supported_primitives", "jax_interpreted"]

#: The XLA custom-call target Tessel's kernels are called through.
TARGET = "tessel_pallas_call"


@dataclasses.dataclass(frozen=True)
class CompilerParams(pallas_core.CompilerParams):
    """Tessel's schedule knobs for one ``pallas_call`` (unset: defaults).

    Every schedule computes the same results; these only change speed.

    Attributes:
        num_threads: threads the kernel's grid runs on (default: all cores).
        register_tile: (rows, columns) of contractions' register tiles.
        k_chunk: contraction depth per packed chunk.
        k_unroll: unroll of the contraction's depth loop.
        vector_bits: vector width to generate for (128, 256, 512).
        grid_order: "row-major" or "column-major" order of parallel programs.
        dma_execution_mode: when DMAs copy: "eager" (default: when they
            start) or "on_wait" (a wait runs the copies queued on its
            semaphore, the last started first; a copy never waited for never
            runs), as JAX's ``InterpretParams.dma_execution_mode``. Race-free
            kernels give the same results in both.
        dimension_semantics: "parallel" / "arbitrary" per grid axis, as
            in ``pltpu.CompilerParams`` (one ``compiler_params`` carries
            either backend's parameters).
    """

    BACKEND = "tessel"  # type: ignore[misc]
    num_threads: int | None = None
    register_tile: tuple[int, int] | None = None
    k_chunk: int | None = None
    k_unroll: int | None = None
    vector_bits: int | None = None
    grid_order: str | None = None
    dma_execution_mode: str | None = None
    dimension_semantics: tuple | None = None

    def __post_init__(self):
        if self.dma_execution_mode not in (None, *DMA_MODES):
            raise ValueError(f"dma_execution_mode must be one of {DMA_MODES}, got {self.dma_execution_mode!r}")

    def replace(self, **changes) -> CompilerParams:
        """A copy with `changes` (as ``pltpu.CompilerParams.replace``:
        `pl.kernel` sets a mesh's dimension semantics through it)."""
        return dataclasses.replace(self, **changes)

    def knobs(self) -> dict:
        """The schedule knobs set (what the module's attributes carry)."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)
                if getattr(self, f.name) is not None and f.name != "dimension_semantics"}


_registered = False
_previous = None
_previous_mpmd = None
_installed = False
# install(include_interpret=True): also take plain interpret=True calls.
_include_interpret = False


def _register_target() -> None:
    global _registered
    if _registered:
        return
    capsule = jax.ffi.pycapsule(ctypes.c_void_p(_tessel.ffi_handler_address()))
    jax.ffi.register_ffi_target(TARGET, capsule, platform="cpu")
    _registered = True


def _knobs_of(compiler_params) -> dict:
    if not compiler_params:
        return {}
    params = compiler_params.get("tessel") if isinstance(compiler_params, dict) else compiler_params
    if isinstance(params, CompilerParams):
        return params.knobs()
    return {}


def _dimension_semantics(compiler_params):
    """The TPU compiler params' `dimension_semantics` (parallel/arbitrary
    per grid axis), if a call gives them."""
    params = compiler_params.values() if isinstance(compiler_params, dict) else [compiler_params]
    for param in params:
        semantics = getattr(param, "dimension_semantics", None)
        if semantics is not None:
            return tuple(semantics)
    return None


def _has_side_effects(compiler_params) -> bool:
    """Whether the TPU compiler params say the call has side effects
    (`has_side_effects=True` or a `SideEffectType` other than PURE): XLA
    must then neither CSE nor remove it."""
    params = compiler_params.values() if isinstance(compiler_params, dict) else [compiler_params]
    for param in params:
        effects = getattr(param, "has_side_effects", False)
        if isinstance(effects, bool):
            if effects:
                return True
        elif getattr(effects, "value", "pure") != "pure":
            return True
    return False


def translate_call(jaxpr, grid_mapping, input_output_aliases=(), name="kernel", compiler_params=None):
    """The Tessel module (text) and entry name for a pallas_call's parts."""
    return translate(jaxpr, grid_mapping, input_output_aliases, name, _knobs_of(compiler_params),
                     dimension_semantics=_dimension_semantics(compiler_params))


# JAX's own rule for pallas_call (interpret mode), kept before `pl.kernel`'s
# lowering is pointed at Tessel's.
_jax_pallas_call_lowering = _pallas_call._pallas_call_lowering
# JAX's own create_tensorcore_mesh, kept before install() wraps it.
_jax_create_tensorcore_mesh = _tpu_core.create_tensorcore_mesh


def _lowering(ctx, *args, jaxpr, grid_mapping, interpret, input_output_aliases, compiler_params, name=None,
              **params):
    # An interpret=True call Tessel takes keeps the interpreter's padding:
    # reads past an array's end see NaN / the integer minimum, not zeros.
    # One with the TPU interpreter's parameters honours them
    # (`_interpret.FIELDS`).
    checks = {}
    poison = interpret is True and _include_interpret
    mesh = params.get("mesh")
    cores = mesh is not None and getattr(mesh, "core_type", None) is not None
    if _include_interpret and _interpret.is_interpret_params(interpret):
        site = kernel_site(jaxpr, name or "kernel")
        checks = _interpret.interpret_knobs(interpret, site)
        _interpret.check_scopes(jaxpr, interpret, site)
        _interpret.check_hbm_references(jaxpr, site)
        interpret = False
    if poison:
        interpret = False
    if interpret:
        # JAX's own rule runs interpret mode.
        return _jax_pallas_call_lowering(
            ctx, *args, jaxpr=jaxpr, grid_mapping=grid_mapping, interpret=interpret,
            input_output_aliases=input_output_aliases, compiler_params=compiler_params, name=name, **params)
    knobs = _knobs_of(compiler_params) | ({"poison": True} if poison else {}) | checks
    if cores:
        # A TensorCore mesh's cores (pl.kernel, core_map) run at once, a
        # thread each, with their own scratch but for VMEM_SHARED, and
        # signal each other (`grid.call ... cores`).
        compiler_params = _CoreParams(dimension_semantics=("parallel",) * len(grid_mapping.grid))
    dynamic_bounds = ctx.avals_in[:grid_mapping.num_dynamic_grid_bounds]
    translated = translate(jaxpr, grid_mapping, input_output_aliases, name or "kernel", knobs, dynamic_bounds,
                           _dimension_semantics(compiler_params), cores=cores)
    kernel_id = hashlib.sha256(translated.text.encode()).hexdigest()
    _debug.register(kernel_id, translated.prints)
    # Compile now: diagnostics surface while tracing, at the user's lines.
    _tessel.prepare_kernel(kernel_id, translated.text, name or "kernel", translated.entry)
    # Alias indices count the call's inputs; the custom call's operands
    # start with the dynamic grid bounds (as Mosaic's lowering offsets them).
    offset = grid_mapping.num_dynamic_grid_bounds
    aliases = {operand + offset: output for operand, output in (input_output_aliases or ())}
    call = jax.ffi.ffi_lowering(TARGET, operand_output_aliases=aliases,
                                has_side_effect=_has_side_effects(compiler_params))
    # Sub-byte integers cross the call in 8-bit containers, 8-bit floats in
    # f32 ones (kernels compute on them so): XLA widens them before the call
    # and narrows the results.
    avals_in, avals_out = [_container(a) for a in ctx.avals_in], [_container(a) for a in ctx.avals_out]
    args = [_convert(ctx, x, a, b) for x, a, b in zip(args, ctx.avals_in, avals_in)]
    results = call(ctx.replace(avals_in=avals_in, avals_out=avals_out), *args, kernel=kernel_id,
                   module=translated.text, entry=translated.entry)
    if ctx.tokens_in is not None and ctx.tokens_in.effects():
        # A call with interpreter parameters carries the interpreter's IO
        # effects; Tessel's call has none of its own to order.
        ctx.set_tokens_out(ctx.tokens_in)
    return [_convert(ctx, r, b, a) for r, a, b in zip(results, ctx.avals_out, avals_out)]


def _container(aval):
    """`aval` with a sub-byte integer type replaced by the byte-sized one,
    an 8-bit float type by f32, an extended dtype by its physical data."""
    # Keys and semaphores cross as their data (XLA holds them so).
    aval = physical(aval)
    dtype = getattr(aval, "dtype", None)
    if dtype is not None and is_float8(dtype):
        return aval.update(dtype=np.dtype(np.float32))
    if dtype is None or sub_byte(dtype) is None:
        return aval
    return aval.update(dtype=np.dtype(np.int8 if sub_byte(dtype)[1] else np.uint8))


def _convert(ctx, value, aval_from, aval_to):
    if aval_from is aval_to or aval_from.dtype == aval_to.dtype or jax.dtypes.issubdtype(
            aval_from.dtype, jax.dtypes.extended) or jax.dtypes.issubdtype(aval_to.dtype, jax.dtypes.extended):
        return value
    return _mlir.convert_hlo(ctx, value, aval_from, aval_to)


@dataclasses.dataclass(frozen=True)
class _CoreParams:
    """The dimension semantics of a core mesh's grid."""

    dimension_semantics: tuple


def _mpmd_lowering(ctx, *args, **params):
    """`pl.kernel` / `core_map` on the CPU: JAX lowers them (`mpmd_map`)
    as a pallas_call over the mesh's axes through its own pallas_call
    rule, which refuses the CPU; here that call goes to Tessel's rule."""
    with _pallas_call_rule(_lowering):
        return _mpmd._mpmd_map_fallback_lowering(ctx, *args, **params)


@contextlib.contextmanager
def _pallas_call_rule(rule):
    previous = _pallas_call._pallas_call_lowering
    _pallas_call._pallas_call_lowering = rule
    try:
        yield
    finally:
        _pallas_call._pallas_call_lowering = previous


def _register_cpu_as_tpu(register: bool) -> None:
    """While installed, the CPU answers Pallas' questions about the TPU it
    traces kernels for (`pltpu.emit_pipeline` asks for the chip's tiling
    and VMEM) as a single-core TPU v6e: otherwise tracing fails on the CPU
    with "Unsupported TPU device kind: cpu" before any kernel reaches
    Tessel. Only the tiling of DMA'd windows depends on it, not results."""
    if register:
        _tpu_info.registry["cpu"] = lambda: _tpu_info.get_tpu_info_for_chip(_tpu_info.ChipVersion.TPU_V6E, 1)
    else:
        _tpu_info.registry.pop("cpu", None)
    _tpu_info.get_tpu_info.cache_clear()
    # `pltpu.create_tensorcore_mesh(name)` without `num_cores` asks the
    # device for its cores, which a CPU device does not have: one core.
    for module in (_tpu_core, _pltpu):
        module.create_tensorcore_mesh = _one_core_by_default if register else _jax_create_tensorcore_mesh


def _one_core_by_default(axis_name, devices=None, num_cores=None):
    if num_cores is None and devices is None and not hasattr(jax.devices()[0], "num_cores"):
        num_cores = 1
    return _jax_create_tensorcore_mesh(axis_name, devices=devices, num_cores=num_cores)


def install(*, include_interpret: bool = False) -> None:
    """Sends every CPU ``pallas_call`` (without ``interpret=True``) to
    Tessel from now on. Functions ``jax.jit`` lowered before keep their
    lowering (JAX caches it).

    With ``include_interpret=True``, calls with ``interpret=True`` and
    with ``interpret=pltpu.InterpretParams(...)`` go to Tessel too: how
    test suites written for JAX's CPU interpreters run through Tessel
    unchanged. Tessel honours the parameters' checks (out-of-bounds reads
    and writes, uninitialized memory, the DMA execution mode) or raises
    naming a field it cannot honour (``tessel.jax._interpret.FIELDS``).
    A call made with ``interpret=tessel.jax.jax_interpreted(params)``
    stays JAX's interpreter's: the choice per call.
    """
    global _previous, _previous_mpmd, _installed, _include_interpret
    _register_target()
    if _include_interpret != include_interpret:
        _include_interpret = include_interpret
        jax.clear_caches()
    if _installed:
        return
    table = mlir._platform_specific_lowerings["cpu"]
    _previous = table.get(_pallas_call.pallas_call_p)
    mlir.register_lowering(_pallas_call.pallas_call_p, _lowering, platform="cpu")
    _previous_mpmd = table.get(_mpmd.mpmd_map_p)
    mlir.register_lowering(_mpmd.mpmd_map_p, _mpmd_lowering, platform="cpu")
    _register_cpu_as_tpu(True)
    _installed = True
    jax.clear_caches()


def uninstall() -> None:
    """Undoes ``install``."""
    global _installed, _include_interpret
    _include_interpret = False
    if not _installed:
        return
    table = mlir._platform_specific_lowerings["cpu"]
    if _previous is None:
        table.pop(_pallas_call.pallas_call_p, None)
    else:
        table[_pallas_call.pallas_call_p] = _previous
    if _previous_mpmd is None:
        table.pop(_mpmd.mpmd_map_p, None)
    else:
        table[_mpmd.mpmd_map_p] = _previous_mpmd
    _register_cpu_as_tpu(False)
    _installed = False
    jax.clear_caches()


def is_installed() -> bool:
    return _installed


@contextlib.contextmanager
def installed() -> Iterator[None]:
    """``install()`` for the duration of a ``with`` block."""
    already = _installed
    install()
    try:
        yield
    finally:
        if not already:
            uninstall()


Unsupported.__module__ = __name__
