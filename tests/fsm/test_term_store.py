"""The integer term store against the object terms it stands beside: the same
languages (a walk over pairs of states, or texts where the automaton is infinite),
normal forms shared by equal terms, thunks built when needed."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fsm import terms
from fsm.errors import InvalidSpec, NotStorable
from fsm.json_schema.json_text import ANY_STRING as JSON_STRING
from fsm.json_schema.json_text import (
    INTEGRAL_NUMBER,
    any_value,
    string_except,
    string_of,
)
from fsm.partition import first_members, refine
from fsm.regex import regex_term
from fsm.term_store import EMPTY, EPS, TermStore
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


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**6), 10**6) | st.text('aé"\\', max_size=3),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text("ab", max_size=2), inner, max_size=3)
    ),
    max_leaves=8,
)


@settings(max_examples=80, deadline=None)
@given(json_values, st.integers(0, 40), st.binary(max_size=2))
def test_recursive_values_and_numbers_read_as_the_objects_read_them(
    value: object, cut: int, noise: bytes
) -> None:
    """Any JSON value (recursion through thunks, numbers as checked leaves): a valid
    text, and that text cut and spoiled, accepted exactly when the object terms
    accept it."""
    term = any_value(1)
    store = TermStore()
    root = store.load(term)
    text = json.dumps(value, ensure_ascii=False).encode()  # the compiler's own spelling
    assert store.matches(root, text)
    for candidate in (text[:cut], text[:cut] + noise + text[cut:]):
        assert store.matches(root, candidate) == terms.matches(term, candidate)


@given(st.integers(-(10**9), 10**9), st.binary(max_size=3))
def test_checked_numbers_read_as_their_checker_reads_them(number: int, noise: bytes) -> None:
    store = TermStore()
    root = store.load(INTEGRAL_NUMBER)
    for text in (str(number).encode(), str(number).encode() + noise, noise):
        assert store.matches(root, text) == terms.matches(INTEGRAL_NUMBER, text)


def test_a_thunk_is_built_when_first_needed() -> None:
    built = []

    def make() -> terms.Term:
        built.append(True)
        return regex_term("ab|cd")

    store = TermStore()
    root = store.load(terms.cat(terms.literal(b"x"), terms.thunk("pair", make)))
    assert not built
    assert store.derivative(root, ord("x")) != EMPTY and not built
    assert store.matches(root, b"xcd") and built == [True]
    assert not store.matches(root, b"xc")


@settings(max_examples=100, deadline=None)
@given(
    small_regexes(count_ranges=True),
    small_regexes(),
    st.sampled_from(["cat", "alt", "and", "not", "star"]),
)
def test_parts_behind_thunks_keep_their_language(first: str, second: str, shape: str) -> None:
    """Parts behind thunks, bodies built as derivatives need them and nullability
    worked out through them (the flags wait while a body is unbuilt)."""
    one = terms.thunk(("one", first), lambda: regex_term(first))
    two = terms.thunk(("two", second), lambda: regex_term(second))
    term = {
        "cat": lambda: terms.cat(one, two),
        "alt": lambda: terms.alt(one, two),
        "and": lambda: terms.intersect(one, terms.cat(two, terms.star(one))),
        "not": lambda: terms.complement(terms.cat(one, two)),
        "star": lambda: terms.cat(terms.star(one), two),
    }[shape]()
    store = TermStore()
    assert_same_language(store, store.load(term), term)


class PromisingBuilder:
    """A keyed thunk's builder that promises its body opens with ``a`` and counts the
    bodies it builds."""

    def __init__(self) -> None:
        self.built = 0

    def __call__(self, key: object) -> terms.Term:
        self.built += 1
        return regex_term("a+")

    def opening_bytes(self, key: object) -> int:
        return 1 << ord("a")


def test_a_promised_opening_answers_nullability_without_the_body() -> None:
    builder = PromisingBuilder()
    store = TermStore()
    root = store.load(terms.cat(terms.star(terms.literal(b"b")), terms.keyed_thunk("k", builder)))
    assert not store.nullable(root)
    assert builder.built == 0
    assert store.matches(root, b"bbaa") and builder.built == 1


def test_unguarded_recursion_is_refused() -> None:
    looping: terms.Term = terms.thunk("loop", lambda: terms.alt(looping, terms.literal(b"a")))
    store = TermStore()
    root = store.load(terms.cat(terms.literal(b"b"), looping))
    with pytest.raises(InvalidSpec, match="unguarded recursion"):
        store.derivative(store.derivative(root, ord("b")), ord("a"))


def test_only_terms_are_loaded() -> None:
    """The memo marker for "the term itself" is no term to store."""
    with pytest.raises(NotStorable):
        TermStore().load(terms._ITSELF)


def test_bad_repetition_bounds_are_refused() -> None:
    store = TermStore()
    with pytest.raises(ValueError):
        store.repeat(store.literal(b"a"), 3, 2)


@settings(max_examples=150, deadline=None)
@given(small_regexes(count_ranges=True), st.sampled_from([1, 4, 16]), st.sampled_from([8, 32, 128]))
def test_a_loaded_term_lists_the_strings_its_object_lists(
    pattern: str, limit: int, budget: int
) -> None:
    """``TermStore.finite_strings`` lists as ``fsm.terms.finite_strings`` does: on a
    converted term the same strings, given up at the same limit and budget (the
    objects also turn down at once what holds an unbounded repetition near the top,
    which the listing would turn down anyway)."""
    term = regex_term(pattern)
    store = TermStore()
    mine = store.finite_strings(store.load(term), limit, budget)
    theirs = terms.finite_strings(term, limit, budget)
    assert (mine is None) == (theirs is None), (mine, theirs)
    if mine is not None and theirs is not None:
        assert sorted(mine) == sorted(theirs)


@settings(max_examples=60, deadline=None)
@given(small_regexes(count_ranges=True), st.sampled_from([1, 4, 16]), st.sampled_from([8, 128]))
def test_a_listing_asked_again_is_the_one_found_first(
    pattern: str, limit: int, budget: int
) -> None:
    """``finite_strings`` is memoised per store by term, limit and budget: asked again
    (as every index over the store asks of the same lexemes), the answer is the first
    one, which a listing in a fresh store gives too; another limit is listed anew."""
    term = regex_term(pattern)
    store = TermStore()
    row = store.load(term)
    first = store.finite_strings(row, limit, budget)
    assert store.finite_strings(row, limit, budget) is first
    fresh = TermStore()
    assert fresh.finite_strings(fresh.load(term), limit, budget) == first
    wider = store.finite_strings(row, limit + 64, budget)
    if first is not None:
        assert wider is not None and sorted(wider) == sorted(first)


@settings(max_examples=120, deadline=None)
@given(st.lists(st.binary(max_size=6), min_size=1, max_size=4))
def test_every_rest_of_a_literal_spells_its_bytes(texts: list[bytes]) -> None:
    """A key's rests are listed from what ``literal`` noted as it built the chain; a
    chain a concatenation made (two literals joined) is read along its items. Both
    list each rest's bytes, as a store whose chains ``literal`` never built does."""
    store, unnoted = TermStore(), TermStore()
    joined = b"".join(texts)
    cases = [(text, store.literal(text)) for text in texts]
    cases.append((joined, store.cat_items([store.literal(text) for text in texts])))
    for text, term in cases:
        chain = EPS
        for byte in reversed(text):  # the same chain, built by ``cat`` alone
            chain = unnoted.cat(unnoted.byte_set(1 << byte), chain)
        for start in range(len(text) + 1):
            rest = text[start:]
            assert store.finite_strings(store.lexeme(term), 4) == [rest], (text, start)
            assert unnoted.finite_strings(unnoted.lexeme(chain), 4) == [rest]
            if start < len(text):
                term = store.derivative(term, text[start])
                chain = unnoted.derivative(chain, text[start])


def test_a_key_s_letters_cost_the_listing_one_visit() -> None:
    """A run of single bytes (a key's letters) is appended at once, both ways: twenty
    letters within a budget of four visits."""
    term = terms.lexeme(terms.literal(b'"abcdefghijklmnopqr"'))
    store = TermStore()
    assert terms.finite_strings(term, 4, budget=4) == [b'"abcdefghijklmnopqr"']
    assert store.finite_strings(store.load(term), 4, budget=4) == [b'"abcdefghijklmnopqr"']
