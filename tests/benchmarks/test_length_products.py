"""``benchmarks/length_products.py``: the values it walks are instances of their specs."""

from __future__ import annotations

import pytest


@pytest.fixture
def length_products(benchmark_script):
    """The benchmark's module."""
    return benchmark_script("length_products")


def test_each_spec_has_values(length_products) -> None:
    assert set(length_products.VALUES) == set(length_products.SPECS)
    assert all(len(values) >= 2 for values in length_products.VALUES.values())


def test_every_value_is_an_instance_of_its_spec(length_products, read_document) -> None:
    """Walked byte by byte, each value's document is read to a final state: a value
    refused early would time a shorter walk than the table says."""
    for label, values in length_products.VALUES.items():
        for value in values:
            index, state = read_document(length_products.SPECS[label], value)
            assert state >= 0, (label, value)
            assert index.is_final(state), (label, value)


def test_a_value_out_of_its_bound_is_refused(length_products, read_document) -> None:
    """The bounded specs bound: a name of 65 characters is no instance of the pattern
    with ``maxLength: 64``; a label of 64 characters, and 255 characters in labels of
    63, are no hostname (RFC 1123's 253)."""
    cases = [
        ("pattern, maxLength 64", "a" * 65),
        ("format hostname", "a" * 64 + ".com"),
        ("format hostname", ".".join(["a" * 63] * 4)),
    ]
    for label, value in cases:
        index, state = read_document(length_products.SPECS[label], value)
        assert state < 0 or not index.is_final(state), label
