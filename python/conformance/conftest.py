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
