"""Generation defaults of the JSON compiler: closed objects and plain integers.

Validation (the spec's defaults) stays exact; the generation mode accepts exactly the
instances of the schema that have no undeclared keys where the schema says nothing
of other keys, and integers written without fraction or exponent."""

from __future__ import annotations

import json
from typing import Optional

import jsonschema
import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel, ConfigDict

from fsm.json_schema import matches, schema_term


def generation_accepts(schema: object, value: object, **options) -> bool:
    text = json.dumps(value, ensure_ascii=False).encode()
    return matches(schema_term(schema, extra_keys=False, plain_integers=True, **options), text)


class Person(BaseModel):
    name: str
    age: int


class OpenPerson(BaseModel):
    model_config = ConfigDict(extra="allow")
    name: str


class ClosedPerson(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str


class Team(BaseModel):
    lead: Person
    members: list[Person]
    backup: Optional[Person] = None  # noqa: UP045 - the form pydantic users write


def test_pydantic_default_and_forbid_are_closed_allow_stays_open():
    person = Person.model_json_schema()
    assert generation_accepts(person, {"name": "a", "age": 1})
    assert not generation_accepts(person, {"name": "a", "age": 1, "mood": "ok"})
    forbid = ClosedPerson.model_json_schema()
    assert not generation_accepts(forbid, {"name": "a", "x": 1})
    allow = OpenPerson.model_json_schema()
    assert generation_accepts(allow, {"name": "a", "x": 1})


def test_nested_models_lists_and_optionals_are_closed_at_every_level():
    team = Team.model_json_schema()
    good = {"lead": {"name": "a", "age": 1}, "members": [{"name": "b", "age": 2}]}
    assert generation_accepts(team, good)
    assert generation_accepts(team, {**good, "backup": None})
    assert not generation_accepts(team, {**good, "lead": {"name": "a", "age": 1, "x": 0}})
    assert not generation_accepts(team, {**good, "members": [{"name": "b", "age": 2, "x": 0}]})
    assert not generation_accepts(team, {**good, "backup": {"name": "c", "age": 3, "x": 0}})


def test_validation_mode_is_unchanged():
    person = Person.model_json_schema()
    text = json.dumps({"name": "a", "age": 1, "mood": "ok"}).encode()
    assert matches(schema_term(person), text)


def test_maps_and_free_objects_keep_their_keys():
    assert generation_accepts(
        {"type": "object", "additionalProperties": {"type": "integer"}}, {"x": 1}
    )
    assert generation_accepts({"type": "object"}, {"x": [1, {"y": 2}]})
    assert generation_accepts(True, {"x": 1})
    assert not generation_accepts(
        {"type": "object", "additionalProperties": {"type": "integer"}}, {"x": "s"}
    )


def test_all_of_closes_over_every_branch_s_keys():
    schema = {
        "properties": {"a": {"type": "integer"}},
        "allOf": [{"properties": {"b": {"type": "integer"}}, "required": ["b"]}],
    }
    assert generation_accepts(schema, {"a": 1, "b": 2})
    assert generation_accepts(schema, {"b": 2})
    assert not generation_accepts(schema, {"b": 2, "c": 3})
    only_all_of = {"allOf": [{"properties": {"a": {}}}, {"properties": {"b": {}}}]}
    assert generation_accepts(only_all_of, {"a": 1, "b": 2})
    assert not generation_accepts(only_all_of, {"a": 1, "c": 2})


def test_an_explicitly_open_branch_keeps_the_object_open():
    schema = {"allOf": [{"properties": {"a": {}}, "additionalProperties": True}]}
    assert generation_accepts(schema, {"a": 1, "z": 2})


def test_conditions_are_tested_open():
    """``if`` tests the instance as the spec says, even when generation closes it."""
    schema = {
        "properties": {"kind": {"enum": ["a", "b"]}, "x": {"type": "integer"}},
        "if": {"properties": {"kind": {"const": "a"}}},
        "then": {"required": ["x"]},
    }
    assert generation_accepts(schema, {"kind": "a", "x": 1})
    assert not generation_accepts(schema, {"kind": "a"})
    assert generation_accepts(schema, {"kind": "b"})


def test_plain_integers_have_no_fraction_or_exponent():
    for schema in ({"type": "integer"}, {"type": "integer", "minimum": 0, "maximum": 10}):
        assert generation_accepts(schema, 3)
        assert not matches(schema_term(schema, plain_integers=True), b"3.0"), (
            "generation writes 3, not 3.0"
        )
        assert matches(schema_term(schema), b"3.0"), "validation accepts 3.0 (2020-12)"


_simple = st.fixed_dictionaries(
    {"a": st.integers(-5, 5)}, optional={"b": st.text(max_size=3), "c": st.booleans()}
)
_extra = st.dictionaries(st.sampled_from(["a", "b", "x", "y"]), st.integers(0, 3), max_size=3)


@given(value=st.one_of(_simple, _extra.map(lambda d: {"a": 0, **d})))
def test_closed_generation_equals_validation_with_additional_properties_false(value):
    """Closing an object is exactly adding ``additionalProperties: false``."""
    schema = {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "string"}, "c": {}},
        "required": ["a"],
    }
    closed = {**schema, "additionalProperties": False}
    expected = jsonschema.Draft202012Validator(closed).is_valid(value)
    assert generation_accepts(schema, value) == expected


@pytest.mark.parametrize("order", ["any", "schema"])
def test_closing_composes_with_key_order(order):
    schema = Person.model_json_schema()
    assert generation_accepts(schema, {"name": "a", "age": 1}, key_order=order)
    assert not generation_accepts(schema, {"name": "a", "age": 1, "z": 1}, key_order=order)


@pytest.mark.parametrize("bounds", [(0, 120), (-15, 7), (1, 1), (-300, -250), (5, 9999), (0, 0)])
def test_every_byte_a_plain_integer_mask_allows_can_still_be_completed(bounds):
    """No dead ends in a bounded integer's masks: from every state reached through
    allowed bytes, some integer in the bounds can still be written (``330`` under
    ``maximum: 120`` once could, where only an exponent would have saved it)."""
    import fsm

    low, high = bounds
    vocabulary = fsm.Vocabulary.from_raw([bytes([b]) for b in range(256)] + [b""], eos_ids=[256])
    schema = {"type": "integer", "minimum": low, "maximum": high}
    index = fsm.compile_index(fsm.JsonSchema(schema, plain_integers=True), vocabulary)
    written = [str(x).encode() for x in range(low, high + 1)] + [b"-0"] * (low <= 0 <= high)
    frontier = [(index.initial_state, b"")]
    walked = 0
    for _ in range(5):
        following = []
        for state, text in frontier:
            for token in index.allowed_tokens(state).tolist():
                if token == 256:
                    assert text in written
                    continue
                longer = text + bytes([token])
                assert any(number.startswith(longer) for number in written), longer
                following.append((index.next_state(state, token), longer))
                walked += 1
        frontier = following[:200]
    assert walked >= len(str(high))
