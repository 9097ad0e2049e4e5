"""JAX's TPU kernels at serving sizes on the CPU: Tessel-compiled
(`tessel.jax`) against the same computation in plain jnp under XLA and
against JAX's TPU interpreter (`interpret=pltpu.InterpretParams()`) where it runs, in one
session, alternating the contenders. The kernels are JAX's own
(`jax.experimental.pallas.ops.tpu`), unmodified:

- ragged paged attention: 8 sequences of mixed prefill and decode, 32 query
  heads over 8 KV heads, head_dim 128, pages of 16 (JAX's interpreter
  cannot run it: its ref reshapes);
- splash attention forward and backward, causal, 4096 tokens;
- megablox gmm for an 8-expert MoE layer (XLA: `lax.ragged_dot`).

    .venv/bin/python benchmarks/tpu_kernels.py [--repeats N] [WORKLOAD...]

Writes benchmarks/tpu_kernels.md and benchmarks/tpu_kernels.json. Times
are medians."""

from __future__ import annotations

import argparse
import functools
import importlib
import os

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental.pallas import tpu as pltpu
from jax.experimental.pallas.ops.tpu import ragged_paged_attention as rpa
from jax.experimental.pallas.ops.tpu.splash_attention import splash_attention_kernel as splash
from jax.experimental.pallas.ops.tpu.splash_attention import splash_attention_mask as masks
from jax_pallas import alternate, cpu_name, vector_width, write_section

import tessel.jax

megablox = importlib.import_module("jax.experimental.pallas.ops.tpu.megablox.gmm")

# The targets: Tessel against XLA's jnp, and against the interpreter.
XLA_TARGET, INTERPRET_TARGET = 1.0, 50.0
# JAX's TPU interpreter (what TPU kernel authors' CI runs on CPUs), not
# interpret=True's HLO interpreter, which XLA compiles.
TPU_INTERPRETER = pltpu.InterpretParams()


def ragged_attention():
    """8 sequences, (query tokens, context tokens): decodes and prefills."""
    lens = [(1, 1024), (1, 2048), (1, 517), (1, 3000), (128, 640), (256, 1280), (1, 96), (64, 1999)]
    q_heads, kv_heads, head_dim, page = 32, 8, 128, 16
    pages_per_seq = max(kv for _, kv in lens) // page + 1
    num_pages = len(lens) * pages_per_seq + 8
    keys = jax.random.split(jax.random.key(0), 3)
    tokens = sum(q for q, _ in lens)
    q = jax.random.normal(keys[0], (tokens, q_heads, head_dim), jnp.float32)
    kv_pages = jax.random.normal(keys[1], (num_pages, page, 2 * kv_heads, head_dim), jnp.float32)
    kv_lens = jnp.asarray([kv for _, kv in lens], jnp.int32)
    page_indices = jax.random.permutation(keys[2], num_pages)[:len(lens) * pages_per_seq]
    page_indices = page_indices.reshape(len(lens), pages_per_seq).astype(jnp.int32)
    cu_q_lens = jnp.asarray(np.concatenate([[0], np.cumsum([q for q, _ in lens])]), jnp.int32)
    num_seqs = jnp.asarray([len(lens)], jnp.int32)
    args = (q, kv_pages, kv_lens, page_indices, cu_q_lens, num_seqs)
    kernel = functools.partial(rpa.ragged_paged_attention, num_kv_pages_per_block=8, num_queries_per_block=32)
    lengths = (np.asarray(kv_lens), np.asarray(cu_q_lens), np.asarray(num_seqs))

    def reference(q, kv_pages, _kv_lens, page_indices, _cu_q_lens, _num_seqs):
        # JAX's reference slices by the lengths in Python: jitted with
        # them as constants (the pages stay traced).
        return rpa.ref_ragged_paged_attention(q, kv_pages, lengths[0], page_indices, lengths[1], lengths[2])

    return kernel, reference, args, None


def splash_attention():
    heads, seq, head_dim = 4, 4096, 128
    mask = masks.MultiHeadMask([masks.CausalMask((seq, seq)) for _ in range(heads)])
    sizes = splash.BlockSizes(block_q=512, block_kv=512, block_kv_compute=512, block_q_dkv=512,
                              block_kv_dkv=512, block_kv_dkv_compute=512, use_fused_bwd_kernel=True)
    keys = jax.random.split(jax.random.key(1), 4)
    q, k, v, do = (jax.random.normal(key, (heads, seq, head_dim), jnp.float32) for key in keys)

    def forward_backward(attention):
        def run(q, k, v, do):
            out, pullback = jax.vjp(attention, q, k, v)
            return out, pullback(do)
        return run

    kernel = splash.make_splash_mha_single_device(mask, block_sizes=sizes)
    interpreted = splash.make_splash_mha_single_device(mask, block_sizes=sizes, interpret=TPU_INTERPRETER)
    reference = splash.make_masked_mha_reference(mask)
    return forward_backward(kernel), forward_backward(reference), (q, k, v, do), forward_backward(interpreted)


def moe_gmm():
    experts, tokens, hidden, ffn = 8, 4096, 1024, 1024
    keys = jax.random.split(jax.random.key(2), 3)
    lhs = jax.random.normal(keys[0], (tokens, hidden), jnp.float32)
    rhs = jax.random.normal(keys[1], (experts, hidden, ffn), jnp.float32) / 32
    shares = np.asarray(jax.random.dirichlet(keys[2], jnp.ones(experts)))
    sizes = np.floor(shares * tokens).astype(np.int32)
    sizes[-1] += tokens - sizes.sum()
    group_sizes = jnp.asarray(sizes)
    tiling = (512, 1024, 1024)

    def kernel(lhs, rhs, group_sizes):
        return megablox.gmm(lhs, rhs, group_sizes, tiling=tiling)

    def interpreted(lhs, rhs, group_sizes):
        return megablox.gmm(lhs, rhs, group_sizes, tiling=tiling, interpret=TPU_INTERPRETER)

    return kernel, jax.lax.ragged_dot, (lhs, rhs, group_sizes), interpreted


WORKLOADS = {"ragged_paged_attention": ragged_attention, "splash_fwd_bwd_4096": splash_attention,
             "gmm_moe_8_experts": moe_gmm}


def write(results: dict) -> None:
    lines = [
        "## JAX's TPU kernels at serving sizes (tessel.jax)", "",
        f"`benchmarks/tpu_kernels.py`, one session on {cpu_name()} ({vector_width()}, {os.cpu_count()} cores), "
        f"jax {jax.__version__}: JAX's own TPU kernels, unmodified, under `jax.jit`, compiled by Tessel, against "
        "the same computation in jnp under XLA and against JAX's TPU interpreter (`interpret=pltpu.InterpretParams()`; "
        "ragged paged attention it cannot run); medians, the contenders alternating.", "",
        "| workload | Tessel | XLA (jnp) | TPU interpreter | Tessel vs XLA | met (>= 1x) | vs interpreter "
        "| met (>= 50x) |",
        "| --- | ---: | ---: | ---: | ---: | --- | ---: | --- |",
    ]
    for name, r in results.items():
        vs_xla = r["xla"] / r["tessel"]
        interpret = r.get("interpret")
        cells = ["-", "-", "-"] if interpret is None else [
            f"{interpret * 1e3:.0f} ms", f"{interpret / r['tessel']:.0f}x",
            "yes" if interpret / r["tessel"] >= INTERPRET_TARGET else "no"]
        lines.append(f"| {name} | {r['tessel'] * 1e3:.1f} ms | {r['xla'] * 1e3:.1f} ms | {cells[0]} | "
                     f"{vs_xla:.2f}x | {'yes' if vs_xla >= XLA_TARGET else 'no'} | {cells[1]} | {cells[2]} |")
    write_section("tpu_kernels", lines, results)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--interpret-repeats", type=int, default=1, help="interpret=True is slow: few runs")
    parser.add_argument("workloads", nargs="*")
    options = parser.parse_args()
    tessel.jax.install()
    results = {}
    for name, make in WORKLOADS.items():
        if options.workloads and name not in options.workloads:
            continue
        kernel, reference, args, interpreted = make()
        medians = alternate({"tessel": jax.jit(kernel), "xla": jax.jit(reference)}, args, options.repeats)
        if interpreted is not None:
            medians["interpret"] = alternate({"interpret": jax.jit(interpreted)}, args,
                                             options.interpret_repeats)["interpret"]
        results[name] = medians
        print(name, {k: f"{v * 1e3:.1f} ms" for k, v in medians.items()}, flush=True)
    write(results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
