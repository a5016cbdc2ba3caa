"""``if``/``then``/``else``, ``not`` and overlapping ``oneOf`` over plain conditions,
merged as plain objects: the same verdicts as jsonschema, and no object state that can
never close."""

from __future__ import annotations

import jsonschema
from hypothesis import given, settings
from hypothesis import strategies as st

from fsm.json_schema import schema_term
from fsm.json_schema.compile import SchemaCompiler
from fsm.json_schema.conditions import Source, condition_alternatives
from fsm.json_schema.strings import OBJECT_STRINGS
from fsm.terms import EMPTY, matches
from tests.fsm.schema_checks import (
    assert_live_exactly_when_completable,
    assert_verdicts_match_jsonschema,
    can_be_completed,
)

KEYS = ["a", "b", "c"]
VALUES = ["x", "y", None, True]
"""Member values: each text is whole once written (a number could still go on)."""

value_schemas = st.sampled_from(
    [
        {"const": "x"},
        {"const": None},
        {"enum": ["x", True]},
        {"enum": ["x", True], "type": "string"},  # lists more values than it allows
        {"const": "x", "minLength": 2},  # allows none
        {"type": "boolean"},
        {"type": "string"},
        True,
        False,
    ]
)
key_lists = st.lists(st.sampled_from(KEYS), max_size=2, unique=True)


@st.composite
def conditions(draw: st.DrawFn, depth: int = 0) -> object:
    """Schemas ``conditions.condition_alternatives`` writes out: types, properties,
    required keys, ``not``, ``allOf`` and ``anyOf`` of such."""
    if depth < 2 and draw(st.integers(0, 5)) == 0:
        return {"not": draw(conditions(depth + 1))}
    if depth < 2 and draw(st.integers(0, 5)) == 0:
        keyword = draw(st.sampled_from(["allOf", "anyOf"]))
        return {keyword: draw(st.lists(conditions(depth + 1), min_size=1, max_size=2))}
    node: dict = {}
    if draw(st.integers(0, 3)) == 0:
        node["type"] = draw(st.sampled_from(["object", ["object", "null"], "string"]))
    node["properties"] = draw(st.dictionaries(st.sampled_from(KEYS), value_schemas, max_size=2))
    if draw(st.booleans()):
        node["required"] = draw(key_lists)
    return node


@st.composite
def plain_objects(draw: st.DrawFn, counts: bool) -> dict:
    """Object schemas the compiler merges: keys, their values, dependent keys, key
    names and (with ``counts``) member counts."""
    node: dict = {}
    if draw(st.booleans()):
        node["properties"] = draw(st.dictionaries(st.sampled_from(KEYS), value_schemas, max_size=2))
    if draw(st.booleans()):
        node["required"] = draw(key_lists)
    if draw(st.integers(0, 4)) == 0:
        dependent = st.dictionaries(st.sampled_from(KEYS), key_lists, max_size=2)
        node["dependentRequired"] = draw(dependent)
    if draw(st.integers(0, 4)) == 0:
        node["propertyNames"] = {"enum": draw(st.lists(st.sampled_from(KEYS), max_size=3))}
    if counts and draw(st.integers(0, 4)) == 0:
        node[draw(st.sampled_from(["minProperties", "maxProperties"]))] = draw(st.integers(0, 2))
    return node


@st.composite
def conditional_schemas(draw: st.DrawFn, counts: bool = True) -> dict:
    """Objects with ``if``/``then``/``else`` branches (some in ``allOf``) and ``not``;
    ``counts``: ``minProperties``/``maxProperties`` among them."""
    schema: dict = {}
    if draw(st.booleans()):
        schema["type"] = draw(st.sampled_from(["object", ["object", "integer"]]))
    if draw(st.booleans()):
        schema["properties"] = draw(
            st.dictionaries(st.sampled_from(KEYS), value_schemas, max_size=2)
        )
    if draw(st.booleans()):
        schema["additionalProperties"] = False
    branches = []
    for _ in range(draw(st.integers(1, 3))):
        branch = {"if": draw(conditions())}
        for keyword in draw(st.lists(st.sampled_from(["then", "else"]), min_size=1, unique=True)):
            branch[keyword] = draw(plain_objects(counts))
        branches.append(branch)
    if len(branches) == 1 and draw(st.booleans()):
        schema.update(branches[0])
    else:
        schema["allOf"] = branches
    if draw(st.integers(0, 3)) == 0:
        schema["not"] = draw(conditions())
    if draw(st.integers(0, 2)) == 0:  # branches may overlap: one met, the others failed
        schema["oneOf"] = draw(st.lists(conditions(), min_size=2, max_size=3))
    if draw(st.integers(0, 2)) == 0:
        schema["dependentSchemas"] = draw(
            st.dictionaries(st.sampled_from(KEYS), dependent_schemas(counts), max_size=2)
        )
    return schema


@st.composite
def dependent_schemas(draw: st.DrawFn, counts: bool) -> dict:
    """What an object holding a key must also be: a plain object schema, sometimes
    with a ``type`` (which a value not an object need not meet)."""
    node = draw(plain_objects(counts))
    if draw(st.integers(0, 2)) == 0:
        node["type"] = draw(st.sampled_from(["object", "string", ["object", "null"]]))
    return node


instances = st.one_of(
    st.dictionaries(st.sampled_from(KEYS), st.sampled_from(VALUES), max_size=3),
    st.integers(0, 1),
    st.just("x"),
    st.none(),
)


@settings(max_examples=800, deadline=None)
@given(conditional_schemas(), st.lists(instances, min_size=1, max_size=8))
def test_verdicts_match_jsonschema(schema: dict, values: list) -> None:
    assert_verdicts_match_jsonschema(schema, values)


@settings(max_examples=150, deadline=None)
@given(
    conditional_schemas(counts=False),  # an object body does not search member counts
    st.dictionaries(st.sampled_from(KEYS), st.sampled_from(VALUES), max_size=3),
)
def test_an_object_state_is_live_exactly_when_it_can_be_completed(
    schema: dict, value: dict
) -> None:
    """A member after which no branch can be met any more (the discriminator took a
    value whose ``then`` a key already read breaks) is refused where it is read."""
    term = schema_term({**schema, "type": "object"})
    validator = jsonschema.Draft202012Validator({**schema, "type": "object"})
    if term is EMPTY:
        assert not can_be_completed(validator, {}, KEYS, VALUES)
        return
    assert_live_exactly_when_completable({**schema, "type": "object"}, term, value, KEYS, VALUES)


def _alternatives(schema: dict) -> list[list[Source]] | None:
    compiler = SchemaCompiler(schema, strings=OBJECT_STRINGS, whitespace_max=0, strict=True)
    return compiler._object_alternatives(schema, "", True, frozenset())


def _assert_merged(schema: dict, alternatives: int) -> None:
    """``schema`` merges into that many objects."""
    found = _alternatives(schema)
    assert found is not None and len(found) == alternatives


def test_keys_that_exclude_each_other_merge_into_one_object_per_key() -> None:
    """``allOf`` of "if this key is set, the others are null" (as in Prometheus's
    configuration schema) is one alternative per key set, plus none set: the
    combinations where two keys are set are dropped where the product is formed."""
    keys = ["basic_auth", "authorization", "oauth2", "bearer_token"]
    schema = {
        "type": "object",
        "properties": {key: {"type": ["string", "null"]} for key in keys},
        "allOf": [
            {
                "if": {"not": {"properties": {key: {"const": None}}}},
                "then": {"properties": {other: {"const": None} for other in keys if other != key}},
            }
            for key in keys
        ],
    }
    _assert_merged(schema, len(keys) + 1)
    assert_verdicts_match_jsonschema(
        schema, [{"oauth2": "t", "basic_auth": None}, {"oauth2": "t", "basic_auth": "u"}, {}]
    )


def test_a_discriminator_keeps_one_alternative_per_value() -> None:
    """``if kind = v then ...`` for several values: one alternative per value taken,
    one where ``kind`` takes none of them, one where it is absent."""
    values = ["a", "b", "c"]
    schema = {
        "type": "object",
        "allOf": [
            {"if": {"properties": {"kind": {"const": v}}}, "then": {"required": [f"{v}_id"]}}
            for v in values
        ],
    }
    _assert_merged(schema, len(values) + 2)
    assert_verdicts_match_jsonschema(  # the last: kind absent, every ``if`` holds
        schema, [{"kind": "b", "b_id": 1}, {"kind": "b", "a_id": 1}, {"kind": "z"}, {}]
    )


def test_conditions_beyond_plain_keywords_are_left_to_complements() -> None:
    """A condition with ``minProperties`` is not written out; the node compiles as
    before (a complement), with the same verdicts."""
    condition = {"minProperties": 2}
    assert condition_alternatives(condition, "/if", lambda p: (None, p), False) is None
    schema = {"if": condition, "then": {"required": ["a"]}}
    assert _alternatives(schema) is None
    term = schema_term(schema)
    assert matches(term, b'{"a":1,"b":2}') and not matches(term, b'{"b":1,"c":2}')
    assert matches(term, b'{"b":1}')


def test_a_key_only_a_condition_names_stays_out_of_a_closed_object() -> None:
    """With extra keys closed, a key that only ``if`` names cannot be written, so the
    condition holds (its properties say nothing of an absent key) and ``then`` applies."""
    schema = {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "if": {"properties": {"kind": {"const": "x"}}},
        "then": {"required": ["b"]},
    }
    closed = SchemaCompiler(
        schema, strings=OBJECT_STRINGS, whitespace_max=0, strict=True, extra_keys=False
    ).root_term()
    assert matches(closed, b'{"a":1,"b":2}')
    assert not matches(closed, b'{"a":1}')
    assert not matches(closed, b'{"kind":"y","a":1}')


def test_member_counts_dependencies_and_key_names_merge_with_all_of() -> None:
    """An ``allOf`` beside ``minProperties``, ``dependentRequired`` or ``propertyNames``
    is one object, not an intersection of objects; the verdicts are jsonschema's."""
    schema = {
        "type": "object",
        "minProperties": 2,
        "propertyNames": {"enum": ["a", "b", "c"]},
        "dependentRequired": {"a": ["b"]},
        "allOf": [{"properties": {"a": {"type": "string"}}}, {"maxProperties": 2}],
    }
    _assert_merged(schema, 1)
    values = [{"a": "x", "b": 1}, {"a": "x", "c": 1}, {"b": 1, "c": 2}, {"b": 1}, {"d": 1}]
    assert_verdicts_match_jsonschema(schema, values)


def test_a_negation_dropped_as_implied_still_refuses_non_objects() -> None:
    """``not {properties: {a: {const: null}}}`` with ``a`` required and listed as "x":
    the negation of ``a`` says nothing more of its value, but only objects fail the
    condition, so ``0`` (which meets it) stays refused."""
    schema = {
        "properties": {"a": {"const": "x"}},
        "required": ["a"],
        "not": {"properties": {"a": {"const": None}}},
    }
    _assert_merged(schema, 1)
    assert_verdicts_match_jsonschema(schema, [0, "s", None, {"a": "x"}, {"a": None}, {}])


def test_none_of_these_keys_merges() -> None:
    """``not: {anyOf: [{required: [a]}, {required: [b]}]}`` ("neither key") fails
    exactly when both keys are absent: one object, the two keys forbidden."""
    schema = {
        "type": "object",
        "properties": {"a": {}, "b": {}, "c": {"type": "string"}},
        "not": {"anyOf": [{"required": ["a"]}, {"required": ["b"]}]},
    }
    _assert_merged(schema, 1)
    values = [{"c": "x"}, {"a": 1}, {"b": 1, "c": "x"}, {}, {"c": 1}]
    assert_verdicts_match_jsonschema(schema, values)


def test_a_negation_refusing_one_listed_value_is_kept() -> None:
    """``a`` required and listed as "x" or "y", and not "x": the negation is not implied
    by the listed values (one of them it refuses), so ``{"a": "x"}`` stays refused."""
    schema = {
        "properties": {"a": {"enum": ["x", "y"]}},
        "required": ["a"],
        "not": {"properties": {"a": {"const": "x"}}},
    }
    assert_verdicts_match_jsonschema(schema, [{"a": "x"}, {"a": "y"}, {"a": "z"}, {}, 0])


def test_a_required_key_and_its_value_fail_as_one_source() -> None:
    """``{required: [a], properties: {a: S}}`` fails where ``a`` is absent or not ``S``:
    one source (``a``, where present, refused by ``S``), not two alternatives."""
    condition = {"required": ["a"], "properties": {"a": {"type": "string"}}}
    failing = condition_alternatives(condition, "/c", lambda p: (None, p), False)
    assert failing is not None and len(failing) == 1
    (source,) = failing[0]
    assert source.negated == "a" and "required" not in source.node
    schema = {"type": "object", "not": condition}
    assert_verdicts_match_jsonschema(schema, [{}, {"a": 1}, {"a": "x"}, {"b": "x"}, "x"])


def test_one_of_keyed_by_which_key_is_present_merges_into_one_object_per_key() -> None:
    """``oneOf`` of "this key, with this value" (helm's test-suite assertions): the
    branches overlap (an object may hold two of the keys), so it is "one met, the
    others failed", one alternative per key. A second key whose value its branch
    refuses does not count: ``{"equal": 5, "exists": "p"}`` is valid."""
    keys = ["equal", "exists", "contains", "isKind"]
    schema = {
        "type": "object",
        "properties": {**{key: True for key in keys}, "not": {"type": "boolean"}},
        "additionalProperties": False,
        "oneOf": [
            {"properties": {key: {"type": "string" if i % 2 else "object"}}, "required": [key]}
            for i, key in enumerate(keys)
        ],
    }
    _assert_merged(schema, len(keys))
    values = [
        {"equal": {}},
        {"exists": "p", "not": True},
        {"equal": {}, "exists": "p"},
        {"equal": 5, "exists": "p"},
        {"equal": 5},
        {"not": True},
        {},
        {"contains": {}, "isKind": "k", "equal": []},
    ]
    assert_verdicts_match_jsonschema(schema, values)


def test_a_dependent_schema_merges_as_a_condition_on_its_key() -> None:
    """``dependentSchemas`` of a plain object schema is "if the object holds the key,
    then the schema": two objects (the key held with the dependent schema's keys and
    values, or the key absent), not an intersection with a complement whose states
    all need liveness searches."""
    schema = {
        "type": "object",
        "properties": {"foo": {"type": "boolean"}, "count": {"type": "integer", "minimum": 0}},
        "dependentSchemas": {
            "foo": {"required": ["count"], "properties": {"count": {"minimum": 7}}}
        },
    }
    _assert_merged(schema, 2)
    values = [{"foo": True, "count": 7}, {"foo": True, "count": 6}, {"foo": True}, {"count": 3}]
    assert_verdicts_match_jsonschema(schema, [*values, {"count": 3, "other": "x"}, {}])


def test_a_dependent_schema_leaves_values_that_are_not_objects_alone() -> None:
    """A dependent schema applies to objects holding its key only: ``5`` and ``"x"``
    are valid whatever it says of types, merged (a plain dependent schema) or compiled
    as a complement (one with a string keyword)."""
    for dependent in ({"type": "object"}, {"type": "object", "minLength": 1}):
        schema = {"dependentSchemas": {"a": dependent}}
        assert_verdicts_match_jsonschema(schema, [5, "x", None, {"a": 1}, {"b": 1}])
    assert _alternatives({"dependentSchemas": {"a": {"type": "object", "minLength": 1}}}) is None
