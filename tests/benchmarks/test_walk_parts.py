"""``benchmarks/walk_parts.py``: its collector clock, its kinds of steps and its report."""

from __future__ import annotations

import gc
from itertools import count

import pytest


@pytest.fixture
def walk_parts(benchmark_script):
    """The benchmark's module."""
    return benchmark_script("walk_parts")


def test_the_clock_adds_young_collections_and_full_passes_apart(walk_parts):
    ticks = count(0, 5)
    clock = walk_parts.CollectorClock(lambda: next(ticks))
    for generation in (0, 1, 2, 0):
        clock("start", {"generation": generation})
        clock("stop", {"generation": generation})
    assert (clock.young_ns, clock.full_ns, clock.full_passes) == (15, 5, 1)
    assert (clock.young_collections, clock.longest_young_ns) == (3, 5)


def test_the_clock_counts_a_real_full_pass(walk_parts):
    clock = walk_parts.CollectorClock()
    was_enabled = gc.isenabled()
    gc.disable()  # no automatic collection meanwhile: only the one asked for
    gc.callbacks.append(clock)
    try:
        gc.collect()
    finally:
        gc.callbacks.remove(clock)
        if was_enabled:
            gc.enable()
    assert clock.full_passes == 1 and clock.full_ns > 0 and clock.young_ns == 0


def test_a_step_is_warm_first_or_cached_by_what_it_built(walk_parts):
    compile_, first, cached, warm = walk_parts.STEP_KINDS
    assert walk_parts.step_kind(built=False, cache_grew=False) == warm
    assert walk_parts.step_kind(built=False, cache_grew=True) == warm  # a join numbered
    assert walk_parts.step_kind(built=True, cache_grew=True) == first
    assert walk_parts.step_kind(built=True, cache_grew=False) == cached


def test_the_report_gives_each_share_and_the_terms_as_the_difference(walk_parts):
    collector = {
        "totals": [1.0, 2.0, 3.0, 4.0],
        "elapsed_ms": 200.0,
        "young_ms": 30.0,
        "young_collections": 1200,
        "longest_young_ms": 4.25,
        "full_ms": 20.0,
        "full_passes": 2,
        "thresholds": [700, 10, 10],
        "frozen": 0,
    }
    kinds = walk_parts.STEP_KINDS
    rows = {
        "spent_ms": dict(zip(kinds, (10.0, 30.0, 50.0, 10.0))),
        "counts": dict(zip(kinds, (1, 3, 10, 0))),
        "again_ms": {"fresh compile": 80.0, "same automaton": 60.0},
    }
    text = walk_parts.report(collector, rows)
    assert "thresholds 700, 10, 10; 4 instances" in text
    frozen = walk_parts.report({**collector, "frozen": 1234}, rows)
    assert "thresholds 700, 10, 10, 1,234 objects frozen; 4 instances" in frozen
    assert "of which the collector 50 ms (25%)" in text
    assert "1,200 young collections 30 ms (the longest 4.2 ms), 2 full passes 20 ms" in text
    assert "| first rows | 3 | 30 | 30% | 10,000.0 |" in text
    assert "| warm steps | 0 | 10 | 10% | - |" in text
    assert "the terms 20 ms (25%), the rows' bookkeeping 60 ms" in text
