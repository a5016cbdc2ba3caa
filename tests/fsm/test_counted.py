"""Counted repetitions: which units can be counted, and the counting product."""

from __future__ import annotations

import numpy as np
from hypothesis import given
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
from fsm.trie_walk import counting_table, counting_table_py


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
    product, row_of = counting_table(units.table, units.exit, max_count)
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


@given(st.integers(1, 6), st.integers(0, 20), st.integers(0, 2**32 - 1))
def test_the_counting_kernel_is_its_numpy_twin(states: int, max_count: int, seed: int) -> None:
    """Any unit table (dead bytes, the exit, state 0 entered again): the kernel's
    product and rows are the numpy twin's."""
    exit_state = states
    table = np.random.default_rng(seed).integers(DEAD, exit_state + 1, (states, 256), np.int32)
    for fast, slow in zip(
        counting_table(table, exit_state, max_count),
        counting_table_py(table, exit_state, max_count),
        strict=True,
    ):
        assert fast.dtype == slow.dtype == np.int32
        np.testing.assert_array_equal(fast, slow)
