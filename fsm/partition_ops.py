"""Byte partitions of terms' parts: a byte set's, a set of strings' first bytes, a
checker's alphabet, and the refinement of several (shared by ``fsm.terms`` and ``fsm.term_store``). Compiled
with them (``fsm.native``): a term's partition calls these once per new term; the
kernels they call are ``fsm.partition``'s."""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache

import numpy as np

from fsm.partition import refine


@lru_cache(maxsize=1024)
def mask_partition(mask: int) -> np.ndarray:
    """The two classes of a 256-bit byte set (``uint16[256]``, read-only: shared).
    Memoised for the process: every fresh compile builds its byte sets anew, but their
    sets (digits, hex digits, a quote) recur, and three numpy calls cost more than the
    rest of a small class's partition."""
    bits = np.frombuffer(mask.to_bytes(32, "little"), dtype=np.uint8)
    labels = np.unpackbits(bits, bitorder="little").astype(np.uint16)
    labels.flags.writeable = False
    return labels


TRIVIAL: np.ndarray = np.zeros(256, dtype=np.uint16)
"""The partition with one class (read-only): what a term that reads no byte has."""
TRIVIAL.flags.writeable = False


def refine_all(partitions: Iterable[np.ndarray]) -> np.ndarray:
    """The coarsest partition finer than all of ``partitions``: each distinct one
    refined in once, by identity (the partitions of byte sets and of shared sub-terms
    are shared objects), ``TRIVIAL`` ones left out; a lone one is returned as it is,
    a refinement read-only."""
    distinct = list({id(part): part for part in partitions if part is not TRIVIAL}.values())
    if not distinct:
        return TRIVIAL
    if len(distinct) == 1:
        return distinct[0]
    found = distinct[0]
    for part in distinct[1:]:
        found = refine(found, part)
    found.flags.writeable = False
    return found


def first_byte_partition(strings: Iterable[bytes]) -> np.ndarray:
    """Each first byte of ``strings`` in a class of its own, the other bytes in one
    (read-only): where a byte leaves, or goes on along, the strings it starts."""
    labels: np.ndarray = np.zeros(256, dtype=np.uint16)
    for label, first in enumerate(sorted({text[0] for text in strings if text})):
        labels[first] = label + 1
    labels.flags.writeable = False
    return labels


@lru_cache(maxsize=256)
def alphabet_partition(alphabet: bytes, alike: tuple[bytes, ...] = ()) -> np.ndarray:
    """Each byte of ``alphabet`` in a class of its own but the bytes of a group of
    ``alike`` (a checker's bytes that every text reads alike: ``e`` and ``E`` in a
    number) in one, the other bytes in one (read-only, memoised: a checked leaf's
    derivative is a new term for every number read, and its checker's alphabet is the
    same): each class a checker may read leads to a prefix of its own."""
    labels: np.ndarray = np.zeros(256, dtype=np.uint16)
    for label, byte in enumerate(alphabet):
        labels[byte] = label + 1
    for group in alike:
        labels[list(group)] = labels[group[0]]
    labels.flags.writeable = False
    return labels


def class_representatives(firsts: bytes) -> bytes:
    """One byte per class (its lowest), ascending, from each byte's class's lowest
    byte (``representatives``): the bytes whose derivatives stand for all 256 (a
    compiled loop over 256 bytes costs less than a set of them, then a sort)."""
    return bytes([byte for byte in range(256) if firsts[byte] == byte])
