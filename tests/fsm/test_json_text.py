"""JSON text pieces: "a string other than these keys" means what it says, built lazily."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fsm.json_schema.json_text import (
    OBJECTS,
    JsonText,
    any_value,
    encode_string,
    string_except,
)
from fsm.term_builder import StoredTerms
from fsm.term_store import KIND_THUNK, TermStore
from fsm.terms import (
    Alt,
    Lexeme,
    Thunk,
    _derivative,
    byte_partition,
    derivative,
    matches,
    representatives,
)
from tests.fsm.test_term_store import assert_same_language, json_values

# few letters, so that random texts often are, or start like, one of the names
_TEXTS = st.text(alphabet='ab\u00e9"\\\n', max_size=4)


@given(text=st.text(st.characters(blacklist_categories=("Cs",))))
def test_a_string_is_encoded_as_json_dumps_writes_it(text) -> None:
    """Keys and string values are written as ``json.dumps(ensure_ascii=False)`` writes
    them: escapes, control characters and non-ASCII text alike."""
    assert encode_string(text) == json.dumps(text, ensure_ascii=False).encode()


@given(names=st.lists(_TEXTS, max_size=5), text=_TEXTS)
def test_a_string_other_than_the_names_is_every_other_string(names, text) -> None:
    assert matches(string_except(names), encode_string(text)) == (text not in names)


@given(names=st.lists(_TEXTS, max_size=5), text=_TEXTS)
def test_a_string_other_than_the_names_is_the_same_term_however_built(names, text) -> None:
    """Two builds over one set of names are equal terms after any read, so an index
    numbers them as one state."""
    first, second = string_except(names), string_except(list(reversed(names)))
    assert first == second
    data = encode_string(text)
    for end in range(len(data)):
        assert matches(first, data[:end]) == matches(second, data[:end])


def test_key_prefixes_are_built_only_when_read() -> None:
    names = [f"key{number:03d}" for number in range(300)]
    term = string_except(names)
    thunks = _thunks_reachable(term)
    assert thunks and all(thunk._body is None for thunk in thunks)  # only the root built
    assert matches(term, encode_string("key0"))
    assert sum(thunk._body is not None for thunk in _thunks_reachable(term)) <= len("key0")


def _thunks_reachable(term) -> list[Thunk]:
    """The thunks reachable from ``term`` without building any."""
    found, todo, seen = [], [term], set()
    while todo:
        current = todo.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, Thunk):
            found.append(current)
            if current._body is not None:
                todo.append(current._body)
            continue
        for name in ("items", "item"):
            inner = getattr(current, name, None)
            if inner is not None:
                todo.extend(inner if isinstance(inner, tuple | frozenset) else [inner])
    return found


def test_equal_key_suffixes_are_equal_terms_across_key_sets() -> None:
    """Below ``"na``, "not name" is the same term whatever other keys the object has,
    so its token walks are shared across schemas."""
    first, second = string_except(["name", "age"]), string_except(["name", "zip", "nap"])
    assert _after(first, b'"nam') == _after(second, b'"nam')
    assert _after(first, b'"na') != _after(second, b'"na')  # "nap" is still ahead


def _after(term, data: bytes):
    for byte in data:
        term = derivative(term, byte)
    return term


@given(names=st.lists(_TEXTS, min_size=1, max_size=5), text=_TEXTS, cut=st.integers(0, 12))
def test_a_prefix_read_keeps_the_item_unbuilt_and_true(names, text, cut) -> None:
    """Down a name's prefix the lexeme steps through ``within``'s derivatives and keeps
    its own item as an unbuilt thunk; built, that item reads what the lexeme reads."""
    root = string_except(names)
    data = encode_string(text)
    prefix, rest = data[:cut], data[cut:]
    state = _after(root, prefix)
    if not isinstance(state, Lexeme) or state is root or state.within is None:
        return  # read to the end, or off every name (then it is ``within``'s state)
    assert isinstance(state.item, Thunk) and state.item._body is None
    for end in range(len(rest) + 1):
        assert matches(state.item, rest[:end]) == matches(state, rest[:end])


@given(names=st.lists(_TEXTS, min_size=1, max_size=5), text=_TEXTS, cut=st.integers(0, 12))
def test_a_prefix_state_partition_groups_bytes_with_equal_derivatives(names, text, cut) -> None:
    """Bytes in one class of a state's partition have one derivative: the partition of
    "any string but the names" is ``within``'s with each name's next byte apart."""
    state = _after(string_except(names), encode_string(text)[:cut])
    if not isinstance(state, Lexeme):
        return
    firsts = representatives(state)
    assert len(byte_partition(state)) == 256
    for byte in range(256):  # ``_derivative``: not through the partition's shortcut
        assert _derivative(state, byte) == _derivative(state, firsts[byte]), byte


_JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-50, 50) | st.floats(-1e3, 1e3) | _TEXTS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_TEXTS, inner, max_size=3),
    max_leaves=6,
)


@given(value=_JSON_VALUES, indent=st.sampled_from([None, 1, 2]))
def test_any_value_is_a_number_or_a_prefix_free_lexeme(value, indent) -> None:
    """``any_value`` reads every JSON value; its non-number part is a ``Lexeme``, which
    promises that no string of it extends another: no proper prefix of a value's text
    is read by it, and a number's text is not read by it at all."""
    text = json.dumps(value, ensure_ascii=False, indent=indent).encode()
    union = any_value(8)
    assert isinstance(union, Alt)
    delimited = next(item for item in union.items if isinstance(item, Lexeme))
    assert matches(union, text)
    is_number = isinstance(value, int | float) and not isinstance(value, bool)
    assert matches(delimited, text) == (not is_number)
    assert not any(matches(delimited, text[:end]) for end in range(len(text)))


def test_any_value_is_one_term_per_whitespace_bound() -> None:
    """Built once per bound, so every schema's "any other key" value is one term, and
    the walks of what starts with it are the vocabulary's shared ones."""
    assert any_value(8) is any_value(8)
    assert any_value(8) != any_value(2)


# ----------------------------------------------- the pieces built into a store


def _stored_pieces() -> tuple[TermStore, JsonText[int]]:
    store = TermStore()
    return store, JsonText(StoredTerms(store))


@pytest.mark.parametrize(
    "piece",
    [
        lambda p: p.quote,
        lambda p: p.null,
        lambda p: p.boolean,
        lambda p: p.json_char,
        lambda p: p.integer_literal,
        lambda p: p.number,
        lambda p: p.any_string,
        lambda p: p.whitespace(3),
        lambda p: p.colon(1),
        lambda p: p.closing(b"}", 2, False),
        lambda p: p.comma(2),
        lambda p: p.string_literal('a"é\n'),
        lambda p: p.string_of(p.terms.repeat(p.json_char, 1, 3)),
        lambda p: p.sequence([p.null, p.boolean], 1, b"[", b"]"),
    ],
    ids=[
        "quote",
        "null",
        "boolean",
        "char",
        "integer",
        "number",
        "string",
        "whitespace",
        "colon",
        "closing",
        "comma",
        "literal",
        "string-of",
        "sequence",
    ],
)
def test_regular_pieces_built_in_a_store_are_the_loaded_ones(piece) -> None:
    """Built through the store's builder, each piece is the very row its object
    converts to, and accepts what the object accepts."""
    store, pieces = _stored_pieces()
    built, term = piece(pieces), piece(OBJECTS)
    assert built == store.load(term)
    assert_same_language(store, built, term)


@given(names=st.lists(_TEXTS, max_size=5))
def test_a_string_but_names_built_in_a_store_keeps_its_language(names) -> None:
    """The store holds the promise alone (any string but the names' encodings),
    never building the objects' trie of names, and means the same strings."""
    store, pieces = _stored_pieces()
    built = pieces.string_except(names)
    assert not any(kind == KIND_THUNK for kind in store.kinds)  # no trie node built
    assert_same_language(store, built, string_except(names))


@settings(max_examples=80, deadline=None)
@given(json_values, st.sampled_from([None, 1, 2]), st.integers(0, 40), st.binary(max_size=2))
def test_any_value_built_in_a_store_reads_as_the_objects_read(
    value: object, indent: int | None, cut: int, noise: bytes
) -> None:
    """Any JSON value (recursion through the store's own thunks, numbers): a text as
    ``json.dumps`` writes it, cut and spoiled, accepted exactly when the object term
    accepts it."""
    store, pieces = _stored_pieces()
    root = pieces.any_value(2)
    term = any_value(2)
    text = json.dumps(value, ensure_ascii=False, indent=indent).encode()
    assert store.matches(root, text) == matches(term, text)
    for candidate in (text[:cut], text[:cut] + noise + text[cut:]):
        assert store.matches(root, candidate) == matches(term, candidate)


def test_a_stores_pieces_are_built_once() -> None:
    """A piece asked again is the one built (no new rows), names in any order."""
    store, pieces = _stored_pieces()
    value = pieces.any_value(1)
    rows = len(store)
    assert pieces.any_value(1) == value and len(store) == rows
    names = pieces.string_except(["a", "b"])
    rows = len(store)
    assert pieces.string_except(["b", "a"]) == names and len(store) == rows
