"""The integer term store against the object terms it stands beside: the same
languages (a walk over pairs of states), normal forms shared by equal terms, and the
terms it refuses."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fsm import terms
from fsm.json_schema.json_text import ANY_STRING as JSON_STRING
from fsm.json_schema.json_text import (
    INTEGRAL_NUMBER,
    any_value,
    string_except,
    string_of,
)
from fsm.partition import first_members, refine
from fsm.regex import regex_term
from fsm.term_store import EMPTY, EPS, NotStorable, TermStore
from tests.fsm.strategies import small_regexes

MAX_PAIRS = 5_000


def assert_same_language(store: TermStore, stored: int, term: terms.Term) -> int:
    """Walk the pairs (object state, stored state) reachable by the same bytes, one
    byte per class of both partitions, and check each pair agrees on the empty
    string: the two accept the same strings exactly when every reachable pair does.
    The store derives by its own classes (``class_bytes`` first), so a partition of
    its too coarse shows as a wrong derivative. Returns how many pairs were met."""
    seen = {(term, stored)}
    todo = [(term, stored)]
    while todo:
        left, right = todo.pop()
        assert terms.nullable(left) == store.nullable(right), (left, right)
        if left is terms.EMPTY and right == EMPTY:
            continue
        store.class_bytes(right)
        labels = refine(terms.byte_partition(left), store.byte_partition(right))
        firsts = first_members(labels)
        for byte in range(256):
            if firsts[byte] != byte:
                continue
            pair = (terms.derivative(left, byte), store.derivative(right, byte))
            if pair not in seen:
                seen.add(pair)
                todo.append(pair)
        assert len(seen) <= MAX_PAIRS, "the pair walk does not end"
    return len(seen)


@settings(max_examples=150, deadline=None)
@given(small_regexes(count_ranges=True))
def test_loaded_regexes_keep_their_language(pattern: str) -> None:
    store = TermStore()
    term = regex_term(pattern)
    assert_same_language(store, store.load(term), term)


@settings(max_examples=100, deadline=None)
@given(small_regexes(), small_regexes(), st.sampled_from(["and", "and-not", "not"]))
def test_intersections_and_complements_keep_their_language(
    first: str, second: str, shape: str
) -> None:
    one, two = regex_term(first), regex_term(second)
    if shape == "and":
        term = terms.intersect(one, two)
    elif shape == "and-not":
        term = terms.intersect(one, terms.complement(two))
    else:
        term = terms.complement(terms.alt(one, two))
    store = TermStore()
    assert_same_language(store, store.load(term), term)


@pytest.mark.parametrize(
    "term",
    [
        JSON_STRING,
        string_of(regex_term(r"[a-z]{2,5}-\d+")),
        string_except(["name", "nickname", "age"]),
        regex_term(r"\$(0|[1-9][0-9]{0,2}(,[0-9]{3})*)\.[0-9]{2}"),
        regex_term(r"((25[0-5]|2[0-4]\d|1?\d?\d)\.){3}(25[0-5]|2[0-4]\d|1?\d?\d)"),
        regex_term(r"[^\s]+@[a-zé]+\.(com|org)"),
    ],
    ids=["json-string", "pattern-string", "string-except", "money", "ipv4", "non-ascii"],
)
def test_compiled_terms_keep_their_language(term: terms.Term) -> None:
    store = TermStore()
    assert assert_same_language(store, store.load(term), term) > 2


names = st.lists(st.text('abé"', max_size=3), min_size=1, max_size=5)


@settings(max_examples=60, deadline=None)
@given(names, names)
def test_strings_but_names_keep_their_language(first: list[str], second: list[str]) -> None:
    """Any JSON string but some names, alone and met with another set (an object's
    other keys against a pattern's: the promise of one lexeme inside another's)."""
    one, two = string_except(first), string_except(second)
    for term in (one, terms.intersect(one, two), terms.alt(one, string_of(regex_term("a+")))):
        store = TermStore()
        assert_same_language(store, store.load(term), term)


def test_equal_terms_built_apart_share_an_id() -> None:
    store = TermStore()
    pattern = r"(ab|c)*d{2,4}"
    assert store.load(regex_term(pattern)) == store.load(regex_term(pattern))
    assert store.load(regex_term("(?:x|y)z")) == store.load(regex_term("(?:y|x)z"))


atoms = st.sampled_from([b"a", b"b", b"ab", b"", b"ba"])


@given(st.lists(atoms, min_size=1, max_size=4), st.lists(atoms, min_size=1, max_size=4))
def test_union_is_a_set(first: list[bytes], second: list[bytes]) -> None:
    """Unions are flattened, unordered and without duplicates: every arrangement of
    the same members is one id."""
    store = TermStore()
    ones = [store.literal(text) for text in first]
    twos = [store.literal(text) for text in second]
    together = store.alt(ones + twos)
    assert together == store.alt(twos + ones)
    assert together == store.alt([store.alt(ones), store.alt(twos)])
    assert together == store.alt([*ones, *twos, *ones])


@given(st.lists(atoms, min_size=1, max_size=5), st.data())
def test_concatenation_is_associative(parts: list[bytes], data: st.DataObject) -> None:
    store = TermStore()
    split = data.draw(st.integers(0, len(parts)))
    ids = [store.literal(text) for text in parts]
    left, right = EPS, EPS
    for term in ids[:split]:
        left = store.cat(left, term)
    for term in reversed(ids[split:]):
        right = store.cat(term, right)
    assert store.cat(left, right) == store.literal(b"".join(parts))


def test_intersection_rules() -> None:
    store = TermStore()
    a, b = store.literal(b"a"), store.literal(b"ab")
    assert store.intersect([a, store.complement(a)]) == EMPTY
    assert store.intersect([a, store.complement(EMPTY)]) == a
    assert store.intersect([store.byte_set(0b110), store.byte_set(0b011)]) == store.byte_set(0b10)
    assert store.intersect([EPS, store.repeat(a, 0, None)]) == EPS
    assert store.intersect([EPS, b]) == EMPTY
    assert store.complement(store.complement(b)) == b


def test_recursion_and_checked_leaves_are_refused() -> None:
    store = TermStore()
    with pytest.raises(NotStorable, match="recursion"):
        store.load(any_value(1))
    with pytest.raises(NotStorable, match="Checked"):
        store.load(INTEGRAL_NUMBER)
    with pytest.raises(TypeError):  # the builtin it resembles
        store.load(INTEGRAL_NUMBER)


def test_a_thunk_is_stored_as_its_body() -> None:
    body = regex_term("ab|cd")
    store = TermStore()
    assert store.load(terms.thunk("pair", lambda: body)) == store.load(body)


def test_bad_repetition_bounds_are_refused() -> None:
    store = TermStore()
    with pytest.raises(ValueError):
        store.repeat(store.literal(b"a"), 3, 2)
