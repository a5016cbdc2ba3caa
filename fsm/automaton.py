"""The one interface between constraint compilers and the token index.

A constraint compiles to a deterministic automaton over bytes whose states are small
non-negative integers discovered on demand: ``expand(state)`` returns the 256 successor
states (``DEAD`` where the byte is not allowed) and whether the text read so far is a
complete match. Eager automata (a materialised table) and lazy ones (derivatives of a
term, parser configurations) look the same to the token index.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from functools import cache
from typing import Protocol, cast, runtime_checkable

import numpy as np

DEAD = -1
"""Successor of a byte that no match can continue with."""


@runtime_checkable
class ByteAutomaton(Protocol):
    """A deterministic byte automaton with states numbered from 0 as they are found.

    A protocol: the compiler's automata (lazy position sets for regexes, lazy
    derivatives for JSON, LALR configurations for grammars, ``TableAutomaton``)
    implement it, and a ``TokenIndex`` walks one over the vocabulary's token trie.

    Example:
        >>> automaton = fsm.Grammar('start: "a"+').automaton()
        >>> successors, final = automaton.expand(automaton.initial)
        >>> isinstance(automaton, fsm.ByteAutomaton), final, bool(successors[ord("a")] != fsm.DEAD)
        (True, False, True)
    """

    @property
    def initial(self) -> int:
        """The state before any byte is read."""
        ...

    def expand(self, state: int) -> tuple[np.ndarray, bool]:
        """``(successors, final)``: int32[256] next states (``DEAD`` = rejected), and
        whether ``state`` accepts. Every non-dead successor must be live: some byte
        string leads from it to a final state."""
        ...


@runtime_checkable
class DecomposableAutomaton(ByteAutomaton, Protocol):
    """A ``ByteAutomaton`` whose states can be taken apart, so that token walks are shared.

    A state may be a *lexeme* followed by a continuation. A lexeme is prefix-free (a
    JSON string ends at its closing quote), so a token read from "lexeme, then K" goes
    through the lexeme the same way whatever K is: the token index walks the lexeme's
    own states once and reuses the walk for every K. A state may also be a *union* of
    branches, walked branch by branch. ``fsm.row_walk`` uses this; ``DerivativeAutomaton``
    implements it for ``terms.lexeme`` and ``terms.alt``.
    """

    @property
    def has_lexemes(self) -> bool:
        """Whether any state may be taken apart (False: walk every state plainly)."""
        ...

    @property
    def exit_state(self) -> int:
        """The state of a finished lexeme (accepts, has no successors)."""
        ...

    def lexeme_split(self, state: int) -> tuple[int, int] | None:
        """``(lexeme state, continuation state)`` when ``state`` is a lexeme followed by
        the continuation (a lexeme state's own successors are lexeme states or
        ``exit_state``); None otherwise. A lexeme may also accept before its end (a
        number: ``1`` may end or go on), and then the continuation starts with no byte
        the lexeme can read next, so the next byte tells which of the two it is."""
        ...

    def lexeme_strings(self, lexeme_state: int, limit: int) -> list[bytes] | None:
        """Every string a lexeme state accepts when they are at most ``limit`` (an
        object key, whitespace then a key), else None: its walk follows each string
        down the trie."""
        ...

    def step(self, state: int, byte: int) -> int:
        """The state after ``byte`` (``DEAD`` when none), without expanding ``state``."""
        ...

    def after(self, lexeme_state: int, text: bytes, read: int) -> int:
        """The state of a lexeme whose one string is ``text`` after its first ``read``
        bytes, a proper prefix (so live, and not over): numbered now, its term built
        when first asked for."""
        ...

    def literal_text(self, lexeme_state: int) -> bytes | None:
        """The one string left to a state numbered by ``after``, known without its
        term (None for any other state): the next row of a key walks it at once."""
        ...

    def lexeme_within(self, lexeme_state: int) -> tuple[int, frozenset[bytes]] | None:
        """``(within, apart)`` when the lexeme reads as the lexeme state ``within`` but
        the byte strings ``apart``, and is in ``within``'s states once a text has left
        them all (``terms.Lexeme``); else None. Its walk takes ``within``'s but down
        the ``apart`` strings."""
        ...

    def join(self, lexeme_state: int, continuation: int) -> int:
        """The state "``lexeme_state``, then ``continuation``"."""
        ...

    def inside(self, lexeme_state: int, continuation: int) -> tuple[int, int] | None:
        """A lexeme then ``continuation`` taken apart at a lexeme at the lexeme's head
        (a key's string inside an arbitrary value): the inner lexeme's state, then the
        state of the rest of the outer one followed by ``continuation``; else None."""
        ...

    def counting(self, lexeme_state: int) -> tuple[Hashable, int, int | None] | None:
        """``(plain, lo, hi)`` when the lexeme repeats a unit ``lo..hi`` times then closes
        (a JSON string with a length bound): ``plain`` (a key) repeats it any number of
        times. Its walk is the plain one's with a count of units per token
        (``fsm.counted``). None otherwise."""
        ...

    def unit_automaton(self, plain: Hashable) -> tuple[np.ndarray, tuple[Hashable, ...]] | None:
        """The states of the plain repetition ``plain``: ``table[state, byte]`` (the exit
        is ``len(partials)``, state 0 is ``plain``) and the part of a unit left in each;
        None when its units cannot be counted exactly."""
        ...

    def counted_states(
        self, lexeme_state: int, partials: tuple[Hashable, ...], ends: list[tuple[int, int]]
    ) -> list[int]:
        """The states of the counted lexeme ``lexeme_state`` after each ``(kind,
        units)``: ``units`` units begun, the last one still ``partials[kind]``
        (``unit_automaton``'s partials of the lexeme's plain repetition)."""
        ...

    def counted_meet(self, lexeme_state: int) -> tuple[int, int] | None:
        """``(counted, other)`` when the lexeme reads the strings of two lexemes at
        once, the first ``counting`` (a JSON string with a pattern or a format and a
        length bound): the two lexeme states. None otherwise."""
        ...

    def meet(self, first: int, second: int) -> int | None:
        """The lexeme state reading the strings both lexeme states read from here on
        (``DEAD`` when they read none alike); None when they cannot be met as lexemes
        with one closing."""
        ...

    def lexeme_key(self, lexeme_state: int) -> Hashable:
        """What identifies a lexeme state across automata (``fsm.lexeme_cache``)."""
        ...

    def lexeme_state(self, key: Hashable) -> int:
        """The state of this automaton with ``lexeme_key`` ``key``."""
        ...

    def head_split(self, state: int) -> tuple[int, int] | None:
        """``(head, rest)`` when ``state`` is a concatenation (any, not only a lexeme's):
        shortest completions add up over it (``TokenIndex.shortest_completion``)."""
        ...

    def alternatives(self, state: int) -> tuple[int, ...] | None:
        """The items of a union state (any union), for completions."""
        ...

    def stated_completion(self, state: int) -> bytes | None:
        """``state``'s shortest, then lowest, completion when the constraint states it
        outright (a large lazy union that knows its language), else None."""
        ...

    def branches(self, state: int) -> tuple[int, ...] | None:
        """The states whose union ``state`` is, when some of them split into lexemes
        (walking them one by one shares their lexeme walks); None otherwise."""
        ...

    def union(self, items: tuple[int | tuple[int, int], ...]) -> int:
        """The state accepting what any item accepts; an item is a state, or a pair
        ``(lexeme state, continuation)`` standing for their ``join`` (so a join that
        only feeds a union is never numbered on its own)."""
        ...

    def union_joins(self, state: int) -> tuple[tuple[int, int], ...] | None:
        """The pairs ``(lexeme state, continuation)`` a ``union`` state was made of, when
        every item was such a pair (None otherwise): the union of their joins, which a
        row walk takes as its branches without building the union's term."""
        ...

    def accepts(self, state: int) -> bool:
        """Whether ``state`` is final, without expanding it."""
        ...


@dataclass(frozen=True, eq=False)
class TableAutomaton:
    """A fully materialised automaton: ``table[state, byte]`` and ``finals[state]``.

    Args:
        table: int32 ``[num_states, 256]`` next states (``DEAD`` = rejected).
        finals: bool ``[num_states]``, whether each state accepts.
        initial: the start state (default 0).

    Example (accepts exactly ``"a"``):
        >>> import numpy as np
        >>> table = np.full((2, 256), fsm.DEAD, dtype=np.int32)
        >>> table[0, ord("a")] = 1
        >>> automaton = fsm.TableAutomaton(table, np.array([False, True]))
        >>> int(automaton.expand(0)[0][ord("a")]), automaton.expand(1)[1]
        (1, True)
    """

    table: np.ndarray  # int32 [num_states, 256]
    finals: np.ndarray  # bool [num_states]
    initial: int = 0

    def expand(self, state: int) -> tuple[np.ndarray, bool]:
        return self.table[state], bool(self.finals[state])

    @property
    def num_states(self) -> int:
        return int(self.table.shape[0])


def as_decomposable(automaton: ByteAutomaton) -> DecomposableAutomaton | None:
    """``automaton`` when it is a ``DecomposableAutomaton`` with lexemes, else None.

    The protocol is asked once per class (``_decomposable_class``): a runtime protocol
    check looks up each of its members and costs ~50 µs, paid by every compile."""
    if not _decomposable_class(type(automaton)):
        return None
    parts = cast(DecomposableAutomaton, automaton)
    return parts if parts.has_lexemes else None


@cache
def _decomposable_class(kind: type) -> bool:
    """Whether instances of ``kind`` have the ``DecomposableAutomaton`` members (the
    members are the class's methods and properties, so the class answers for them)."""
    return all(hasattr(kind, name) for name in _DECOMPOSABLE_MEMBERS)


_DECOMPOSABLE_MEMBERS = tuple(
    name
    for name in {*vars(DecomposableAutomaton), *vars(ByteAutomaton)}
    if not name.startswith("_")
)
