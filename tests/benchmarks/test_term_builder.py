"""``benchmarks/term_builder.py``: its three ways build the same regex, and its summary
reads their figures."""

from __future__ import annotations

import pytest

from fsm.term_store import TermStore


@pytest.fixture
def term_builder(benchmark_script):
    """The benchmark's module."""
    return benchmark_script("term_builder")


@pytest.mark.parametrize("searched", [False, True])
def test_the_three_ways_build_the_same_term(term_builder, searched):
    ways = term_builder.builders(r"[a-c]{2}x|é", searched)
    built = [ways["objects + load"](), ways["store"]()]
    assert all(isinstance(store, TermStore) for store, _ in built)
    texts = [b"abx", "é".encode(), b"ab"]
    if searched:  # a search inside a JSON string's contents: more around the match
        texts = [b"zzabxzz", "-é".encode(), b"ab"]
    expected = [True, True, False]
    for store, root in built:
        assert [store.matches(root, text) for text in texts] == expected
    assert term_builder.same_row(r"[a-c]{2}x|é", searched)


def test_a_measurement_has_every_way_and_the_summary_reads_it(term_builder):
    result = term_builder.measure("a+b", False, 3)
    assert set(result["us"]) == set(term_builder.WAYS)
    assert all(value > 0 for value in result["us"].values())
    assert result["same_row"] is True
    assert result["tracked"]["store"] > 0
    lines = term_builder.summary([result, result])
    assert lines[0].startswith("- 2 patterns; the row built directly is the converted one on 2")


def test_patterns_the_regex_compiler_refuses_are_set_apart(term_builder, monkeypatch):
    schemas = [{"schema": {"pattern": "a(b$)c"}}, {"schema": {"items": {"pattern": "x+"}}}]
    monkeypatch.setattr(term_builder, "maskbench_sample", lambda sample: schemas)
    assert term_builder.sample_patterns(2) == (["x+"], ["a(b$)c"])
