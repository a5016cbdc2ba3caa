"""Unsatisfiable constraints are refused at compile time, with a reason; satisfiable
look-alikes (and every MaskBench schema that has a valid instance) still compile."""

from __future__ import annotations

import gzip
import itertools
import json
import re
from pathlib import Path

import pytest

import fsm
from fsm.satisfiable import empty_because
from fsm.satisfiable_store import empty_because_in
from fsm.term_store import TermStore
from fsm.terms import EMPTY, alt, cat, literal, star, thunk

DATA = Path(__file__).resolve().parents[3] / "shared" / "data"
MASKBENCH = DATA / "maskbench-dev.jsonl.gz"

BYTES = fsm.Vocabulary.from_raw([bytes([b]) for b in range(256)] + [b""], eos_ids=[256])
SELF_REF_REQUIRED = {"type": "object", "properties": {"a": {"$ref": "#"}}, "required": ["a"]}


def compiles(spec: object) -> bool:
    try:
        fsm.compile_index(spec, BYTES)  # type: ignore[arg-type]
    except fsm.Unsatisfiable:
        return False
    return True


CONTRADICTORY = [
    False,
    {"not": {}},
    {"const": "a", "enum": ["b"]},
    {"type": "number", "minimum": 5, "maximum": 3},
    {"type": "integer", "minimum": 5, "maximum": 3},
    {"type": "integer", "minimum": 5.5, "maximum": 5.7},
    {"type": "integer", "multipleOf": 2, "minimum": 3, "maximum": 3.5},
    {"type": "string", "minLength": 3, "maxLength": 2},
    {"allOf": [{"type": "string"}, {"type": "integer"}]},
    {"type": "object", "required": ["x"], "maxProperties": 0},
    {
        "type": "object",
        "properties": {"x": {"type": "integer", "minimum": 5.5, "maximum": 5.7}},
        "required": ["x"],
    },
]


@pytest.mark.parametrize("schema", CONTRADICTORY, ids=repr)
def test_contradictory_schemas_are_refused(schema: object) -> None:
    with pytest.raises(fsm.Unsatisfiable, match="JsonSchema accepts no text at all"):
        fsm.compile_index(fsm.JsonSchema(schema), BYTES)


RECURSIVE = [
    (SELF_REF_REQUIRED, "#"),
    ({"type": "array", "items": {"$ref": "#"}, "minItems": 1}, "#"),
    (
        {
            "$defs": {
                "node": {
                    "type": "object",
                    "properties": {"next": {"$ref": "#/$defs/node"}, "v": {"type": "integer"}},
                    "required": ["next"],
                }
            },
            "$ref": "#/$defs/node",
        },
        "#/$defs/node",
    ),
]


@pytest.mark.parametrize(("schema", "pointer"), RECURSIVE)
def test_recursion_without_a_base_case_is_refused_and_named(schema: dict, pointer: str) -> None:
    with pytest.raises(
        fsm.Unsatisfiable, match=re.escape(f"recursion through '{pointer}' has no finite")
    ):
        fsm.compile_index(fsm.JsonSchema(schema), BYTES)


def test_unsatisfiable_is_an_invalid_spec_and_a_seqstate_error() -> None:
    import seqstate as ss

    assert issubclass(fsm.Unsatisfiable, fsm.InvalidSpec)
    assert issubclass(fsm.Unsatisfiable, ss.SeqStateError)
    assert ss.Unsatisfiable is fsm.Unsatisfiable


LOOK_ALIKES = [
    True,
    {},
    {"type": "object", "properties": {"a": {"$ref": "#"}}},
    {
        "type": "object",
        "properties": {"a": {"anyOf": [{"$ref": "#"}, {"type": "null"}]}},
        "required": ["a"],
    },
    {"type": "array", "items": {"$ref": "#"}},
    {"anyOf": [{"type": "string", "minLength": 3, "maxLength": 2}, {"type": "null"}]},
    {"type": "integer", "minimum": 5, "maximum": 5},
    {"type": "number", "minimum": 5.5, "maximum": 5.5},
    {"type": "integer", "minimum": 5.5, "maximum": 6},
    {"type": "string", "minLength": 2, "maxLength": 2},
    {"allOf": [{"type": "integer"}, {"type": "number"}]},
    {"const": "a", "enum": ["a", "b"]},
    {"not": {"type": "string"}},
]


@pytest.mark.parametrize("schema", LOOK_ALIKES, ids=repr)
def test_satisfiable_look_alikes_compile(schema: object) -> None:
    assert compiles(fsm.JsonSchema(schema))


def test_regexes_and_choices() -> None:
    assert not compiles(fsm.Regex(r"[^\s\S]"))
    assert not compiles(fsm.Regex(r"a[^\s\S]|b[^\d\D]"))
    assert compiles(fsm.Regex(r"a[^\s\S]|b"))
    assert compiles(fsm.Regex(r"(a|b){2}c"))
    assert compiles(fsm.Choice(["", "x"]))


def test_productive_analysis_on_terms() -> None:
    # x = "a" x : no finite instance; y = "a" y | "b" : one.
    def looping() -> fsm.terms.Term:
        return cat(literal(b"a"), thunk("x", looping))

    def ending() -> fsm.terms.Term:
        return alt(cat(literal(b"a"), thunk("y", ending)), literal(b"b"))

    assert empty_because(thunk("x", looping)) is not None
    assert empty_because(star(thunk("x", looping))) is None  # zero repetitions
    assert empty_because(thunk("y", ending)) is None
    assert empty_because(EMPTY) is not None


def test_mutual_recursion_is_decided_without_memoising_assumptions() -> None:
    # p = "(" q ")" ; q = "[" p "]" | "[" r "]" ; r = "x" : productive only through r,
    # which is met after p was assumed unproductive inside q.
    def p() -> fsm.terms.Term:
        return cat(literal(b"("), thunk("q", q), literal(b")"))

    def q() -> fsm.terms.Term:
        return alt(
            cat(literal(b"["), thunk("p", p), literal(b"]")),
            cat(literal(b"["), thunk("r", lambda: literal(b"x")), literal(b"]")),
        )

    assert empty_because(thunk("p", p)) is None

    # Without r, neither p nor q can end.
    def p2() -> fsm.terms.Term:
        return cat(literal(b"("), thunk("q2", lambda: cat(literal(b"["), thunk("p2", p2))))

    assert empty_because(thunk("p2", p2)) is not None


def test_an_exhausted_budget_accepts() -> None:
    term = fsm.JsonSchema(SELF_REF_REQUIRED).term()
    assert empty_because(term) is not None
    assert empty_because(term, budget=3) is None


def _maskbench_rows() -> list[dict]:
    with gzip.open(MASKBENCH, "rt", encoding="utf-8") as lines:
        return [json.loads(line) for line in itertools.islice(lines, 0, None, 85)]


@pytest.mark.skipif(not MASKBENCH.exists(), reason="shared data not present")
def test_no_maskbench_schema_with_a_valid_instance_is_refused() -> None:
    """Neither by the analysis of object terms nor by that of a store's rows
    (``fsm.satisfiable_store``, the terms loaded)."""
    checked = 0
    for row in _maskbench_rows():
        if not any(test["valid"] for test in row["tests"]):
            continue
        try:
            term = fsm.JsonSchema(row["schema"]).term()
        except fsm.UnsupportedSchema:
            continue
        assert empty_because(term) is None, row["name"]
        store = TermStore()
        assert empty_because_in(store, store.load(term)) is None, row["name"]
        checked += 1
    assert checked >= 80


def test_checked_leaves_are_productive_without_a_search() -> None:
    """``checked`` builds a leaf only for a viable text, and the automaton counts it live
    on that promise: the analysis takes it as productive and spends no derivative on
    it, in bounded numbers under a required key and in a format's string."""
    from fsm.satisfiable import _Productive

    schema = {
        "type": "object",
        "properties": {
            "age": {"type": "integer", "minimum": 0, "maximum": 150},
            "price": {"type": "number", "exclusiveMinimum": 0, "multipleOf": 0.01},
            "pattern": {"type": "string", "format": "regex"},
        },
        "required": ["age", "price", "pattern"],
    }
    analysis = _Productive(5_000)
    productive, _ = analysis.visit(fsm.JsonSchema(schema).term())
    assert productive
    assert analysis.leaf_derivatives == 0


def _built_object_bodies(term: fsm.terms.Term, seen: set[int] | None = None) -> set[int]:
    """The key sets of the object bodies built below ``term`` (thunks whose body
    exists), as bit masks over the keys in schema order, following built bodies only
    (recursive: the test's terms are shallow)."""
    from fsm.terms import Alt, Cat, Thunk

    seen = set() if seen is None else seen
    if id(term) in seen:
        return set()
    seen.add(id(term))
    if isinstance(term, Cat | Alt):
        return set().union(*(_built_object_bodies(item, seen) for item in term.items))
    if not isinstance(term, Thunk) or term._body is None:
        return set()
    below = _built_object_bodies(term._body, seen)
    if isinstance(term.key, tuple) and term.key[0] == "object-body":
        below.add(int.from_bytes(term.key[2], "little"))
    return below


def test_the_analysis_adds_an_objects_keys_in_schema_order() -> None:
    """An object whose keys are all required is productive once every key is added; the
    analysis adds them in schema order (``Thunk.search_order``), so the bodies it
    builds are the ones a walk in that order needs, not a chain in hash order that no
    walk meets (five keys: one chance in 120 that hash order is schema order)."""
    names = ["zeta", "alpha", "mid", "beta", "omega"]
    schema = {
        "type": "object",
        "properties": {name: {"type": "integer"} for name in names},
        "required": names,
        "additionalProperties": False,
    }
    term = fsm.JsonSchema(schema).term()
    assert empty_because(term) is None
    chain = {(1 << count) - 1 for count in range(len(names) + 1)}  # bit i: names[i] used
    assert _built_object_bodies(term) == chain
