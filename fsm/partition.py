"""Refining byte partitions in compiled code: the hot loop of a term's byte partition.

A partition is a label per byte (``uint16[256]``; bytes with equal labels are in one
class). The coarsest common refinement of two partitions labels each byte by the pair
of its labels; ``refine`` numbers those pairs in order of first appearance, so equal
inputs give equal outputs and the result does not depend on the label values (which is
why folding it over several partitions refines them all).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from fsm.kernel_types import READS_UINT16

SLOTS = 512
"""Open-addressing slots for the (label, label) pairs of one refinement: at most 256
pairs occur (one per byte), so the table is at most half full."""


@njit((READS_UINT16, READS_UINT16), cache=True, nogil=True)
def refine(first, second):
    """``uint16[256]``: the coarsest partition finer than both ``first`` and ``second``
    (``uint16[256]`` each, labels below 257), classes numbered by first appearance.
    Folding it over several partitions refines them all (the numbering by first
    appearance does not depend on the labels' values)."""
    keys = np.full(SLOTS, -1, np.int32)
    labels = np.empty(SLOTS, np.int32)
    out = np.empty(256, np.uint16)
    count = 0
    for b in range(256):
        key = np.int32(first[b]) * 257 + np.int32(second[b])
        slot = (key * 40503) & (SLOTS - 1)
        while keys[slot] >= 0 and keys[slot] != key:
            slot = (slot + 1) & (SLOTS - 1)
        if keys[slot] < 0:
            keys[slot] = key
            labels[slot] = count
            count += 1
        out[b] = labels[slot]
    return out


def refine_py(parts: np.ndarray) -> np.ndarray:
    """Plain-Python twin of ``refine`` folded over the rows of ``parts``
    (``uint16[k, 256]``): each byte labelled by the tuple of its labels."""
    numbering: dict[tuple[int, ...], int] = {}
    labels = []
    for b in range(256):
        key = tuple(int(row[b]) for row in parts)
        labels.append(numbering.setdefault(key, len(numbering)))
    return np.asarray(labels, np.uint16)


@njit((READS_UINT16,), cache=True, nogil=True)
def first_members(labels):
    """``uint8[256]``: for each byte, the lowest byte with the same label (its class's
    representative; a byte ``b`` represents its class exactly when ``out[b] == b``)."""
    first = np.full(int(labels.max()) + 1, -1, np.int32)
    out = np.empty(256, np.uint8)
    for b in range(256):
        label = labels[b]
        if first[label] < 0:
            first[label] = b
        out[b] = first[label]
    return out


def first_members_py(labels: np.ndarray) -> np.ndarray:
    """Plain-Python twin of ``first_members``."""
    first: dict[int, int] = {}
    return np.asarray([first.setdefault(int(label), b) for b, label in enumerate(labels)], np.uint8)
