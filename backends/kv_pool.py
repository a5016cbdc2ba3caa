"""Paged K/V storage for one model: fixed-size blocks, reference counts, copy-on-write.

Keys and values of all layers live in two tensors
`[num_layers, num_blocks, block_size, kv_heads, head_dim]` on the model's device, so a
block copy or a pool growth is one tensor operation for every layer at once.

Block 0 is a reserved *null block*: padded reads point at it and padded writes land in
it, so batched kernels never branch on padding. It is not counted in the statistics.

Appending (`extend`) follows the copy-on-write rule of the design, refined so that a
decode loop whose earlier states stay alive still writes in place: the partly filled
last block of a handle is written in place when this handle ends at the block's
high-water mark (nobody has written after it, so no live handle can read the slots
about to be written) or when the handle is the block's only owner; otherwise the
block is copied first. Full blocks are never copied.

Prefix cache (vLLM-style, optional): the pool remembers the token id written at every
slot, so once a forward has filled a block, `publish` files it under a hash of all
tokens from position 0 to the block's end. A block whose last handle is dropped stays
findable by that hash (an LRU of evictable blocks, reclaimed only when the free list
is empty), and `match_prefix` turns the longest run of cached full blocks at the
start of a token sequence into a handle, so the same prompt built twice is computed
once.

Threads: the pool's bookkeeping (reference counts, free list, prefix cache) is guarded
by its own lock, so handles may be created (`PagedKVRef.prefix` while slicing a state) and
dropped from any thread. A dropped handle's blocks are only queued (`release`): the
garbage collector may finalize a handle in the middle of a pool operation, even in the
thread running it, so the queue is drained at the start of the next operation, under
the lock. Forward passes that write K/V into the storage are serialized by the owning
model's lock (`backends.model`).
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict, deque
from collections.abc import Sequence

import numpy as np
import torch

from backends.kvref import PagedKVRef

NULL_BLOCK = 0


class OutOfKVMemory(RuntimeError):
    """The pool cannot grow to hold the blocks a forward pass needs."""


class KVPool:
    """Block storage, free list, reference counts and reuse statistics of one model."""

    def __init__(
        self,
        *,
        num_layers: int,
        kv_heads: int,
        head_dim: int,
        block_size: int = 16,
        dtype: torch.dtype = torch.float32,
        device: torch.device | str = "cpu",
        initial_blocks: int = 64,
        max_blocks: int | None = None,
        prefix_cache: bool = True,
    ) -> None:
        if block_size < 1 or initial_blocks < 1:
            raise ValueError("block_size and initial_blocks must be positive")
        if max_blocks is not None and max_blocks < initial_blocks:
            raise ValueError(f"max_blocks={max_blocks} is below initial_blocks={initial_blocks}")
        self.block_size = block_size
        self.max_blocks = max_blocks
        total = initial_blocks + 1  # + the null block
        shape = (num_layers, total, block_size, kv_heads, head_dim)
        self.keys = torch.zeros(shape, dtype=dtype, device=device)
        self.values = torch.zeros(shape, dtype=dtype, device=device)
        self._refs = np.zeros(total, dtype=np.int64)
        self._filled = np.zeros(total, dtype=np.int64)  # high-water mark of written slots
        self._tokens = np.zeros((total, block_size), dtype=np.int64)  # token id at each slot
        self._refs[NULL_BLOCK] = 1
        self._free = list(range(total - 1, 0, -1))  # pop() hands out low ids first
        self.prefix_cache = prefix_cache
        self._hash_of: dict[int, bytes] = {}  # full block -> hash of tokens [0, block end)
        self._by_hash: dict[bytes, int] = {}  # hash -> the block findable under it
        self._evictable: OrderedDict[int, None] = OrderedDict()  # unowned findable blocks, LRU
        self.tokens_computed = 0
        self.tokens_reused = 0
        self._lock = threading.RLock()
        self._released: deque[np.ndarray] = deque()  # blocks of dropped handles, to decref

    # --- reference counting (called by PagedKVRef) -------------------------------------

    def incref(self, blocks: np.ndarray) -> None:
        with self._lock:
            self._refs[blocks] += 1  # a handle's blocks are distinct, so fancy += is exact

    def release(self, blocks: np.ndarray) -> None:
        """Queue the blocks of a dropped handle (safe from any thread, at any point)."""
        self._released.append(blocks)

    def collect(self) -> None:
        """Give back the references of dropped handles (see the module doc)."""
        with self._lock:
            while self._released:
                self._decref(self._released.popleft())

    def _decref(self, blocks: np.ndarray) -> None:
        self._refs[blocks] -= 1
        dead = blocks[self._refs[blocks] == 0]
        for block in dead.tolist():
            if self._by_hash.get(self._hash_of.get(block, b"")) == block:
                self._evictable[block] = None
            else:
                self._forget(block)
                self._free.append(block)

    # --- appending ----------------------------------------------------------------

    def extend(
        self, bases: Sequence[PagedKVRef | None], tokens: Sequence[np.ndarray]
    ) -> tuple[list[PagedKVRef], list[np.ndarray]]:
        """For each row, a new handle of `base.length + len(tokens)` positions and the pool
        slots (`block * block_size + offset`) where the K/V of the new positions go.

        Copy-on-write copies of shared partial blocks are made here, in one tensor op.
        Raises `OutOfKVMemory` before touching anything when the pool cannot grow enough.
        """
        with self._lock:
            self.collect()
            return self._extend(bases, tokens)

    def _extend(
        self, bases: Sequence[PagedKVRef | None], tokens: Sequence[np.ndarray]
    ) -> tuple[list[PagedKVRef], list[np.ndarray]]:
        bs = self.block_size
        lengths = [0 if base is None else base.length for base in bases]
        worst = sum(-(-(n0 + len(t)) // bs) - n0 // bs for n0, t in zip(lengths, tokens))
        self._reserve(worst)
        copy_src: list[int] = []
        copy_dst: list[int] = []
        refs: list[PagedKVRef] = []
        slots: list[np.ndarray] = []
        for base, start, new in zip(bases, lengths, tokens):
            if len(new) == 0:
                raise ValueError("cannot extend a PagedKVRef by 0 positions")
            blocks = [] if base is None else base.block_ids.tolist()
            used = start % bs
            end = start + len(new)
            if used:
                last = blocks[-1]
                if self._filled[last] != used and self._refs[last] != 1:
                    copy_src.append(last)
                    last = blocks[-1] = self._take()
                    copy_dst.append(last)
                    self._tokens[last] = self._tokens[copy_src[-1]]
                else:
                    self._unpublish(last)  # its slots after `used` may be overwritten
                self._filled[last] = min(bs, end - (len(blocks) - 1) * bs)
            while len(blocks) * bs < end:
                block = self._take()
                self._filled[block] = min(bs, end - len(blocks) * bs)
                blocks.append(block)
            ids = np.asarray(blocks, dtype=np.int64)
            positions = np.arange(start, end)
            where = ids[positions // bs] * bs + positions % bs
            self._tokens.reshape(-1)[where] = new
            slots.append(where)
            refs.append(PagedKVRef(self, ids, end))
        if copy_src:
            src = torch.tensor(copy_src, device=self.keys.device)
            dst = torch.tensor(copy_dst, device=self.keys.device)
            self.keys[:, dst] = self.keys[:, src]
            self.values[:, dst] = self.values[:, src]
        return refs, slots

    def _reserve(self, needed: int) -> None:
        """Make sure `needed` blocks can be taken, doubling the storage if allowed."""
        available = len(self._free) + len(self._evictable)
        if needed <= available:
            return
        total = self.keys.shape[1]
        want = total + needed - available
        new_total = max(want, 2 * total - 1)
        if self.max_blocks is not None:
            new_total = min(new_total, self.max_blocks + 1)
        if new_total < want:
            raise OutOfKVMemory(
                f"the KV pool needs {needed} free blocks but has {available} free of "
                f"{total - 1} (block_size={self.block_size}, max_blocks={self.max_blocks}, "
                f"{self.blocks_used} in use); drop unused states or raise max_blocks"
            )
        grow = new_total - total
        shape = (self.keys.shape[0], grow, *self.keys.shape[2:])
        zeros = torch.zeros(shape, dtype=self.keys.dtype, device=self.keys.device)
        self.keys = torch.cat([self.keys, zeros], dim=1)
        self.values = torch.cat([self.values, zeros], dim=1)
        self._refs = np.concatenate([self._refs, np.zeros(grow, dtype=np.int64)])
        self._filled = np.concatenate([self._filled, np.zeros(grow, dtype=np.int64)])
        self._tokens = np.concatenate([self._tokens, np.zeros((grow, self.block_size), np.int64)])
        self._free[:0] = range(new_total - 1, total - 1, -1)

    def _take(self) -> int:
        """A block for writing: from the free list, else the least recently cached one."""
        if self._free:
            return self._free.pop()
        block, _ = self._evictable.popitem(last=False)
        self._forget(block)
        return block

    # --- prefix cache ---------------------------------------------------------------

    def publish(self, ref: PagedKVRef) -> None:
        """File the full blocks of `ref` by content hash; call once their K/V is written."""
        if not self.prefix_cache:
            return
        with self._lock:
            self._publish(ref)

    def _publish(self, ref: PagedKVRef) -> None:
        blocks = ref.block_ids.tolist()
        full = ref.length // self.block_size
        first = full
        while first > 0 and blocks[first - 1] not in self._hash_of:
            first -= 1
        previous = self._hash_of[blocks[first - 1]] if first else b""
        for block in blocks[first:full]:
            previous = self._hash_of[block] = _chain(previous, self._tokens[block])
            self._by_hash.setdefault(previous, block)

    def match_prefix(self, tokens: np.ndarray) -> PagedKVRef | None:
        """A handle on the longest run of cached full blocks that starts `tokens`, leaving
        at least one token to compute (its logits are needed); None when nothing matches."""
        if not self.prefix_cache:
            return None
        with self._lock:
            self.collect()
            return self._match_prefix(tokens)

    def _match_prefix(self, tokens: np.ndarray) -> PagedKVRef | None:
        bs = self.block_size
        blocks: list[int] = []
        previous = b""
        while (len(blocks) + 1) * bs < len(tokens):
            start = len(blocks) * bs
            previous = _chain(previous, tokens[start : start + bs])
            block = self._by_hash.get(previous)
            if block is None:
                break
            blocks.append(block)
        if not blocks:
            return None
        for block in blocks:
            self._evictable.pop(block, None)
        return PagedKVRef(self, np.asarray(blocks, dtype=np.int64), len(blocks) * bs)

    def _unpublish(self, block: int) -> None:
        """Stop finding `block` by hash: its content is about to change."""
        key = self._hash_of.pop(block, None)
        if key is not None and self._by_hash.get(key) == block:
            del self._by_hash[key]

    def _forget(self, block: int) -> None:
        self._unpublish(block)
        self._filled[block] = 0

    # --- reading and statistics ---------------------------------------------------

    def read(self, ref: PagedKVRef) -> tuple[torch.Tensor, torch.Tensor]:
        """Copies of a handle's keys and values, `[num_layers, length, kv_heads, head_dim]` each."""
        if ref.pool is not self:
            raise ValueError("this PagedKVRef belongs to another pool")
        shape = (self.keys.shape[0], -1, *self.keys.shape[3:])
        blocks = torch.tensor(ref.block_ids, device=self.keys.device)
        keys = self.keys[:, blocks].reshape(shape)[:, : ref.length]
        values = self.values[:, blocks].reshape(shape)[:, : ref.length]
        return keys, values

    @property
    def blocks_used(self) -> int:
        self.collect()
        return int(np.count_nonzero(self._refs)) - 1

    @property
    def blocks_total(self) -> int:
        return self.keys.shape[1] - 1

    def kv_stats(self) -> dict[str, int]:
        """`tokens_computed`: positions run through the model; `tokens_reused`: positions
        that a recompute from scratch of every requested row would have run on top of that."""
        with self._lock:
            used, cached = self.blocks_used, len(self._evictable)
        return {
            "block_size": self.block_size,
            "blocks_used": used,
            "blocks_cached": cached,
            "blocks_total": self.blocks_total,
            "bytes_per_block": 2 * self.keys[:, 0].numel() * self.keys.element_size(),
            "tokens_computed": self.tokens_computed,
            "tokens_reused": self.tokens_reused,
        }


def _chain(previous: bytes, tokens: np.ndarray) -> bytes:
    """Hash of a block's tokens chained to the hash of everything before it."""
    data = previous + np.ascontiguousarray(tokens, dtype=np.int64).tobytes()
    return hashlib.blake2b(data, digest_size=16).digest()
