#!/usr/bin/env bash
# Sets up everything the Python side needs, on top of scripts/setup.sh:
# a virtual environment in .venv (or $TESSEL_VENV) with a supported jax,
# pytest, and the `tessel` package built from this checkout (the PyO3
# crate in python/, compiled by maturin into the workspace's target/).
# Idempotent; prints the venv's python on its last line.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
venv=${TESSEL_VENV:-.venv}
case $venv in /*) ;; *) venv="$PWD/$venv" ;; esac
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
python="$venv/bin/python"
"$python" -m pip install -q --upgrade pip >/dev/null
"$python" -m pip install -q "maturin>=1.7,<2" "jax[cpu]>=0.10.2,<0.11" "pytest>=8" "ruff>=0.6" "flatbuffers>=24"
# The dev profile shares its artifacts with `cargo test` (the pipelines
# compile kernels with LLVM -O3 either way); TESSEL_PROFILE=release builds
# a faster compiler.
export MATURIN_PEP517_ARGS="--profile ${TESSEL_PROFILE:-dev}"
export PATH="$venv/bin:$HOME/.cargo/bin:$PATH"
"$python" -m pip install -q --no-build-isolation --force-reinstall --no-deps ./python
echo "$python"
