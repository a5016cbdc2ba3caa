"""Counted repetitions: which units can be counted, the counting product, and the
kernels that walk it (``walk_trie_counting``) and code its ends (``counted_codes``)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from fsm.counted import (
    DEAD,
    Counted,
    counted_form,
    plain_form,
    unit_automaton,
)
from fsm.json_schema.json_text import JSON_CHAR, QUOTE, string_of
from fsm.terms import EPS, alt, byte_set, derivative, literal, repeat
from fsm.trie import TokenTrie
from fsm.trie_walk import (
    counted_codes,
    counted_codes_py,
    counting_table_py,
    walk_trie_counting,
    walk_trie_counting_py,
)


def test_a_bounded_string_is_a_counted_json_char_and_the_plain_string_is_its_base() -> None:
    after_quote = derivative(string_of(repeat(JSON_CHAR, 2, 5)), ord('"'))
    counted = counted_form(after_quote)
    assert counted == Counted(JSON_CHAR, QUOTE, 2, 5)
    assert plain_form(counted.plain) == Counted(JSON_CHAR, QUOTE, 0, None)
    assert counted_form(counted.plain) is None  # nothing to count
    assert counted.after(derivative(JSON_CHAR, 0xC3), 1) == derivative(after_quote, 0xC3)
    assert counted.after(derivative(JSON_CHAR, ord("a")), 1) == derivative(after_quote, ord("a"))


def test_units_that_are_not_prefix_free_or_may_close_are_not_counted() -> None:
    prefixed = alt(literal(b"a"), literal(b"ab"))
    assert unit_automaton(Counted(prefixed, byte_set(b'"'), 0, None)) is None
    closing = byte_set(b'a"')
    assert unit_automaton(Counted(closing, byte_set(b'"'), 0, None)) is None
    units = unit_automaton(Counted(JSON_CHAR, QUOTE, 0, None))
    assert units is not None and units.table.shape == (len(units.partials), 256)
    assert units.partials[0] == EPS and units.table[0, ord('"')] == units.exit


@given(st.binary(max_size=12))
def test_the_counting_product_counts_completed_units(data: bytes) -> None:
    """Walking the product from state 0 ends in the unit automaton's state with the
    number of units the text completed, as a run of the unit automaton counts them."""
    units = unit_automaton(Counted(JSON_CHAR, QUOTE, 0, None))
    assert units is not None
    max_count = 16
    product, row_of = counting_table_py(units.table, units.exit, max_count)
    width = max_count + 1
    state, count, product_state = 0, 0, 0
    for byte in data:
        if state == units.exit or state == DEAD:
            break
        state = int(units.table[state, byte])
        count += state == 0
        product_state = int(product[row_of[product_state], byte])
        if state == DEAD:
            assert product_state == DEAD
            break
        assert divmod(product_state, width) == (state, count)


ALPHABET = b'ab"'


@settings(max_examples=300, deadline=None)
@given(
    st.integers(1, 5),
    st.integers(0, 5),
    st.integers(0, 2**32 - 1),
    st.lists(st.binary(min_size=1, max_size=7), min_size=1, max_size=30),
    st.data(),
)
def test_the_counting_walk_is_the_walk_of_the_product(
    states: int, max_count: int, seed: int, tokens: list[bytes], data: st.DataObject
) -> None:
    """Any unit table over a few bytes (dead bytes, the exit, state 0 entered again,
    counts past ``max_count``) and any trie, from the root or from nodes below it: the
    kernel reports what ``walk_trie`` reports over the product table."""
    exit_state = states
    rng = np.random.default_rng(seed)
    table = np.full((states, 256), DEAD, np.int32)
    table[:, list(ALPHABET)] = rng.integers(DEAD, exit_state + 1, (states, len(ALPHABET)))
    tokens = [bytes(ALPHABET[byte % len(ALPHABET)] for byte in token) for token in tokens]
    trie = TokenTrie.build(tokens)
    nodes = data.draw(st.lists(st.integers(0, len(trie.labels) - 1), unique=True, max_size=3))
    roots = np.asarray(sorted(nodes) or [0], np.int32)
    args = (
        table,
        exit_state,
        max_count,
        roots,
        trie.labels,
        trie.depths,
        trie.ends,
        trie.token_starts,
        trie.token_ids,
        trie.max_depth,
    )
    for fast, slow in zip(walk_trie_counting(*args), walk_trie_counting_py(*args), strict=True):
        assert fast.dtype == slow.dtype == np.int32
        np.testing.assert_array_equal(fast, slow)


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 9), st.integers(1, 6), st.integers(1, 60), st.data())
def test_the_codes_of_a_counted_walk_are_their_numpy_twin(
    width: int, exit_kind: int, vocab_size: int, data: st.DataObject
) -> None:
    """The distinct codes (every end of the lexeme one), each token's index among them
    and by token id, the levels for the masks and the most units begun: the kernel's
    are the numpy twin's."""
    tokens = data.draw(st.lists(st.integers(0, vocab_size - 1), unique=True, max_size=40))
    ends = data.draw(
        st.lists(
            st.integers(0, (exit_kind + 1) * width - 1), min_size=len(tokens), max_size=len(tokens)
        )
    )
    args = (np.asarray(tokens, np.int32), np.asarray(ends, np.int32), width, exit_kind, vocab_size)
    fast, slow = counted_codes(*args), counted_codes_py(*args)
    for fast_array, slow_array in zip(fast[:-1], slow[:-1], strict=True):
        assert fast_array.dtype == slow_array.dtype == np.int32
        np.testing.assert_array_equal(fast_array, slow_array)
    assert fast[-1] == slow[-1]
