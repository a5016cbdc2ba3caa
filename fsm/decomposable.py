"""The automata the row walker takes apart, as one compiled base class.

``fsm.automaton.DecomposableAutomaton`` says what a token walk asks of an automaton
whose states can be taken apart (a lexeme then a continuation, a union of branches).
``fsm.row_walk`` calls those methods tens of times a row, so it needs them as native
calls: through the protocol each was a generic Python call (2.5-5% of a cold walk,
``docs/design.md``). The walker was therefore typed to the one class there was,
``DerivativeAutomaton`` over object terms. ``DecomposableBase`` is that type for
every such automaton: over object terms, and over a store's rows
(``fsm.store_automaton``), with the same native dispatch (a compiled class's methods
are called through its vtable).

The methods mean what the protocol's docstrings say; each subclass implements all
of them.
"""

from __future__ import annotations

from collections.abc import Hashable

import numpy as np


class DecomposableBase:
    """``fsm.automaton.DecomposableAutomaton`` as a compiled base class."""

    @property
    def initial(self) -> int:
        raise NotImplementedError

    @property
    def num_states(self) -> int:
        raise NotImplementedError

    def expand(self, state: int) -> tuple[np.ndarray, bool]:
        raise NotImplementedError

    def accepts(self, state: int) -> bool:
        raise NotImplementedError

    @property
    def has_lexemes(self) -> bool:
        raise NotImplementedError

    @property
    def exit_state(self) -> int:
        raise NotImplementedError

    def lexeme_split(self, state: int) -> tuple[int, int] | None:
        raise NotImplementedError

    def lexeme_strings(self, lexeme_state: int, limit: int) -> list[bytes] | None:
        raise NotImplementedError

    def step(self, state: int, byte: int) -> int:
        raise NotImplementedError

    def after(self, lexeme_state: int, text: bytes, read: int) -> int:
        raise NotImplementedError

    def literal_text(self, lexeme_state: int) -> bytes | None:
        raise NotImplementedError

    def lexeme_within(self, lexeme_state: int) -> tuple[int, frozenset[bytes]] | None:
        raise NotImplementedError

    def join(self, lexeme_state: int, continuation: int) -> int:
        raise NotImplementedError

    def inside(self, lexeme_state: int, continuation: int) -> tuple[int, int] | None:
        """A lexeme then ``continuation`` taken apart at a lexeme inside it: the inner
        lexeme's state, then the state of the rest of the outer one followed by
        ``continuation``; None when the lexeme holds none at its head."""
        raise NotImplementedError

    def counting(self, lexeme_state: int) -> tuple[Hashable, int, int | None] | None:
        raise NotImplementedError

    def counted_after_prefix(self, lexeme_state: int, continuation: int) -> tuple[int, int] | None:
        """A lexeme then ``continuation`` taken apart after a one-byte prefix that a
        counted lexeme follows (separators and a bounded string's quote): the prefix's
        lexeme state, then the counted lexeme joined with ``continuation``; None for
        every other lexeme."""
        raise NotImplementedError

    def unit_automaton(self, plain: Hashable) -> tuple[np.ndarray, tuple[Hashable, ...]] | None:
        raise NotImplementedError

    def counted_states(
        self, lexeme_state: int, partials: tuple[Hashable, ...], ends: list[tuple[int, int]]
    ) -> list[int]:
        raise NotImplementedError

    def plain_key(self, lexeme_state: int) -> Hashable | None:
        """``counting``'s key of ``unit* close`` when the lexeme is that plain
        repetition itself (nothing to count); None for every other lexeme."""
        raise NotImplementedError

    def plain_states(self, lexeme_state: int, partials: tuple[Hashable, ...]) -> list[int]:
        """The states of the plain repetition ``lexeme_state`` (``plain_key``) after a
        unit left at each of ``partials`` (``unit_automaton``'s): ``partial unit*
        close``, ``unit* close`` itself for a complete unit."""
        raise NotImplementedError

    def counted_meet(self, lexeme_state: int) -> tuple[int, int] | None:
        raise NotImplementedError

    def meet(self, first: int, second: int) -> int | None:
        raise NotImplementedError

    def lexeme_key(self, lexeme_state: int) -> Hashable:
        raise NotImplementedError

    def lexeme_state(self, key: Hashable) -> int:
        raise NotImplementedError

    def head_split(self, state: int) -> tuple[int, int] | None:
        raise NotImplementedError

    def alternatives(self, state: int) -> tuple[int, ...] | None:
        raise NotImplementedError

    def stated_completion(self, state: int) -> bytes | None:
        raise NotImplementedError

    def branches(self, state: int) -> tuple[int, ...] | None:
        """The branches of a union state when one of them starts with a lexeme."""
        raise NotImplementedError

    def branch_parts(self, state: int) -> tuple[int | tuple[int, int], ...] | None:
        """``branches(state)``, each branch that splits as its split (``lexeme_split``)
        instead of its own state: a row walks a branch's split, and an object's body
        offers every key left, so numbering each branch as well cost a state per key
        at every key read. None where ``branches`` is None."""
        raise NotImplementedError

    def branch_openings(self, state: int) -> tuple[int, ...] | None:
        """Per branch of ``branch_parts(state)``, in order, a mask of the bytes its
        strings may start with, or more (None where there are no branches): a branch
        opening with none of the bytes a token reads next below some trie nodes reads
        no token there (``RowWalker._branch_items``)."""
        raise NotImplementedError

    def union(self, items: tuple[int | tuple[int, int], ...]) -> int:
        """The state of the union of ``items`` (a state, or a lexeme state and its
        continuation), numbered now, built on first use."""
        raise NotImplementedError

    def union_joins(self, state: int) -> tuple[tuple[int, int], ...] | None:
        """The pairs of a ``union`` of joins only; None for any other state."""
        raise NotImplementedError
