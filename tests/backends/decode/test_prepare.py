"""Token healing (backends/decode/prepare.py), pinned on a scripted engine."""

from __future__ import annotations

import seqstate as ss

from .scripted import ScriptedEngine


def test_stop_string_does_not_match_the_regenerated_prompt_text():
    engine = ScriptedEngine({"Hello": {".": 5.0}, "Hello.": {" Hi": 5.0}, "Hi": {".": 5.0}})
    state = engine("Hello.") + ss.gen(stop=".", max_tokens=10)
    assert str(state) == "Hello. Hi"
    assert state.finish_reasons == [["stop"]]


def test_banned_string_does_not_match_the_regenerated_prompt_text():
    engine = ScriptedEngine(
        {"Q:": {"\n": 5.0}, "Q:\n": {" yes": 5.0, "\n": 4.0}, "yes": {"<eos>": 5.0}}
    )
    state = engine("Q:\n") + ss.gen(banned="\n", max_tokens=4)
    assert str(state) == "Q:\n yes"


def test_regenerating_the_healed_text_spends_no_budget():
    engine = ScriptedEngine({"The": {" cat": 5.0}, "The cat": {" sat": 5.0}})
    state = engine("The cat") + ss.gen(max_tokens=1)
    assert str(state) == "The cat sat"
    assert state.finish_reasons == [["length"]]


def test_a_merged_first_token_that_adds_text_counts():
    engine = ScriptedEngine({"The": {" cats": 5.0, " cat": 4.0}, "cats": {" sat": 5.0}})
    state = engine("The cat") + ss.gen(max_tokens=1)
    assert str(state) == "The cats"


def test_the_first_token_starts_with_the_removed_text():
    # the model prefers ' a' (then 'nd'), which would split the prompt's ' and'
    engine = ScriptedEngine({"fish": {" a": 6.0, " and": 2.0, " an": 1.0}, "fish a": {"nd": 5.0}})
    prompt = engine("fish and")
    state = prompt + ss.gen(max_tokens=3)  # room to split: the budget does not force it
    span = state.rows[0].segments[-1]
    assert span.span.token_ids[0] == engine.id(" and")
    assert str(state).startswith("fish and")


def test_healing_off_generates_after_the_prompt_tokens():
    engine = ScriptedEngine({"Hello.": {" Hi": 5.0}, "Hi": {"<eos>": 5.0}})
    state = engine("Hello.") + ss.gen(max_tokens=3, heal=False)
    assert str(state) == "Hello. Hi"
    assert state.finish_reasons == [["eos"]]
