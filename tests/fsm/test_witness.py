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
from fsm.json_schema.numbers import NumberChecker
from fsm.regex import regex_term
from fsm.terms import (
    EMPTY,
    alt,
    byte_set,
    cat,
    checked,
    complement,
    intersect,
    literal,
    matches,
    opt,
    thunk,
)
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
    return automaton._breadth_first({term: b""}, deque([term]), budget) is None


ONE_OF_BY_KIND = {
    "type": "object",
    "properties": {"kind": {"enum": ["file", "link"]}, "size": {"type": "integer"}},
    "required": ["kind"],
    "oneOf": [
        {"properties": {"kind": {"const": "file"}}, "required": ["size"]},
        {"properties": {"kind": {"const": "link"}, "target": {"type": "string"}}},
    ],
}

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
        ONE_OF_BY_KIND,
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


def test_a_number_that_must_still_become_an_integer_is_witnessed() -> None:
    """``8.1`` is an integer only through an exponent (``8.1e1``): two bytes away, past
    more than a hundred prefixes a breadth-first search of the leaf meets first."""
    checker = NumberChecker(integer=True)
    found = witness(checked(checker, b"8.1"))
    assert found is not None and len(found) == 2
    assert checker.accepts(b"8.1" + found)


@settings(max_examples=200, deadline=None)
@given(small_regexes(), small_regexes())
def test_a_breadth_first_search_returns_a_shortest_string_it_reached(p: str, q: str) -> None:
    term = intersect(regex_term(p), complement(regex_term(q)))
    automaton = DerivativeAutomaton(term)
    found = automaton._breadth_first({term: b""}, deque([term]), 400)
    if isinstance(found, bytes):
        assert re.fullmatch(p, found.decode()) and not re.fullmatch(q, found.decode())
        shorter = [w for w in _strings(len(found) - 1) if matches(term, w)]
        assert not shorter, (found, shorter)


def _strings(longest: int) -> list[bytes]:
    """Every string over the small regexes' alphabet up to ``longest`` bytes."""
    alphabet = b"abc"
    if longest < 0:
        return []
    found, layer = [b""], [b""]
    for _ in range(longest):
        layer = [w + bytes((c,)) for w in layer for c in alphabet]
        found += layer
    return found


def test_strings_kept_by_liveness_searches_are_accepted_by_their_terms() -> None:
    """After rows of a schema with an inexact ``oneOf`` are built, every string the
    automaton keeps for a term (found by a search, a witness, or handed down one
    byte from a parent's) is one the term accepts."""
    schema = OBJECTS_WITH_SEPARATE_REQUIREMENTS
    automaton = DerivativeAutomaton(schema_term(schema))
    _expand_breadth_first(automaton, 300)
    assert len(automaton._accepted) > 20
    for term, text in automaton._accepted.items():
        assert matches(term, text), (term, text)


def test_the_state_after_a_kept_string_s_first_byte_needs_no_search() -> None:
    """A term kept live with a string hands the rest of it down: the state after the
    string's first byte (the next one along that text) is live without a search."""
    automaton = DerivativeAutomaton(schema_term(OBJECTS_WITH_SEPARATE_REQUIREMENTS))
    _expand_breadth_first(automaton, 100)
    kept = [(term, text) for term, text in automaton._accepted.items() if text]
    assert len(kept) > 3
    assert automaton.searches > 0
    before = automaton.searches
    for term, text in kept:
        state = automaton._intern(term)
        after = automaton.step(state, text[0])
        assert after != -1
        assert automaton.term(after) in automaton._accepted  # text[1:], or one kept before
    assert automaton.searches == before


def _expand_breadth_first(automaton: DerivativeAutomaton, states: int) -> None:
    """Expands the automaton's first ``states`` states, breadth-first."""
    todo, seen = [automaton.initial], {automaton.initial}
    while todo and len(seen) < states:
        successors, _ = automaton.expand(todo.pop(0))
        for state in sorted(set(successors.tolist()) - seen - {-1}):
            seen.add(state)
            todo.append(state)
