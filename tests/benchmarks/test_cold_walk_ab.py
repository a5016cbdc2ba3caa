"""The before / after comparison's paired figures (``benchmarks/cold_walk_ab.py``)."""

from __future__ import annotations

import pytest


@pytest.fixture
def cold_walk_ab(benchmark_script):
    """The script's module."""
    return benchmark_script("cold_walk_ab")


def test_instances_are_paired_only_where_both_trees_have_a_time(cold_walk_ab):
    """An instance one tree refused (None) is left out; the row gives the count, the
    median, geometric mean and sum of the ratios after / before, and the medians."""
    before = [1.0, 2.0, None, 4.0, 8.0]
    after = [0.5, 2.0, 3.0, None, 16.0]
    cells = [cell.strip() for cell in cold_walk_ab._paired_row("x", before, after).split("|")]
    name, count, median, geometric, total, medians = cells[1:7]
    assert (name, count) == ("x", "3")
    assert median == "1.000"  # ratios 0.5, 1, 2
    assert geometric == "1.000"
    assert total == f"{18.5 / 11:.3f}"
    assert medians == "2.00 -> 2.00"


def test_no_instance_walked_by_both_gives_an_empty_row(cold_walk_ab):
    """Where one tree refused every instance the other walked, the row says none."""
    assert cold_walk_ab._paired_row("compile", [None, None], [1.0, 2.0]).startswith(
        "| compile | 0 |"
    )
