"""Witnesses: every string found is one the term accepts, and they are found where a
breadth-first search of derivatives runs out of budget."""

from __future__ import annotations

import json
import re
from collections import deque

import jsonschema
import pytest
from hypothesis import given, settings

from fsm.derivative_automaton import DerivativeAutomaton
from fsm.json_schema import schema_term
from fsm.regex import regex_term
from fsm.terms import EMPTY, alt, byte_set, cat, complement, intersect, literal, matches, opt, thunk
from fsm.witness import witness
from tests.fsm.strategies import small_regexes


@settings(max_examples=200, deadline=None)
@given(small_regexes())
def test_a_plain_term_always_has_a_witness_it_accepts(pattern: str) -> None:
    found = witness(regex_term(pattern))
    assert found is not None
    assert re.fullmatch(pattern, found.decode())


@settings(max_examples=300, deadline=None)
@given(small_regexes(), small_regexes(), small_regexes())
def test_witnesses_of_intersections_and_complements_are_members(p: str, q: str, r: str) -> None:
    a, b, c = regex_term(p), regex_term(q), regex_term(r)
    for term, member in (
        (intersect(a, b), lambda s: re.fullmatch(p, s) and re.fullmatch(q, s)),
        (intersect(a, complement(b)), lambda s: re.fullmatch(p, s) and not re.fullmatch(q, s)),
        (
            cat(intersect(a, complement(b)), c),
            lambda s: any(
                re.fullmatch(p, s[:i]) and not re.fullmatch(q, s[:i]) and re.fullmatch(r, s[i:])
                for i in range(len(s) + 1)
            ),
        ),
        (complement(a), lambda s: not re.fullmatch(p, s)),
    ):
        found = witness(term)
        if found is not None:
            assert member(found.decode()), (term, found)
            assert matches(term, found)


def test_an_empty_intersection_has_no_witness() -> None:
    assert witness(intersect(regex_term("a+"), complement(regex_term("a*")))) is None
    assert witness(EMPTY) is None


def test_a_recursive_thunk_is_witnessed_through_its_finite_branch() -> None:
    # balanced parentheses: "" | "(" balanced ")" balanced
    def body():
        return alt(literal(b""), cat(literal(b"("), nested, literal(b")"), nested))

    nested = thunk("balanced", body)
    found = witness(intersect(nested, complement(literal(b""))))
    assert found == b"()"


def _breadth_first_runs_out(term, budget: int = 400) -> bool:
    """Whether a breadth-first search of ``term``'s derivatives meets more than
    ``budget`` terms without reaching acceptance (what the automaton did alone)."""
    automaton = DerivativeAutomaton(term)
    return automaton._breadth_first({term}, deque([term]), budget) is None


OBJECTS_WITH_SEPARATE_REQUIREMENTS = {
    "type": "object",
    "properties": {"a": {"type": "string"}, "b": {"type": "integer"}, "c": {"type": "string"}},
    "allOf": [{"required": ["a", "c"]}, {"required": ["b"]}],
    "oneOf": [{"required": ["a"]}, {"properties": {"c": {"const": "x"}}}],
}


@pytest.mark.parametrize(
    "schema",
    [
        OBJECTS_WITH_SEPARATE_REQUIREMENTS,
        {
            "type": "object",
            "properties": {"kind": {"enum": ["file", "link"]}, "size": {"type": "integer"}},
            "required": ["kind"],
            "oneOf": [
                {"properties": {"kind": {"const": "file"}}, "required": ["size"]},
                {"properties": {"kind": {"const": "link"}, "target": {"type": "string"}}},
            ],
        },
    ],
)
def test_objects_that_breadth_first_search_cannot_reach_have_witnesses(schema: dict) -> None:
    term = schema_term(schema)
    assert _breadth_first_runs_out(term)
    found = witness(term)
    assert found is not None
    jsonschema.validate(json.loads(found), schema)


def test_candidates_shared_between_searches_are_reused() -> None:
    """A second search of the same term with the first one's candidates needs almost
    no budget; the first one alone does not fit in it."""
    term = schema_term(OBJECTS_WITH_SEPARATE_REQUIREMENTS)
    shared: dict = {}
    assert witness(term, budget=30) is None
    assert witness(term, shared=shared) is not None
    again = witness(term, budget=30, shared=shared)
    assert again is not None
    jsonschema.validate(json.loads(again), OBJECTS_WITH_SEPARATE_REQUIREMENTS)


def test_liveness_of_an_exact_one_of_is_decided_by_a_witness() -> None:
    """The automaton's liveness check answers live through a witness, not through an
    exhausted search (which would answer live without proof)."""
    term = schema_term(OBJECTS_WITH_SEPARATE_REQUIREMENTS)
    automaton = DerivativeAutomaton(term)
    assert automaton.is_live(term)
    assert automaton._witnesses, "the witness search should have run and kept candidates"


def test_a_witness_never_uses_bytes_outside_the_term() -> None:
    term = intersect(cat(byte_set(b"xyz"), opt(literal(b"!"))), complement(literal(b"x")))
    found = witness(term)
    assert found is not None and matches(term, found) and found != b"x"
