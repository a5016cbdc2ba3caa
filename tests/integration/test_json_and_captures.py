"""What users meet with ss.json and captures: closed objects by default, distinct
keys, plain integers, truncation that is never read back as a value (issue 11)."""

from __future__ import annotations

import json
from typing import Optional

import jsonschema
import pytest
from pydantic import BaseModel

import seqstate as ss

LONG = 40  # characters no generator below can write in 2 tokens


@pytest.mark.parametrize(
    "generator",
    [
        ss.json({"type": "integer", "minimum": 10**LONG}, name="x", max_tokens=2),
        ss.json(
            {"type": "number", "minimum": 10**LONG, "maximum": 10 ** (LONG + 1)},
            name="x",
            max_tokens=2,
        ),
        ss.json({"type": "string", "minLength": LONG}, name="x", max_tokens=2),
        ss.json(
            {
                "type": "object",
                "properties": {"a": {"type": "string", "minLength": LONG}},
                "required": ["a"],
            },
            name="x",
            max_tokens=2,
        ),
        ss.regex(f"[a-z]{{{LONG}}}", name="x", max_tokens=2),
        ss.grammar(f'start: "(" WORD ")"\nWORD: /[a-z]{{{LONG}}}/', name="x", max_tokens=2),
    ],
    ids=["integer", "number", "string", "object", "regex", "grammar"],
)
def test_a_truncated_capture_raises_with_its_partial_text(tiny_model, generator):
    state = tiny_model("Value: ") + generator
    with pytest.raises(ss.TruncatedCapture) as caught:
        state["x"]
    assert caught.value.finish_reason == "length"
    assert str(state).endswith(caught.value.text)
    assert state.rows[0].finish_reason == "length"


def test_a_capture_cut_inside_its_span_raises(tiny_model):
    state = tiny_model("Pick: ") + ss.choice(["alpha beta", "gamma delta"], name="x")
    assert state["x"] in ("alpha beta", "gamma delta")
    cut = state[0, 0, : len(str(state)) - 3]
    with pytest.raises(ss.TruncatedCapture) as caught:
        cut["x"]
    assert caught.value.text in ("alpha be", "gamma de")


def test_free_text_cut_by_max_tokens_is_still_its_text(tiny_model):
    state = tiny_model("Value: ") + ss.gen(name="x", max_tokens=3)
    assert str(state).endswith(state["x"])


class Person(BaseModel):
    name: str
    age: int


class Team(BaseModel):
    lead: Person
    members: list[Person]
    backup: Optional[Person] = None  # noqa: UP045 - the form pydantic users write


def test_generated_objects_have_only_declared_keys_and_end_within_budget(tiny_model):
    """Whatever a random model prefers, every object is closed, laid out with spaces
    only, valid, and ends within max_tokens (the budget steers it to its end)."""
    schema = Team.model_json_schema()
    closed = json.loads(
        json.dumps(schema).replace(
            '"type": "object"', '"type": "object", "additionalProperties": false'
        )
    )
    for seed in range(3):
        prompt = tiny_model("Team: ")
        state = prompt + ss.json(Team, name="t", max_tokens=200, sampler=ss.sample(seed=seed))
        text = str(state)[len(str(prompt)) - 1 :].lstrip()
        assert state.rows[0].finish_reason in ("eos", "stop", "length")
        assert isinstance(state["t"], Team)
        value = json.loads(text)
        jsonschema.validate(value, closed)
        assert "\t" not in text and "\r" not in text
        assert len(state.rows[0].token_ids) - len(prompt.rows[0].token_ids) <= 200


@pytest.mark.parametrize("schema", [dict[str, int], {"type": "object"}])
def test_open_objects_end_cleanly_without_repeated_keys(tiny_model, schema):
    from seqstate.json_keys import repeats_a_key

    for seed in range(3):
        prompt = tiny_model("Counts: ")
        state = prompt + ss.json(schema, name="m", max_tokens=80, sampler=ss.sample(seed=seed))
        text = str(state)[len(str(prompt)) - 1 :].lstrip()
        assert isinstance(state["m"], dict)
        assert not repeats_a_key(text)


@pytest.mark.slow
def test_default_model_pydantic_person_parses(default_model):
    class City(BaseModel):
        name: str
        age: int
        city: str

    chat = default_model.chat([{"role": "user", "content": "Invent a person. Answer in JSON."}])
    state = chat + ss.json(City, name="p", max_tokens=120)
    person = state["p"]
    assert isinstance(person, City) and person.name
    assert set(json.loads(str(state)[len(str(chat)) :].strip())) == {"name", "age", "city"}


@pytest.mark.slow
def test_default_model_nested_models_and_lists_parse(default_model):
    class Pet(BaseModel):
        name: str
        species: str

    class Owner(BaseModel):
        name: str
        pets: list[Pet]
        home: Optional[str] = None  # noqa: UP045

    chat = default_model.chat(
        [{"role": "user", "content": "Invent a person and their pets. Answer in JSON."}]
    )
    state = chat + ss.json(Owner, name="o", max_tokens=120)
    owner = state["o"]
    assert isinstance(owner, Owner) and owner.pets
    assert len(state.rows[0].token_ids) - len(chat.rows[0].token_ids) <= 120


@pytest.mark.slow
def test_default_model_map_parses_with_distinct_keys(default_model):
    chat = default_model.chat(
        [{"role": "user", "content": "Count the letters of three words as JSON."}]
    )
    state = chat + ss.json(dict[str, int], name="m", max_tokens=120)
    counts = state["m"]
    assert isinstance(counts, dict) and counts
    keys = []
    json.loads(
        str(state)[len(str(chat)) :].strip(),
        object_pairs_hook=lambda pairs: keys.extend(k for k, _ in pairs),
    )
    assert len(keys) == len(set(keys))


@pytest.mark.slow
def test_default_model_open_dict_schema_closes_cleanly(default_model):
    chat = default_model.chat(
        [{"role": "user", "content": "Give the population of three cities as JSON."}]
    )
    schema = {
        "type": "object",
        "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
        "required": ["name"],
    }
    state = chat + ss.json(schema, name="p", max_tokens=120)
    assert set(state["p"]) <= {"name", "age"}
