"""ModelRunner on the real default model (SmolLM2-135M-Instruct, fp32 CPU)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from backends.runner import ModelRunner
from tests.backends.greedy import greedy

pytestmark = pytest.mark.slow

QUESTIONS = [
    "What is the capital of France?",
    "Write a haiku about the sea.",
    "List three prime numbers and explain why they are prime.",
]


@pytest.fixture(scope="module")
def prompts(default_hf_model) -> list[list[int]]:
    _, tokenizer = default_hf_model
    return [
        tokenizer.apply_chat_template(
            [{"role": "user", "content": q}], add_generation_prompt=True, return_dict=True
        )["input_ids"]
        for q in QUESTIONS
    ]


def hf_greedy(model, prompt: list[int], steps: int) -> list[int]:
    with torch.inference_mode():
        out = model.generate(torch.tensor([prompt]), max_new_tokens=steps, do_sample=False)
    return out[0, len(prompt) :].tolist()


def test_greedy_matches_transformers_generate(default_hf_model, prompts):
    model, tokenizer = default_hf_model
    runner = ModelRunner(model)
    for prompt in prompts:
        ours = greedy(runner, [prompt], 32, eos=tokenizer.eos_token_id)[0]
        assert ours == hf_greedy(model, prompt, 32)


def test_batched_greedy_equals_each_alone(default_hf_model, prompts):
    model, tokenizer = default_hf_model
    runner = ModelRunner(model)
    together = greedy(runner, prompts, 16, eos=tokenizer.eos_token_id)
    assert together == [greedy(runner, [p], 16, eos=tokenizer.eos_token_id)[0] for p in prompts]


def test_incremental_equals_recompute_across_blocks(default_hf_model, prompts):
    model, _ = default_hf_model
    runner = ModelRunner(model, block_size=16)
    tokens = np.array(prompts[2] + prompts[0], dtype=np.int64)  # 60+ tokens, several blocks
    with torch.inference_mode():
        full = model(torch.as_tensor(tokens)[None], use_cache=False).logits[0]
    kv, start = None, 0
    for size in (15, 1, 1, 14, 17, len(tokens) - 48):
        logits, (kv,) = runner.forward_all([(kv, tokens[start : start + size])])
        torch.testing.assert_close(logits[0], full[start : start + size], rtol=1e-4, atol=1e-4)
        start += size
