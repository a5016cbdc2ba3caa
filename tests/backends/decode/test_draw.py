"""Hooks, retries and rewinds (backends/decode/draw.py) on a scripted engine."""

from __future__ import annotations

import pytest

import seqstate as ss
from backends.generation import BacktrackPastSpanStart, GenerationError

from .scripted import ScriptedEngine

# After "x" the model prefers a > b > c > d, at every position.
RANKED = {
    "x": {"a": 4.0, "b": 3.0, "c": 2.0, "d": 1.0},
    "": {"a": 4.0, "b": 3.0, "c": 2.0, "d": 1.0},
}


def run(hooks, *, max_tokens=2, max_retries=32):
    engine = ScriptedEngine(RANKED)
    generator = ss.gen(max_tokens=max_tokens, heal=False, hooks=hooks, max_retries=max_retries)
    return engine("x") + generator


def test_hooks_see_every_draw_including_redraws():
    seen = []

    def refuse_a_and_b(event):
        seen.append((event.step, event.token_text))
        return ss.Resample() if event.token_text in "ab" else None

    state = run([refuse_a_and_b])
    assert str(state) == "xcc"
    assert seen == [(0, "a"), (0, "b"), (0, "c"), (1, "a"), (1, "b"), (1, "c")]


def test_every_hook_sees_the_redraw():
    first, second = [], []
    state = run(
        [
            lambda e: (
                first.append(e.token_text) or (ss.Resample() if e.token_text == "a" else None)
            ),
            lambda e: second.append(e.token_text),
        ],
        max_tokens=1,
    )
    assert str(state) == "xb" and first == ["a", "b"] and second == ["b"]


def test_retries_are_counted_per_position():
    # two resamples at each of three positions: 6 in the row, 2 per position
    state = run(
        [lambda e: ss.Resample() if e.token_text in "ab" else None], max_tokens=3, max_retries=2
    )
    assert str(state) == "xccc"


def test_too_many_retries_at_one_position_is_an_error_naming_it():
    with pytest.raises(GenerationError, match="token 0 of the span after 2 retries"):
        run([lambda e: ss.Resample() if e.token_text in "abc" else None], max_retries=2)


def test_backtrack_rewinds_and_bans_the_first_dropped_token():
    calls = []

    def back_once(event):
        calls.append((event.step, event.token_text, event.text))
        return ss.Backtrack(2) if len(calls) == 3 else None

    state = run([back_once], max_tokens=3)
    # a, a, then Backtrack(2) at step 2: back to step 0, where 'a' is now banned
    assert calls[:4] == [(0, "a", ""), (1, "a", "a"), (2, "a", "aa"), (0, "b", "")]
    assert str(state) == "xbaa"


def test_backtrack_past_the_span_start_is_a_typed_error():
    with pytest.raises(BacktrackPastSpanStart, match="Backtrack\\(2\\) at token 1"):
        run([lambda e: ss.Backtrack(2) if e.step == 1 else None])
    with pytest.raises(BacktrackPastSpanStart):
        run([lambda e: ss.Backtrack(1)])  # nothing generated yet


def test_replace_commits_the_given_token():
    engine = ScriptedEngine(RANKED)
    target = engine.id("d")
    state = engine("x") + ss.gen(max_tokens=2, heal=False, hooks=[lambda e: ss.Replace(target)])
    assert str(state) == "xdd"


def test_banned_string_rewinds_to_where_it_starts():
    engine = ScriptedEngine({"x": {"a": 5.0, "c": 4.0}, "a": {"b": 5.0}, "c": {"c": 5.0}})
    state = engine("x") + ss.gen(max_tokens=3, heal=False, banned="ab")
    assert str(state) == "xccc"  # "xab" rewound to before 'a', which is banned there
