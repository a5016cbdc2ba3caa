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


def test_masks_are_built_during_the_forward_pass_on_cuda(cuda_model, smol_tokenizer):
    """On an accelerator ``overlap_masks`` defaults to on; the output equals the
    masks-first run's."""
    import seqstate as ss
    from backends.model import Model

    model = Model(cuda_model, smol_tokenizer)
    assert model.mask_worker is not None
    generator = ss.regex(r"[a-z]{2,6}@[a-z]{2,6}\.(com|org)", max_tokens=24)
    overlapped = model(["Mail: ", "Email: "]) + generator
    model.overlap_masks = False
    assert model.mask_worker is None
    model.indexes.clear()
    assert (model(["Mail: ", "Email: "]) + generator).texts == overlapped.texts
