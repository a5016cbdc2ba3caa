"""``IndexCache``: compiled token indexes kept by an owner, least recently used first out.

Keys are ``(spec fingerprint, vocabulary fingerprint)``. The cache is an explicit
object (a model adapter owns one), never a module global, so tests need no reset.

Threads: lookups and updates hold the cache's lock; a build runs outside it, under a
lock of its own key, so threads asking for the same key wait for one build (and get
the same index) while builds of other keys go on in parallel.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable

from fsm.token_index import TokenIndex


class IndexCache:
    """A bounded LRU map from a key to the ``TokenIndex`` built for it; a model keeps
    one (``model.indexes``), so a constraint used twice is compiled once. Thread-safe:
    each key is built once even when several threads ask for it.

    Args:
        max_entries: entries kept before the least recently used one is evicted.

    Example:
        >>> cache = fsm.IndexCache(max_entries=8)
        >>> vocabulary = fsm.Vocabulary.from_raw([b"1", b"2", None], eos_ids=2)
        >>> first = fsm.compile_index(fsm.Regex("1+"), vocabulary, cache=cache)
        >>> first is fsm.compile_index(fsm.Regex("1+"), vocabulary, cache=cache), cache.hits
        (True, 1)
    """

    def __init__(self, max_entries: int = 64) -> None:
        if max_entries < 1:
            raise ValueError("an IndexCache holds at least one entry")
        self.max_entries = max_entries
        self.hits = 0
        self.misses = 0
        self._entries: OrderedDict[Hashable, TokenIndex] = OrderedDict()
        self._lock = threading.Lock()
        self._building: dict[Hashable, threading.RLock] = {}  # key -> lock of its build

    def get_or_build(self, key: Hashable, build: Callable[[], TokenIndex]) -> TokenIndex:
        """The index cached under ``key``, else ``build()`` (cached, evicting the least
        recently used entry when full). A failing ``build`` caches nothing."""
        with self._lock:
            index = self._lookup(key)
            if index is not None:
                return index
            key_lock = self._building.setdefault(key, threading.RLock())
        with key_lock:
            with self._lock:
                index = self._lookup(key)  # built while this thread waited
                if index is not None:
                    return index
                self.misses += 1
            try:
                index = build()
            except BaseException:
                with self._lock:
                    self._building.pop(key, None)
                raise
            with self._lock:  # one step, so no thread finds neither the build nor its result
                self._building.pop(key, None)
                self._entries[key] = index
                if len(self._entries) > self.max_entries:
                    self._entries.popitem(last=False)
            return index

    def _lookup(self, key: Hashable) -> TokenIndex | None:
        """The entry under ``key``, counted as a hit and made most recent (lock held)."""
        index = self._entries.get(key)
        if index is not None:
            self.hits += 1
            self._entries.move_to_end(key)
        return index

    def __contains__(self, key: Hashable) -> bool:
        return key in self._entries

    def __len__(self) -> int:
        return len(self._entries)

    def clear(self) -> None:
        """Drop every entry (counters are kept)."""
        with self._lock:
            self._entries.clear()

    def __repr__(self) -> str:
        return (
            f"IndexCache(entries={len(self)}/{self.max_entries}, "
            f"hits={self.hits}, misses={self.misses})"
        )
