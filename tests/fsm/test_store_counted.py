"""``fsm.store_counted`` against ``fsm.counted``: the same forms read from rows, the
same unit automaton, and the same states built (as rows, equal to the converted ones)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from fsm.counted import Counted, counted_form, plain_form, unit_automaton
from fsm.json_schema import schema_term_in
from fsm.json_schema.json_text import JSON_CHAR, QUOTE, string_of
from fsm.json_schema.strings import strings_in
from fsm.store_counted import (
    CountedRow,
    counted_after_prefix_in,
    counted_form_in,
    counted_meet_in,
    met_in,
    plain_form_in,
    unit_automaton_in,
)
from fsm.store_decompose import StoreSplits
from fsm.term_builder import StoredTerms
from fsm.term_store import EPS, KIND_LEXEME, TermStore
from fsm.terms import Term, alt, byte_set, derivative, literal, repeat

BOUNDS = [(2, 5), (0, 3), (4, None), (1, 2)]


def after_quote(lo: int, hi: int | None) -> Term:
    """A JSON string of ``lo..hi`` characters, after its opening quote."""
    return derivative(string_of(repeat(JSON_CHAR, lo, hi)), ord('"'))


def loaded(store: TermStore, counted: Counted) -> tuple[int, int, int, int | None]:
    return store.load(counted.unit), store.load(counted.close), counted.lo, counted.hi


def fields(counted: CountedRow | None) -> tuple[int, int, int, int | None] | None:
    return None if counted is None else (counted.unit, counted.close, counted.lo, counted.hi)


@pytest.mark.parametrize(("lo", "hi"), BOUNDS)
def test_a_bounded_string_reads_alike_from_rows(lo: int, hi: int | None) -> None:
    store = TermStore()
    term = after_quote(lo, hi)
    row = store.load(term)
    counted = counted_form(term)
    assert counted is not None
    found = counted_form_in(store, row)
    assert fields(found) == loaded(store, counted)
    assert found is not None
    assert found.plain(store) == store.load(counted.plain)
    plain = plain_form(counted.plain)
    assert plain is not None
    assert fields(plain_form_in(store, found.plain(store))) == loaded(store, plain)
    assert counted_form_in(store, found.plain(store)) is None  # nothing to count
    for byte in (ord("a"), 0xC3, ord("\\")):
        partial = derivative(JSON_CHAR, byte)
        for units in (1, 2):
            assert found.after(store, store.load(partial), units) == store.load(
                counted.after(partial, units)
            )


def test_the_unit_automaton_is_the_objects() -> None:
    """The same table, and partials that are the converted partials."""
    store = TermStore()
    counted = plain_form(after_quote(0, None))
    assert counted is not None
    objects = unit_automaton(counted)
    found = plain_form_in(store, store.load(counted.plain))
    assert objects is not None and found is not None
    rows = unit_automaton_in(store, found)
    assert rows is not None
    table, partials = rows
    assert np.array_equal(table, objects.table)
    assert partials == tuple(store.load(partial) for partial in objects.partials)
    assert partials[0] == EPS


def test_units_that_are_not_prefix_free_or_may_close_are_not_counted() -> None:
    store = TermStore()
    quote = store.load(byte_set(b'"'))
    prefixed = store.load(alt(literal(b"a"), literal(b"ab")))
    assert unit_automaton_in(store, CountedRow(prefixed, quote, 0, None)) is None
    closing = store.load(byte_set(b'a"'))
    assert unit_automaton_in(store, CountedRow(closing, quote, 0, None)) is None
    assert counted_form_in(store, store.load(QUOTE)) is None


MET_SPECS = [
    {"type": "string", "pattern": "^[a-c]+-[0-9]?$", "maxLength": 4},
    {"type": "string", "pattern": "^[a-c]{2,3}$", "minLength": 3, "maxLength": 5},
    {"type": "string", "format": "hostname", "maxLength": 5},
    # after a digit the pattern's state is a union of two with one close:
    # ``[0-9]* .* "`` or ``.* "`` (``content_in``)
    {"type": "string", "pattern": "^[0-9]+.*$", "maxLength": 5},
]
_TEXTS = st.text(alphabet="abc-9.\u00e9\\n", max_size=7).map(
    lambda text: json.dumps(text, ensure_ascii=False)[1:].encode()
)


@pytest.mark.parametrize(
    "spec", MET_SPECS, ids=["maxLength", "both bounds", "hostname", "digits then any text"]
)
@given(texts=st.lists(_TEXTS, min_size=1, max_size=8))
def test_a_count_met_with_a_pattern_is_the_meet_of_its_members(spec, texts) -> None:
    """A string with a count beside a pattern, after its opening quote, is taken apart
    into the counted lexeme and the other (``counted_meet_in``), and meeting them again
    (``met_in``) reads the same texts, there and after each byte read of them."""
    store = TermStore()
    root = schema_term_in(strings_in(StoredTerms(store)), spec)
    lexeme = store.derivative(root, ord('"'))
    members = counted_meet_in(store, lexeme)
    assert members is not None
    counted, other = members
    assert counted_form_in(store, counted) is not None
    met = met_in(store, counted, other)
    assert met is not None
    for text in texts:
        assert store.matches(met, text) == store.matches(lexeme, text)
        first, second = counted, other
        for position, byte in enumerate(text):
            first, second = store.derivative(first, byte), store.derivative(second, byte)
            if store.kinds[first] != KIND_LEXEME or store.kinds[second] != KIND_LEXEME:
                break
            rest = text[position + 1 :]
            after = met_in(store, first, second)
            assert after is not None
            both = store.matches(first, rest) and store.matches(second, rest)
            assert store.matches(after, rest) == both


def value_lexeme(store: TermStore, value: object) -> int:
    """The lexeme a row reads where the value of ``{"a": value}`` starts: its whitespace
    and the value's first lexeme (``StoreSplits.split_lexeme``)."""
    root = schema_term_in(strings_in(StoredTerms(store)), {"properties": {"a": value}})
    row = root
    for byte in b'{"a":':
        row = store.derivative(row, byte)
    split = StoreSplits(store).split_lexeme(row)
    assert split is not None
    return split[0]


_VALUE_TEXTS = st.builds(
    lambda space, text, tail: space.encode() + json.dumps(text).encode()[: len(text) + 2 - tail],
    st.sampled_from(["", " ", "\n", "\n  ", "  "]),
    st.text(alphabet='ab"\\\u00e9', max_size=7),
    st.integers(0, 2),
)


@pytest.mark.parametrize(("lo", "hi"), BOUNDS)
@given(texts=st.lists(_VALUE_TEXTS, min_size=1, max_size=8))
def test_a_bounded_value_is_its_prefix_then_its_count(lo: int, hi: int | None, texts) -> None:
    """Where a bounded string value starts, the lexeme of its whitespace and string is
    taken apart into the whitespace and quote, then the counted rest
    (``counted_after_prefix_in``), and the two in turn read the same texts."""
    store = TermStore()
    spec: dict[str, object] = {"type": "string", "minLength": lo}
    if hi is not None:
        spec["maxLength"] = hi
    lexeme = value_lexeme(store, spec)
    found = counted_after_prefix_in(store, lexeme, StoreSplits(store).alphabet)
    assert found is not None
    prefix, counted = found
    assert counted_form_in(store, counted) is not None
    assert store.kinds[prefix] == KIND_LEXEME
    for text in texts:
        assert store.matches(store.cat(prefix, counted), text) == store.matches(lexeme, text)


@pytest.mark.parametrize(
    "value",
    [{"type": "string"}, {"type": "integer"}, {"enum": ["ab", "cd"]}],
    ids=["unbounded string", "number", "enum"],
)
def test_only_a_count_behind_a_prefix_is_taken_apart(value: object) -> None:
    """A string without bounds (walked whole, its walk shared by every schema), a
    number and an enum have no count behind a prefix; nor has a count itself."""
    store = TermStore()
    lexeme = value_lexeme(store, value)
    assert counted_after_prefix_in(store, lexeme, StoreSplits(store).alphabet) is None
    bounded = value_lexeme(store, {"type": "string", "maxLength": 3})
    found = counted_after_prefix_in(store, bounded, StoreSplits(store).alphabet)
    assert found is not None
    assert counted_after_prefix_in(store, found[1], StoreSplits(store).alphabet) is None
