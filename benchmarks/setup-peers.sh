#!/usr/bin/env bash
# The benchmark peers, outside the test path: a venv in benchmarks/.peers
# (ignored by git) with numpy, jax[cpu], tinygrad, IREE's compiler and
# runtime, Triton (its AMD code generator: benchmarks/amdgpu) and matplotlib,
# plus Debian's clang (tinygrad's CPU backend runs
# `clang`). Idempotent.
set -euo pipefail
cd "$(dirname "$0")"
if ! command -v clang >/dev/null; then
    apt-get install -y -q clang
fi
if [ ! -x .peers/bin/python ]; then
    python3 -m venv .peers
fi
.peers/bin/pip install -q numpy matplotlib "jax[cpu]" tinygrad iree-base-compiler iree-base-runtime "triton==3.9.*"
