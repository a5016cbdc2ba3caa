"""Shared fixtures: the SmolLM2 tokenizer, a tiny random Llama with its vocabulary,
and the real default model (session-scoped, used by the slow end-to-end tests)."""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest
from hypothesis import settings

# One hypothesis profile for every run: derandomized (the same examples each time, so a
# green run means the same thing twice) and without per-example deadlines (the first
# example of a test pays for lazy compilation and numba; timing is the benchmarks' job).
settings.register_profile("seqstate", derandomize=True, deadline=None, print_blob=True)
settings.load_profile("seqstate")


@pytest.fixture(scope="session")
def smol_tokenizer():
    """The default model's tokenizer (converted from GGUF once, then cached on disk)."""
    from backends.loading import load_default_tokenizer

    return load_default_tokenizer()


def tiny_llama(tokenizer, *, tie_word_embeddings: bool = True):
    """A 2-layer random Llama over ``tokenizer``'s vocabulary: fast, deterministic, fp32."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=16,
        max_position_embeddings=4096,
        rope_theta=10000.0,
        tie_word_embeddings=tie_word_embeddings,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    torch.manual_seed(0)
    return LlamaForCausalLM(config).eval()


@pytest.fixture(scope="session")
def tiny_hf_model(smol_tokenizer):
    """The tiny random Llama with SmolLM2's vocabulary."""
    return tiny_llama(smol_tokenizer)


@pytest.fixture(scope="session")
def default_hf_model():
    """The real SmolLM2-135M-Instruct (weights cached after the first conversion)."""
    from backends.loading import load_default_hf

    model, tokenizer = load_default_hf()
    return model.eval(), tokenizer


@pytest.fixture
def busy_switching() -> Iterator[None]:
    """Make threads switch every few bytecodes, so interleavings actually happen."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(before)
