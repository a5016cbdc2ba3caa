"""Hypothesis strategies shared by the test suites (states, slices, token id runs).

Builders take what they need (an engine, lists of token ids) as arguments, so tests
draw from them with `data.draw(...)` inside tests that use session fixtures.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from hypothesis import strategies as st

from seqstate import Detokenizer, Origin, Row, SequenceState, Span, decode_tokens

TEXT_PIECES = [
    "a", "b", "x", " ", "  ", "\n", "Hello", " world", "é", "ö", "ß",
    "日", "本", "の", "🙂", "👍🏽", "<", "&", '"', "\t", "123",
]  # fmt: skip


def texts(max_pieces: int = 8) -> st.SearchStrategy[str]:
    """Short texts mixing ASCII, spaces, multi-byte characters and HTML specials."""
    return st.lists(st.sampled_from(TEXT_PIECES), max_size=max_pieces).map("".join)


def text_ids(vocabulary: Any) -> list[int]:
    """Ids of the tokens that are text (special tokens have no bytes)."""
    return [i for i, data in enumerate(vocabulary.token_bytes) if data]


def partial_utf8_ids(vocabulary: Any) -> list[int]:
    """Ids of tokens whose bytes are not valid UTF-8 on their own (they split a character)."""
    ids = []
    for i, data in enumerate(vocabulary.token_bytes):
        if data:
            try:
                data.decode("utf-8")
            except UnicodeDecodeError:
                ids.append(i)
    return ids


def token_id_runs(
    regular: Sequence[int], partial: Sequence[int], max_size: int = 16
) -> st.SearchStrategy[list[int]]:
    """Random token ids, a third of them from tokens that split multi-byte characters."""
    one = st.one_of(st.sampled_from(list(regular)), st.sampled_from(list(partial)))
    return st.lists(one, max_size=max_size)


@st.composite
def generated_states(
    draw: st.DrawFn, engine: Any, ids: st.SearchStrategy[list[int]]
) -> SequenceState:
    """A 1x1 state holding one generated span of random ids, states and logprobs."""
    token_ids = draw(ids)
    n = len(token_ids)
    origin = Origin("generated", generator=("gen", draw(st.integers(0, 2))), capture="g")
    detokenizer = Detokenizer(engine.vocabulary.token_bytes)
    span = Span.of_tokens(
        token_ids,
        decode_tokens(detokenizer, token_ids),
        origin,
        logprobs=-np.linspace(0.1, 1.0, n),
        constraint_states=np.arange(1, n + 1),
    )
    return SequenceState(engine, (Row.of_span(span),), (1, 1))


def char_slices(limit: int = 40) -> st.SearchStrategy[slice]:
    """Step-1 slices with optional, possibly negative, bounds."""
    bound = st.none() | st.integers(-limit, limit)
    return st.builds(slice, bound, bound)


@st.composite
def states(
    draw: st.DrawFn, engine: Any, ids: st.SearchStrategy[list[int]], max_parts: int = 4
) -> SequenceState:
    """A 1x1 state built like user programs build them: a prompt, then appended text,
    other prompts and generated spans, with the occasional character slice."""
    state = SequenceState.from_text(engine, draw(texts()))
    for _ in range(draw(st.integers(0, max_parts))):
        choice = draw(st.sampled_from(["text", "prompt", "generated", "slice"]))
        if choice == "text":
            state = state + draw(texts())
        elif choice == "prompt":
            state = state + SequenceState.from_text(engine, draw(texts()))
        elif choice == "generated":
            state = state + draw(generated_states(engine, ids))
        else:
            state = state[..., draw(char_slices())]
    return state
