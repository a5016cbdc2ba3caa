"""Where ``fsm.compile_index`` builds JSON schemas: the rows of a term store shared by
the schemas compiled over one vocabulary (``Vocabulary.schema_rows``).

A schema is compiled into a ``TermStore`` as integer rows (``fsm.term_builder``), with
the JSON pieces every schema uses (strings, numbers, formats, whitespace) built once
per store, and walked by ``fsm.store_automaton.StoreAutomaton``. Its token rows take
the same lexeme walks every index over the vocabulary shares, keyed by the store
(``TermStore.identity``). Rows hold no Python objects of their own, so however many a
walk leaves, the cyclic collector has little to scan: the object terms' walks paused
for hundreds of milliseconds on its full passes (``docs/design.md``, issue 15).

Rows are never freed one by one. Once a store holds ``generation_rows`` rows, the next
compile starts a fresh store; the old one lives as long as the indexes that walk it.

Threads: a store is for one thread at a time. Each store comes with a reentrant lock:
a compile into the store holds it, and an index over the store does all its work
under it (``TokenIndex(lock=...)``), so indexes sharing a store never touch it at once.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Final

from fsm.errors import Unsatisfiable
from fsm.json_schema.strings import StringTerms, strings_in
from fsm.limits import DEFAULT_MAX_STATES
from fsm.satisfiable_store import empty_because_in
from fsm.specs import JsonSchema
from fsm.store_automaton import StoreAutomaton
from fsm.store_decompose import StoreSplits
from fsm.term_builder import StoredTerms
from fsm.term_store import TermStore

GENERATION_ROWS: Final = 1 << 20
"""Rows a store may hold before compiles move to a fresh one, about 100 MB of rows and
memos: the MaskBench sample of 200 schemas, walked, leaves some 490,000 rows and grew
the process by 83 MB, 37 MB of it the vocabulary's shared walks (bounded apart)."""


@dataclass
class _Generation:
    """One store, the string terms built into it, what its rows split into (shared by
    every automaton over it, as the store's own memos are), and the lock its users
    take."""

    store: TermStore = field(default_factory=TermStore)
    lock: threading.RLock = field(default_factory=threading.RLock)

    def __post_init__(self) -> None:
        self.strings: StringTerms[int] = strings_in(StoredTerms(self.store))
        self.splits: StoreSplits = StoreSplits(self.store)


class SchemaRows:
    """The store JSON schemas are compiled into, replaced by a fresh one past
    ``generation_rows`` rows."""

    def __init__(self, generation_rows: int = GENERATION_ROWS) -> None:
        self.generation_rows = generation_rows
        self.generations = 0
        self._guard = threading.Lock()
        self._current = self._fresh()

    @property
    def current_store(self) -> TermStore:
        """The store the next compile builds into (unless it is full by then)."""
        return self._current.store

    def _fresh(self) -> _Generation:
        self.generations += 1
        return _Generation()

    def compile(
        self, spec: JsonSchema, *, prefix: bytes = b"", max_states: int = DEFAULT_MAX_STATES
    ) -> tuple[StoreAutomaton, threading.RLock]:
        """The automaton of ``prefix`` then ``spec`` over the current store (a healed
        prefix, ``fsm.Prefixed``), and the lock an index over it must run under. Raises
        ``Unsatisfiable`` when the schema provably accepts no text, and the compiler's
        errors (``UnsupportedSchema``, ``InvalidSpec``)."""
        with self._guard:
            if len(self._current.store) > self.generation_rows:
                self._current = self._fresh()
            generation = self._current
        with generation.lock:
            root = spec.term_in(generation.strings)
            reason = empty_because_in(generation.store, root)
            if reason is not None:
                raise Unsatisfiable(f"JsonSchema accepts no text at all: {reason}")
            if prefix:
                root = generation.store.cat(generation.store.literal(prefix), root)
            automaton = StoreAutomaton(
                generation.store, root, max_states=max_states, splits=generation.splits
            )
        return automaton, generation.lock
