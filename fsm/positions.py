"""Plain regular terms as a lazy position automaton: a regex's states without derivatives.

A term made only of byte sets, concatenations, unions and repetitions (what
``fsm.Regex`` and ``fsm.Choice`` compile to) is turned into its positions (Glushkov's
construction): one per byte set it holds, counted repetitions written out copy by copy,
each position with the byte set it reads and the positions that may follow it. A state
of the automaton is a set of positions: those the text read so far may have ended on
(a start position, holding no byte, stands for "nothing read"). Its successor on a byte
is every position that follows one of them and reads that byte; it accepts when one of
them may end the term.

Sets of positions are Python integers used as bit sets, so a state's expansion is a few
integer ``|`` and ``&`` per position it may go on to, where a derivative builds new terms
for every byte class and compares them with the states known (``docs/design.md``,
"Regexes as position sets"). The two automata accept the same language (the tests walk
both); their states are numbered alike only up to renaming.

Positions with the same followers that both end the term or both do not are one in a
state (the first stands for the others), so paths that meet again lead to one state.

Every state it hands out is live: a term of this kind holds no empty language (the
smart constructors absorb ``EMPTY``, and a term with an empty byte set is left to
derivatives), so every position lies on the way to an end.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from fsm.automaton import DEAD
from fsm.errors import ConstraintTooLarge
from fsm.limits import DEFAULT_MAX_STATES
from fsm.terms import EPS, Alt, Bytes, Cat, Repeat, Term

_ALL_DEAD = np.full(256, DEAD, np.int32)
"""A state's successors before any byte is read (copied: ``np.full``'s Python wrapper
costs 1.3 µs, a copy 0.2)."""
_ALL_DEAD.setflags(write=False)

MAX_POSITIONS = 2048
"""Positions past which a term is left to derivatives (``position_automaton`` says
None): a counted repetition of a large group is written out once per count, and a
state's sets grow with the positions."""


class _TooLarge(Exception):
    """The term has more than ``MAX_POSITIONS`` positions."""


class _Positions:
    """The positions of a term as they are numbered: each one's byte set and
    followers (position 0 is the start, reading no byte)."""

    __slots__ = ("masks", "follow")

    def __init__(self) -> None:
        self.masks: list[int] = [0]
        self.follow: list[int] = [0]

    def add(self, mask: int) -> int:
        if len(self.masks) > MAX_POSITIONS:
            raise _TooLarge
        self.masks.append(mask)
        self.follow.append(0)
        return len(self.masks) - 1

    def link(self, lasts: int, firsts: int) -> None:
        """Every position in ``lasts`` may be followed by every one in ``firsts``."""
        follow = self.follow
        while lasts:
            low = lasts & -lasts
            follow[low.bit_length() - 1] |= firsts
            lasts ^= low


def _build(term: Term, positions: _Positions) -> tuple[int, int, bool] | None:
    """``(first, last, nullable)`` of ``term`` as position sets, its positions added
    to ``positions``; None when the term is not plain (a lexeme, thunk, check,
    intersection or complement)."""
    if term is EPS:
        return 0, 0, True
    if isinstance(term, Bytes):
        if not term.mask:  # no byte at all: a dead end, which derivatives prune
            return None
        position = positions.add(term.mask)
        return 1 << position, 1 << position, False
    if isinstance(term, Cat):
        return _sequence(list(term.items), positions)
    if isinstance(term, Alt):
        first = last = 0
        nullable = False
        for item in term.items:
            built = _build(item, positions)
            if built is None:
                return None
            first, last, nullable = first | built[0], last | built[1], nullable or built[2]
        return first, last, nullable
    if isinstance(term, Repeat):
        return _repeat(term, positions)
    return None


def _sequence(items: list[Term], positions: _Positions) -> tuple[int, int, bool] | None:
    first, last, nullable = 0, 0, True
    for item in items:
        built = _build(item, positions)
        if built is None:
            return None
        # unpacked by name: a starred call is a generic Python call in compiled code
        item_first, item_last, item_nullable = built
        first, last, nullable = _followed(
            first, last, nullable, item_first, item_last, item_nullable, positions
        )
    return first, last, nullable


def _followed(
    first: int,
    last: int,
    nullable: bool,
    item_first: int,
    item_last: int,
    item_nullable: bool,
    positions: _Positions,
) -> tuple[int, int, bool]:
    """``(first, last, nullable)`` of a sequence once an item (its own three) follows."""
    positions.link(last, item_first)
    first = first | item_first if nullable else first
    last = item_last | last if item_nullable else item_last
    return first, last, nullable and item_nullable


def _repeat(term: Repeat, positions: _Positions) -> tuple[int, int, bool] | None:
    """``item{lo,hi}`` written out: ``lo`` copies, then ``hi - lo`` optional ones, or
    one copy that loops when ``hi`` is None (``x{2,} = x x x*``)."""
    first, last, nullable = 0, 0, True
    copies = term.lo if term.hi is None else term.hi
    for count in range(copies + (term.hi is None)):
        built = _build(term.item, positions)
        if built is None:
            return None
        item_first, item_last, item_nullable = built
        if count >= term.lo:  # optional, or the looping copy
            item_nullable = True
            if term.hi is None:
                positions.link(item_last, item_first)
        first, last, nullable = _followed(
            first, last, nullable, item_first, item_last, item_nullable, positions
        )
    return first, last, nullable


def position_automaton(
    term: Term, *, max_states: int = DEFAULT_MAX_STATES
) -> PositionAutomaton | None:
    """The position automaton of a plain regular term, or None when the term is not
    plain or has more than ``MAX_POSITIONS`` positions (derivatives then)."""
    positions = _Positions()
    try:
        built = _build(term, positions)
    except _TooLarge:
        return None
    if built is None:
        return None
    first, last, nullable = built
    positions.follow[0] = first
    return PositionAutomaton(positions.masks, positions.follow, last | nullable, max_states)


class PositionAutomaton:
    """A ``ByteAutomaton`` whose states are sets of positions (module docstring).

    Args:
        masks: each position's byte set (256-bit integers; position 0 reads none).
        follow: each position's followers, as a bit set of positions.
        last: the positions that may end the term (bit 0: the empty text is accepted).
        max_states: cap on states (``ConstraintTooLarge`` past it).
    """

    def __init__(self, masks: list[int], follow: list[int], last: int, max_states: int) -> None:
        self._masks = masks
        self._follow = follow
        self._last = last
        # a state holds, for each position reached, the first one with its future
        # (the same followers and ending or not): ``(a|b)c*`` after ``a`` and after
        # ``b`` is one state, as its derivatives are one term
        first_with: dict[tuple[int, bool], int] = {}
        self._stands_for = [
            1 << first_with.setdefault((after, bool(last >> position & 1)), position)
            for position, after in enumerate(follow)
        ]
        self._max_states = max_states
        self._sets: list[int] = [1]  # state 0: the start position alone
        self._ids: dict[int, int] = {1: 0}

    @property
    def initial(self) -> int:
        return 0

    @property
    def num_states(self) -> int:
        return len(self._sets)

    def expand(self, state: int) -> tuple[np.ndarray, bool]:
        """Successors by byte and finality: the positions that follow the state's and
        read each byte, grouped by the byte classes their sets tell apart."""
        held = self._sets[state]
        follow, masks, stands_for = self._follow, self._masks, self._stands_for
        reach = 0
        rest = held
        while rest:
            low = rest & -rest
            reach |= follow[low.bit_length() - 1]
            rest ^= low
        classes: list[tuple[int, int]] = []  # (byte set, positions reading it)
        while reach:
            low = reach & -reach
            reach ^= low
            position = low.bit_length() - 1
            classes = _refined(classes, masks[position], stands_for[position])
        successors = _ALL_DEAD.copy()
        for byte_set, targets in classes:
            successors[_members(byte_set)] = self._number(targets)
        return successors, bool(held & self._last)

    def _number(self, positions: int) -> int:
        state = self._ids.get(positions)
        if state is None:
            if len(self._sets) >= self._max_states:
                raise ConstraintTooLarge(
                    f"the constraint needs more than {self._max_states} automaton states"
                )
            state = self._ids[positions] = len(self._sets)
            self._sets.append(positions)
        return state


def _refined(classes: list[tuple[int, int]], mask: int, position: int) -> list[tuple[int, int]]:
    """``classes`` (disjoint byte sets, each with the positions reading it) once the
    position ``position`` (a one-bit set) reading ``mask`` is added. Two classes may
    end with the same positions (one stands for another): both then lead to one
    state."""
    refined: list[tuple[int, int]] = []
    unseen = mask
    for byte_set, targets in classes:
        inside = byte_set & mask
        if not inside:
            refined.append((byte_set, targets))
            continue
        unseen &= ~byte_set
        refined.append((inside, targets | position))
        outside = byte_set & ~mask
        if outside:
            refined.append((outside, targets))
    if unseen:
        refined.append((unseen, position))
    return refined


@lru_cache(maxsize=4096)
def _members(byte_set: int) -> np.ndarray:
    """The bytes of a 256-bit set, ascending (read-only, shared by its callers)."""
    bits = np.unpackbits(
        np.frombuffer(byte_set.to_bytes(32, "little"), np.uint8), bitorder="little"
    )
    members = np.flatnonzero(bits).astype(np.intp)
    members.flags.writeable = False
    return members
