"""Refining byte partitions in compiled code: the hot loop of a term's byte partition.

A partition is a label per byte (``uint16[256]``; bytes with equal labels are in one
class). The coarsest common refinement of several partitions labels each byte by the
tuple of its labels; ``refine`` numbers those tuples in order of first appearance, so
equal inputs give equal outputs and the result does not depend on the label values.
"""

from __future__ import annotations

import numpy as np
from numba import njit

KEYS = 257 * 257
"""Distinct (class, label) pairs: a partition has at most 256 classes, labels < 257."""


@njit(cache=True, nogil=True)
def refine(parts):
    """``uint16[256]``: the coarsest partition finer than every row of ``parts``
    (``uint16[k, 256]``, ``k >= 1``), classes numbered by first appearance."""
    current = np.zeros(256, np.int32)  # the trivial partition, refined row by row
    # A sparse set: ``slot[key]`` is trusted only where ``keys[slot[key]] == key``, so
    # the large table is never cleared (its pages are touched only where used).
    slot = np.empty(KEYS, np.int32)
    keys = np.empty(256, np.int32)
    for p in range(parts.shape[0]):
        count = 0
        for b in range(256):
            key = current[b] * 257 + np.int32(parts[p, b])
            label = slot[key]
            if label < 0 or label >= count or keys[label] != key:
                label = count
                slot[key] = label
                keys[label] = key
                count += 1
            current[b] = label
    return current.astype(np.uint16)


def refine_py(parts: np.ndarray) -> np.ndarray:
    """Plain-Python twin of ``refine``."""
    numbering: dict[tuple[int, ...], int] = {}
    labels = []
    for b in range(256):
        key = tuple(int(row[b]) for row in parts)
        labels.append(numbering.setdefault(key, len(numbering)))
    return np.asarray(labels, np.uint16)


@njit(cache=True, nogil=True)
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
