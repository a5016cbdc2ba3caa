"""Shared setup of the vLLM tests: they need vLLM, which lives in its own environment.

In an environment without vLLM every module here is skipped with the command that
runs them (``RUN_HINT``)."""

from __future__ import annotations

import os

RUN_HINT = (
    "needs vLLM: bash scripts/bootstrap_vllm.sh && "
    ".venv-vllm/bin/python -m pytest -q -m vllm tests/vllm"
)

# vLLM's CPU build reserves this many GiB of KV cache per engine (the default is far more).
os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "2")


def default_model_dir() -> str:
    """The transformers directory of the default model that ``ss.load_model()``'s loader
    writes in seqstate's cache (converted from the GGUF wheel on first use)."""
    from backends.loading import default_model_dir as folder
    from backends.loading import load_default_hf

    load_default_hf()  # converts once; later calls read the cache
    return str(folder())
