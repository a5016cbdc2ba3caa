"""Applicators that only require keys become conditions on the key set: the same
verdicts as jsonschema, no intersection left, and no state that can never close."""

from __future__ import annotations

import json

import jsonschema
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from fsm.json_schema import schema_term
from fsm.json_schema.key_rules import KeyRule, completable, fold_key_rules
from fsm.terms import EMPTY, matches
from tests.fsm.schema_checks import (
    assert_live_exactly_when_completable,
    assert_verdicts_match_jsonschema,
    can_be_completed,
)

KEYS = ["a", "b", "c", "d"]

groups = st.lists(st.sampled_from(KEYS), max_size=2, unique=True)
branches = st.lists(groups, min_size=1, max_size=3).map(lambda gs: [{"required": g} for g in gs])


@st.composite
def schemas(draw: st.DrawFn) -> dict:
    schema: dict = {}
    if draw(st.booleans()):
        schema["type"] = draw(st.sampled_from(["object", ["object", "integer"], "integer"]))
    if draw(st.booleans()):
        names = draw(st.lists(st.sampled_from(KEYS), max_size=3, unique=True))
        schema["properties"] = {name: {"type": "integer"} for name in names}
    if draw(st.booleans()):
        schema["additionalProperties"] = False
    if draw(st.booleans()):
        schema["required"] = draw(groups)
    for keyword in draw(st.lists(st.sampled_from(["oneOf", "anyOf", "allOf"]), unique=True)):
        schema[keyword] = draw(branches)
    if draw(st.booleans()):
        schema["not"] = {"required": draw(groups)}
    return schema


instances = st.one_of(
    st.dictionaries(st.sampled_from(KEYS), st.integers(0, 3), max_size=4),
    st.integers(0, 3),
    st.just("x"),
    st.none(),
)


@settings(max_examples=300, deadline=None)
@given(schemas(), st.lists(instances, min_size=1, max_size=8))
def test_verdicts_match_jsonschema(schema: dict, values: list) -> None:
    assert_verdicts_match_jsonschema(schema, values)


@settings(max_examples=200, deadline=None)
@given(schemas(), st.dictionaries(st.sampled_from(KEYS), st.integers(0, 3), max_size=4))
def test_an_object_state_is_live_exactly_when_it_can_be_completed(
    schema: dict, value: dict
) -> None:
    """After each member of an object text, the index has a state exactly when some
    valid object continues it: a key that breaks ``oneOf`` or ``not`` for good is
    refused where it is read, not left as a state that can never close."""
    assume(fold_key_rules(schema)[1])  # the folded path only
    assert_live_exactly_when_completable(schema, schema_term(schema), value, KEYS)


def test_exact_one_of_required_compiles_to_a_plain_term() -> None:
    schema = {
        "type": "object",
        "properties": {"card": {"type": "string"}, "iban": {"type": "string"}},
        "oneOf": [{"required": ["card"]}, {"required": ["iban"]}],
    }
    term = schema_term(schema)
    assert not term.needs_liveness_check
    assert matches(term, b'{"card":"1"}')
    assert not matches(term, b'{"card":"1","iban":"2"}')
    assert not matches(term, b"{}")


def test_folding_leaves_other_applicators_alone() -> None:
    node = {"oneOf": [{"required": ["a"]}, {"properties": {"a": {"type": "string"}}}]}
    assert fold_key_rules(node) == (node, ())
    capped = {"maxProperties": 1, "anyOf": [{"required": ["a"]}]}
    assert fold_key_rules(capped) == (capped, ())
    strings = {"type": "string", "not": {"required": ["a"]}}
    assert fold_key_rules(strings) == (strings, ())


def test_rules_that_refuse_other_values_restrict_the_node_to_objects() -> None:
    folded, rules = fold_key_rules({"oneOf": [{"required": ["a"]}, {"required": ["b"]}]})
    assert folded == {"type": "object"}
    assert rules == (KeyRule("one", (frozenset("a"), frozenset("b"))),)
    folded, _ = fold_key_rules({"anyOf": [{"required": ["a"]}, {"required": ["b"]}]})
    assert folded == {}


def test_completable_sees_keys_that_break_exactly_one() -> None:
    one = (KeyRule("one", (frozenset("a"), frozenset("b"))),)
    both = frozenset("ab")
    assert completable(one, frozenset(), frozenset(), both)
    assert completable(one, frozenset("a"), frozenset(), both)
    assert not completable(one, frozenset("ab"), frozenset(), both)
    assert not completable(one, frozenset(), frozenset("ab"), both)
    assert not completable(one, frozenset(), frozenset(), frozenset())


def test_an_object_no_key_set_satisfies_is_empty() -> None:
    schema = {
        "type": "object",
        "properties": {"a": {"type": "integer"}},
        "additionalProperties": False,
        "anyOf": [{"required": ["b"]}],
    }
    assert schema_term(schema) is EMPTY


@st.composite
def schemas_with_dependencies(draw: st.DrawFn) -> dict:
    """Objects whose keys require others when present (``dependentRequired``, and
    ``dependentSchemas`` that only require keys), some of the keys forbidden."""
    names = draw(st.lists(st.sampled_from(KEYS), max_size=4, unique=True))
    schema: dict = {"type": "object", "properties": {n: {"type": "integer"} for n in names}}
    if draw(st.booleans()):
        schema["additionalProperties"] = False
    if draw(st.booleans()):
        schema["required"] = draw(groups)
    keyword = draw(st.sampled_from(["dependentRequired", "dependentSchemas"]))
    dependencies = draw(st.dictionaries(st.sampled_from(KEYS), groups, min_size=1, max_size=3))
    if keyword == "dependentSchemas":
        schema[keyword] = {k: {"required": v, "description": "x"} for k, v in dependencies.items()}
    else:
        schema[keyword] = dependencies
    return schema


@settings(max_examples=300, deadline=None)
@given(
    schemas_with_dependencies(),
    st.dictionaries(st.sampled_from(KEYS), st.integers(0, 3), max_size=4),
)
def test_an_object_with_dependencies_is_live_exactly_when_it_can_be_completed(
    schema: dict, value: dict
) -> None:
    """A key whose dependencies can never all come (a forbidden key, in turn) is
    refused where it is read: the object could not close after it."""
    validator = jsonschema.Draft202012Validator(schema)
    term = schema_term(schema)
    assert matches(term, json.dumps(value).encode()) == validator.is_valid(value)
    assert not term.needs_liveness_check  # no intersection: no state to search
    if term is EMPTY:
        assert not can_be_completed(validator, {}, KEYS, (0,))
        return
    assert_live_exactly_when_completable(schema, term, value, KEYS)


def test_dependent_schemas_beside_other_key_set_rules_stay_intersections() -> None:
    """With ``oneOf`` or ``maxProperties`` beside them, which key sets close is decided
    by both together: the dependent schema is compiled as written (and searched)."""
    schema = {
        "type": "object",
        "properties": {"a": {}, "b": {}},
        "oneOf": [{"required": ["a"]}, {"required": ["b"]}],
        "dependentSchemas": {"a": {"required": ["b"]}},
    }
    term = schema_term(schema)
    assert term.needs_liveness_check
    assert not matches(term, b'{"a":1}') and not matches(term, b'{"a":1,"b":2}')
    assert matches(term, b'{"b":2}')
