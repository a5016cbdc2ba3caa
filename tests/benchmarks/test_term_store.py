"""``benchmarks/term_store.py``: its exploration, its cold object terms, its count of
what the collector tracks, and its summary."""

from __future__ import annotations

import pytest

from fsm import terms
from fsm.json_schema.json_text import string_except, string_of
from fsm.regex import regex_term
from fsm.term_store import EMPTY, TermStore


@pytest.fixture
def term_store(benchmark_script):
    """The benchmark's module."""
    return benchmark_script("term_store")


def test_exploration_counts_the_live_states_and_stops_at_the_cap(term_store):
    term = regex_term("ab|ac")  # the root, then b|c, then the end: three live states
    assert term_store.explore(terms.derivative, terms.class_bytes, term, terms.EMPTY, 100) == 3
    store = TermStore()
    root = store.load(regex_term("[a-z]{0,30}"))
    assert term_store.explore(store.derivative, store.class_bytes, root, EMPTY, 100) == 31
    assert term_store.explore(store.derivative, store.class_bytes, root, EMPTY, 10) == 10


def test_forgotten_memos_leave_the_object_terms_cold(term_store):
    """Every memo below the root goes, through rests and promised bounds too: the
    string's own and the plain JSON string's its promise names."""
    term = string_except(["id", "name"])
    term_store.explore(terms.derivative, terms.class_bytes, term, terms.EMPTY, 100)
    below = list(term_store.sub_terms(term))
    assert any(isinstance(t, terms.Lexeme) and t is not term for t in below)  # the bound
    assert any(t._derivatives for t in below)
    term_store.forget_memos(term)
    assert not any(t._derivatives or t._partition is not None for t in term_store.sub_terms(term))


def test_a_walked_store_holds_few_objects_for_the_collector(term_store):
    """Both walks find the same states; the object terms keep an object and a memo
    per state and more, the store its few columns."""
    term = string_of(regex_term(r"[a-zA-Z0-9 ]{0,40}"))
    result = term_store.measure(lambda: term, reps=2, max_states=1000)
    assert result["object_states"] == result["store_states"] > 40
    assert result["store_tracked"] <= 12
    assert result["object_tracked"] > result["object_states"]


def test_refusals_are_counted_by_their_error(term_store):
    results = term_store.run(
        {
            "bad pattern": lambda: string_of(regex_term("(?<=a)b")),
            "fine": lambda: regex_term("a+b"),
        },
        reps=1,
        max_states=100,
    )
    assert results["bad pattern"] == {"refused": "UnsupportedRegex"}
    lines = term_store.summary(results)
    assert "1 terms measured; refused: 1 by UnsupportedRegex" in lines[0]
    assert "terms whose state counts differ: 0" in lines[2]
