"""The partitions of terms' parts: a byte set's, strings' first bytes', and several
refined together, against the definition (two bytes share a class exactly when every
input puts them together)."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from fsm.partition_ops import TRIVIAL, first_byte_partition, mask_partition, refine_all

partitions = (
    st.integers(1, 6)
    .flatmap(lambda classes: st.lists(st.integers(0, classes - 1), min_size=256, max_size=256))
    .map(lambda labels: np.asarray(labels, np.uint16))
)


def same_classes(labels: np.ndarray, a: int, b: int) -> bool:
    return bool(labels[a] == labels[b])


@given(st.lists(partitions, max_size=4), st.data())
def test_refine_all_is_the_common_refinement(parts: list[np.ndarray], data: st.DataObject) -> None:
    found = refine_all([*parts, TRIVIAL])
    for _ in range(20):
        a, b = data.draw(st.integers(0, 255)), data.draw(st.integers(0, 255))
        assert same_classes(found, a, b) == all(same_classes(p, a, b) for p in parts)


def test_refine_all_keeps_a_lone_partition_and_the_trivial_one() -> None:
    digits = mask_partition(sum(1 << b for b in b"0123456789"))
    assert refine_all([digits, digits, TRIVIAL]) is digits
    assert refine_all([]) is TRIVIAL


@given(st.integers(0, (1 << 256) - 1), st.integers(0, 255), st.integers(0, 255))
def test_a_byte_set_has_two_classes(mask: int, a: int, b: int) -> None:
    labels = mask_partition(mask)
    assert not labels.flags.writeable
    assert same_classes(labels, a, b) == ((mask >> a & 1) == (mask >> b & 1))


@given(st.lists(st.binary(max_size=3), max_size=5), st.integers(0, 255), st.integers(0, 255))
def test_first_bytes_each_have_a_class(strings: list[bytes], a: int, b: int) -> None:
    labels = first_byte_partition(strings)
    firsts = {text[0] for text in strings if text}
    expected = a == b or (a not in firsts and b not in firsts)
    assert same_classes(labels, a, b) == expected
