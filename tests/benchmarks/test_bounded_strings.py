"""``benchmarks/bounded_strings.py``: its values are instances of their specs, its bounds
refuse what lies beyond them."""

from __future__ import annotations

import pytest


@pytest.fixture
def bounded_strings(benchmark_script):
    """The benchmark's module."""
    return benchmark_script("bounded_strings")


def test_every_value_is_an_instance_of_its_spec(bounded_strings, read_document) -> None:
    assert set(bounded_strings.VALUES) == set(bounded_strings.SPECS)
    for label, values in bounded_strings.VALUES.items():
        assert len(values) >= 2
        for value in values:
            index, state = read_document(bounded_strings.SPECS[label], value)
            assert state >= 0 and index.is_final(state), (label, value)


def test_values_beyond_the_bounds_are_refused(bounded_strings, read_document) -> None:
    cases = [
        ("string, maxLength 20", "x" * 21),
        ("string, 2 to 50 characters", "x"),
        ("string, 2 to 50 characters", "x" * 51),
        ("array of strings, maxLength 40", ["x" * 41]),
    ]
    for label, value in cases:
        index, state = read_document(bounded_strings.SPECS[label], value)
        assert not (state >= 0 and index.is_final(state)), (label, value)
