"""ModelRunner on CUDA: the same equivalences as on CPU (skipped without a device)."""

from __future__ import annotations

import gc

import numpy as np
import pytest
import torch

from backends.runner import ModelRunner
from tests.backends.greedy import greedy

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device"),
]


@pytest.fixture(scope="module")
def cuda_model(tiny_hf_model):
    import copy

    return copy.deepcopy(tiny_hf_model).to("cuda")


def test_incremental_equals_recompute_on_cuda(cuda_model):
    runner = ModelRunner(cuda_model, block_size=4)
    assert runner.pool.keys.is_cuda
    tokens = np.random.default_rng(0).integers(10, 40000, 19)
    with torch.inference_mode():
        full = cuda_model(torch.as_tensor(tokens, device="cuda")[None], use_cache=False).logits[0]
    kv, start = None, 0
    for size in (3, 1, 6, 9):
        logits, (kv,) = runner.forward_all([(kv, tokens[start : start + size])])
        torch.testing.assert_close(logits[0], full[start : start + size], rtol=1e-4, atol=1e-4)
        start += size


def test_batched_greedy_equals_alone_on_cuda(cuda_model):
    runner = ModelRunner(cuda_model, block_size=4)
    prompts = [[11, 12, 13], list(range(100, 111)), [7] * 6]
    together = greedy(runner, prompts, 10)
    assert together == [greedy(runner, [p], 10)[0] for p in prompts]
    gc.collect()
    assert runner.kv_stats()["blocks_used"] == 0
