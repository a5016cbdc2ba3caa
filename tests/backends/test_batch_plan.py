"""The radix planner that decides which tokens a batched forward computes once."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from backends.batch_plan import plan_rows


def arr(*tokens: int) -> np.ndarray:
    return np.array(tokens, dtype=np.int64)


def row_tokens(plan, row: int) -> list[int]:
    return [t for s in plan.path(row) for t in plan.edges[s].tokens.tolist()]


def computed(plan) -> int:
    return sum(len(s.tokens) for s in plan.edges)


def test_identical_rows_share_one_segment():
    plan = plan_rows([None] * 3, [arr(1, 2, 3)] * 3)
    assert len(plan.edges) == 1 and plan.row_end == [0, 0, 0]


def test_different_bases_are_never_merged():
    plan = plan_rows(["a", "b"], [arr(1, 2), arr(1, 2)])
    assert len(plan.edges) == 2


def test_long_common_prefix_is_computed_once():
    prompt = list(range(10, 30))
    rows = [arr(*prompt, 1), arr(*prompt, 2, 3), arr(*prompt)]
    plan = plan_rows([None] * 3, rows, min_shared=8)
    assert computed(plan) == 20 + 1 + 2
    assert [len(level) for level in plan.levels()] == [1, 2]
    for row, tokens in enumerate(rows):
        assert row_tokens(plan, row) == tokens.tolist()


def test_short_common_prefix_is_not_worth_a_level():
    rows = [arr(7, 7, 1), arr(7, 7, 2)]
    plan = plan_rows([None] * 2, rows, min_shared=8)
    assert len(plan.levels()) == 1 and computed(plan) == 6


def test_nested_groups_and_level_cap():
    a, b = list(range(100, 120)), list(range(200, 220))
    rows = [arr(*a, *b, 1), arr(*a, *b, 2), arr(*a, 3), arr(5, 6)]
    plan = plan_rows([None] * 4, rows, min_shared=8, max_levels=4)
    assert computed(plan) == 20 + 20 + 1 + 1 + 1 + 2
    for row, tokens in enumerate(rows):
        assert row_tokens(plan, row) == tokens.tolist()
    capped = plan_rows([None] * 4, rows, min_shared=8, max_levels=2)
    assert len(capped.levels()) == 2
    for row, tokens in enumerate(rows):
        assert row_tokens(capped, row) == tokens.tolist()


def test_empty_row_is_an_error():
    with pytest.raises(ValueError, match="row 1 has no new tokens"):
        plan_rows([None, None], [arr(1), arr()])


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from([None, "a"]), st.lists(st.integers(0, 2), min_size=1, max_size=12)
        ),
        min_size=1,
        max_size=8,
    ),
    st.integers(1, 4),
    st.integers(1, 4),
)
def test_plan_reconstructs_every_row_and_never_computes_more(rows, min_shared, max_levels):
    keys = [key for key, _ in rows]
    tokens = [arr(*t) for _, t in rows]
    plan = plan_rows(keys, tokens, min_shared=min_shared, max_levels=max_levels)
    assert len(plan.levels()) <= max_levels
    for row, toks in enumerate(tokens):
        assert row_tokens(plan, row) == toks.tolist()
        assert plan.edges[plan.path(row)[0]].base_row in [
            r for r, key in enumerate(keys) if key == keys[row]
        ]
    for a in range(len(rows)):
        for b in range(len(rows)):
            if rows[a] == rows[b]:
                assert plan.row_end[a] == plan.row_end[b]
    distinct = {(key, tuple(t)) for key, t in rows}
    assert computed(plan) <= sum(len(t) for _, t in distinct)
