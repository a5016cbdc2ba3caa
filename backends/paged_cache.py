"""The bridge between the block pool and a transformers attention layer.

`PagedBatch` holds the device tensors that describe one padded batch (built once per
forward call by `build_batch`, a pure function of host arrays). `PagedCache` is a
`transformers.cache_utils.Cache` whose `update`, called by every attention layer with
the new rotated keys and values, scatters them into the pool at the rows' slots and
returns each row's whole past + new K/V gathered block by block from the pool. The
additive 4-D mask and explicit `position_ids` make every row see exactly its own
positions, so padded rows of different lengths give the results of running alone.

Per layer this is four indexing ops whatever the batch: no Python loop over rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from transformers.cache_utils import Cache

from backends.kv_pool import NULL_BLOCK, KVPool


@dataclass(frozen=True)
class PagedBatch:
    """One right-padded batch of `B` rows with at most `T` new tokens each."""

    input_ids: torch.Tensor  # [B, T] int64, padding = 0
    position_ids: torch.Tensor  # [B, T] int64, absolute position of each token in its row
    write_slots: torch.Tensor  # [B * T] int64 pool slot of each new token, padding -> null slot
    block_table: torch.Tensor  # [B, nblk] int64 blocks of each row, padding -> null block
    kv_length: int  # longest row (past + new): gathered keys are cut there
    attention_mask: torch.Tensor | None  # [B, 1, T, kv_length] additive; None: plain causal
    fresh: bool  # no row has a past: attention reads the new K/V directly, no gather


def build_batch(
    past: np.ndarray,
    tokens: list[np.ndarray],
    slots: list[np.ndarray],
    blocks: list[np.ndarray],
    *,
    dtype: torch.dtype,
    device: torch.device,
) -> PagedBatch:
    """Pad host arrays into device tensors and build the mask.

    past: [B] positions already in each row's KV; tokens/slots: per row, the new token
    ids and their pool slots; blocks: per row, the block table after extension."""
    rows = len(tokens)
    counts = np.array([len(t) for t in tokens], dtype=np.int64)
    width = int(counts.max())
    n_blocks = max(len(b) for b in blocks)
    ids = np.zeros((rows, width), dtype=np.int64)
    write = np.full((rows, width), NULL_BLOCK, dtype=np.int64)  # slot 0 of the null block
    table = np.full((rows, n_blocks), NULL_BLOCK, dtype=np.int64)
    for row in range(rows):
        ids[row, : counts[row]] = tokens[row]
        write[row, : counts[row]] = slots[row]
        table[row, : len(blocks[row])] = blocks[row]
    total = past + counts
    kv_length = int(total.max())
    fresh = not past.any()

    past_t = torch.from_numpy(past).to(device)
    position_ids = past_t[:, None] + torch.arange(width, device=device)  # [B, T]
    mask = None  # every row ends at kv_length and either is fresh or has one query token
    if (total != kv_length).any() or (width > 1 and not fresh):
        key_pos = torch.arange(kv_length, device=device)  # [K]
        total_t = torch.from_numpy(total).to(device)
        visible = (key_pos <= position_ids[:, :, None]) & (key_pos < total_t[:, None, None])
        mask = torch.zeros(visible.shape, dtype=dtype, device=device)  # [B, T, K]
        mask = mask.masked_fill_(~visible, torch.finfo(dtype).min)[:, None]
    return PagedBatch(
        input_ids=torch.from_numpy(ids).to(device),
        position_ids=position_ids,
        write_slots=torch.from_numpy(write.reshape(-1)).to(device),
        block_table=torch.from_numpy(table).to(device),
        kv_length=kv_length,
        attention_mask=mask,
        fresh=fresh,
    )


class PagedCache(Cache):
    """A one-forward-call view of `pool` for the rows of `batch` (transformers Cache API)."""

    def __init__(self, pool: KVPool, batch: PagedBatch) -> None:
        super().__init__(layers=[])
        self.pool = pool
        self.batch = batch

    def update(
        self,
        key_states: torch.Tensor,
        value_states: torch.Tensor,
        layer_idx: int,
        *args: Any,
        **kwargs: Any,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """key/value_states: [B, kv_heads, T, head_dim] -> gathered [B, kv_heads, kv_length, head_dim]."""
        return (
            _write_and_gather(self.pool.keys[layer_idx], key_states, self.batch),
            _write_and_gather(self.pool.values[layer_idx], value_states, self.batch),
        )

    def get_seq_length(self, layer_idx: int = 0) -> int:
        """Past length, used by transformers only when `attention_mask` is None, i.e. when
        every row has the same past: it then builds the plain causal mask itself."""
        return self.batch.kv_length - self.batch.input_ids.shape[1]

    def get_mask_sizes(self, query_length: int, layer_idx: int = 0) -> tuple[int, int]:
        return self.batch.kv_length, 0


def _write_and_gather(store: torch.Tensor, new: torch.Tensor, batch: PagedBatch) -> torch.Tensor:
    """store: [num_blocks, block_size, H, D]; new: [B, H, T, D]."""
    rows, heads, _, dim = new.shape
    flat = store.view(-1, heads, dim)  # [num_blocks * block_size, H, D]
    flat.index_copy_(0, batch.write_slots, new.transpose(1, 2).reshape(-1, heads, dim))
    if batch.fresh:
        return new
    gathered = store[batch.block_table]  # [B, nblk, block_size, H, D]
    gathered = gathered.view(rows, -1, heads, dim)[:, : batch.kv_length]  # [B, K, H, D]
    return gathered.transpose(1, 2)  # [B, H, K, D]
