"""``benchmarks/store_walk.py``: both ways walk a spec's tokens, their masks compared,
and its summary."""

from __future__ import annotations

import numpy as np
import pytest

import fsm

SCHEMA = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}


@pytest.fixture
def store_walk(benchmark_script):
    """The benchmark's module."""
    return benchmark_script("store_walk")


def small_context(store_walk, plain: bool = True) -> dict:
    tokens = [b"{", b"}", b'"a"', b":", b"1", b"2", b'{"a":', b'"', b"a", None]
    vocabulary = fsm.Vocabulary.from_raw(tokens, eos_ids=len(tokens) - 1)
    return {"vocabulary": vocabulary, "rows": store_walk.RowCompiler(), "plain": plain}


@pytest.mark.parametrize(
    ("kind", "source", "tokens"),
    [
        ("json", SCHEMA, [6, 4, 5, 1]),
        ("regex", "a[12]+", [8, 4, 5]),
    ],
)
def test_both_ways_walk_with_equal_masks(store_walk, kind, source, tokens) -> None:
    context = small_context(store_walk)
    found = store_walk.measure("case", kind, source, tokens, context, 0)
    assert sorted(found) == ["objects", "rows", "rows plain"]
    for way in found:
        assert len(found[way]["steps_us"]) == len(tokens) + 1
        assert found[way]["total_ms"] > 0 and found[way]["states"] > 0
    lines = store_walk.summary({"case": found})
    assert lines[0] == "- 1 instances, every mask equal every way"
    assert sum("/ objects per instance" in line for line in lines) == 2


def test_a_mask_that_differs_stops_the_run(store_walk, monkeypatch) -> None:
    """A rows walk whose masks were otherwise would be reported, not timed."""
    context = small_context(store_walk, plain=False)
    real_walk = store_walk.walk
    calls = []

    def spoiled(make_index, tokens):
        total, steps, masks, states = real_walk(make_index, tokens)
        calls.append(True)
        if len(calls) == 2:  # turn 0 walks the objects first, then the rows
            masks = [np.invert(mask) for mask in masks]
        return total, steps, masks, states

    monkeypatch.setattr(store_walk, "walk", spoiled)
    with pytest.raises(AssertionError, match="the masks differ at token 0"):
        store_walk.measure("case", "json", SCHEMA, [6, 4, 1], context, 0)
