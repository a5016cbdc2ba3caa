"""Kernels over one state's 256 successors, as ``ByteTable.expand`` copies them in.

Checking a row and marking its live successors discovered took numpy five calls
(``min``, ``max``, a comparison, a selection, an indexed store) of about two
microseconds each, more than the work on 256 numbers; each kernel here is one pass.
``store_successors`` does a whole expansion's checking, marking and copying in one
call, where the arrays have room (a kernel call costs about half a microsecond, more
than its loop here).
"""

from __future__ import annotations

from numba import njit

from fsm.automaton import DEAD
from fsm.kernel_types import INT, READS_INT32, WRITES_BOOL, WRITES_INT32_TABLE


@njit((READS_INT32,), cache=True, nogil=True)
def successor_bounds(successors):
    """``(lowest, highest)`` of a state's successors (``DEAD`` included)."""
    lowest = highest = successors[0]
    for successor in successors:
        if successor < lowest:
            lowest = successor
        elif successor > highest:
            highest = successor
    return int(lowest), int(highest)


@njit((READS_INT32, WRITES_BOOL, INT), cache=True, nogil=True)
def mark_discovered(successors, discovered, dead):
    """Sets ``discovered[s]`` for every successor ``s`` other than ``dead``."""
    for successor in successors:
        if successor != dead:
            discovered[successor] = True


@njit((READS_INT32, WRITES_BOOL, INT, WRITES_INT32_TABLE, INT), cache=True, nogil=True)
def store_successors(successors, discovered, limit, table, row):
    """``(lowest, highest, stored)`` of a state's successors; ``stored`` when each is
    ``DEAD`` or a state below ``limit`` (the room ``discovered`` has, within the
    automaton's bound): then every live one is marked discovered and the successors are
    copied into ``table[row]``. Otherwise nothing is written, and the caller grows the
    arrays, refuses the bound or the row (``ByteTable.expand``)."""
    lowest, highest = successor_bounds(successors)
    if lowest < DEAD or highest >= limit:
        return lowest, highest, False
    for byte in range(successors.shape[0]):
        successor = successors[byte]
        table[row, byte] = successor
        if successor != DEAD:
            discovered[successor] = True
    return lowest, highest, True
