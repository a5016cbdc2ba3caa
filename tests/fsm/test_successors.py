"""The successor kernels of ``ByteTable.expand`` against numpy's definitions."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fsm.automaton import DEAD
from fsm.byte_table import ByteTable
from fsm.errors import ConstraintTooLarge, FsmError
from fsm.successors import mark_discovered, store_successors, successor_bounds

rows = st.lists(st.integers(-1, 299), min_size=256, max_size=256)


@settings(max_examples=200, deadline=None)
@given(rows)
def test_bounds_and_marks_match_numpy(values):
    successors = np.asarray(values, np.int32)
    assert successor_bounds(successors) == (int(successors.min()), int(successors.max()))
    discovered = np.zeros(300, np.bool_)
    discovered[7] = True  # marks already set stay set
    mark_discovered(successors, discovered, DEAD)
    expected = np.zeros(300, np.bool_)
    expected[7] = True
    expected[successors[successors != DEAD]] = True
    np.testing.assert_array_equal(discovered, expected)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(-2, 299), min_size=256, max_size=256), st.integers(0, 310))
def test_storing_successors_matches_numpy(values, room):
    """One call checks, marks and copies exactly when every successor is ``DEAD`` or
    below ``room``; otherwise it writes nothing (a negative state, no room)."""
    successors = np.asarray(values, np.int32)
    discovered = np.zeros(300, np.bool_)
    discovered[7] = True
    table = np.full((4, 256), 9, np.int32)
    lowest, highest, stored = store_successors(successors, discovered, room, table, 2)
    assert (lowest, highest) == (int(successors.min()), int(successors.max()))
    assert stored == (lowest >= DEAD and highest < room)
    expected_discovered = np.zeros(300, np.bool_)
    expected_discovered[7] = True
    expected_table = np.full((4, 256), 9, np.int32)
    if stored:
        expected_discovered[successors[successors != DEAD]] = True
        expected_table[2] = successors
    np.testing.assert_array_equal(discovered, expected_discovered)
    np.testing.assert_array_equal(table, expected_table)


@pytest.mark.parametrize("max_states", [41, 40])
def test_expand_past_the_arrays_grows_them_or_refuses_the_bound(max_states):
    """A successor beyond the arrays' room takes the slow path: grown within the
    automaton's bound, refused past it, and nothing is copied in before the refusal."""
    successors = np.full(256, DEAD, np.int32)
    successors[ord("a")] = 40
    table = ByteTable(_Fixed(successors), max_states=max_states)
    table.discover_state(3)
    if max_states == 40:
        with pytest.raises(ConstraintTooLarge):
            table.expand(3)
        assert not table.is_expanded(3) and not table.is_known(40)
        return
    table.expand(3)
    np.testing.assert_array_equal(table.row(3), successors)
    assert table.is_known(40) and len(table.discovered) > 40


class _Fixed:
    """A foreign automaton whose every state has the same successors."""

    initial = 0

    def __init__(self, successors: np.ndarray) -> None:
        self.successors = successors

    def expand(self, state: int) -> tuple[np.ndarray, bool]:
        return self.successors, state == 3


def test_expand_copies_marks_and_returns_the_successors():
    successors = np.full(256, DEAD, np.int32)
    successors[ord("a")], successors[ord("b")] = 5, 40
    table = ByteTable(_Fixed(successors), max_states=100)
    returned = table.expand(3)
    np.testing.assert_array_equal(returned, successors)
    np.testing.assert_array_equal(table.row(3), successors)
    assert table.is_known(3) is False and table.is_known(40) and table.is_final(3)
    assert np.flatnonzero(table.discovered).tolist() == [5, 40]


@pytest.mark.parametrize(
    "successors",
    [
        np.full(256, DEAD, np.int64),  # another dtype
        np.full((256, 2), DEAD, np.int32)[:, 0],  # not contiguous
        np.full(256, DEAD, np.dtype(">i4")),  # another byte order
    ],
)
def test_expand_takes_a_foreign_automaton_s_integer_arrays(successors):
    successors[ord("a")], successors[ord("b")] = 5, 40
    table = ByteTable(_Fixed(successors), max_states=100)
    table.expand(3)
    np.testing.assert_array_equal(table.row(3), successors)
    assert np.flatnonzero(table.discovered).tolist() == [5, 40]


def test_expand_refuses_negative_states_other_than_dead():
    successors = np.full(256, DEAD, np.int32)
    successors[0] = -2
    with pytest.raises(FsmError, match="negative"):
        ByteTable(_Fixed(successors), max_states=100).expand(0)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(-1, 120), max_size=20))
def test_discovering_states_one_by_one_equals_discovering_them_together(states):
    """``discover_state`` is ``discover`` of a one-state array: the same marks (``DEAD``
    skipped), the arrays grown alike, the same bound refused."""
    one_by_one = ByteTable(_Fixed(np.full(256, DEAD, np.int32)), max_states=100)
    together = ByteTable(_Fixed(np.full(256, DEAD, np.int32)), max_states=100)
    for state in states:
        outcomes = []
        for discover in (one_by_one.discover_state, lambda s: together.discover(np.asarray([s]))):
            try:
                discover(state)
                outcomes.append(None)
            except ConstraintTooLarge:
                outcomes.append(ConstraintTooLarge)
        assert outcomes[0] == outcomes[1]
        np.testing.assert_array_equal(one_by_one.discovered, together.discovered)
