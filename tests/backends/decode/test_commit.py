"""Stop strings, budget and end tokens (backends/decode/commit.py) in every driver."""

from __future__ import annotations

import pytest

import seqstate as ss
from seqstate.detokenize import Detokenizer

from .scripted import ScriptedEngine

SPLIT_STOP = {"x": {"ST": 5.0}, "ST": {"OP": 5.0}, "STOP": {"<eos>": 5.0}}


def test_detokenizer_matches_stops_only_past_match_from():
    detok = Detokenizer([b"a.", b".", b"b"], (".",))
    state = detok.start(match_from=2)
    state, chunk = detok.feed(state, 0)  # "a." lies before the offset: shown, no match
    assert chunk.text == "a." and chunk.stop is None
    state, chunk = detok.feed(state, 2)
    state, chunk = detok.feed(state, 1)
    assert chunk.stop is not None and chunk.stop.start == 3


@pytest.mark.parametrize("driver", ["generate", "stream", "step"])
def test_stop_string_across_tokens_is_excluded_and_ends_with_stop(driver):
    engine = ScriptedEngine(SPLIT_STOP)
    prompt, generator = engine("x"), ss.gen(stop="STOP", max_tokens=5, heal=False)
    if driver == "generate":
        state = prompt + generator
    elif driver == "stream":
        chunks, state = engine.stream(prompt, generator)
        assert "".join(chunks) == ""
    else:
        state = engine.drive(prompt, generator, 4)
    assert str(state) == "x"
    assert state.finish_reasons == [["stop"]]


def test_one_token_stop_string_ends_a_step_driven_span():
    engine = ScriptedEngine({"x": {"STOP": 5.0}, "STOP": {"a": 5.0}})
    generator = ss.gen(stop="STOP", max_tokens=5, heal=False)
    state = engine.drive(engine("x"), generator, 3)  # later steps leave the row as it is
    assert str(state) == "x"
    assert state.finish_reasons == [["stop"]]


def test_text_before_a_stop_inside_a_token_is_kept():
    engine = ScriptedEngine({"x": {"He": 5.0}, "He": {"llo": 5.0}})
    state = engine("x") + ss.gen(stop="l", max_tokens=5, heal=False)
    assert str(state) == "xHe"
    assert state.finish_reasons == [["stop"]]


def test_end_token_finishes_with_eos_and_length_at_budget():
    engine = ScriptedEngine(
        {"x": {"a": 5.0}, "xa": {"<eos>": 5.0}, "y": {"b": 5.0}, "b": {"b": 5.0}}
    )
    state = engine(["x", "y"]) + ss.gen(max_tokens=3, heal=False)
    assert state.texts == [["xa"], ["ybbb"]]
    assert state.finish_reasons == [["eos"], ["length"]]
