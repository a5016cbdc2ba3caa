"""Block pool and PagedKVRef handles, without a model: refcounts, sharing, copy-on-write, release."""

from __future__ import annotations

import gc

import numpy as np
import pytest
import torch

from backends.kv_pool import KVPool, OutOfKVMemory
from backends.kvref import PagedKVRef

BS = 4


def make_pool(**kwargs) -> KVPool:
    options = dict(num_layers=2, kv_heads=1, head_dim=2, block_size=BS, initial_blocks=8)
    options.update(kwargs)
    return KVPool(**options)


def append(pool: KVPool, base: PagedKVRef | None, values: list[float]) -> PagedKVRef:
    """Extend `base` by len(values) positions whose K and V hold `values` (what a forward does)."""
    (ref,), (slots,) = pool.extend([base], [np.array(values, dtype=np.int64)])
    write(pool, slots, values)
    return ref


def write(pool: KVPool, slots: np.ndarray, values: list[float]) -> None:
    data = torch.tensor(values, dtype=pool.keys.dtype)[:, None, None].expand(-1, 1, 2)
    index = torch.from_numpy(slots)
    for store in (pool.keys, pool.values):
        for layer in range(store.shape[0]):
            store[layer].view(-1, 1, 2).index_copy_(0, index, data)


def content(pool: KVPool, ref: PagedKVRef) -> list[float]:
    keys, values = pool.read(ref)
    torch.testing.assert_close(keys, values)
    return keys[0, :, 0, 0].tolist()


def test_extend_allocates_blocks_and_release_frees_them():
    pool = make_pool()
    ref = append(pool, None, [1, 2, 3, 4, 5, 6])
    assert ref.length == 6 and len(ref.block_ids) == 2
    assert pool.kv_stats()["blocks_used"] == 2
    assert content(pool, ref) == [1, 2, 3, 4, 5, 6]
    del ref
    assert pool.kv_stats()["blocks_used"] == 0


def test_prefix_shares_blocks_without_copy():
    pool = make_pool()
    ref = append(pool, None, [1, 2, 3, 4, 5, 6])
    head = ref.prefix(5)
    assert head.block_ids.tolist() == ref.block_ids.tolist()
    short = ref.prefix(3)
    assert short.block_ids.tolist() == ref.block_ids[:1].tolist()
    assert ref.prefix(6) is ref and ref.prefix(0) is None
    assert pool.kv_stats()["blocks_used"] == 2
    assert content(pool, short) == [1, 2, 3]
    with pytest.raises(ValueError):
        ref.prefix(7)


def test_release_through_reference_cycle():
    pool = make_pool()

    class Holder:
        pass

    a, b = Holder(), Holder()
    a.other, b.other = b, a
    a.kv = append(pool, None, [1, 2, 3, 4, 5])
    b.kv = a.kv.prefix(2)
    del a, b
    gc.collect()
    assert pool.kv_stats()["blocks_used"] == 0


def test_copy_on_write_of_shared_partial_block():
    pool = make_pool()
    base = append(pool, None, [1, 2, 3, 4, 5, 6])  # second block holds 2 of 4 slots
    short = base.prefix(5)  # shares the partial block, ends before its high-water mark
    grown = append(pool, short, [50, 60])
    assert content(pool, base) == [1, 2, 3, 4, 5, 6]
    assert content(pool, grown) == [1, 2, 3, 4, 5, 50, 60]
    assert grown.block_ids[0] == base.block_ids[0]  # the full block is shared, never copied
    assert grown.block_ids[1] != base.block_ids[1]  # the partial one was copied


def test_two_extensions_of_one_handle_do_not_clobber_each_other():
    pool = make_pool()
    base = append(pool, None, [1, 2, 3, 4, 5])
    first = append(pool, base, [10])
    second = append(pool, base, [20])
    assert content(pool, first) == [1, 2, 3, 4, 5, 10]
    assert content(pool, second) == [1, 2, 3, 4, 5, 20]
    assert content(pool, base) == [1, 2, 3, 4, 5]
    # the first extension wrote in place (base was at the block's high-water mark)
    assert first.block_ids.tolist() == base.block_ids.tolist()
    assert second.block_ids[1] != base.block_ids[1]


def test_decode_chain_writes_in_place_while_old_handles_live():
    pool = make_pool()
    chain = [append(pool, None, [1])]
    for value in range(2, 9):
        chain.append(append(pool, chain[-1], [value]))
    assert pool.kv_stats()["blocks_used"] == 2
    assert [content(pool, ref) for ref in chain][-1] == [1, 2, 3, 4, 5, 6, 7, 8]
    assert content(pool, chain[2]) == [1, 2, 3]


def test_sole_owner_overwrites_stale_slots_in_place():
    pool = make_pool()
    base = append(pool, None, [1, 2, 3, 4, 5])
    dropped = append(pool, base, [9, 9])
    del dropped
    again = append(pool, base, [6])
    assert again.block_ids.tolist() == base.block_ids.tolist()
    assert content(pool, again) == [1, 2, 3, 4, 5, 6]


def test_pool_grows_when_full():
    pool = make_pool(initial_blocks=2)
    ref = append(pool, None, list(range(1, 22)))  # 6 blocks
    assert pool.kv_stats()["blocks_total"] >= 6
    assert content(pool, ref) == list(range(1, 22))


def test_out_of_memory_is_clear_and_leaves_pool_intact():
    pool = make_pool(initial_blocks=2, max_blocks=3)
    ref = append(pool, None, [1, 2, 3, 4, 5])
    with pytest.raises(OutOfKVMemory, match=r"needs 3 free blocks but has 0 free of 2"):
        pool.extend([ref], [np.arange(9)])
    assert pool.kv_stats()["blocks_used"] == 2
    assert content(pool, ref) == [1, 2, 3, 4, 5]


def test_handle_from_another_pool_is_rejected():
    pool, other = make_pool(), make_pool()
    ref = append(other, None, [1.0])
    with pytest.raises(ValueError):
        pool.read(ref)


def test_stats_have_the_documented_keys():
    stats = make_pool().kv_stats()
    for key in ("block_size", "blocks_used", "blocks_total", "tokens_computed", "tokens_reused"):
        assert key in stats
    assert stats["block_size"] == BS and stats["blocks_used"] == 0


def published(pool: KVPool, values: list[float]) -> PagedKVRef:
    ref = append(pool, None, values)
    pool.publish(ref)
    return ref


def test_dropped_blocks_stay_findable_by_prefix():
    pool = make_pool()
    ref = published(pool, [1, 2, 3, 4, 5, 6, 7, 8, 9])
    blocks = ref.block_ids[:2].tolist()
    del ref
    assert pool.kv_stats()["blocks_used"] == 0 and pool.kv_stats()["blocks_cached"] == 2
    hit = pool.match_prefix(np.array([1, 2, 3, 4, 5, 6, 7, 8, 10]))
    assert hit.length == 8 and hit.block_ids.tolist() == blocks
    assert content(pool, hit) == [1, 2, 3, 4, 5, 6, 7, 8]
    assert pool.kv_stats()["blocks_used"] == 2 and pool.kv_stats()["blocks_cached"] == 0
    assert pool.match_prefix(np.array([1, 2, 3, 5, 5, 6, 7, 8, 9])) is None


def test_match_leaves_a_token_to_compute():
    pool = make_pool()
    published(pool, [1, 2, 3, 4, 5, 6, 7, 8, 9])
    assert pool.match_prefix(np.array([1, 2, 3, 4, 5, 6, 7, 8])).length == 4
    assert pool.match_prefix(np.array([1, 2, 3, 4])) is None


def test_cached_blocks_are_evicted_when_the_pool_is_full():
    pool = make_pool(initial_blocks=2, max_blocks=2)
    old = published(pool, [1, 2, 3, 4, 5, 6, 7, 8])
    del old
    new = append(pool, None, [9, 9, 9, 9, 9, 9, 9, 9])  # needs both cached blocks
    assert content(pool, new) == [9] * 8
    assert pool.match_prefix(np.array([1, 2, 3, 4, 5, 6, 7, 8, 0])) is None


def test_overwriting_a_published_block_in_place_unpublishes_it():
    pool = make_pool()
    full = published(pool, [1, 2, 3, 4, 5, 6, 7, 8])
    head = full.prefix(5)
    del full  # head is now the only owner of the second block
    changed = append(pool, head, [0, 0, 0])
    assert changed.block_ids.tolist() == head.block_ids.tolist()  # written in place
    hit = pool.match_prefix(np.array([1, 2, 3, 4, 5, 6, 7, 8, 9]))
    assert hit.length == 4  # the second block no longer holds 5..8


def test_prefix_cache_can_be_disabled():
    pool = make_pool(prefix_cache=False)
    ref = published(pool, [1, 2, 3, 4, 5, 6, 7, 8, 9])
    del ref
    assert pool.kv_stats()["blocks_cached"] == 0
    assert pool.match_prefix(np.array([1, 2, 3, 4, 5, 6, 7, 8, 9])) is None
