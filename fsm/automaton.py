"""The one interface between constraint compilers and the token index.

A constraint compiles to a deterministic automaton over bytes whose states are small
non-negative integers discovered on demand: ``expand(state)`` returns the 256 successor
states (``DEAD`` where the byte is not allowed) and whether the text read so far is a
complete match. Eager automata (a materialised table) and lazy ones (derivatives of a
term, parser configurations) look the same to the token index.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

DEAD = -1
"""Successor of a byte that no match can continue with."""


@runtime_checkable
class ByteAutomaton(Protocol):
    """A deterministic byte automaton with states numbered from 0 as they are found."""

    @property
    def initial(self) -> int:
        """The state before any byte is read."""
        ...

    def expand(self, state: int) -> tuple[np.ndarray, bool]:
        """``(successors, final)``: int32[256] next states (``DEAD`` = rejected), and
        whether ``state`` accepts. Every non-dead successor must be live: some byte
        string leads from it to a final state."""
        ...


@dataclass(frozen=True, eq=False)
class TableAutomaton:
    """A fully materialised automaton: ``table[state, byte]`` and ``finals[state]``."""

    table: np.ndarray  # int32 [num_states, 256]
    finals: np.ndarray  # bool [num_states]
    initial: int = 0

    def expand(self, state: int) -> tuple[np.ndarray, bool]:
        return self.table[state], bool(self.finals[state])

    @property
    def num_states(self) -> int:
        return int(self.table.shape[0])
