"""Kernels over one state's 256 successors, as ``ByteTable.expand`` copies them in.

Checking a row and marking its live successors discovered took numpy five calls
(``min``, ``max``, a comparison, a selection, an indexed store) of about two
microseconds each, more than the work on 256 numbers; each kernel here is one pass.
"""

from __future__ import annotations

from numba import njit

from fsm.kernel_types import INT, READS_INT32, WRITES_BOOL


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
