"""``benchmarks/bounded_numbers.py``: its values are instances of their specs, its bounds
refuse what lies beyond them."""

from __future__ import annotations

import pytest


@pytest.fixture
def bounded_numbers(benchmark_script):
    """The benchmark's module."""
    return benchmark_script("bounded_numbers")


def test_every_value_is_an_instance_of_its_spec(bounded_numbers, read_document) -> None:
    assert set(bounded_numbers.VALUES) == set(bounded_numbers.SPECS)
    for label, values in bounded_numbers.VALUES.items():
        assert len(values) >= 2
        for value in values:
            index, state = read_document(bounded_numbers.SPECS[label], value)
            assert state >= 0 and index.is_final(state), (label, value)


def test_values_beyond_the_bounds_are_refused(bounded_numbers, read_document) -> None:
    cases = [
        ("integer, 1,000 to 10**9", 999),
        ("integer, 1,000 to 10**9", 10**9 + 1),
        ("integer, 1 to 65,535", 65536),
        ("integer, 1 to 65,535", 0),
        ("number, 0.5 to 99.5", 99.75),
        ("integer, minimum 0 (control)", -1),
    ]
    for label, value in cases:
        index, state = read_document(bounded_numbers.SPECS[label], value)
        assert not (state >= 0 and index.is_final(state)), (label, value)
