"""Ending a constrained span within its budget (backends.closing), on small indexes:
whatever a model picks among the tokens left, the span reaches a final state in time."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fsm
from backends.closing import CLOSING_WINDOW, over_budget_tokens

# Every byte the constraints below use is a token, plus merged tokens of several lengths.
TOKENS = [bytes([b]) for b in b'abc{}[]":,0123456789 '] + [b'"a":', b"ab", b"abcabc", b"00", b",["]
EOS = len(TOKENS)
VOCAB = fsm.Vocabulary.from_raw([*TOKENS, b"<eos>"], eos_ids=EOS)

SPECS = [
    fsm.Regex("(abc)+"),
    fsm.Regex("a[bc]{2,9}"),
    fsm.JsonSchema(
        {"type": "object", "properties": {"a": {"type": "array", "items": {"type": "integer"}}}},
        whitespace_max=0,
        extra_keys=False,
        plain_integers=True,  # ss.json's defaults
    ),
    fsm.JsonSchema(
        {"type": "array", "items": {"type": "array", "items": {"type": "integer"}}, "minItems": 2},
        whitespace_max=0,
        plain_integers=True,
    ),
]


def run_to_budget(index: fsm.TokenIndex, budget: int, choose) -> tuple[int, int]:
    """Pick tokens with ``choose`` among those not banned until the budget is spent or
    an end token is picked; returns (final state, tokens used)."""
    state, used = index.initial_state, 0
    while used < budget:
        allowed = index.allowed_tokens(state)
        banned = over_budget_tokens(index, state, budget - used)
        options = np.setdiff1d(allowed, banned)
        token = int(choose(options))
        if token == EOS:
            break
        state = index.next_state(state, token)
        used += 1
    return state, used


@pytest.mark.parametrize("spec", SPECS, ids=range(len(SPECS)))
@settings(max_examples=40)
@given(data=st.data(), slack=st.integers(0, 12))
def test_any_choice_among_the_tokens_left_ends_in_a_final_state(spec, data, slack):
    index = fsm.compile_index(spec, VOCAB)
    need = len(index.shortest_completion(index.initial_state))
    budget = min(need + slack, CLOSING_WINDOW)
    avoid_end = data.draw(st.booleans(), label="never pick the end token")

    def choose(options: np.ndarray) -> int:
        if avoid_end and len(options) > 1:
            options = options[options != EOS]
        return data.draw(st.sampled_from(options.tolist()))

    state, used = run_to_budget(index, budget, choose)
    assert used <= budget
    assert index.is_final(state)


def test_nothing_is_banned_with_room_to_spare_or_when_it_is_too_late():
    index = fsm.compile_index(fsm.Regex("(abc){5}"), VOCAB)
    start = index.initial_state
    assert len(over_budget_tokens(index, start, CLOSING_WINDOW + 1)) == 0  # outside the window
    assert len(over_budget_tokens(index, start, 16)) == 0  # every token fits
    assert len(over_budget_tokens(index, start, 3)) == 0  # nothing can fit any more
    # 15 bytes to write in 14 tokens: only a merged token keeps the span completable.
    tight = {VOCAB.token_bytes[t] for t in over_budget_tokens(index, start, 14)}
    assert tight == {b"a"}


def test_shortest_completion_is_shortest_and_memoised():
    index = fsm.compile_index(fsm.Regex("x?(abc)+|ab"), VOCAB)
    assert index.shortest_completion(index.initial_state) == b"ab"
    state = index.step_bytes(index.initial_state, b"abca")
    assert index.shortest_completion(state) == b"bc"
    assert index.shortest_completion(index.step_bytes(state, b"bc")) == b""
