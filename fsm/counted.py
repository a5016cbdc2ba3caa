"""Counted repetitions inside a lexeme: a JSON string with ``minLength``/``maxLength``.

After its opening quote such a string is the lexeme ``unit{lo,hi} close`` (``unit``: one
encoded character, ``close``: the quote). Each character read moves it to a new state
(``unit{lo-1,hi-1} close``), so a plain walk meets a new lexeme, and walks the whole
vocabulary again, at every token. Its walk is the walk of the plain repetition
``unit* close`` with each token's count of characters: a token is read when its count
fits the bounds, and leads to the counted state of its count.

**Why that is exact.** Let ``P = unit* close``, and ``C(lo, hi) = unit{lo,hi} close``.
``unit_automaton`` checks, over every state that ``P`` reaches, that each is ``P``
itself, the end of the lexeme, or ``u unit* close`` with ``u`` a part of a unit that is
not nullable, and that no byte may both begin a unit and close. Then, by induction on
the bytes read, the state of ``C(lo, hi)`` after a text is found from the state of
``P`` after it and the number ``n`` of times ``P`` was entered on the way (the units
completed):

* ``P`` -> ``C(lo - n, hi - n)`` (dead when ``n > hi``);
* ``u unit* close`` -> ``u unit{lo-n-1, hi-n-1} close`` (dead when ``n + 1 > hi``);
* the end -> the end when ``lo <= n <= hi``, dead otherwise.

The derivative of each right-hand side by a byte is, term for term, the right-hand
side of the state ``P`` goes to, with the bounds lowered where ``P`` is entered: the
one branch that may differ, closing while a unit could go on, is excluded by the
checks. The states are built with the constructors that derivatives use, so they are
equal terms (and the same automaton states) as a byte walk finds.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import numpy as np

from fsm.terms import (
    EMPTY,
    EPS,
    Bytes,
    Cat,
    Lexeme,
    Repeat,
    Term,
    cat,
    class_bytes,
    derivative,
    first_bytes,
    lexeme,
    nullable,
    repeat,
    representatives,
)

DEAD = -1
MAX_UNIT_STATES = 64
"""States of a unit automaton searched before a repetition counts as not countable."""


@dataclass(frozen=True)
class Counted:
    """The lexeme ``unit{lo,hi} close``; ``plain`` is ``unit* close``."""

    unit: Term
    close: Term
    lo: int
    hi: int | None

    @property
    def plain(self) -> Term:
        return lexeme(cat(repeat(self.unit, 0, None), self.close))

    def after(self, partial: Term, units: int) -> Term:
        """The state after ``units`` units begun, the last one still ``partial`` (``EPS``
        when complete): ``partial unit{lo-units, hi-units} close``."""
        hi = None if self.hi is None else self.hi - units
        return lexeme(cat(partial, repeat(self.unit, max(self.lo - units, 0), hi), self.close))


def counted_form(term: Term) -> Counted | None:
    """``term`` as ``unit{lo,hi} close`` with bounds that count (not ``{0,}``), else None."""
    counted = _repetition(term)
    if counted is None or (counted.lo == 0 and counted.hi is None):
        return None
    return counted


def plain_form(term: Term) -> Counted | None:
    """``term`` as ``unit* close`` (a ``Counted`` without bounds), else None."""
    counted = _repetition(term)
    if counted is None or counted.lo != 0 or counted.hi is not None:
        return None
    return counted


def _repetition(term: Term) -> Counted | None:
    if not isinstance(term, Lexeme) or not isinstance(term.item, Cat):
        return None
    items = term.item.items
    if len(items) != 2 or not isinstance(items[0], Repeat) or not isinstance(items[1], Bytes):
        return None
    return Counted(items[0].item, items[1], items[0].lo, items[0].hi)


@dataclass(frozen=True)
class UnitAutomaton:
    """The states ``P`` reaches: ``table[state, byte]`` is the next state, ``DEAD``, or
    ``len(partials)`` for the lexeme's end; ``partials[state]`` is the part of a unit
    still to read in that state (``EPS`` for ``P``, state 0)."""

    table: np.ndarray
    partials: tuple[Term, ...]

    @property
    def exit(self) -> int:
        return len(self.partials)


def unit_automaton(counted: Counted) -> UnitAutomaton | None:
    """The automaton of ``counted.plain`` when counting its units is exact (see the
    module docstring); None otherwise, or past ``MAX_UNIT_STATES`` states."""
    unit, close = counted.unit, counted.close
    assert isinstance(close, Bytes)
    if nullable(unit) or first_bytes(unit) & close.mask:
        return None
    plain = counted.plain
    tail = (repeat(unit, 0, None), close)  # the items of ``plain``'s concatenation
    numbers: dict[Term, int] = {plain: 0}
    partials: list[Term] = [EPS]
    rows: list[np.ndarray] = []
    todo = deque([plain])
    while todo:
        state = todo.popleft()
        firsts = np.frombuffer(representatives(state), np.uint8)
        by_class = np.full(256, DEAD, np.int32)
        for byte in class_bytes(state):
            target = derivative(state, byte)
            if target is EPS:
                by_class[byte] = -2  # the exit, numbered below
                continue
            if target is EMPTY:
                continue
            partial = _partial(target, tail)
            if partial is None:
                return None
            number = numbers.get(target)
            if number is None:
                if len(partials) >= MAX_UNIT_STATES:
                    return None
                number = numbers[target] = len(partials)
                partials.append(partial)
                todo.append(target)
            by_class[byte] = number
        rows.append(by_class[firsts])
    table = np.stack(rows)
    table[table == -2] = len(partials)
    return UnitAutomaton(table, tuple(partials))


def _partial(state: Term, tail: tuple[Term, ...]) -> Term | None:
    """``u`` when ``state`` is ``u unit* close`` with ``u`` not nullable, ``EPS`` when it
    is ``unit* close``; None otherwise."""
    if not isinstance(state, Lexeme) or not isinstance(state.item, Cat):
        return None
    items = state.item.items
    if items == tail:
        return EPS
    if len(items) < 3 or items[-2:] != tail:
        return None
    partial = cat(*items[:-2])
    return None if nullable(partial) else partial
