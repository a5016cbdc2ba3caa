"""One Model shared by threads: every call gives what it gives alone, and handles
dropped in any thread return their blocks (docs/design.md, "Threads")."""

from __future__ import annotations

import gc
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
import torch

import seqstate as ss
from backends.kv_pool import KVPool
from backends.kvref import PagedKVRef
from backends.model import Model, load_model

Outcome = tuple[list[list[str]], list[list[list[int]]]]


@pytest.fixture(scope="module")
def model(tiny_hf_model, smol_tokenizer) -> Model:
    """A model of its own, so the pool statistics below see only these tests."""
    return load_model((tiny_hf_model, smol_tokenizer), device="cpu")


def outcome(state: ss.SequenceState) -> Outcome:
    """What a caller reads: texts and token ids (prompts are short, under one KV block,
    so no call can reuse K/V another call computed and results are bit-exact)."""
    return state.texts, [[ids.tolist() for ids in row] for row in state.token_ids]


def streamed(model: Model, prompt: str, *parts: object) -> Outcome:
    """A stream iterated to the end; its chunks must add up to its final text."""
    start = model(prompt)
    stream = model.stream(start, *parts)
    text = "".join(chunks[0][0] for chunks in stream)
    assert stream.state is not None and str(stream.state) == str(start) + text
    return outcome(stream.state)


def stepped(model: Model, prompt: str) -> Outcome:
    """ss.step driven by the caller's own forward passes (under the model's lock, as
    code that runs the model itself from threads must)."""
    state, generator = model(prompt).settle(), ss.gen(max_tokens=4)
    for _ in range(4):
        with model.lock, torch.inference_mode():
            ids = torch.tensor([state.token_ids[0][0].tolist()])
            logits = model.hf_model(ids).logits[:, -1]
        state = ss.step(state, logits, generator)
    return outcome(state)


def calls(model: Model) -> list[Callable[[], Outcome]]:
    """Calls of every kind: free text, constraints, batches, beams, streams, steps."""
    return [
        lambda: outcome(model("Once upon") + ss.gen(max_tokens=12)),
        lambda: outcome(model("Mail: ") + ss.regex(r"[a-z]{2,6}@[a-z]{2,5}\.(com|org)")),
        lambda: outcome(model(["Pick:", "Choose one:"]) + ss.choice(["red", "green", "blue"])),
        lambda: outcome(model("Age: ") + ss.json({"type": "integer", "maximum": 120})),
        lambda: outcome(
            model("Data: ")
            + ss.json(
                {
                    "type": "object",
                    "properties": {"a": {"type": "boolean"}, "b": {"type": "string"}},
                    "required": ["a", "b"],
                },
                max_tokens=24,
            )
        ),
        lambda: outcome(model("Code: ") + ss.regex(r"[A-Z]{3}-[0-9]{2}", sampler=ss.beam(2))),
        lambda: outcome((model("Two") + ss.gen(max_tokens=5)).fork(2) + ss.gen(max_tokens=4)),
        lambda: streamed(model, "Year: ", ss.regex(r"1[89][0-9]{2}"), ", ", ss.gen(max_tokens=6)),
        lambda: streamed(model, "Hi", ss.gen(max_tokens=8)),
        lambda: stepped(model, "Say"),
    ]


def test_concurrent_calls_give_the_results_of_calls_alone(
    model, tiny_hf_model, smol_tokenizer, busy_switching
):
    alone = [call() for call in calls(load_model((tiny_hf_model, smol_tokenizer), device="cpu"))]
    work = calls(model)
    start = threading.Barrier(len(work))

    def worker(i: int) -> list[Outcome]:
        start.wait()
        return [work[i]() for _ in range(3)]

    with ThreadPoolExecutor(len(work)) as pool:
        results = list(pool.map(worker, range(len(work))))
    for i, runs in enumerate(results):
        assert runs == [alone[i]] * 3, f"call {i} differs when run beside the others"


def test_streams_interleaved_in_one_thread_do_not_block_each_other(model):
    first = model.stream(model("A: "), ss.gen(max_tokens=6))
    second = model.stream(model("B: "), ss.regex(r"[0-9]{4}"))
    chunks = [next(first), next(second)]
    alone = model("B: ") + ss.regex(r"[0-9]{4}")  # a whole call between two steps
    chunks += list(first) + list(second)
    assert len(chunks) > 2
    assert first.state == model("A: ") + ss.gen(max_tokens=6)
    assert second.state == alone


def slice_and_drop(state: ss.SequenceState, shift: int) -> int:
    """Prefix slices (which share the state's KV blocks), each dropped at once."""
    kept = 0
    for n in range(1, 30):
        kept += state[: n + shift].row(0).n_tokens
    return kept


def test_states_dropped_in_other_threads_return_their_blocks(model, busy_switching):
    def run() -> None:
        base = model("Shared prompt") + ss.gen(max_tokens=20)
        with ThreadPoolExecutor(4) as pool:
            futures = [pool.submit(slice_and_drop, base, i) for i in range(4)]
            extended = [base + ss.gen(max_tokens=3) for _ in range(3)]  # meanwhile
            assert all(f.result() > 0 for f in futures)
        assert model.kv_stats()["blocks_used"] > 0 and len(extended) == 3

    run()
    gc.collect()
    assert model.kv_stats()["blocks_used"] == 0


def churn(pool: KVPool, root: PagedKVRef, barrier: threading.Barrier, seed: int) -> None:
    """Take and drop prefix handles of ``root``; thread 0 also extends them."""
    rng = np.random.default_rng(seed)
    barrier.wait()
    for _ in range(300):
        handle = root.prefix(int(rng.integers(1, root.length + 1)))
        if seed == 0:
            pool.extend([handle], [np.arange(3)])


def test_pool_counts_stay_exact_under_threads(busy_switching):
    pool = KVPool(num_layers=1, kv_heads=1, head_dim=2, block_size=4, initial_blocks=4)

    def run() -> None:
        (root,), _ = pool.extend([None], [np.arange(10)])
        barrier = threading.Barrier(4)
        with ThreadPoolExecutor(4) as executor:
            list(executor.map(lambda seed: churn(pool, root, barrier, seed), range(4)))
        gc.collect()
        assert pool.blocks_used == 3  # only the root's blocks are still owned

    run()
    gc.collect()
    assert pool.kv_stats()["blocks_used"] == 0
