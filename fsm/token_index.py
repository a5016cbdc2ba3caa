"""``TokenIndex``: which tokens each automaton state allows, and where each one leads.

The work is ``fsm.index_core.IndexCore``'s (compiled with the other hot modules,
``fsm.native``; its module docstring says how rows are built, the bitmask layout and
the locking). ``TokenIndex`` is a plain Python class over it, because a compiled class
takes no weak references and no patched methods, and users, device mirrors
(``backends.masks``) and tests need both.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from fsm.automaton import ByteAutomaton
from fsm.index_core import IndexCore
from fsm.limits import DEFAULT_MAX_ROW_STATES, DEFAULT_MAX_STATES
from fsm.vocabulary import Vocabulary


class TokenIndex(IndexCore):
    """Token-level view of a byte automaton over a vocabulary, built on demand.

    Made by ``fsm.compile_index`` (or ``model.index``). A state's row, the tokens it
    allows and the state after each, is built the first time a state is visited;
    generation reads ``bitmask``/``next_states`` per step (or ``fill_bitmask`` into a
    buffer of its own, and ``next_state`` once a token is drawn). States and tokens may
    be any integers, numpy's included (``SupportsIndex``, read by ``operator.index``).

    Args:
        automaton: the ``ByteAutomaton`` of the constraint.
        vocabulary: the model's ``Vocabulary``.
        max_states: cap on automaton states (``ConstraintTooLarge`` past it).
        eager: build every reachable row now.
        progress: called with ``(rows done, rows known)`` during an eager build.
        share_lexemes: walk a lexeme (a JSON string) once and share the walk between
            the states it starts, and with other indexes over the vocabulary
            (``fsm.row_walk``, ``vocabulary.lexeme_walks``); False walks every state
            on its own (the reference the tests and benchmarks compare with; same rows).
        max_row_states: cap on the automaton states one row may expand, a bound on
            the work of one decode step (``ConstraintTooLarge`` past it).
        lock: the reentrant lock the index does its work under; indexes whose
            automata share state (a term store, ``fsm.schema_rows``) share one.
            None: a lock of its own.

    Example:
        >>> vocabulary = fsm.Vocabulary.from_raw([b"a", b"b", b"ab", None], eos_ids=3)
        >>> index = fsm.compile_index(fsm.Regex("ab"), vocabulary)
        >>> start = index.initial_state
        >>> index.allowed_tokens(start).tolist(), index.is_final(index.next_state(start, 2))
        ([0, 2], True)
    """

    def __init__(
        self,
        automaton: ByteAutomaton,
        vocabulary: Vocabulary,
        *,
        max_states: int = DEFAULT_MAX_STATES,
        eager: bool = False,
        progress: Callable[[int, int], None] | None = None,
        share_lexemes: bool = True,
        max_row_states: int = DEFAULT_MAX_ROW_STATES,
        lock: threading.RLock | None = None,
    ) -> None:
        # spelled out so the signature reads the same compiled or not: ``inspect`` cannot
        # read a compiled ``__init__``'s (help(), docs/api.md)
        super().__init__(
            automaton,
            vocabulary,
            max_states=max_states,
            eager=eager,
            progress=progress,
            share_lexemes=share_lexemes,
            max_row_states=max_row_states,
            lock=lock,
        )
