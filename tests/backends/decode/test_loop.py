"""The model's own loop (backends/decode/loop.py): streams, batches, jump-forward."""

from __future__ import annotations

import pytest

import seqstate as ss

from .scripted import ScriptedEngine

SCRIPTS = [
    (
        {"x": {"He": 5.0}, "He": {"llo": 5.0}, "Hello": {"<eos>": 5.0}},
        ss.gen(max_tokens=6, heal=False),
    ),
    ({"x": {"a": 5.0}, "a": {"ST": 5.0}, "ST": {"OP": 5.0}}, ss.gen(stop="STOP", heal=False)),
    (
        {"x": {"a": 5.0}, "a": {"b": 5.0}, "b": {"c": 5.0}},
        ss.gen(banned="bc", max_tokens=4, heal=False),
    ),
    ({"x": {"1": 5.0, "2": 4.0}, "1": {"2": 5.0}}, ss.regex("[0-9]{3}", heal=False)),
    ({"Hello": {".": 5.0}, "Hello.": {" Hi": 5.0}, "Hi": {".": 5.0}}, ss.gen(stop=".")),
]


@pytest.mark.parametrize("script, generator", SCRIPTS)
def test_stream_adds_up_to_generate(script, generator):
    engine = ScriptedEngine(script)
    prompt = engine("Hello." if generator.heal else "x")
    chunks, streamed = engine.stream(prompt, generator)
    state = prompt + generator
    assert streamed.texts == state.texts
    assert str(prompt) + "".join(chunks) == str(state)


@pytest.mark.parametrize("script, generator", SCRIPTS)
def test_a_batch_equals_its_rows_alone(script, generator):
    engine = ScriptedEngine({**script, "y": {"<eos>": 5.0}})
    together = engine(["x", "y", "x"]) + generator
    alone = [(engine(text) + generator).texts[0] for text in ("x", "y", "x")]
    assert together.texts == alone


def test_forced_text_is_appended_without_sampling():
    script = {"x": {"a": 5.0}, "": {"<eos>": 0.0}}
    plain = ScriptedEngine(script)
    jumping = ScriptedEngine(script, jump_forward=True)
    generator = ss.regex("a-fixed-tail", heal=False)
    assert str(jumping("x") + generator) == str(plain("x") + generator) == "xa-fixed-tail"
    assert jumping.counters["tokens_forced"] > 0
    assert jumping.runner.calls < plain.runner.calls


def test_a_final_state_with_only_the_end_allowed_ends_without_sampling():
    engine = ScriptedEngine({"x": {"a": 5.0}})
    state = engine("x") + ss.regex("a", heal=False)
    assert str(state) == "xa" and state.finish_reasons == [["stop"]]
    assert state.rows[0].segments[-1].origin.complete


def test_an_end_token_first_leaves_an_empty_span_that_says_eos():
    engine = ScriptedEngine({"x": {"<eos>": 5.0}})
    state = engine("x") + ss.gen(name="g", heal=False)
    assert str(state) == "x" and state.finish_reasons == [["eos"]] and state["g"] == ""
