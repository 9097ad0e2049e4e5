"""Programs that leave the process: `jax.export` artifacts and JAX's
persistent compilation cache. Each Tessel call carries its kernel's module
text, so a fresh process (which never traced the kernel) compiles it on
first use; results are checked against numpy there."""

import os
import subprocess
import sys
import textwrap

import jax
import numpy as np

import tessel.jax

KERNEL = """
import jax, jax.numpy as jnp, numpy as np
from jax.experimental import pallas as pl


def kernel(x_ref, o_ref):
    o_ref[...] = jnp.exp(x_ref[...]) * 2 + pl.program_id(0).astype(jnp.float32)


def f(x):
    return pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype), grid=(2,),
                          in_specs=[pl.BlockSpec((4, 128), lambda i: (i, 0))],
                          out_specs=pl.BlockSpec((4, 128), lambda i: (i, 0)))(x)


x = jnp.arange(8 * 128, dtype=jnp.float32).reshape(8, 128) / 1000
expected = np.exp(np.asarray(x)) * 2 + np.repeat([0.0, 1.0], 4)[:, None]
"""


def run_fresh(script: str) -> str:
    """Runs `script` in a new Python process; returns its stdout."""
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(script)], capture_output=True, text=True,
                          env=dict(os.environ, JAX_PLATFORMS="cpu"), timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_exported_program_runs_in_a_fresh_process(tmp_path):
    namespace = {}
    exec(KERNEL, namespace)
    exported = jax.export.export(
        jax.jit(namespace["f"]),
        disabled_checks=[jax.export.DisabledSafetyCheck.custom_call(tessel.jax.TARGET)])(namespace["x"])
    assert tessel.jax.TARGET in exported.mlir_module()
    path = tmp_path / "kernel.exported"
    path.write_bytes(exported.serialize())
    out = run_fresh(KERNEL + f"""
import tessel.jax
tessel.jax.install()
exported = jax.export.deserialize(open({str(path)!r}, "rb").read())
np.testing.assert_allclose(exported.call(x), expected, rtol=1e-6)
print("ran")
""")
    assert out.strip() == "ran"


def test_persistent_compilation_cache(tmp_path):
    # Two processes share JAX's persistent cache: the second loads the
    # compiled XLA program holding the Tessel call and gets the same numbers.
    script = KERNEL + f"""
import tessel.jax
jax.config.update("jax_compilation_cache_dir", {str(tmp_path)!r})
jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
jax.config.update("jax_persistent_cache_min_entry_size_bytes", -1)
tessel.jax.install()
np.testing.assert_allclose(jax.jit(f)(x), expected, rtol=1e-6)
print("ran")
"""
    assert run_fresh(script).strip() == "ran"
    entries = {p.name for p in tmp_path.iterdir()}
    assert entries, "the first process wrote the cache"
    assert run_fresh(script).strip() == "ran"
    assert {p.name for p in tmp_path.iterdir()} == entries, "the second process hit the cache"


def test_same_kernel_in_process_matches_numpy():
    # (The reference the fresh processes are held to.)
    namespace = {}
    exec(KERNEL, namespace)
    with tessel.jax.installed():
        np.testing.assert_allclose(jax.jit(namespace["f"])(namespace["x"]), namespace["expected"], rtol=1e-6)
