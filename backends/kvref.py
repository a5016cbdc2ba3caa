"""`PagedKVRef`: the native engine's `seqstate.KVRef`, an immutable handle on the pooled
K/V of a token prefix.

A handle is `(pool, block_ids, length)`. Creating one takes a reference on each of its
blocks; the reference is given back by a `weakref.finalize` when the handle is
collected, so a handle caught in a reference cycle is still released by the garbage
collector. Only the pool creates handles (`KVPool.extend`), apart from `prefix`, which
shares blocks and copies nothing.

The finalizer only queues the blocks (`KVPool.release`): it may run in any thread and
at any point, even in the middle of a pool operation, so it must not touch the counts.
"""

from __future__ import annotations

import weakref
from typing import Protocol

import numpy as np


class BlockOwner(Protocol):
    """What a handle needs from the pool that owns its blocks (`KVPool` implements it)."""

    @property
    def block_size(self) -> int:
        """Positions per block."""
        ...

    def incref(self, blocks: np.ndarray) -> None:
        """Take one reference on each block."""
        ...

    def release(self, blocks: np.ndarray) -> None:
        """Give the references back (queued: safe from a finalizer in any thread)."""
        ...


class PagedKVRef:
    """The K/V of positions `[0, length)` of one sequence, stored in `block_ids` of `pool`."""

    __slots__ = ("_pool", "_blocks", "_length", "__weakref__")

    def __init__(self, pool: BlockOwner, blocks: np.ndarray, length: int) -> None:
        """Internal: `pool.extend` and `prefix` build handles; this takes a reference on `blocks`."""
        blocks = np.array(blocks, dtype=np.int64)
        blocks.setflags(write=False)
        if length <= 0 or len(blocks) != -(-length // pool.block_size):
            raise ValueError(f"{len(blocks)} blocks cannot hold exactly {length} positions")
        self._pool = pool
        self._blocks = blocks
        self._length = length
        pool.incref(blocks)
        weakref.finalize(self, pool.release, blocks).atexit = False

    @property
    def pool(self) -> BlockOwner:
        """The pool that owns the blocks (compare with `is` to tell pools apart)."""
        return self._pool

    @property
    def length(self) -> int:
        """Number of positions whose K/V this handle covers."""
        return self._length

    @property
    def block_ids(self) -> np.ndarray:
        """Read-only int64 array of the pool blocks holding positions `[0, length)`, in order."""
        return self._blocks

    @property
    def content_key(self) -> tuple[bytes, int]:
        """Equal for handles that read the same slots, hence hold the same K/V."""
        return self._blocks.tobytes(), self._length

    def prefix(self, n: int) -> PagedKVRef | None:
        """The first `n` positions, sharing this handle's blocks (no copy); None when `n == 0`."""
        if not 0 <= n <= self._length:
            raise ValueError(f"prefix({n}) of a PagedKVRef of length {self._length}")
        if n == self._length:
            return self
        if n == 0:
            return None
        return PagedKVRef(self._pool, self._blocks[: -(-n // self._pool.block_size)], n)

    def __repr__(self) -> str:
        return f"PagedKVRef(length={self._length}, blocks={self._blocks.tolist()})"
