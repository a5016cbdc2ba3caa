"""Formats and string keywords built into a store: the rows their object terms convert
to, accepting what the objects accept (``fsm.term_builder``, issue 15)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fsm.json_schema.formats import FORMATS, OBJECT_FORMATS, FormatTerms
from fsm.json_schema.json_text import OBJECTS, JsonText, encode_string
from fsm.json_schema.strings import OBJECT_STRINGS, StringTerms
from fsm.term_builder import StoredTerms
from fsm.term_store import TermStore
from fsm.terms import matches
from tests.fsm.test_term_store import assert_same_language


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
