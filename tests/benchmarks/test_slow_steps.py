"""The places ``benchmarks/slow_steps.py`` sorts steps into, and its report's counts."""

from __future__ import annotations

import pytest


@pytest.fixture
def slow_steps(benchmark_script):
    """The benchmark's module."""
    return benchmark_script("slow_steps")


def test_each_step_takes_the_place_of_the_text_before_it(slow_steps):
    pieces = ['{"', "name", '":', ' "', "Ann", '",', ' "', "tags", '":', " [", "1", "]}"]
    key, colon, opened, value, inside, elsewhere = slow_steps.PLACES
    assert slow_steps.places_of(pieces) == [
        elsewhere,  # nothing read yet
        key,  # {"
        inside,  # {"name: the key's quote is open
        colon,  # {"name":
        value,  # {"name": "
        inside,  # {"name": "Ann
        opened,  # ...",
        key,  # ...", "
        inside,  # ...", "tags
        colon,  # ...", "tags":
        opened,  # ...": [
        elsewhere,  # ...": [1
    ]


def test_the_report_counts_the_steps_above_the_bound_by_place(slow_steps):
    key, colon, *_ = slow_steps.PLACES
    steps = [(500.0, "a", key), (300.0, "b", colon), (100.0, "a", key), (900.0, "notnames9", key)]
    text = slow_steps.report(steps, 200.0, ["notnames9"])
    assert "3 steps above 200 µs" in text
    assert f"| {key} | 1 | 0 |" in text and f"| {colon} | 1 | 0 |" in text
    assert "| notnames9 | 1 | 1 |" in text


def test_the_paired_table_gives_each_place_s_difference_largest_first(slow_steps):
    key, colon, *_ = slow_steps.PLACES
    pairs = [
        (3000.0, 1000.0, key),
        (5000.0, 1000.0, key),
        (1000.0, 1000.0, key),  # the key's steps: 9 ms against 3, 6 more
        (1000.0, 400.0, colon),
        (15000.0, 8000.0, colon),
        (200.0, 100.0, colon),  # the colon's: 16.2 ms against 8.5, 7.7 more
    ]
    lines = slow_steps.gaps(pairs, "llguidance").splitlines()
    assert "llguidance p50 (µs)" in lines[0]
    assert lines[2:] == [
        f"| {colon} | 3 | 16 | 8 | 8 | 1,000 | 400 |",
        f"| {key} | 3 | 9 | 3 | 6 | 3,000 | 1,000 |",
    ]
