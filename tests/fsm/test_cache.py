"""IndexCache: LRU bound, counters, and a hit gives the same rows as a fresh build."""

from __future__ import annotations

import numpy as np
import pytest

from fsm import DEAD, IndexCache, TableAutomaton, TokenIndex, Vocabulary

VOCAB = Vocabulary.from_raw([b"1", b"12", b"x", b"2", None], eos_ids=4)


def digits_automaton() -> TableAutomaton:
    table = np.full((2, 256), DEAD, np.int32)
    table[:, ord("0") : ord("9") + 1] = 1
    return TableAutomaton(table, np.asarray([False, True]))


def build() -> TokenIndex:
    return TokenIndex(digits_automaton(), VOCAB)


def test_hit_returns_the_built_index_with_the_same_rows():
    cache = IndexCache()
    key = ("digits", VOCAB.fingerprint)
    missed = cache.get_or_build(key, build)
    missed_rows = [missed.allowed_tokens(s).tolist() for s in (0, 1)]
    hit = cache.get_or_build(key, lambda: pytest.fail("a hit must not build"))
    assert hit is missed
    assert (cache.hits, cache.misses) == (1, 1)
    fresh = build()
    for state, row in zip((0, 1), missed_rows, strict=True):
        assert hit.allowed_tokens(state).tolist() == row == fresh.allowed_tokens(state).tolist()
        np.testing.assert_array_equal(hit.bitmask(state), fresh.bitmask(state))


def test_least_recently_used_entry_is_evicted():
    cache = IndexCache(max_entries=2)
    cache.get_or_build("a", build)
    cache.get_or_build("b", build)
    cache.get_or_build("a", build)  # "b" is now the least recently used
    cache.get_or_build("c", build)
    assert "a" in cache and "c" in cache and "b" not in cache
    assert len(cache) == 2
    assert (cache.hits, cache.misses) == (1, 3)
    cache.clear()
    assert len(cache) == 0 and cache.misses == 3


def test_failing_build_caches_nothing():
    cache = IndexCache()

    def broken() -> TokenIndex:
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        cache.get_or_build("k", broken)
    assert "k" not in cache
    assert cache.get_or_build("k", build).allowed_tokens(0).tolist() == [0, 1, 3]


def test_cache_needs_room():
    with pytest.raises(ValueError):
        IndexCache(max_entries=0)
