"""``IndexCache``: compiled token indexes kept by an owner, least recently used first out.

Keys are ``(spec fingerprint, vocabulary fingerprint)``. The cache is an explicit
object (a model adapter owns one), never a module global, so tests need no reset.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable

from fsm.index import TokenIndex


class IndexCache:
    """A bounded LRU map from a key to the ``TokenIndex`` built for it."""

    def __init__(self, max_entries: int = 64) -> None:
        if max_entries < 1:
            raise ValueError("an IndexCache holds at least one entry")
        self.max_entries = max_entries
        self.hits = 0
        self.misses = 0
        self._entries: OrderedDict[Hashable, TokenIndex] = OrderedDict()

    def get_or_build(self, key: Hashable, build: Callable[[], TokenIndex]) -> TokenIndex:
        """The index cached under ``key``, else ``build()`` (cached, evicting the least
        recently used entry when full). A failing ``build`` caches nothing."""
        index = self._entries.get(key)
        if index is not None:
            self.hits += 1
            self._entries.move_to_end(key)
            return index
        self.misses += 1
        index = build()
        self._entries[key] = index
        if len(self._entries) > self.max_entries:
            self._entries.popitem(last=False)
        return index

    def __contains__(self, key: Hashable) -> bool:
        return key in self._entries

    def __len__(self) -> int:
        return len(self._entries)

    def clear(self) -> None:
        """Drop every entry (counters are kept)."""
        self._entries.clear()

    def __repr__(self) -> str:
        return (
            f"IndexCache(entries={len(self)}/{self.max_entries}, "
            f"hits={self.hits}, misses={self.misses})"
        )
