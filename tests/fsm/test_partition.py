"""The partition refinement kernel, folded over several partitions, against its twin
and against the definition."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from fsm.partition import first_members, first_members_py, refine, refine_py

partitions = st.integers(1, 257).flatmap(
    lambda classes: st.lists(st.integers(0, classes - 1), min_size=256, max_size=256)
)


@settings(max_examples=200, deadline=None)
@given(st.lists(partitions, min_size=1, max_size=5))
def test_refine_folded_matches_twin_and_definition(rows):
    parts = np.asarray(rows, np.uint16)
    fast = np.zeros(256, np.uint16)  # the trivial partition, refined by each row
    for row in parts:
        fast = refine(fast, row)
    assert fast.dtype == np.uint16
    np.testing.assert_array_equal(fast, refine_py(parts))
    # Two bytes share a class exactly when every input partition puts them together.
    columns = [tuple(parts[:, b]) for b in range(256)]
    for a in range(0, 256, 17):
        for b in range(256):
            assert (fast[a] == fast[b]) == (columns[a] == columns[b])


@settings(max_examples=200, deadline=None)
@given(partitions)
def test_first_members_matches_twin_and_definition(labels):
    labels = np.asarray(labels, np.uint16)
    first = first_members(labels)
    np.testing.assert_array_equal(first, first_members_py(labels))
    for b in range(256):
        assert labels[first[b]] == labels[b]
        assert all(labels[a] != labels[b] for a in range(first[b]))
