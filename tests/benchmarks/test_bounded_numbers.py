"""``benchmarks/bounded_numbers.py``: its values are instances of their specs, its bounds
refuse what lies beyond them."""

from __future__ import annotations

import json

import pytest

import fsm

BYTES = fsm.Vocabulary.from_raw([bytes([byte]) for byte in range(256)] + [None], eos_ids=256)


@pytest.fixture
def bounded_numbers(benchmark_script):
    """The benchmark's module."""
    return benchmark_script("bounded_numbers")


def _final(bounded_numbers, label: str, value: object) -> bool:
    """Whether the document of ``value`` is read to a final state, byte by byte."""
    schema = {"type": "object", "properties": {"a": bounded_numbers.SPECS[label]}}
    index = fsm.compile_index(fsm.JsonSchema(schema), BYTES)
    state = index.step_bytes(index.initial_state, json.dumps({"a": value}).encode())
    return state >= 0 and index.is_final(state)


def test_every_value_is_an_instance_of_its_spec(bounded_numbers) -> None:
    assert set(bounded_numbers.VALUES) == set(bounded_numbers.SPECS)
    for label, values in bounded_numbers.VALUES.items():
        assert len(values) >= 2
        for value in values:
            assert _final(bounded_numbers, label, value), (label, value)


def test_values_beyond_the_bounds_are_refused(bounded_numbers) -> None:
    cases = [
        ("integer, 1,000 to 10**9", 999),
        ("integer, 1,000 to 10**9", 10**9 + 1),
        ("integer, 1 to 65,535", 65536),
        ("integer, 1 to 65,535", 0),
        ("number, 0.5 to 99.5", 99.75),
        ("integer, minimum 0 (control)", -1),
    ]
    for label, value in cases:
        assert not _final(bounded_numbers, label, value), (label, value)
