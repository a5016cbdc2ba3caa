"""One compiler, two kinds of terms: what ``fsm.term_builder`` builds into a store
accepts what it builds as objects, and answers the same questions about it."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import TypeVar

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fsm import terms
from fsm.errors import InvalidSpec
from fsm.regex import json_string_encoding, regex_in, regex_term, search_in, search_term
from fsm.term_builder import OBJECT_TERMS, StoredTerms, TermBuilder
from fsm.term_store import EMPTY, TermStore
from fsm.unicode import normalize_ranges, utf8_encodings, utf8_term
from tests.fsm.strategies import small_regexes
from tests.fsm.test_term_store import assert_same_language

T = TypeVar("T")


@settings(max_examples=150, deadline=None)
@given(small_regexes(count_ranges=True))
def test_a_regex_built_in_the_store_is_the_loaded_one(pattern: str) -> None:
    """Built through the store's builder, a regex is the very row its object term
    loads into (one normal form), and so accepts the same strings."""
    store = TermStore()
    built = regex_in(StoredTerms(store), pattern)
    term = regex_term(pattern)
    assert built == store.load(term)
    assert_same_language(store, built, term)


@pytest.mark.parametrize(
    "pattern",
    [
        r"\$(0|[1-9][0-9]{0,2}(,[0-9]{3})*)\.[0-9]{2}",
        r"((25[0-5]|2[0-4]\d|1?\d?\d)\.){3}(25[0-5]|2[0-4]\d|1?\d?\d)",
        r"[^\s]+@[a-zé]+\.(com|org)",
        r'^[A-Z]{2}-\d+$|"x"',
        r"(?i)ab[^c]",
    ],
)
def test_patterns_inside_json_strings_built_both_ways_agree(pattern: str) -> None:
    """A schema's ``pattern``: searched for, its characters as a JSON string writes
    them (escapes, multi-byte UTF-8)."""
    store = TermStore()
    built = search_in(StoredTerms(store), pattern, json_string_encoding)
    term = search_term(pattern, encode_char=json_string_encoding)
    assert built == store.load(term)
    assert assert_same_language(store, built, term) > 2


@given(st.lists(st.tuples(st.integers(0, 0x10FFFF), st.integers(0, 300)), max_size=4))
def test_utf8_encodings_built_both_ways_agree(spans: list[tuple[int, int]]) -> None:
    ranges = normalize_ranges((lo, min(lo + width, 0x10FFFF)) for lo, width in spans)
    store = TermStore()
    built = utf8_encodings(StoredTerms(store), ranges)
    assert built == store.load(utf8_term(ranges))


# ------------------------------------------------------------- programs of builders

Expr = tuple  # ("lit", bytes) | ("range", lo, hi) | (op, *children) | ("rep", e, lo, hi)

leaves = st.one_of(
    st.sampled_from([b"a", b"b", b"ab", b"", b"ba"]).map(lambda data: ("lit", data)),
    st.tuples(st.just("range"), st.integers(96, 99), st.integers(97, 100)),
)


def extend(inner: st.SearchStrategy[Expr], thunks: bool = True) -> st.SearchStrategy[Expr]:
    pairs = st.tuples(inner, inner)
    deferred = [
        inner.map(lambda e: ("thunk", e)),
        inner.map(lambda e: ("keyed", e)),
    ]
    return st.one_of(
        pairs.map(lambda p: ("cat", *p)),
        pairs.map(lambda p: ("alt", *p)),
        pairs.map(lambda p: ("and", *p)),
        inner.map(lambda e: ("not", e)),
        inner.map(lambda e: ("star", e)),
        inner.map(lambda e: ("plus", e)),
        inner.map(lambda e: ("opt", e)),
        st.tuples(inner, st.integers(0, 2), st.integers(0, 2)).map(
            lambda p: ("rep", p[0], p[1], p[1] + p[2])
        ),
        inner.map(lambda e: ("lexeme", e)),
        *(deferred if thunks else []),
    )


exprs = st.recursive(leaves, extend, max_leaves=6)
regular_exprs = st.recursive(leaves, lambda inner: extend(inner, thunks=False), max_leaves=6)
"""Programs without thunks: every question about them can be settled by a search."""


class KeyedBodies:
    """A keyed family's builder: the key is the expression its body is."""

    def __init__(self, terms_: TermBuilder[T]) -> None:
        self.terms = terms_

    def __call__(self, key: Hashable) -> object:
        assert isinstance(key, tuple)
        return build(self.terms, key[1])


def build(b: TermBuilder[T], expr: Expr) -> T:
    """The term of ``expr``, built by ``b`` (a thunk's key is its body's expression,
    so equal keys are equal bodies, as thunks require)."""
    op = expr[0]
    if op == "lit":
        return b.literal(expr[1])
    if op == "range":
        return b.byte_range(expr[1], expr[2])
    if op in ("cat", "alt", "and"):
        parts = [build(b, child) for child in expr[1:]]
        return {"cat": b.cat, "alt": b.alt, "and": b.intersect}[op](*parts)
    if op == "rep":
        return b.repeat(build(b, expr[1]), expr[2], expr[3])
    if op == "thunk":
        return b.thunk(("t", expr[1]), lambda: build(b, expr[1]))
    if op == "keyed":
        return b.keyed_thunk(("k", expr[1]), KeyedBodies(b))  # type: ignore[arg-type]
    inner = build(b, expr[1])
    if op == "lexeme":  # promised prefix-free: only where it is (no string extends one)
        return b.lexeme(b.cat(inner, b.literal(b"$")))
    unary: dict[str, Callable[[T], T]] = {
        "not": b.complement,
        "star": b.star,
        "plus": b.plus,
        "opt": b.opt,
    }
    return unary[op](inner)


@settings(max_examples=200, deadline=None)
@given(exprs)
def test_programs_built_both_ways_accept_the_same_strings(expr: Expr) -> None:
    store = TermStore()
    stored = build(StoredTerms(store), expr)
    term = build(OBJECT_TERMS, expr)
    assert_same_language(store, stored, term)


texts = st.binary(max_size=4).map(lambda data: bytes(97 + byte % 5 for byte in data))


@settings(max_examples=200, deadline=None)
@given(exprs, st.lists(texts, max_size=5))
def test_questions_are_answered_alike(expr: Expr, samples: list[bytes]) -> None:
    """Emptiness, nullability, first bytes and matches, asked of both builders."""
    stored_terms = StoredTerms(TermStore())
    stored = build(stored_terms, expr)
    term = build(OBJECT_TERMS, expr)
    assert stored_terms.nullable(stored) == OBJECT_TERMS.nullable(term)
    # syntactic emptiness may differ (the store meets byte sets where objects wait)
    if stored_terms.is_empty(stored) and OBJECT_TERMS.is_empty(term):
        assert stored == EMPTY
    for text in samples:
        assert stored_terms.matches(stored, text) == OBJECT_TERMS.matches(term, text)
    stored_firsts = stored_terms.first_bytes(stored)
    object_firsts = OBJECT_TERMS.first_bytes(term)
    for byte in range(256):  # each side's first bytes: the bytes its derivative keeps
        assert bool(stored_firsts >> byte & 1) != stored_terms.is_empty(
            stored_terms.derivative(stored, byte)
        )
        assert bool(object_firsts >> byte & 1) != OBJECT_TERMS.is_empty(
            OBJECT_TERMS.derivative(term, byte)
        )


@settings(max_examples=200, deadline=None)
@given(exprs)
def test_first_bytes_read_from_the_structure_agree(expr: Expr) -> None:
    """``first_bytes_over`` (no derivative) names every byte a string may start with,
    and reads the same from the store's rows as from the objects where their normal
    forms meet."""
    stored_terms = StoredTerms(TermStore())
    stored = build(stored_terms, expr)
    term = build(OBJECT_TERMS, expr)
    over = stored_terms.first_bytes_over(stored)
    object_over = OBJECT_TERMS.first_bytes_over(term)
    assert stored_terms.first_bytes(stored) & ~over == 0
    assert OBJECT_TERMS.first_bytes(term) & ~object_over == 0
    if "and" not in repr(expr):  # the objects factor intersections the store keeps whole
        assert over == object_over


ALPHABET = (0, ord("$"), 96, 97, 98, 99, 100)
"""Every byte a program's leaves tell apart, and one that none names (byte 0 stands
for all such bytes)."""


def language_is_empty(b: TermBuilder[T], term: T) -> bool:
    """Whether no string reaches a nullable derivative of ``term`` (a full search)."""
    seen = {term}
    todo = [term]
    while todo:
        state = todo.pop()
        if b.nullable(state):
            return False
        for byte in ALPHABET:
            after = b.derivative(state, byte)
            if not b.is_empty(after) and after not in seen:
                seen.add(after)
                todo.append(after)
        assert len(seen) <= 5000, "the search does not end"
    return True


@settings(max_examples=200, deadline=None)
@given(regular_exprs)
@pytest.mark.parametrize("kind", ["objects", "store"])
def test_the_compile_s_emptiness_questions_hold_both_ways(kind: str, expr: Expr) -> None:
    """What a schema compile asks before it drops a value (``needs_liveness_check``,
    ``empty_because``) or narrows a union (``union_members``) holds of the language:
    a term that needs no liveness check is empty exactly when it is ``empty``, a
    reason is given only for an empty language, and a union is its members."""
    b: TermBuilder = OBJECT_TERMS if kind == "objects" else StoredTerms(TermStore())
    term = build(b, expr)
    empty = language_is_empty(b, term)
    if not b.needs_liveness_check(term):
        assert b.is_empty(term) == empty
    if b.empty_because(term) is not None:
        assert empty
    members = b.union_members(term)
    if members is not None:
        assert len(members) >= 2
        assert b.alt(*members) == term
        assert all(b.union_members(member) is None for member in members)


def assert_members_and_liveness(b: TermBuilder[T]) -> None:
    first, second = b.literal(b"ab"), b.star(b.literal(b"c"))
    union = b.alt(first, second)
    assert sorted(map(repr, b.union_members(union) or [])) == sorted([repr(first), repr(second)])
    assert b.union_members(first) is None
    assert b.needs_liveness_check(b.cat(b.literal(b"x"), b.intersect(first, second)))
    assert not b.needs_liveness_check(b.cat(b.literal(b"x"), union))


def test_a_union_s_members_are_given_and_others_have_none() -> None:
    assert_members_and_liveness(OBJECT_TERMS)
    assert_members_and_liveness(StoredTerms(TermStore()))


# --------------------------------------------------------------------- stored thunks


def test_a_stored_thunk_is_built_when_first_needed() -> None:
    store = TermStore()
    stored_terms = StoredTerms(store)
    built = []

    def make() -> int:
        built.append(True)
        return regex_in(stored_terms, "ab|cd")

    root = stored_terms.cat(stored_terms.literal(b"x"), stored_terms.thunk("pair", make))
    assert not built
    assert store.derivative(root, ord("x")) != EMPTY and not built
    assert store.matches(root, b"xcd") and built == [True]
    assert not store.matches(root, b"xc")
    assert store.thunk_of(stored_terms.thunk("pair", make)).key == "pair"


class PromisingBodies:
    """A keyed family's builder that promises its bodies open with ``a`` and counts
    the bodies it builds."""

    def __init__(self, stored_terms: StoredTerms) -> None:
        self.stored_terms = stored_terms
        self.built = 0

    def __call__(self, key: Hashable) -> int:
        self.built += 1
        return regex_in(self.stored_terms, "a+")

    def opening_bytes(self, key: Hashable) -> int:
        return 1 << ord("a")


def test_a_promised_opening_answers_without_the_body() -> None:
    stored_terms = StoredTerms(TermStore())
    bodies = PromisingBodies(stored_terms)
    b = stored_terms
    root = b.cat(b.star(b.literal(b"b")), b.keyed_thunk("k", bodies))
    assert not b.nullable(root)
    assert bodies.built == 0
    assert b.matches(root, b"bbaa") and bodies.built == 1
    assert b.keyed_thunk("k", bodies) == b.keyed_thunk("k", bodies)


def balanced(b: TermBuilder[T]) -> T:
    """Balanced parentheses, ``P = ( P ) P | ε``: recursion guarded by a byte."""

    def body() -> T:
        inner = b.thunk("parens", body)
        return b.alt(b.eps, b.cat(b.literal(b"("), inner, b.literal(b")"), inner))

    return b.thunk("parens", body)


@given(st.text("()", max_size=10))
def test_recursive_stored_thunks_read_as_objects_do(text: str) -> None:
    stored_terms = StoredTerms(TermStore())
    data = text.encode()
    assert stored_terms.matches(balanced(stored_terms), data) == OBJECT_TERMS.matches(
        balanced(OBJECT_TERMS), data
    )


def test_unguarded_stored_recursion_is_refused() -> None:
    stored_terms = StoredTerms(TermStore())
    b = stored_terms
    looping = b.thunk("loop", lambda: b.alt(looping, b.literal(b"a")))
    root = b.cat(b.literal(b"b"), looping)
    with pytest.raises(InvalidSpec, match="unguarded recursion"):
        b.derivative(b.derivative(root, ord("b")), ord("a"))


def test_the_object_builder_builds_fsm_terms() -> None:
    built = OBJECT_TERMS.cat(OBJECT_TERMS.byte_set(0b110 << 96), OBJECT_TERMS.literal(b"z"))
    assert built == terms.cat(terms.byte_set(b"ab"), terms.literal(b"z"))
    assert OBJECT_TERMS.byte_set(0) is terms.EMPTY


def long_optional_run(b: TermBuilder[T], length: int = 100) -> T:
    """``length`` optional bytes, then one that is not optional."""
    optional = (b.opt(b.literal(bytes((97 + n % 3,)))) for n in range(length))
    return b.cat(*optional, b.literal(b"z"))


def test_a_long_concatenation_s_first_bytes_fit_the_budget_both_ways() -> None:
    """``first_bytes_over`` spends its budget once per item of a concatenation, the
    store's chain of pairs as the objects' flat items: 100 optional items fit in it."""
    stored_terms = StoredTerms(TermStore())
    expected = terms.byte_mask(b"abcz")
    assert stored_terms.first_bytes_over(long_optional_run(stored_terms)) == expected
    assert OBJECT_TERMS.first_bytes_over(long_optional_run(OBJECT_TERMS)) == expected


def test_a_spent_budget_answers_every_byte_in_any_order() -> None:
    """An intersection of a cheap member and one too large to read: every byte,
    whichever member the store's id order visits first (before, the member visited
    after the budget ran out read every byte, and the other's bytes survived)."""
    every = (1 << 256) - 1
    for cheap_first in (True, False):
        stored_terms = StoredTerms(TermStore())
        cheap = stored_terms.literal(b"a") if cheap_first else None
        large = long_optional_run(stored_terms, 300)
        if cheap is None:
            cheap = stored_terms.literal(b"a")
        both = stored_terms.intersect(cheap, large)
        assert stored_terms.first_bytes_over(both) == every
    objects_both = OBJECT_TERMS.intersect(
        OBJECT_TERMS.literal(b"a"), long_optional_run(OBJECT_TERMS, 300)
    )
    assert OBJECT_TERMS.first_bytes_over(objects_both) == every
