"""``fsm.store_witness``: every string found is one the row accepts, and strings are
found on rows where the objects' witness finds them (where a breadth-first search of
derivatives runs out of budget)."""

from __future__ import annotations

import json
import re

import jsonschema
import pytest
from hypothesis import given, settings

from fsm.json_schema import schema_term, schema_term_in
from fsm.json_schema.numbers import NumberChecker
from fsm.json_schema.strings import strings_in
from fsm.regex import regex_term
from fsm.store_automaton import StoreAutomaton
from fsm.store_witness import witness_in
from fsm.term_builder import StoredTerms
from fsm.term_store import EMPTY, TermStore
from fsm.terms import alt, cat, checked, complement, intersect, literal, thunk
from fsm.witness import witness
from tests.fsm.strategies import small_regexes
from tests.fsm.test_witness import (
    OBJECTS_WITH_SEPARATE_REQUIREMENTS,
    ONE_OF_BY_KIND,
    _breadth_first_runs_out,
)


def built_in_a_store(schema: dict) -> tuple[TermStore, int]:
    store = TermStore()
    return store, schema_term_in(strings_in(StoredTerms(store)), schema)


@settings(max_examples=200, deadline=None)
@given(small_regexes(), small_regexes())
def test_witnesses_of_converted_intersections_are_members(p: str, q: str) -> None:
    """Where the objects find a witness of an intersection or a difference, the rows
    find one too, and it is a member."""
    a, b = regex_term(p), regex_term(q)
    store = TermStore()
    for term, member in (
        (intersect(a, b), lambda s: re.fullmatch(p, s) and re.fullmatch(q, s)),
        (intersect(a, complement(b)), lambda s: re.fullmatch(p, s) and not re.fullmatch(q, s)),
        (complement(a), lambda s: not re.fullmatch(p, s)),
    ):
        row = store.load(term)
        found = witness_in(store, row)
        if witness(term) is not None:
            assert found is not None, term
        if found is not None:
            assert member(found.decode()), (term, found)
            assert store.matches(row, found)


def test_an_empty_intersection_has_no_witness() -> None:
    store = TermStore()
    difference = store.load(intersect(regex_term("a+"), complement(regex_term("a*"))))
    assert witness_in(store, difference) is None
    assert witness_in(store, EMPTY) is None


def test_a_recursive_thunk_is_witnessed_through_its_finite_branch() -> None:
    def body():
        return alt(literal(b""), cat(literal(b"("), nested, literal(b")"), nested))

    nested = thunk("balanced", body)
    store = TermStore()
    assert witness_in(store, store.load(intersect(nested, complement(literal(b""))))) == b"()"


@pytest.mark.parametrize("schema", [OBJECTS_WITH_SEPARATE_REQUIREMENTS, ONE_OF_BY_KIND])
def test_objects_that_breadth_first_search_cannot_reach_have_witnesses(schema: dict) -> None:
    """Rows the compiler built (with their own thunks): a valid instance."""
    assert _breadth_first_runs_out(schema_term(schema))
    store, row = built_in_a_store(schema)
    found = witness_in(store, row)
    assert found is not None and store.matches(row, found)
    jsonschema.validate(json.loads(found), schema)


def test_candidates_shared_between_searches_are_reused() -> None:
    store, row = built_in_a_store(OBJECTS_WITH_SEPARATE_REQUIREMENTS)
    shared: dict[int, list[bytes]] = {}
    assert witness_in(store, row, budget=30) is None
    assert witness_in(store, row, shared=shared) is not None
    again = witness_in(store, row, budget=30, shared=shared)
    assert again is not None
    jsonschema.validate(json.loads(again), OBJECTS_WITH_SEPARATE_REQUIREMENTS)


def test_the_rows_automaton_decides_liveness_by_a_witness() -> None:
    """Along a breadth-first expansion, the automaton keeps strings its rows accept,
    and a witness, not an exhausted search, proved the root live."""
    store, row = built_in_a_store(OBJECTS_WITH_SEPARATE_REQUIREMENTS)
    automaton = StoreAutomaton(store, row)
    assert automaton.is_live(row)
    assert automaton._witnesses, "the witness search should have run and kept candidates"
    todo, seen = [automaton.initial], {automaton.initial}
    while todo and len(seen) < 200:
        successors, _ = automaton.expand(todo.pop())
        for state in set(successors.tolist()) - seen - {-1}:
            seen.add(state)
            todo.append(state)
    assert len(automaton._accepted) > 20
    for kept, text in automaton._accepted.items():
        assert store.matches(kept, text), (kept, text)


def test_a_number_that_must_still_become_an_integer_is_witnessed() -> None:
    checker = NumberChecker(integer=True)
    store = TermStore()
    found = witness_in(store, store.load(checked(checker, b"8.1")))
    assert found is not None and len(found) == 2
    assert checker.accepts(b"8.1" + found)
