"""Peer implementations of the benchmark workloads (numpy, jax.jit), timed
in this process: prints one JSON line per (workload, peer) with the median
of repeated runs. Run by benchmarks/run.py inside benchmarks/.peers."""

import json
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
    return {
        "matmul_1024": ((x1, y1), lambda np_, a, b: a @ b),
        "matmul_2048": ((x2, y2), lambda np_, a, b: a @ b),
        "matmul_bias_relu_2048": ((x2, y2, b2), lambda np_, a, b, c: np_.maximum(a @ b + c, 0)),
        "softmax_4096": ((s,), softmax),
        "layernorm_4096": ((s, g, beta), layernorm),
        "attention_2048": ((q, k, v), attention),
        "elementwise_16m": ((e1, e2, e3), lambda np_, a, b, c: a * b + c),
        "sum_64m": ((big,), lambda np_, a: a.sum()),
    }


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


def main():
    selected = set(sys.argv[1:])
    rng = np.random.default_rng(0)
    import jax
    import jax.numpy as jnp

    for name, (args, fn) in workloads(rng).items():
        if selected and name not in selected:
            continue
        repeats = 7
        t = median_time(lambda: fn(np, *args), repeats)
        print(json.dumps({"workload": name, "peer": "numpy", "median_s": t}), flush=True)
        jitted = jax.jit(lambda *a, fn=fn: fn(jnp, *a))
        jargs = [jnp.asarray(a) for a in args]
        t = median_time(lambda: jitted(*jargs).block_until_ready(), repeats)
        print(json.dumps({"workload": name, "peer": "jax.jit", "median_s": t}), flush=True)


if __name__ == "__main__":
    main()
