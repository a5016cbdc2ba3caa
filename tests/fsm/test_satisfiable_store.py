"""The productive analysis asked of a store's rows gives the objects' verdicts and
reasons (``fsm.satisfiable_store`` against ``fsm.satisfiable``)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings

import fsm
from fsm.satisfiable import empty_because
from fsm.satisfiable_store import empty_because_in
from fsm.term_builder import OBJECT_TERMS, StoredTerms, TermBuilder
from fsm.term_store import EMPTY, TermStore
from tests.fsm.test_satisfiable import CONTRADICTORY, LOOK_ALIKES, RECURSIVE, SELF_REF_REQUIRED
from tests.fsm.test_term_builder import Expr, build, exprs

SCHEMAS = [
    *CONTRADICTORY,
    *(schema for schema, _ in RECURSIVE),
    *LOOK_ALIKES,
    {"type": "string", "format": "date-time", "pattern": "^2"},
]


@pytest.mark.parametrize("schema", SCHEMAS, ids=repr)
def test_schema_terms_get_the_objects_verdict_and_reason(schema: object) -> None:
    term = fsm.JsonSchema(schema).term()
    store = TermStore()
    assert empty_because_in(store, store.load(term)) == empty_because(term)


def test_the_recursion_is_named_as_the_objects_name_it() -> None:
    term = fsm.JsonSchema(SELF_REF_REQUIRED).term()
    store = TermStore()
    reason = empty_because_in(store, store.load(term))
    assert reason is not None and "recursion through '#'" in reason


def looping(b: TermBuilder) -> object:
    """``x = "a" x``: no finite instance."""

    def body() -> object:
        return b.cat(b.literal(b"a"), b.thunk("x", body))

    return b.thunk("x", body)


def ending(b: TermBuilder) -> object:
    """``y = "a" y | "b"``: one."""

    def body() -> object:
        return b.alt(b.cat(b.literal(b"a"), b.thunk("y", body)), b.literal(b"b"))

    return b.thunk("y", body)


def mutual(b: TermBuilder, with_base: bool) -> object:
    """``p = "(" q ")"``, ``q = "[" p "]" | "[" r "]"``, ``r = "x"``: productive only
    through ``r`` (left out: neither ends)."""

    def p() -> object:
        return b.cat(b.literal(b"("), b.thunk(("q", with_base), q), b.literal(b")"))

    def q() -> object:
        branches = [b.cat(b.literal(b"["), b.thunk(("p", with_base), p), b.literal(b"]"))]
        if with_base:
            branches.append(b.cat(b.literal(b"["), b.thunk("r", lambda: b.literal(b"x"))))
        return b.alt(*branches)

    return b.thunk(("p", with_base), p)


@pytest.mark.parametrize(
    ("make", "empty"),
    [
        (looping, True),
        (lambda b: b.star(looping(b)), False),
        (ending, False),
        (lambda b: mutual(b, True), False),
        (lambda b: mutual(b, False), True),
    ],
    ids=["looping", "looping-star", "ending", "mutual", "mutual-without-base"],
)
def test_recursive_terms_built_in_a_store(make, empty: bool) -> None:
    store = TermStore()
    built = make(StoredTerms(store))
    verdict = empty_because_in(store, built)
    assert (verdict is not None) == empty
    assert verdict == empty_because(make(OBJECT_TERMS))


def test_an_exhausted_budget_accepts_and_empty_is_empty() -> None:
    term = fsm.JsonSchema(SELF_REF_REQUIRED).term()
    store = TermStore()
    root = store.load(term)
    assert empty_because_in(store, root, budget=3) is None
    assert empty_because_in(store, EMPTY) == empty_because(fsm.terms.EMPTY)


@settings(max_examples=200, deadline=None)
@given(exprs)
def test_programs_get_the_same_verdict_both_ways(expr: Expr) -> None:
    store = TermStore()
    stored = build(StoredTerms(store), expr)
    term = build(OBJECT_TERMS, expr)
    assert (empty_because_in(store, stored) is None) == (empty_because(term) is None)
