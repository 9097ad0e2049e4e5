"""Peer implementations of the benchmark workloads, timed in this process:
prints one JSON line per (workload, peer) with the median of repeated runs.

    peers.py numpy-jax [WORKLOAD...]   numpy and jax.jit
    peers.py numpy [WORKLOAD...]       numpy alone, as "numpy CORE" when
                                       OPENBLAS_CORETYPE forces OpenBLAS's
                                       kernels for CORE
    peers.py iree [WORKLOAD...]        the jax functions as StableHLO, compiled
                                       by IREE for llvm-cpu at its best
                                       settings (host CPU, data tiling, ukernels)
    peers.py tinygrad [WORKLOAD...]    tinygrad's CPU backend under TinyJit
                                       (BEAM from the environment)
    peers.py jax-avx2 [WORKLOAD...]    jax.jit with XLA's code limited to AVX2
                                       (`--xla_cpu_max_isa=AVX2`), as
                                       "jax.jit AVX2": what an AVX2 host runs
    peers.py iree-avx2 [WORKLOAD...]   IREE's best settings for an x86-64-v3
                                       (AVX2) CPU, as "IREE AVX2"

Run by benchmarks/run.py inside benchmarks/.peers."""

import json
import os
import statistics
import sys
import time

import numpy as np


def workloads(rng):
    f = np.float32

    def normal(*shape):
        return rng.standard_normal(shape, dtype=f)

    x1, y1 = normal(1024, 1024), normal(1024, 1024)
    x2, y2, b2 = normal(2048, 2048), normal(2048, 2048), normal(1, 2048)
    s = normal(4096, 4096)
    g, beta = normal(4096), normal(4096)
    q, k, v = normal(2048, 64), normal(2048, 64), normal(2048, 64)
    e1, e2, e3 = normal(1 << 24), normal(1 << 24), normal(1 << 24)
    big = normal(1 << 26)
    i8a, i8b = (rng.integers(-128, 128, (1024, 1024), dtype=np.int8) for _ in range(2))
    return {
        "matmul_1024": ((x1, y1), lambda np_, a, b: a @ b),
        "matmul_2048": ((x2, y2), lambda np_, a, b: a @ b),
        "matmul_bias_relu_2048": ((x2, y2, b2), lambda np_, a, b, c: np_.maximum(a @ b + c, 0)),
        "softmax_4096": ((s,), softmax),
        "layernorm_4096": ((s, g, beta), layernorm),
        "attention_2048": ((q, k, v), attention),
        "elementwise_16m": ((e1, e2, e3), lambda np_, a, b, c: a * b + c),
        "sum_64m": ((big,), lambda np_, a: a.sum()),
        "matmul_i8": ((i8a, i8b), int8_matmul),
    }


def int8_matmul(np_, a, b):
    """i8 x i8 -> i32 products summed exactly: numpy on int32 copies (no
    BLAS for integers); jax (and IREE, from its StableHLO) as one dot with
    an i32 result, which compilers may map to VNNI."""
    if np_ is np:
        return a.astype(np.int32) @ b.astype(np.int32)
    import jax

    return jax.lax.dot(a, b, preferred_element_type=np_.int32)


def softmax(np_, x):
    e = np_.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def layernorm(np_, x, g, b):
    mean = x.mean(axis=1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=1, keepdims=True)
    return (x - mean) / np_.sqrt(var + 1e-5) * g + b


def attention(np_, q, k, v):
    s = (q * 0.125) @ k.T
    return softmax(np_, s) @ v


def median_time(run, repeats):
    run()  # warm-up (and compilation for jax)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def emit(name, peer, seconds):
    print(json.dumps({"workload": name, "peer": peer, "median_s": seconds}), flush=True)


def numpy_jax(selected, with_numpy=True, peer="jax.jit"):
    import jax
    import jax.numpy as jnp

    for name, (args, fn) in selected:
        if with_numpy:
            emit(name, "numpy", median_time(lambda: fn(np, *args), 7))
        jitted = jax.jit(lambda *a, fn=fn: fn(jnp, *a))
        jargs = [jnp.asarray(a) for a in args]
        emit(name, peer, median_time(lambda: jitted(*jargs).block_until_ready(), 7))


def jax_avx2(selected):
    # XLA reads its flags when its CPU backend starts: set before importing jax.
    os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " --xla_cpu_max_isa=AVX2").strip()
    numpy_jax(selected, with_numpy=False, peer="jax.jit AVX2")


def numpy_only(selected):
    core = os.environ.get("OPENBLAS_CORETYPE")
    for name, (args, fn) in selected:
        emit(name, f"numpy {core}" if core else "numpy", median_time(lambda: fn(np, *args), 7))


# IREE's strong CPU configuration (its defaults are much slower).
IREE_FLAGS = ["--iree-opt-data-tiling", "--iree-llvmcpu-enable-ukernels=all"]


def iree(selected, cpu="host", peer="IREE"):
    import iree.compiler as compiler
    import iree.runtime as runtime
    import jax
    import jax.numpy as jnp

    config = runtime.Config("local-task")
    for name, (args, fn) in selected:
        stablehlo = jax.jit(lambda *a, fn=fn: fn(jnp, *a)).lower(*args).as_text(dialect="stablehlo")
        vmfb = compiler.compile_str(stablehlo, target_backends=["llvm-cpu"], input_type="stablehlo",
                                    extra_args=[f"--iree-llvmcpu-target-cpu={cpu}", *IREE_FLAGS])
        context = runtime.SystemContext(config=config)
        context.add_vm_module(runtime.VmModule.copy_buffer(context.instance, vmfb))
        (module,) = [m for m in context.modules.values() if "main" in m.vm_module.function_names]
        main = module["main"]
        device_args = [runtime.asdevicearray(config.device, a) for a in args]
        emit(name, peer, median_time(lambda: main(*device_args).to_host(), 7))


def tinygrad_workloads():
    def softmax(x):
        e = (x - x.max(axis=1, keepdim=True)).exp()
        return e / e.sum(axis=1, keepdim=True)

    def layernorm(x, g, b):
        mean = x.mean(axis=1, keepdim=True)
        var = ((x - mean) ** 2).mean(axis=1, keepdim=True)
        return (x - mean) / (var + 1e-5).sqrt() * g + b

    return {
        "matmul_1024": lambda a, b: a @ b,
        "matmul_2048": lambda a, b: a @ b,
        "matmul_bias_relu_2048": lambda a, b, c: (a @ b + c).maximum(0),
        "softmax_4096": softmax,
        "layernorm_4096": layernorm,
        "attention_2048": lambda q, k, v: softmax((q * 0.125) @ k.T) @ v,
        "elementwise_16m": lambda a, b, c: a * b + c,
        "sum_64m": lambda a: a.sum(),
    }


def tinygrad(selected):
    from tinygrad import Device, Tensor, TinyJit

    peer = "tinygrad BEAM=" + os.environ.get("BEAM", "0")
    functions = tinygrad_workloads()
    for name, (args, _) in selected:
        fn = functions.get(name)
        if fn is None:  # not written for tinygrad (matmul_i8)
            continue
        jitted = TinyJit(lambda *a, fn=fn: fn(*a).realize())
        targs = [Tensor(a).realize() for a in args]

        def run():
            jitted(*targs)
            Device[Device.DEFAULT].synchronize()

        run()  # TinyJit captures on its second call (median_time warms up once more)
        emit(name, peer, median_time(run, 7))


def main():
    family, names = sys.argv[1], set(sys.argv[2:])
    rng = np.random.default_rng(0)
    selected = [(name, w) for name, w in workloads(rng).items() if not names or name in names]
    families = {
        "numpy-jax": numpy_jax,
        "numpy": numpy_only,
        "iree": iree,
        "tinygrad": tinygrad,
        "jax-avx2": jax_avx2,
        "iree-avx2": lambda chosen: iree(chosen, cpu="x86-64-v3", peer="IREE AVX2"),
    }
    families[family](selected)


if __name__ == "__main__":
    main()
