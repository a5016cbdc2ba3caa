"""Whole schemas compiled into a store (``SchemaCompiler`` over ``StoredTerms``): the
row of each node is the row its object term converts to, and both read texts alike,
recursion through ``$ref`` included (``fsm.term_builder``, issue 15)."""

from __future__ import annotations

import gzip
import json
import warnings
from pathlib import Path
from typing import Any, TypeVar

import pytest
from hypothesis import given, settings

from fsm.errors import InvalidSpec, UnsupportedSchema
from fsm.json_schema.compile import SchemaCompiler
from fsm.json_schema.strings import OBJECT_STRINGS, StringTerms, strings_in
from fsm.term_builder import StoredTerms
from fsm.term_store import TermStore
from fsm.terms import Term, matches
from tests.fsm.test_term_store import json_values

DATA = Path(__file__).resolve().parents[3] / "shared" / "data"
MASKBENCH = DATA / "maskbench-dev.jsonl.gz"
T = TypeVar("T")

NODE = {
    "type": "object",
    "properties": {"v": {"type": "integer"}, "next": {"$ref": "#/$defs/node"}},
    "required": ["v"],
}

SCHEMAS: list[tuple[str, object, list[object]]] = [
    ("true", True, [1, "a", None, {"a": [1]}]),
    ("false", False, [1, None]),
    ("empty", {}, [[], {}, 0.5]),
    (
        "person",
        {
            "type": "object",
            "properties": {
                "name": {"type": "string", "minLength": 1},
                "age": {"type": "integer", "minimum": 0},
            },
            "required": ["name"],
        },
        [{"name": "a"}, {"name": "", "age": 3}, {"name": "b", "age": -1}, {"age": 2}],
    ),
    (
        "tuple",
        {
            "type": "array",
            "prefixItems": [{"type": "number"}, {"enum": ["a", "b"]}],
            "items": {"type": "boolean"},
            "minItems": 1,
            "maxItems": 4,
        },
        [[1], [1, "a", True], [1, "c"], [], [1, "b", False, True, True]],
    ),
    ("disjoint oneOf", {"oneOf": [{"type": "string"}, {"type": "integer"}]}, ["x", 3, 3.5]),
    (
        "overlapping oneOf",
        {"oneOf": [{"type": "number", "minimum": 3}, {"type": "integer", "multipleOf": 2}]},
        [4, 5, 2, 1, 3.5],
    ),
    (
        "merged allOf",
        {
            "allOf": [
                {"properties": {"a": {"type": "string"}}},
                {"properties": {"a": {"maxLength": 3}}, "required": ["a"]},
            ]
        },
        [{"a": "xyz"}, {"a": "long"}, {}, 5],
    ),
    (
        "contradictory allOf",
        {
            "type": "object",
            "allOf": [
                {"properties": {"a": {"type": "string"}}, "required": ["a"]},
                {"properties": {"a": {"type": "integer"}}},
            ],
        },
        [{"a": "x"}, {"a": 1}, {}],
    ),
    (
        "empty value by intersection",
        {
            "type": "object",
            "allOf": [
                {"properties": {"a": {"type": "string", "minLength": 3}}},
                {"properties": {"a": {"type": "string", "maxLength": 2}}},
            ],
        },
        [{}, {"a": "ab"}, {"b": 1}],
    ),
    ("not", {"not": {"type": "string"}}, ["a", 1, None]),
    ("no string", {"type": "string", "minLength": 5, "maxLength": 3}, ["abcd", 1]),
    ("no integer", {"type": "integer", "minimum": 5, "maximum": 3}, [4, "a"]),
    (
        "not nothing",
        {
            "allOf": [
                {"type": "string", "minLength": 3},
                {"not": {"type": "string", "minLength": 5, "maxLength": 3}},
                {"not": {"type": "string", "maxLength": 0}},
            ]
        },
        ["abc", "ab", "", 1],
    ),
    (
        "if then else",
        {
            "if": {"properties": {"k": {"const": "x"}}},
            "then": {"required": ["y"]},
            "else": {"required": ["z"]},
        },
        [{"k": "x", "y": 1}, {"k": "x"}, {"z": 0}, {"k": "w"}, 7],
    ),
    (
        "linked list",
        {"$defs": {"node": NODE}, "$ref": "#/$defs/node"},
        [{"v": 1}, {"v": 1, "next": {"v": 2, "next": {"v": 3}}}, {"v": 1, "next": {}}],
    ),
    (
        "nested arrays",
        {"anyOf": [{"type": "null"}, {"type": "array", "items": {"$ref": "#"}}]},
        [None, [], [[None, []]], [1], [[[]], None]],
    ),
    (
        "pattern properties",
        {
            "type": "object",
            "patternProperties": {"^x-": {"type": "integer"}},
            "additionalProperties": {"type": "string"},
        },
        [{"x-a": 1, "b": "c"}, {"x-a": "1"}, {"b": 2}],
    ),
    (
        "many key tests",
        {
            "type": "object",
            "patternProperties": {
                p: {"type": "integer", "minimum": i} for i, p in enumerate("abcde")
            },
            "additionalProperties": False,
        },
        [{"abc": 3}, {"abc": 1}, {"e": 4}, {"z": 1}],
    ),
    (
        "property names",
        {"type": "object", "propertyNames": {"maxLength": 2}},
        [{"ab": 1}, {"abc": 1}],
    ),
    (
        "mixed enum",
        {"enum": [1, "a", None, {"b": [True]}, [1, 2]]},
        [1, 1.0, "a", {"b": [True]}, [2]],
    ),
    ("typed const", {"type": "string", "const": "hi"}, ["hi", "ho", 1]),
    (
        "unique items",
        {"type": "array", "items": {"enum": ["a", "b", "c"]}, "uniqueItems": True},
        [["a", "b"], ["a", "a"], []],
    ),
    (
        "contains",
        {"type": "array", "contains": {"type": "integer"}, "minContains": 2},
        [[1, 2], [1, "a"], ["a", 1, 3]],
    ),
    (
        "dependents",
        {
            "type": "object",
            "dependentRequired": {"a": ["b"]},
            "dependentSchemas": {"c": {"properties": {"d": {"type": "null"}}}},
        },
        [{"a": 1, "b": 2}, {"a": 1}, {"c": 1, "d": None}, {"c": 1, "d": 0}, {"d": 0}],
    ),
    ("date-time", {"type": "string", "format": "date-time"}, ["2024-02-29T23:59:60Z", "x"]),
    ("pattern", {"type": "string", "pattern": "^[a-z]+\\d$"}, ["ab1", "ab", "1"]),
    (
        "bounded multiples",
        {"type": "number", "exclusiveMinimum": 0, "maximum": 1.5, "multipleOf": 0.5},
        [0, 0.5, 1.5, 2, 1.0],
    ),
    (
        "typed by a reference",
        {
            "type": "object",
            "allOf": [{"$ref": "#/$defs/o"}],
            "$defs": {"o": {"type": "object", "properties": {"q": {"type": "boolean"}}}},
        },
        [{"q": True}, {"q": 1}, []],
    ),
    (
        "discriminated oneOf",
        {
            "type": "object",
            "oneOf": [
                {
                    "properties": {"kind": {"const": "a"}, "x": {"type": "integer"}},
                    "required": ["kind"],
                },
                {"properties": {"kind": {"const": "b"}}, "required": ["kind"]},
            ],
        },
        [{"kind": "a", "x": 1}, {"kind": "b", "x": "s"}, {"kind": "c"}],
    ),
    ("nullable", {"type": ["string", "null"], "maxLength": 1}, ["a", None, "ab", 0]),
    (
        "counted keys",
        {"type": "object", "minProperties": 1, "maxProperties": 2},
        [{}, {"a": 1}, {"a": 1, "b": 2, "c": 3}],
    ),
]

OPTIONS = [
    {"whitespace_max": 8, "strict": True},
    {"whitespace_max": 0, "strict": True, "extra_keys": False, "plain_integers": True},
    {"whitespace_max": 1, "strict": True, "key_order": "schema"},
]


def root_of(strings: StringTerms[T], schema: object, **options: Any) -> T:
    """The schema's root, built by ``strings``' builder."""
    return SchemaCompiler(schema, strings=strings, **options).root_term()


def compiled_both_ways(schema: object, **options: Any) -> tuple[TermStore, int, Term]:
    """The schema's row, built into a fresh store, and its object term."""
    store = TermStore()
    stored = root_of(strings_in(StoredTerms(store)), schema, **options)
    return store, stored, root_of(OBJECT_STRINGS, schema, **options)


def texts_of(value: object) -> list[bytes]:
    """A value's JSON text, compact and spaced, and texts spoiled at the end."""
    text = json.dumps(value, ensure_ascii=False).encode()
    compact = json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()
    return [text, compact, text[:-1], compact + b" ", compact + b"0"]


@pytest.mark.parametrize("options", OPTIONS, ids=["default", "generation", "ordered"])
@pytest.mark.parametrize(("name", "schema", "values"), SCHEMAS, ids=[s[0] for s in SCHEMAS])
def test_a_schema_built_in_a_store_is_its_loaded_term(
    name: str, schema: object, values: list[object], options: dict
) -> None:
    """Built first, so the thunks of the loaded term are the store's own (one row per
    key): equal ids mean the compile built the converted rows, node by node."""
    store, stored, term = compiled_both_ways(schema, **options)
    assert stored == store.load(term)
    for value in values:
        for text in texts_of(value):
            assert store.matches(stored, text) == matches(term, text), text


@settings(max_examples=25, deadline=None)
@given(json_values)
@pytest.mark.parametrize(("name", "schema", "values"), SCHEMAS, ids=[s[0] for s in SCHEMAS])
def test_values_are_read_alike(
    name: str, schema: object, values: list[object], value: object
) -> None:
    store, stored, term = compiled_both_ways(schema, whitespace_max=8, strict=True)
    for text in texts_of(value):
        assert store.matches(stored, text) == matches(term, text), text


@pytest.mark.parametrize(
    ("schema", "error"),
    [
        ({"$ref": "#"}, UnsupportedSchema),
        ({"anyOf": [{"$ref": "#"}, {"type": "null"}]}, UnsupportedSchema),
        ({"type": "text"}, InvalidSpec),
        ({"type": "string", "format": "iri"}, UnsupportedSchema),
        ([], InvalidSpec),
    ],
)
def test_refusals_are_alike(schema: object, error: type[Exception]) -> None:
    with pytest.raises(error):
        root_of(strings_in(StoredTerms(TermStore())), schema, whitespace_max=0, strict=True)
    with pytest.raises(error):
        root_of(OBJECT_STRINGS, schema, whitespace_max=0, strict=True)


def test_lenient_compiles_warn_alike() -> None:
    schema = {"type": "string", "format": "iri", "pattern": "a(b$)c"}
    with warnings.catch_warnings(record=True) as stored:
        warnings.simplefilter("always")
        root_of(strings_in(StoredTerms(TermStore())), schema, whitespace_max=0, strict=False)
    with warnings.catch_warnings(record=True) as objects:
        warnings.simplefilter("always")
        root_of(OBJECT_STRINGS, schema, whitespace_max=0, strict=False)
    said = [sorted(str(w.message) for w in caught) for caught in (stored, objects)]
    assert said[0] == said[1] and len(said[0]) == 2


MASKBENCH_STRIDE = 40
"""Every 40th schema of the development split: about 210 schemas of every kind."""


@pytest.mark.skipif(not MASKBENCH.exists(), reason="shared data not present")
def test_maskbench_schemas_built_in_a_store_are_their_loaded_terms() -> None:
    with gzip.open(MASKBENCH, "rt", encoding="utf-8") as lines:
        rows = [
            json.loads(line) for number, line in enumerate(lines) if number % MASKBENCH_STRIDE == 0
        ]
    compared = 0
    for row in rows:
        try:
            store, stored, term = compiled_both_ways(row["schema"], whitespace_max=8, strict=True)
        except (InvalidSpec, UnsupportedSchema):
            continue
        assert stored == store.load(term), row["name"]
        for test in row["tests"]:
            text = json.dumps(test["data"], ensure_ascii=False).encode()
            assert store.matches(stored, text) == matches(term, text), row["name"]
        compared += 1
    assert compared > 0.9 * len(rows)
