"""The output head, computed only where a constraint can use it.

A constrained decode step needs the logits of the allowed tokens only: the mask sets
every other entry to -inf before sampling, and a masked softmax normalises over the
allowed tokens alone. When the constraint allows a few hundred of a 49k vocabulary
(JSON keys, punctuation, digits, enums), gathering those rows of the head's weight
costs a small fraction of the full ``[V, E]`` product, which on a small model is a
fifth of the whole forward pass.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

RESTRICT_BELOW = 1 / 8  # restrict a row when it needs fewer than this share of the vocabulary


def head_logits(
    hidden: torch.Tensor,
    head: torch.nn.Module,
    vocab_size: int,
    only: Sequence[np.ndarray | None] | None = None,
) -> torch.Tensor:
    """Logits ``[n, vocab_size]`` of the hidden states ``[n, E]``.

    ``only[i]``, when given, lists the token ids whose logits row ``i`` needs; that row
    is computed for those ids alone and is -inf elsewhere (a row needing a large share
    of the vocabulary, or ``None``, gets the full product). ``head`` is a linear layer
    (``weight [V, E]``, optional ``bias``)."""
    flags = [_restricted(ids, vocab_size) for ids in only] if only is not None else []
    if not any(flags):
        return head(hidden)
    restricted = [i for i, flag in enumerate(flags) if flag]
    full = [i for i, flag in enumerate(flags) if not flag]
    out = torch.full(
        (hidden.shape[0], vocab_size), float("-inf"), dtype=hidden.dtype, device=hidden.device
    )
    if full:
        rows = torch.as_tensor(full, device=hidden.device)
        out[rows] = head(hidden[rows]).to(out.dtype)
    ids_np = np.concatenate([np.asarray(only[i], dtype=np.int64) for i in restricted])
    row_np = np.repeat(restricted, [len(only[i]) for i in restricted])  # type: ignore[arg-type]
    ids = torch.as_tensor(ids_np, device=hidden.device)
    rows = torch.as_tensor(row_np, device=hidden.device)
    weight = head.weight.index_select(0, ids)  # [K, E]
    values = torch.einsum("ke,ke->k", weight, hidden.index_select(0, rows).to(weight.dtype))
    bias = getattr(head, "bias", None)
    if bias is not None:
        values = values + bias.index_select(0, ids)
    out[rows, ids] = values.to(out.dtype)
    return out


def _restricted(ids: np.ndarray | None, vocab_size: int) -> bool:
    return ids is not None and 0 < len(ids) < vocab_size * RESTRICT_BELOW
