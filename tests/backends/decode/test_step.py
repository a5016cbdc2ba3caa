"""``ss.step`` on external logits (backends/decode/step.py) equals the model's loop."""

from __future__ import annotations

import pytest

import seqstate as ss

from .scripted import ScriptedEngine

# "é" written as its two UTF-8 bytes, one token each (the text shows U+FFFD between)
SPLIT_CHAR = {"x": {b"\xc3": 5.0}, "\ufffd": {b"\xa9": 5.0}, "é": {"a": 5.0}, "a": {"<eos>": 5.0}}


def test_a_character_split_over_tokens_is_held_back_until_complete():
    engine = ScriptedEngine(SPLIT_CHAR)
    generator = ss.gen(max_tokens=5, heal=False)
    one = engine.drive(engine("x"), generator, 1)
    assert str(one) == "x" and "\ufffd" not in str(one)  # half a character: nothing yet
    two = engine.drive(one, generator, 1)
    assert str(two) == "xé"
    done = engine.drive(two, generator, 2)
    assert str(done) == "xéa" and done.finish_reasons == [["eos"]]


def test_stream_chunks_never_cut_a_character():
    engine = ScriptedEngine(SPLIT_CHAR)
    chunks, state = engine.stream(engine("x"), ss.gen(max_tokens=5, heal=False))
    assert "".join(chunks) == "éa" and all("\ufffd" not in c for c in chunks)
    assert chunks[0] == "" and chunks[1] == "é"
    assert str(state) == "xéa"


@pytest.mark.parametrize(
    "script, generator",
    [
        (
            {"x": {"He": 5.0}, "He": {"llo": 5.0}, "Hello": {"<eos>": 5.0}},
            ss.gen(max_tokens=6, heal=False),
        ),
        ({"x": {"a": 5.0}, "a": {"ST": 5.0}, "ST": {"OP": 5.0}}, ss.gen(stop="STOP", heal=False)),
        ({"x": {"a": 5.0}, "a": {"a": 5.0}}, ss.gen(max_tokens=3, heal=False)),
        ({"x": {"1": 5.0, "2": 4.0}, "1": {"2": 5.0}}, ss.regex("[0-9]{3}", heal=False)),
    ],
)
def test_step_driven_equals_generate(script, generator):
    engine = ScriptedEngine(script)
    prompt = engine(["x", "x"])
    ours = prompt + generator
    driven = engine.drive(prompt, generator, 8)
    assert driven.texts == ours.texts
    assert driven.finish_reasons == ours.finish_reasons
    assert [r.token_ids.tolist() for r in driven.rows] == [r.token_ids.tolist() for r in ours.rows]
