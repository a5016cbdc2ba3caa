"""`ModelRunner`: run a transformers causal LM over rows of `(PagedKVRef | None, new token ids)`.

Each call computes only the tokens beyond each row's `PagedKVRef`, and computes a prefix
shared by several rows once (`batch_plan`). Rows with identical `(KV, tokens)` get the
same logits row and the same new handle. Generation policy (sampling, constraints,
beams) lives above this class; it only turns tokens into logits and K/V.

Decoding one token per row is the same call with one-token rows; `forward_paged` is
the pure step both prefill and decode go through.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch

from backends.batch_plan import Plan, plan_rows
from backends.head import head_logits
from backends.kv_pool import KVPool
from backends.kvref import PagedKVRef
from backends.paged_cache import PagedBatch, PagedCache, build_batch

Feed = tuple[PagedKVRef | None, Any]  # (base KV, 1-D int token ids: numpy array, list or tensor)
Scored = Sequence[np.ndarray | None]  # per row: the token ids its logits need (None: all)

SUPPORTED_ATTENTION = ("sdpa", "eager")


def forward_paged(decoder: torch.nn.Module, pool: KVPool, batch: PagedBatch) -> torch.Tensor:
    """Run the decoder stack on `batch`, writing new K/V into `pool`: hidden [B, T, E]."""
    out = decoder(
        input_ids=batch.input_ids,
        attention_mask=batch.attention_mask,
        position_ids=batch.position_ids,
        past_key_values=PagedCache(pool, batch),
        use_cache=True,
    )
    return out.last_hidden_state


class ModelRunner:
    """The execution layer of one model: its block pool and batched, prefix-sharing forwards."""

    def __init__(
        self,
        model: torch.nn.Module,
        *,
        block_size: int = 16,
        initial_blocks: int = 64,
        max_blocks: int | None = None,
        min_shared_tokens: int = 8,
        max_levels: int = 4,
        prefix_cache: bool = True,
    ) -> None:
        config = model.config.get_text_config()
        attention = config._attn_implementation
        if attention not in SUPPORTED_ATTENTION:
            raise ValueError(
                f"attention implementation {attention!r} is not supported; load the model with "
                f"attn_implementation='sdpa' (or one of {SUPPORTED_ATTENTION})"
            )
        self.model = model.eval()
        self._decoder = model.get_decoder()
        self._head = model.get_output_embeddings()
        self._embed_rows = model.get_input_embeddings().num_embeddings
        weight = self._head.weight
        self.device = weight.device
        self.dtype = weight.dtype
        self.vocab_size = weight.shape[0]
        self.min_shared_tokens = min_shared_tokens
        self.max_levels = max_levels
        head_dim = (
            getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads
        )
        self.pool = KVPool(
            num_layers=config.num_hidden_layers,
            kv_heads=config.num_key_value_heads,
            head_dim=head_dim,
            block_size=block_size,
            dtype=self.dtype,
            device=self.device,
            initial_blocks=initial_blocks,
            max_blocks=max_blocks,
            prefix_cache=prefix_cache,
        )

    def kv_stats(self) -> dict[str, int]:
        return self.pool.kv_stats()

    def forward(
        self, rows: Sequence[Feed], only: Scored | Callable[[], Scored] | None = None
    ) -> tuple[torch.Tensor, list[PagedKVRef]]:
        """Logits of each row's last new token `[n_rows, vocab]` and each row's new handle.

        `only[i]`, when given, lists the token ids whose logits row `i` needs (a
        constraint's allowed tokens); the head may then skip the others, which come
        back as -inf (`backends.head`). `only` may be a callable giving that list: it
        is called after the model's layers and before its head, so that whatever
        computes it (masks built in another thread) overlaps the forward pass."""
        if not rows:
            return torch.empty(0, self.vocab_size, device=self.device, dtype=self.dtype), []
        plan, refs, last, _ = self._execute(rows, all_positions=False)
        if callable(only):
            only = only()
        index = torch.tensor(plan.row_end, device=self.device)
        with torch.inference_mode():
            logits = head_logits(last[index], self._head, self.vocab_size, only)
        return logits, [refs[s] for s in plan.row_end]

    def forward_all(self, rows: Sequence[Feed]) -> tuple[list[torch.Tensor], list[PagedKVRef]]:
        """Logits of every new token of each row (`[n_new_i, vocab]`) and each row's new handle."""
        plan, refs, _, every = self._execute(rows, all_positions=True)
        logits = [torch.cat([every[s] for s in plan.path(row)]) for row in range(len(rows))]
        return logits, [refs[s] for s in plan.row_end]

    # --- internals ------------------------------------------------------------------

    def _execute(
        self, rows: Sequence[Feed], *, all_positions: bool
    ) -> tuple[Plan, list[PagedKVRef], torch.Tensor, list[torch.Tensor]]:
        """Run every edge of the plan, level by level.

        Returns the plan, each edge's new handle, the last-token hidden states of
        the edges that end a row (`[n_edges, E]`, rows of other edges
        undefined) and, with `all_positions`, every edge's per-token logits."""
        bases, tokens = self._check(rows)
        requested = sum((0 if b is None else b.length) + len(t) for b, t in zip(bases, tokens))
        for i, base in enumerate(bases):
            if base is None and (cached := self.pool.match_prefix(tokens[i])) is not None:
                bases[i], tokens[i] = cached, tokens[i][cached.length :]
        plan = plan_rows(
            [None if b is None else b.content_key for b in bases],
            tokens,
            min_shared=self.min_shared_tokens,
            max_levels=self.max_levels,
        )
        n_seg = len(plan.edges)
        refs: list[Any] = [None] * n_seg
        last: torch.Tensor | None = None
        every: list[Any] = [None] * n_seg
        ends = set(plan.row_end)
        with torch.inference_mode():
            for level in plan.levels():
                edges = [plan.edges[s] for s in level]
                level_bases = [
                    bases[seg.base_row] if seg.parent < 0 else refs[seg.parent] for seg in edges
                ]
                new_refs, hidden, counts = self._run(level_bases, [seg.tokens for seg in edges])
                for s, ref in zip(level, new_refs):
                    refs[s] = ref
                    self.pool.publish(ref)
                wanted = [i for i, s in enumerate(level) if s in ends]
                if wanted:
                    rows_t = torch.tensor(wanted, device=self.device)
                    cols = torch.tensor([counts[i] - 1 for i in wanted], device=self.device)
                    if last is None:
                        last = hidden.new_empty(n_seg, hidden.shape[-1])
                    last[[level[i] for i in wanted]] = hidden[rows_t, cols]
                if all_positions:
                    valid = (
                        torch.arange(hidden.shape[1], device=self.device)
                        < torch.tensor(counts, device=self.device)[:, None]
                    )
                    flat = self._head(hidden[valid])  # [sum(counts), vocab]
                    for s, chunk in zip(level, flat.split(counts)):
                        every[s] = chunk
        computed = sum(len(seg.tokens) for seg in plan.edges)
        self.pool.tokens_computed += computed
        self.pool.tokens_reused += requested - computed
        assert last is not None  # every row ends in some edge
        return plan, refs, last, every

    def _run(
        self, bases: list[PagedKVRef | None], tokens: list[np.ndarray]
    ) -> tuple[list[PagedKVRef], torch.Tensor, list[int]]:
        """One batched forward: new handles, hidden states [B, T, E], tokens per row."""
        counts = [len(t) for t in tokens]
        refs, slots = self.pool.extend(bases, tokens)
        past = np.array([0 if b is None else b.length for b in bases], dtype=np.int64)
        batch = build_batch(
            past, tokens, slots, [r.block_ids for r in refs], dtype=self.dtype, device=self.device
        )
        return refs, forward_paged(self._decoder, self.pool, batch), counts

    def _check(self, rows: Sequence[Feed]) -> tuple[list[PagedKVRef | None], list[np.ndarray]]:
        """Validate rows; token ids become 1-D int64 numpy arrays."""
        bases: list[PagedKVRef | None] = []
        tokens: list[np.ndarray] = []
        for i, (kv, ids) in enumerate(rows):
            if kv is not None and (not isinstance(kv, PagedKVRef) or kv.pool is not self.pool):
                raise ValueError(f"row {i}: the PagedKVRef does not belong to this runner's pool")
            if isinstance(ids, torch.Tensor):
                ids = ids.cpu().numpy()
            arr = np.asarray(ids, dtype=np.int64)
            if arr.ndim != 1 or len(arr) == 0:
                raise ValueError(
                    f"row {i}: expected a non-empty 1-D sequence of token ids, got shape {arr.shape}; "
                    "to get logits for a position already in the KV, pass kv.prefix(n - 1) and the last token"
                )
            if arr.min() < 0 or arr.max() >= self._embed_rows:
                raise ValueError(f"row {i}: token ids must lie in [0, {self._embed_rows})")
            bases.append(kv)
            tokens.append(arr)
        return bases, tokens
