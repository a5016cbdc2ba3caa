"""ModelRunner on the tiny random Llama: paged incremental decoding equals a full recompute,
batched equals alone, cache hit equals miss, shared work is done once, nothing leaks."""

from __future__ import annotations

import gc

import numpy as np
import pytest
import torch

from backends.runner import ModelRunner
from tests.backends.greedy import greedy

BS = 4


@pytest.fixture
def runner(tiny_hf_model) -> ModelRunner:
    return ModelRunner(tiny_hf_model, block_size=BS, initial_blocks=4)


def ids(seed: int, n: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(10, 40000, n)


def recompute(model, tokens: np.ndarray) -> torch.Tensor:
    """Logits of every position from a plain transformers forward without cache: [n, vocab]."""
    with torch.inference_mode():
        return model(torch.as_tensor(tokens)[None], use_cache=False).logits[0]


@pytest.mark.parametrize("chunks", [[1] * 13, [3, 1, 4, 1, 7, 1, 9], [5, 11], [8, 8, 1]])
def test_incremental_equals_recompute(runner, tiny_hf_model, chunks):
    tokens = ids(0, sum(chunks))
    full = recompute(tiny_hf_model, tokens)
    kv, start = None, 0
    for size in chunks:
        every, (grown,) = runner.forward_all([(kv, tokens[start : start + size])])
        last, (again,) = runner.forward([(kv, tokens[start : start + size])])
        torch.testing.assert_close(every[0], full[start : start + size])
        torch.testing.assert_close(last[0], full[start + size - 1])
        kv, start = grown, start + size
        assert kv.length == start


def test_batched_rows_of_different_lengths_equal_each_alone(runner, tiny_hf_model):
    prefix_a = runner.forward([(None, ids(1, 6))])[1][0]
    prefix_b = runner.forward([(None, ids(2, 13))])[1][0]
    rows = [(prefix_a, ids(3, 1)), (None, ids(4, 9)), (prefix_b, ids(5, 5)), (prefix_a, ids(6, 2))]
    batched, _ = runner.forward(rows)
    batched_all, _ = runner.forward_all(rows)
    for i, row in enumerate(rows):
        alone, _ = runner.forward([row])
        alone_all, _ = runner.forward_all([row])
        torch.testing.assert_close(batched[i], alone[0])
        torch.testing.assert_close(batched_all[i], alone_all[0])


def test_batched_greedy_equals_alone(runner):
    prompts = [ids(7, 3).tolist(), ids(8, 11).tolist(), ids(9, 6).tolist()]
    together = greedy(runner, prompts, 12)
    assert together == [greedy(runner, [p], 12)[0] for p in prompts]


def test_cache_hit_equals_cache_miss(runner, tiny_hf_model):
    prompt, suffix = ids(10, 9), ids(11, 6)
    _, (kv,) = runner.forward([(None, prompt)])
    hit, _ = runner.forward_all([(kv, suffix)])
    longer = runner.forward([(None, np.concatenate([prompt, ids(12, 3)]))])[1][0]
    cropped, _ = runner.forward_all([(longer.prefix(len(prompt)), suffix)])
    fresh = ModelRunner(tiny_hf_model, block_size=BS)
    miss, _ = fresh.forward_all([(None, np.concatenate([prompt, suffix]))])
    torch.testing.assert_close(hit[0], miss[0][len(prompt) :])
    torch.testing.assert_close(cropped[0], miss[0][len(prompt) :])


def test_rows_sharing_a_prompt_compute_it_once(runner):
    prompt = ids(13, 21)
    rows = [(None, np.append(prompt, t)) for t in (5, 6, 7, 8)]
    before = runner.kv_stats()["tokens_computed"]
    logits, refs = runner.forward(rows)
    assert runner.kv_stats()["tokens_computed"] - before == 21 + 4
    for i, row in enumerate(rows):
        torch.testing.assert_close(logits[i], runner.forward([row])[0][0])
    assert len({ref.block_ids[:5].tobytes() for ref in refs}) == 1  # the prompt's full blocks


def test_identical_rows_share_logits_and_handle(runner):
    _, (kv,) = runner.forward([(None, ids(14, 7))])
    before = runner.kv_stats()
    logits, refs = runner.forward([(kv, [42])] * 8)
    after = runner.kv_stats()
    assert after["tokens_computed"] - before["tokens_computed"] == 1
    assert after["tokens_reused"] - before["tokens_reused"] == 8 * 8 - 1
    assert all(ref is refs[0] for ref in refs)
    assert torch.equal(logits, logits[:1].expand(8, -1))


def test_extending_a_shared_partial_block_copies_it(runner):
    _, (kv,) = runner.forward([(None, ids(15, 7))])  # block 2 holds 3 of 4 slots
    keys_before, values_before = runner.pool.read(kv)
    _, (other,) = runner.forward([(kv.prefix(6), [99, 98])])
    keys_after, values_after = runner.pool.read(kv)
    assert torch.equal(keys_before, keys_after) and torch.equal(values_before, values_after)
    assert other.block_ids[0] == kv.block_ids[0] and other.block_ids[1] != kv.block_ids[1]


def test_dropping_every_handle_frees_every_block(runner):
    logits, refs = runner.forward([(None, ids(16, 30)), (None, ids(17, 3))])
    grown = runner.forward([(refs[0].prefix(10), [1, 2, 3]), (refs[1], [4])])
    assert runner.kv_stats()["blocks_used"] > 0
    del logits, refs, grown
    gc.collect()
    assert runner.kv_stats()["blocks_used"] == 0


def test_token_ids_may_be_lists_or_tensors(runner):
    tokens = ids(18, 5)
    a, _ = runner.forward([(None, tokens)])
    b, _ = runner.forward([(None, tokens.tolist())])
    c, _ = runner.forward([(None, torch.as_tensor(tokens))])
    torch.testing.assert_close(a, b)
    torch.testing.assert_close(a, c)


def test_bad_rows_are_rejected(runner, tiny_hf_model):
    with pytest.raises(ValueError, match="non-empty"):
        runner.forward([(None, [])])
    with pytest.raises(ValueError, match="token ids must lie"):
        runner.forward([(None, [10**6])])
    _, (foreign,) = ModelRunner(tiny_hf_model).forward([(None, [1, 2])])
    with pytest.raises(ValueError, match="another|this runner"):
        runner.forward([(foreign, [3])])
    assert runner.kv_stats()["blocks_used"] == 0


def test_empty_batch(runner):
    logits, refs = runner.forward([])
    assert logits.shape == (0, runner.vocab_size) and refs == []


def test_eager_attention_gives_the_same_logits(tiny_hf_model):
    import copy

    eager = copy.deepcopy(tiny_hf_model)
    eager.set_attn_implementation("eager")
    tokens = ids(19, 11)
    full = recompute(eager, tokens)
    for model in (eager, tiny_hf_model):
        runner = ModelRunner(model, block_size=BS)
        first, (kv,) = runner.forward_all([(None, tokens[:6])])
        step, (kv,) = runner.forward_all([(kv, tokens[6:7])])
        rest, _ = runner.forward_all([(kv, tokens[7:]), (None, tokens[:4])])
        torch.testing.assert_close(torch.cat([first[0], step[0], rest[0]]), full)
        torch.testing.assert_close(rest[1], full[:4])


def test_same_prompt_built_twice_is_computed_once(runner, tiny_hf_model):
    prompt = ids(20, 21)
    first, refs = runner.forward([(None, prompt)])
    del refs
    gc.collect()
    assert runner.kv_stats()["blocks_used"] == 0
    before = runner.kv_stats()["tokens_computed"]
    again, _ = runner.forward_all([(None, prompt)])
    assert runner.kv_stats()["tokens_computed"] - before == 1  # 20 positions came from the cache
    torch.testing.assert_close(again[0][-1], first[0])
    torch.testing.assert_close(again[0][-1], recompute(tiny_hf_model, prompt)[-1])


def test_prefix_cache_never_serves_overwritten_blocks(runner, tiny_hf_model):
    prompt = ids(21, 8)
    _, (full,) = runner.forward([(None, prompt)])
    head = full.prefix(5)
    del full
    _, (changed,) = runner.forward([(head, ids(22, 3))])  # in place: head owns the block alone
    query = np.append(prompt, 7)
    logits, _ = runner.forward([(None, query)])
    torch.testing.assert_close(logits[0], recompute(tiny_hf_model, query)[-1])


def test_out_of_kv_memory_is_raised_cleanly(tiny_hf_model):
    from backends.kv_pool import OutOfKVMemory

    runner = ModelRunner(tiny_hf_model, block_size=BS, initial_blocks=2, max_blocks=4)
    _, (kv,) = runner.forward([(None, ids(23, 6))])
    with pytest.raises(OutOfKVMemory, match="max_blocks=4"):
        runner.forward([(kv, ids(24, 20))])
    assert runner.kv_stats()["blocks_used"] == 2
    logits, _ = runner.forward([(kv, ids(25, 2))])
    full = recompute(tiny_hf_model, np.concatenate([ids(23, 6), ids(25, 2)]))
    torch.testing.assert_close(logits[0], full[-1])
