"""Property test: any sequence of extend / prefix / drop / prefix-cache lookups keeps every
live handle's K/V equal to a plain-list model, and the pool's block count exact."""

from __future__ import annotations

import gc

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.backends.test_kv_pool import append, content, make_pool

values = st.lists(st.integers(1, 5), min_size=1, max_size=7)
operations = st.lists(
    st.one_of(
        st.tuples(st.just("extend"), st.integers(0, 99), values),
        st.tuples(st.just("new"), st.just(0), values),
        st.tuples(st.just("prefix"), st.integers(0, 99), st.integers(0, 99)),
        st.tuples(st.just("drop"), st.integers(0, 99), st.just(0)),
        st.tuples(st.just("match"), st.integers(0, 99), values),
    ),
    max_size=40,
)


def apply(pool, live: list, seen: list, op: str, pick: int, arg) -> None:
    """One operation on the live handles (a function, so no local keeps a dropped handle).
    `seen` holds every content ever built, so lookups also target dropped (cached) blocks."""
    if op == "new":
        ref = append(pool, None, arg)
        pool.publish(ref)
        live.append((ref, list(arg)))
    elif seen and op == "match":
        query = seen[pick % len(seen)] + list(arg)
        found = pool.match_prefix(np.array(query, dtype=np.int64))
        if found is not None:
            live.append((found, query[: found.length]))
    elif live and op == "extend":
        ref, expected = live[pick % len(live)]
        grown = append(pool, ref, arg)
        pool.publish(grown)
        live.append((grown, expected + list(arg)))
    elif live and op == "prefix":
        ref, expected = live[pick % len(live)]
        n = arg % (ref.length + 1)
        if n:
            live.append((ref.prefix(n), expected[:n]))
    elif live and op == "drop":
        live.pop(pick % len(live))


def check(pool, live: list) -> None:
    for ref, expected in live:
        assert content(pool, ref) == expected
    owned = {int(b) for ref, _ in live for b in ref.block_ids}
    assert pool.kv_stats()["blocks_used"] == len(owned)


@settings(max_examples=100, deadline=None)
@given(operations, st.booleans())
def test_pool_matches_a_list_model(ops, cached):
    pool = make_pool(initial_blocks=2, prefix_cache=cached)
    live: list = []  # (handle, expected contents)
    seen: list = []
    for op, pick, arg in ops:
        apply(pool, live, seen, op, pick, arg)
        seen.extend(expected for _, expected in live[-1:])
        check(pool, live)
    live.clear()
    gc.collect()
    assert pool.kv_stats()["blocks_used"] == 0
