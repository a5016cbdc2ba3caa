"""Formats, string keywords, values, objects and arrays built into a store: the rows their object terms convert
to, accepting what the objects accept (``fsm.term_builder``, issue 15)."""

from __future__ import annotations

import json
from typing import TypeVar

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fsm.json_schema.arrays import ArrayShape, array_term
from fsm.json_schema.formats import FORMATS, OBJECT_FORMATS, FormatTerms
from fsm.json_schema.json_text import OBJECTS, JsonText, encode_string
from fsm.json_schema.objects import ObjectShape, object_term
from fsm.json_schema.strings import OBJECT_STRINGS, StringTerms
from fsm.json_schema.values import value_in, value_term, values_except, values_except_in
from fsm.term_builder import StoredTerms
from fsm.term_store import EMPTY, KIND_AND, TermStore
from fsm.terms import matches
from tests.fsm.test_term_store import assert_same_language, json_values

T = TypeVar("T")


def stored_strings() -> tuple[TermStore, StringTerms[int]]:
    store = TermStore()
    return store, StringTerms(FormatTerms(JsonText(StoredTerms(store))))


FORMAT_TEXTS = [
    "2024-02-29",
    "2023-02-29",
    "12:30:00Z",
    "23:59:60Z",
    "15:59:60-08:00",
    "12:30:60Z",
    "2024-01-01T00:00:00.5+01:00",
    "a@b.co",
    "a@@b",
    "123e4567-e89b-12d3-a456-426614174000",
    "https://x.org/a?b#c",
    "::1",
    "1.2.3.4",
    "256.1.1.1",
    "host-name.example",
    "-bad",
    "P1Y2M",
    "/a~0b",
    "0#",
    "[a-z]+",
    "(",
    "é",
    "",
]


@pytest.mark.parametrize("name", [*sorted(FORMATS), "time", "date-time", "regex"])
def test_formats_built_in_a_store_are_the_loaded_ones(name: str) -> None:
    store, strings = stored_strings()
    built = strings.formats.format_content(name)
    term = OBJECT_FORMATS.format_content(name)
    assert built is not None and term is not None
    assert built == store.load(term)
    for text in FORMAT_TEXTS:
        data = encode_string(text)[1:-1]
        assert store.matches(built, data) == matches(term, data), text


def test_the_leap_seconds_are_the_store_s_own_thunks() -> None:
    store, strings = stored_strings()
    tree = strings.formats.leap_seconds()
    for text in (b"23:59:60Z", b"15:59:60-08:00", b"15:59:60+08:00", b"00:00:60.5+00:01"):
        assert store.matches(tree, text) == matches(OBJECT_FORMATS.leap_seconds(), text)


NODES = [
    {},
    {"minLength": 2},
    {"maxLength": 3},
    {"minLength": 2, "maxLength": 1},
    {"pattern": "^[A-Z]{2}-[0-9]+$"},
    {"pattern": "é|x", "maxLength": 4},
    {"format": "ipv4", "minLength": 9},
    {"format": "not-a-format"},
]


@pytest.mark.parametrize("node", NODES, ids=[str(node) for node in NODES])
def test_string_keywords_built_in_a_store_are_the_loaded_ones(node: dict) -> None:
    store, strings = stored_strings()
    refusals: list[tuple[str, str]] = []
    built = strings.string_term(node, lambda key, detail: refusals.append((key, detail)))
    term = OBJECT_STRINGS.string_term(node, lambda key, detail: None)
    assert built == store.load(term)
    assert not refusals
    if "format" not in node:  # a format's automaton is large for a pair walk
        assert_same_language(store, built, term)


def test_refusals_are_reported_alike() -> None:
    node = {"pattern": "a(b$)c", "format": "iri"}
    found: dict[str, list[str]] = {"store": [], "objects": []}
    _, strings = stored_strings()
    strings.string_term(node, lambda key, detail: found["store"].append(key))
    OBJECT_STRINGS.string_term(node, lambda key, detail: found["objects"].append(key))
    assert found["store"] == found["objects"] == ["pattern", "format"]


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 4), st.integers(0, 4), st.text('aé"\\\n', max_size=6))
def test_lengths_count_characters_both_ways(low: int, extra: int, text: str) -> None:
    """Lengths count code points of the decoded text, escapes and UTF-8 alike."""
    store, strings = stored_strings()
    node = {"minLength": low, "maxLength": low + extra}
    built = strings.string_term(node, lambda key, detail: None)
    data = encode_string(text)
    expected = low <= len(text) <= low + extra
    assert store.matches(built, data) == expected
    assert matches(OBJECT_STRINGS.string_term(node, lambda key, detail: None), data) == expected


def test_the_object_instances_are_the_module_names() -> None:
    from fsm.json_schema import formats, strings

    assert formats.format_content is OBJECT_FORMATS.format_content
    assert strings.string_term.__self__ is OBJECT_STRINGS
    assert OBJECT_STRINGS.pieces is OBJECTS


# ------------------------------------------------ values, objects and arrays


LAYOUTS = [
    {},
    {"indent": 1},
    {"separators": (",", ":")},
]


def writings(value: object) -> list[bytes]:
    return [json.dumps(value, ensure_ascii=False, **layout).encode() for layout in LAYOUTS]


@settings(max_examples=60, deadline=None)
@given(json_values, json_values, st.integers(0, 30))
def test_values_built_in_a_store_read_as_the_objects_read(
    value: object, other: object, cut: int
) -> None:
    """``const``: a value's writings (layouts, members in any order), another value's
    and cut ones, accepted alike; the row is the one the object term converts to."""
    store = TermStore()
    pieces = JsonText(StoredTerms(store))
    built = value_in(pieces, value, 2)
    term = value_term(value, 2)
    assert built == store.load(term)
    for text in writings(value) + writings(other):
        for candidate in (text, text[:cut]):
            assert store.matches(built, candidate) == matches(term, candidate)
    # on one line, every writing is the value's (indentation is bounded by ``ws_max``)
    assert all(store.matches(built, text) for text in writings(value) if b"\n" not in text)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.none() | st.booleans() | st.text("ab", max_size=2), max_size=4), json_values)
def test_values_but_words_built_in_a_store_read_as_the_objects_read(
    words: list, value: object
) -> None:
    store = TermStore()
    built = values_except_in(JsonText(StoredTerms(store)), words, 1)
    term = values_except(words, 1)
    for text in writings(value):
        assert store.matches(built, text) == matches(term, text)


def object_shape(pieces, *, ordered: bool) -> ObjectShape:
    """Two named keys (one required, one forbidden), other keys of two letters with
    numbers, at most three members."""
    b = pieces.terms
    other_key = pieces.string_of(b.repeat(b.byte_range(ord("a"), ord("z")), 2, 2))
    return ObjectShape(
        key=("test-object", ordered),
        named=(("id", pieces.integer_literal), ("no", b.empty), ("tag", pieces.any_string)),
        required=frozenset({"id"}),
        other_member=pieces.member(other_key, pieces.number, 1),
        max_properties=3,
        ws_max=1,
        ordered=ordered,
        pieces=pieces,
    )


objects_read = st.dictionaries(
    st.sampled_from(["id", "no", "tag", "zz", "abc", "q"]),
    st.integers(-5, 5) | st.text("a", max_size=2),
    max_size=4,
)


@settings(max_examples=80, deadline=None)
@given(objects_read, st.booleans(), st.integers(0, 40))
def test_object_shapes_built_in_a_store_read_as_the_objects_read(
    value: dict, ordered: bool, cut: int
) -> None:
    store = TermStore()
    built = object_term(object_shape(JsonText(StoredTerms(store)), ordered=ordered))
    term = object_term(object_shape(OBJECTS, ordered=ordered))
    assert built == store.load(term)
    for text in writings(value):
        for candidate in (text, text[:cut]):
            assert store.matches(built, candidate) == matches(term, candidate)


def array_shape(pieces, unique: bool) -> ArrayShape:
    b = pieces.terms
    words = [pieces.string_literal(word) for word in ("a", "b", "c")]
    return ArrayShape(
        key=("test-array", unique),
        prefix=(pieces.boolean,),
        rest=b.alt(*words, pieces.integer_literal),
        min_items=1,
        max_items=4,
        contains=None if unique else words[0],
        max_contains=None if unique else 2,
        unique_values=tuple(words) if unique else None,
        ws_max=1,
        pieces=pieces,
    )


arrays_read = st.lists(st.sampled_from([True, "a", "b", "c", 3, None]), max_size=5)


@settings(max_examples=80, deadline=None)
@given(arrays_read, st.booleans(), st.integers(0, 30))
def test_array_shapes_built_in_a_store_read_as_the_objects_read(
    value: list, unique: bool, cut: int
) -> None:
    store = TermStore()
    built = array_term(array_shape(JsonText(StoredTerms(store)), unique))
    term = array_term(array_shape(OBJECTS, unique))
    assert built == store.load(term)
    for text in writings(value):
        for candidate in (text, text[:cut]):
            assert store.matches(built, candidate) == matches(term, candidate)


def test_an_object_body_is_the_store_s_keyed_thunk_with_the_shape_s_promise() -> None:
    """A body is built when read, from its key; its promised opening answers first
    bytes without building it, in the store as in the objects."""
    store = TermStore()
    pieces = JsonText(StoredTerms(store))
    shape = object_shape(pieces, ordered=False)
    root = object_term(shape)
    after_brace = store.derivative(root, ord("{"))
    assert store.first_bytes_over(after_brace) == OBJECTS.terms.first_bytes_over(
        OBJECTS.terms.derivative(object_term(object_shape(OBJECTS, ordered=False)), ord("{"))
    )
    assert store.matches(root, b'{"id": 1, "zz": 2.5}')
    assert not store.matches(root, b'{"q": 1, "id": 1}')
    assert not store.matches(root, b'{"tag": "x"}')  # "id" is required


def _after_reading(store: TermStore, row: int, text: bytes) -> int:
    for byte in text:
        row = store.derivative(row, byte)
    return row


def test_the_rows_a_body_adds_do_not_grow_with_its_values() -> None:
    """A body offers each key as its key, one thunk for what follows it, and the next
    body: building a body adds the same rows whatever its values hold (before, every
    item of every value was nested again behind each next body)."""

    def added(value: bytes) -> int:
        store = TermStore()
        pieces = JsonText(StoredTerms(store))
        named = tuple((f"k{i}", pieces.terms.literal(value)) for i in range(6))
        shape = ObjectShape(key="rows", named=named, ws_max=1, pieces=pieces)
        after_brace = _after_reading(store, object_term(shape), b"{")
        before = len(store)
        assert store.derivative(after_brace, ord('"')) != EMPTY  # builds the first body
        return len(store) - before

    assert added(b"1") == added(b"1234567890")


def test_what_follows_a_key_needs_the_check_its_value_needs() -> None:
    """In a store as in the objects, the row after a key whose value is an
    intersection needs a liveness check, through the thunk that holds the value; the
    row after another key does not."""
    store = TermStore()
    pieces = JsonText(StoredTerms(store))
    b = pieces.terms
    checked = b.intersect(b.literal(b"12"), b.cat(b.literal(b"1"), b.star(b.byte_range(48, 57))))
    shape = ObjectShape(
        key="live", named=(("a", checked), ("b", pieces.integer_literal)), pieces=pieces
    )
    root = object_term(shape)
    assert store.needs_liveness_check(_after_reading(store, root, b'{"a"'))
    assert not store.needs_liveness_check(_after_reading(store, root, b'{"b"'))
    assert store.matches(root, b'{"a":12}') and not store.matches(root, b'{"a":13}')


# ------------------------------------------------------------- intersections factored

FACTORED_CASES = [
    "keys",
    "key and pattern",
    "key outside pattern",
    "two keys and pattern",
    "other keys and pattern",
    "union of keys",
    "bytes",
]


def met_members(strings: StringTerms[T], case: str) -> T:
    """An intersection whose heads are prefix-free together: JSON keys (lexemes with
    one bound, any JSON string), or single-byte sets."""
    pieces, b = strings.pieces, strings.terms
    numbers = pieces.member(pieces.string_literal("a"), pieces.number, 0)
    patterned = pieces.member(pieces.string_of(strings.pattern_content("^a")), pieces.any_string, 0)
    others = pieces.member(pieces.string_except(["a", "ab"]), pieces.null, 0)
    if case == "keys":
        return b.intersect(numbers, pieces.member(pieces.string_literal("a"), pieces.number, 1))
    if case == "key and pattern":
        return b.intersect(numbers, patterned)
    if case == "key outside pattern":
        return b.intersect(pieces.member(pieces.string_literal("b"), pieces.null, 0), patterned)
    if case == "two keys and pattern":
        two = pieces.string_of(b.alt(b.literal(b"ab"), b.literal(b"b")))
        return b.intersect(pieces.member(two, pieces.null, 0), patterned)
    if case == "other keys and pattern":
        return b.intersect(others, patterned)
    if case == "union of keys":
        keys = b.alt(numbers, pieces.member(pieces.string_literal("ab"), pieces.null, 0))
        return b.intersect(keys, patterned)
    return b.intersect(b.literal(b"abc"), b.cat(b.byte_range(97, 98), b.star(b.literal(b"c"))))


@pytest.mark.parametrize("case", FACTORED_CASES)
def test_intersections_factor_their_heads_as_the_objects_do(case: str) -> None:
    """The store meets the heads and intersects only what follows them, as
    ``fsm.terms.intersect`` does: the row built is the factored object term's row,
    and no intersection is left at its top."""
    store, strings = stored_strings()
    built = met_members(strings, case)
    term = met_members(OBJECT_STRINGS, case)
    assert built == store.load(term)
    assert store.kinds[built] != KIND_AND
    for text in (b'"a":1', b'"ab":"x"', b'"ab":null', b'"abc":null', b"abc", b"acc", b'"b":null'):
        assert store.matches(built, text) == matches(term, text), text
