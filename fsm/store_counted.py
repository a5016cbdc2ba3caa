"""Counted repetitions inside a lexeme, on a store's rows: ``fsm.counted`` on ids.

A JSON string with ``minLength``/``maxLength`` is, after its opening quote, the lexeme
``unit{lo,hi} close``. Its token walk is the walk of the plain ``unit* close`` with a
count of units per token; ``fsm.counted``'s docstring says why that is exact and what
the unit automaton checks. Here the same forms are read from rows and the same states
built with the store's constructors, so the row walker counts the strings of an
automaton over rows (``fsm.store_automaton``) as it counts the objects'.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable

import numpy as np

from fsm.counted import DEAD, MAX_UNIT_STATES
from fsm.term_store import (
    EMPTY,
    EPS,
    KIND_ALT,
    KIND_AND,
    KIND_BYTES,
    KIND_CAT,
    KIND_LEXEME,
    KIND_REPEAT,
    TermStore,
)


class CountedRow:
    """The lexeme ``unit{lo,hi} close`` in a store (``fsm.counted.Counted``)."""

    __slots__ = ("close", "hi", "lo", "unit")

    def __init__(self, unit: int, close: int, lo: int, hi: int | None) -> None:
        self.unit = unit
        self.close = close
        self.lo = lo
        self.hi = hi

    def plain(self, store: TermStore) -> int:
        """``unit* close``, as a lexeme."""
        return store.lexeme(store.cat(store.repeat(self.unit, 0, None), self.close))

    def after(self, store: TermStore, partial: int, units: int) -> int:
        """The state after ``units`` units begun, the last one still ``partial`` (``EPS``
        when complete): ``partial unit{lo-units, hi-units} close``."""
        hi = None if self.hi is None else self.hi - units
        counted = store.repeat(self.unit, max(self.lo - units, 0), hi)
        return store.lexeme(store.cat(partial, store.cat(counted, self.close)))


def counted_form_in(store: TermStore, row: int) -> CountedRow | None:
    """``row`` as ``unit{lo,hi} close`` with bounds that count (not ``{0,}``)."""
    counted = _repetition(store, row)
    if counted is None or (counted.lo == 0 and counted.hi is None):
        return None
    return counted


def plain_form_in(store: TermStore, row: int) -> CountedRow | None:
    """``row`` as ``unit* close`` (a ``CountedRow`` without bounds), else None."""
    counted = _repetition(store, row)
    if counted is None or counted.lo != 0 or counted.hi is not None:
        return None
    return counted


def _repetition(store: TermStore, row: int) -> CountedRow | None:
    found = _head_and_close(store, row, KIND_REPEAT)
    if found is None:
        return None
    repetition, close = found
    lo, hi = store.repeat_bounds(repetition)
    return CountedRow(store.first[repetition], close, lo, hi)


def _head_and_close(store: TermStore, row: int, head_kind: int) -> tuple[int, int] | None:
    """``(H, close)`` for the lexeme ``H close`` with ``H`` of kind ``head_kind`` and
    ``close`` a byte set, else None."""
    if store.kinds[row] != KIND_LEXEME:
        return None
    item = store.first[row]
    if store.kinds[item] != KIND_CAT:
        return None
    head, close = store.first[item], store.second[item]
    if store.kinds[head] != head_kind or store.kinds[close] != KIND_BYTES:
        return None
    return head, close


def counted_after_prefix_in(
    store: TermStore, row: int, separator_alphabet: Callable[[int], int | None]
) -> tuple[int, int] | None:
    """``(P, K)`` with ``row == P K`` (as languages) when the lexeme ``row`` is one byte
    ``q`` (after separators maybe) and then a lexeme that counts (``counted_form_in``): a
    JSON string with ``minLength``/``maxLength``, and the whitespace before it where a
    value starts. ``P`` is the lexeme of the separators then ``q``, ``K`` the counted
    lexeme after ``q``; None for any other row.

    Walked whole, such a lexeme is a new one for each bound, and its walk expanded a
    state per character count below every token's quote (``fsm.row_walk``); taken
    apart, ``P`` is every string's, and ``K`` is counted below ``P``'s ends.
    ``separator_alphabet`` gives a separator item's bytes (None: not a separator); ``P``
    is prefix-free because ``q`` is none of them."""
    if store.kinds[row] != KIND_LEXEME:
        return None
    items = store.chain(store.first[row])
    quoted, before = row, items[:0]
    if store.kinds[items[-1]] == KIND_LEXEME:  # separators, then the quoted lexeme
        quoted, before = items[-1], items[:-1]
    head = store.chain(store.first[quoted])[0]
    if store.kinds[head] != KIND_BYTES:
        return None
    mask = store.masks[store.first[head]]
    if mask & (mask - 1):  # more than one byte: each may lead elsewhere
        return None
    used = 0
    for item in before:
        alphabet = separator_alphabet(item)
        if alphabet is None:
            return None
        used |= alphabet
    if used & mask:
        return None
    counted = store.derivative(quoted, mask.bit_length() - 1)
    if counted_form_in(store, counted) is None:
        return None
    return store.lexeme(store.cat_items([*before, head])), counted


def counted_meet_in(store: TermStore, row: int) -> tuple[int, int] | None:
    """``row`` as the lexeme ``(C & X) close`` with ``C`` a repetition whose bounds
    count (a JSON string with ``maxLength`` and a pattern, a hostname's 253
    characters): the lexemes ``C close`` (``counted_form_in``) and ``X close``. A
    member with an upper bound is taken as ``C`` before one with a lower bound only
    (a pattern's ``[a-z]+`` counts to 1, then no more), the first of each. None
    otherwise."""
    found = _head_and_close(store, row, KIND_AND)
    if found is None:
        return None
    met, close = found
    members = store.members(met)
    counting = [
        member
        for member in members
        if store.kinds[member] == KIND_REPEAT and store.repeat_bounds(member) != (0, None)
    ]
    if not counting:
        return None
    counted = min(counting, key=lambda member: store.repeat_bounds(member)[1] is None)
    others = store.intersect([member for member in members if member != counted])
    return store.lexeme(store.cat(counted, close)), store.lexeme(store.cat(others, close))


def met_in(store: TermStore, first: int, second: int) -> int | None:
    """The lexeme of the strings both lexeme rows read, ``(X & Y) close`` from
    ``X close`` and ``Y close`` (the form ``counted_meet_in`` takes apart): a string
    of both is ``x`` then a closing byte, with ``x`` in each. None when the two do
    not end in one closing byte set."""
    first_content, second_content = content_in(store, first), content_in(store, second)
    if first_content is None or second_content is None:
        return None
    if first_content[1] != second_content[1]:
        return None
    met = store.intersect([first_content[0], second_content[0]])
    return store.lexeme(store.cat(met, first_content[1]))


def content_in(store: TermStore, row: int) -> tuple[int, int] | None:
    r"""``(X, close)`` for the lexeme ``X close`` with ``close`` a byte set, else None
    (``met_in`` meets two of them). A union whose members all end in one ``close``
    is ``(X1 | X2 | ...) close``: a pattern's state after a digit that ``\d*`` and
    ``.*`` may both read is such a union (``[0-9]* .* "`` or ``.* "``), and a count
    meets it like any other."""
    if store.kinds[row] != KIND_LEXEME:
        return None
    body = store.first[row]
    if store.kinds[body] != KIND_ALT:
        return _content_before_close(store, body)
    contents: list[int] = []
    closes: set[int] = set()
    for member in store.members(body):
        found = _content_before_close(store, member)
        if found is None:
            return None
        contents.append(found[0])
        closes.add(found[1])
    if len(closes) != 1:
        return None
    return store.alt(contents), closes.pop()


def _content_before_close(store: TermStore, term: int) -> tuple[int, int] | None:
    """``(X, close)`` for ``X close`` with ``close`` a byte set (``X`` is ``EPS`` when
    ``term`` is the byte set alone), else None."""
    items = store.chain(term)
    if store.kinds[items[-1]] != KIND_BYTES:
        return None
    return store.cat_items(items[:-1]), items[-1]


def unit_automaton_in(
    store: TermStore, counted: CountedRow
) -> tuple[np.ndarray, tuple[int, ...]] | None:
    """The states of ``counted.plain``: ``table[state, byte]`` (``DEAD``, or
    ``len(partials)`` for the lexeme's end) and the part of a unit left in each
    (``EPS`` for the plain state, 0), when counting its units is exact; None otherwise
    or past ``MAX_UNIT_STATES`` states (``fsm.counted.unit_automaton``)."""
    unit, close = counted.unit, counted.close
    if store.nullable(unit) or store.first_bytes(unit) & store.masks[store.first[close]]:
        return None
    plain = counted.plain(store)
    tail = store.cat(store.repeat(unit, 0, None), close)  # ``plain``'s item
    numbers: dict[int, int] = {plain: 0}
    partials: list[int] = [EPS]
    rows: list[np.ndarray] = []
    todo = deque([plain])
    while todo:
        state = todo.popleft()
        firsts = np.frombuffer(store.representatives(state), np.uint8)
        by_class = np.full(256, DEAD, np.int32)
        for byte in store.class_bytes(state):
            target = store.derivative(state, byte)
            if target == EPS:
                by_class[byte] = -2  # the exit, numbered below
                continue
            if target == EMPTY:
                continue
            partial = _partial(store, target, tail)
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
    return table, tuple(partials)


def _partial(store: TermStore, state: int, tail: int) -> int | None:
    """``u`` when ``state`` is the lexeme ``u unit* close`` with ``u`` not nullable,
    ``EPS`` when it is ``unit* close`` (its item is ``tail``); None otherwise."""
    if store.kinds[state] != KIND_LEXEME:
        return None
    items = store.chain(store.first[state])
    if items[-2:] != [store.first[tail], store.second[tail]]:
        return None
    if len(items) == 2:
        return EPS
    partial = store.cat_items(items[:-2])
    return None if store.nullable(partial) else partial
