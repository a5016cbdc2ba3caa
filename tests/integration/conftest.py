"""Models for end-to-end tests: a tiny random Llama (fast) and the real default model."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def tiny_model(tiny_hf_model, smol_tokenizer):
    """seqstate Model over the tiny random Llama: constraints must hold whatever it says."""
    from backends.model import load_model

    return load_model((tiny_hf_model, smol_tokenizer), device="cpu")


@pytest.fixture(scope="session")
def default_model():
    """The real SmolLM2-135M-Instruct on CPU, fp32."""
    from backends.model import load_model

    return load_model(device="cpu")
