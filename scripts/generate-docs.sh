#!/usr/bin/env bash
# Rewrites the generated pages of docs/reference/ from the code they
# describe: the Rust ones (passes, pipelines, knobs, the dialects' op
# reference) through the lit binary's `generated_docs` tests, the JAX
# primitive list through its pytest. The same tests, without
# TESSEL_UPDATE_DOCS, fail while a page is out of date.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
TESSEL_UPDATE_DOCS=1 cargo test -q -p tessel-driver --test lit -- generated_docs
python=${TESSEL_VENV:-.venv}/bin/python
TESSEL_UPDATE_DOCS=1 "$python" -m pytest -q python/tests/test_registry.py -k generated_page
git status --short docs/reference
