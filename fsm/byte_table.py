"""``ByteTable``: the part of a lazy byte automaton that has been looked at, as arrays.

The token index and its trie walks read transitions from an ``int32[rows, 256]``
table with a row per expanded state: a state's row is copied in from
``automaton.expand`` the first time something needs it, and ``row_of[state]`` says
where (-1: not expanded). Most states an index numbers are never expanded (a row walk
takes lexeme and union states apart instead; 17% of the discovered states of sample
MaskBench schemas were expanded), so rows are not kept for them. The flags say which
states accept (``final``, valid where expanded) and which state numbers have been seen
at all (``discovered``: the initial state and every successor of an expanded state,
plus the states a lexeme walk joins). Arrays grow by doubling, so a kernel handed the
arrays reads a consistent snapshot; callers serialise growth (the index's lock).
"""

from __future__ import annotations

import numpy as np

from fsm.automaton import DEAD, ByteAutomaton
from fsm.errors import ConstraintTooLarge, FsmError
from fsm.successors import mark_discovered, store_successors, successor_bounds

STATES_RESERVED = 256
"""States the per-state arrays hold from the start (they double from there)."""


class ByteTable:
    """Transitions of ``automaton`` copied in on demand (see the module docstring)."""

    def __init__(self, automaton: ByteAutomaton, max_states: int) -> None:
        self.automaton = automaton
        self.max_states = max_states
        self.table = filled(16 * 256, DEAD).reshape(16, 256)  # a row per expanded state
        self.num_rows = 0
        # per state: its row (-1 if not expanded), finality, whether it was met; a
        # MaskBench sample walk numbers 366 states at the median, grown to from 16 by
        # five doublings (``reserve``), from ``STATES_RESERVED`` by one
        self.row_of = filled(STATES_RESERVED, -1)
        self.final = np.zeros(STATES_RESERVED, np.bool_)
        self.discovered = np.zeros(STATES_RESERVED, np.bool_)
        self.budget: int | None = None  # expansions left to the current row, if bounded

    def is_known(self, state: int) -> bool:
        """Whether ``state`` has been discovered."""
        return 0 <= state < len(self.discovered) and bool(self.discovered[state])

    def is_expanded(self, state: int) -> bool:
        return state < len(self.row_of) and bool(self.row_of[state] >= 0)

    def row(self, state: int) -> np.ndarray:
        """``state``'s 256 successors, expanding it on first use."""
        if not self.is_expanded(state):
            self.expand(state)
        return self.table[self.row_of[state]]

    def successor(self, state: int, byte: int) -> int:
        """The state after ``byte`` from ``state`` (``DEAD`` when it dies)."""
        return int(self.row(state)[byte])

    def is_final(self, state: int) -> bool:
        if not self.is_expanded(state):
            self.expand(state)
        return bool(self.final[state])

    def expand(self, state: int) -> np.ndarray:
        """Copies ``state``'s successors into the table and returns them (``DEAD``
        where a byte is refused). Raises ``ConstraintTooLarge`` when a bounded row has
        spent its ``budget``."""
        if self.budget is not None:
            if self.budget <= 0:
                raise ConstraintTooLarge(
                    "one mask of this constraint needs more automaton states than "
                    "max_row_states allows; simplify the constraint or raise max_row_states"
                )
            self.budget -= 1
        successors, final = self.automaton.expand(state)
        successors = np.ascontiguousarray(successors)  # the kernels take C arrays
        if successors.shape != (256,) or successors.dtype.kind not in "iu":
            raise FsmError(f"expand({state}) must return 256 integer successors")
        stored = False
        room = min(len(self.discovered), self.max_states)
        if successors.dtype == np.int32 and self.num_rows < len(self.table) and state < room:
            lowest, highest, stored = store_successors(  # the usual case: one call
                successors, self.discovered, room, self.table, self.num_rows
            )
        elif successors.dtype == np.int32:
            lowest, highest = successor_bounds(successors)
        else:  # a foreign automaton's own dtype, checked before it is narrowed
            lowest, highest = int(successors.min()), int(successors.max())
        if lowest < DEAD:
            raise FsmError(f"expand({state}) returned a negative state other than DEAD")
        if not stored:
            self._mark(successors, max(highest, state))
            if self.num_rows == len(self.table):
                table = np.empty((2 * self.num_rows, 256), np.int32)
                table[: self.num_rows] = self.table
                self.table = table
            self.table[self.num_rows] = successors
        self.row_of[state] = self.num_rows
        self.num_rows += 1
        self.final[state] = bool(final)
        return successors

    def discover(self, states: np.ndarray) -> None:
        """Mark ``states`` as met (they may be handed out and queried from now on)."""
        if len(states):
            self._mark(states, int(states.max()))

    def discover_state(self, state: int) -> None:
        """``discover`` for one state (a taken token's target, a join, a union),
        without the array and the numpy calls: a step makes one or two."""
        if state != DEAD:
            self._make_room(state)
            self.discovered[state] = True

    def _mark(self, states: np.ndarray, top: int) -> None:
        """Marks ``states`` (``DEAD`` skipped) discovered; ``top`` is at least each
        (checked against the bound before the states are narrowed to the table's int32)."""
        self._make_room(top)
        mark_discovered(states.astype(np.int32, copy=False), self.discovered, DEAD)

    def _make_room(self, top: int) -> None:
        """Refuses ``top`` past ``max_states``, else grows the arrays to hold it."""
        self._check_bound(top)
        self.reserve(top + 1)

    @property
    def num_states(self) -> int:
        """States discovered so far (counted when asked: rarely, unlike ``discover``)."""
        return int(np.count_nonzero(self.discovered))

    def reserve(self, count: int) -> None:
        """Make the per-state arrays hold at least ``count`` states (doubling)."""
        have = len(self.row_of)
        if count <= have:
            return
        size = max(count, 2 * have)
        row_of = filled(size, -1)
        row_of[:have] = self.row_of
        self.row_of = row_of
        for name in ("final", "discovered"):
            grown = np.zeros(size, np.bool_)
            grown[:have] = getattr(self, name)
            setattr(self, name, grown)

    def _check_bound(self, top: int) -> None:
        if top >= self.max_states:
            raise ConstraintTooLarge(
                f"the automaton has more than max_states={self.max_states} states; "
                "simplify the constraint or raise max_states"
            )


def filled(count: int, value: int) -> np.ndarray:
    """``int32[count]`` of ``value``: ``np.full``'s Python wrapper costs about 3 µs,
    more than the fill on a few elements and as much as the rest of a new index's
    set-up (row walks make one or two such arrays per row)."""
    out = np.empty(count, np.int32)
    out.fill(value)
    return out
