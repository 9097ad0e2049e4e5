"""Installed into the extracted `tests/pallas/` of JAX's repository by
`run.py`. Makes the repository's test helpers the jax wheel lacks
importable, with TESSEL_SUITE_MODE=tessel sends every pallas_call of the
suite (interpret=True ones included) to Tessel, and with
TESSEL_SUITE_INTERPRET=1 turns the TPU files' interpret switch on."""

import importlib
import importlib.util
import os
import sys
from pathlib import Path

import tessel.jax

ROOT = Path(__file__).resolve().parents[2]


def _provide(module: str) -> None:
    if importlib.util.find_spec(module) is not None:
        return
    path = ROOT / (module.replace(".", "/") + ".py")
    spec = importlib.util.spec_from_file_location(module, path)
    loaded = importlib.util.module_from_spec(spec)
    sys.modules[module] = loaded
    spec.loader.exec_module(loaded)
    parent, _, name = module.rpartition(".")
    setattr(importlib.import_module(parent), name, loaded)


for _module in ("jax._src.pallas.pallas_test_util", "jax._src.hypothesis_test_util"):
    _provide(_module)

if os.environ.get("TESSEL_SUITE_MODE") == "tessel":
    tessel.jax.install(include_interpret=True)

if os.environ.get("TESSEL_SUITE_INTERPRET") == "1":
    # The TPU files' interpret switch (run.py's SWITCHED files): their tests
    # pass `interpret=self.INTERPRET` and skip on the CPU without it.
    from jax._src.pallas import pallas_test_util

    pallas_test_util.PallasTest.INTERPRET = True

if os.environ.get("TESSEL_SUITE_LIFT_GUARDS") == "1":
    # run.py's GUARDED files: tests whose only obstacle on the CPU is a
    # TPU-device guard run as on a single-core TPU v6e (what Tessel's
    # install() answers Pallas' TPU-info questions with). Interpret mode
    # runs them in JAX's TPU interpreter (force_tpu_interpret_mode); Tessel
    # mode compiles them.
    from jax._src import test_util as _jtu

    _matches = _jtu.test_device_matches
    _jtu.test_device_matches = lambda device_types: "tpu" in list(device_types) or _matches(device_types)
    _jtu.is_device_tpu_at_least = lambda version: version <= 6
    _jtu.is_device_tpu = lambda version=None, variant="": version in (None, 6) and variant in ("", "e")
    # Tests that compare the TPU's generation (`jtu.get_tpu_version() < 5`)
    # to skip or pick a path ask the device, which raises on a CPU.
    _jtu.get_tpu_version = lambda: 6
    if os.environ.get("TESSEL_SUITE_MODE") != "tessel":
        import pytest
        from jax.experimental.pallas import tpu as _pltpu

        @pytest.fixture(autouse=True)
        def _tpu_interpreter():
            with _pltpu.force_tpu_interpret_mode():
                yield
