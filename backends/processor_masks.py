"""Masking rows of a logits batch to their constraints, for the logits processors
(``backends.vllm.processor``, ``backends.hf_processor``), as seqstate's own engine does.

Refused tokens go to -inf and, in a final state, the end token also carries the
probability of every refused token (``backends.sampling.end_with_refused_mass``): a
span ends when the model wants to write something its constraint does not allow, not
only when it wants to end the whole text. Ids past an index's vocabulary (a padded
logits width) are refused.

Two paths give the same result: on an accelerator the packed masks are gathered and
unpacked on the device (``DeviceMasks``); on the CPU the rows are masked in numpy
through the tensor's memory, a handful of vectorized single-threaded operations, since
a dozen small torch operations per step cost more than the masking itself there (each
one wakes the intra-op thread pool).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

import fsm
from backends import sampling
from backends.masks import DeviceMasks

_NUMPY_DTYPES = (torch.float32, torch.float64)


def mask_rows(
    logits: torch.Tensor,
    positions: Sequence[int],
    indexes: Sequence[fsm.TokenIndex],
    states: Sequence[int],
    masks: DeviceMasks,
    end_token: int,
) -> torch.Tensor:
    """``logits`` [N, V] with row ``positions[k]`` masked to ``indexes[k]`` in
    ``states[k]``, in place (and returned); other rows are left as they are."""
    if not positions:
        return logits
    if logits.device.type == "cpu" and logits.dtype in _NUMPY_DTYPES:
        mask_rows_numpy(logits.numpy(), positions, indexes, states, end_token)
        return logits
    return mask_rows_torch(logits, positions, indexes, states, masks, end_token)


def mask_rows_torch(
    logits: torch.Tensor,
    positions: Sequence[int],
    indexes: Sequence[fsm.TokenIndex],
    states: Sequence[int],
    masks: DeviceMasks,
    end_token: int,
) -> torch.Tensor:
    """The device path: gather, unpack and mask on ``logits``' device, write back once."""
    where = torch.tensor(list(positions), device=logits.device)
    rows = logits.index_select(0, where)
    allowed = masks.allowed(indexes, states, logits.shape[1])
    assert allowed is not None  # every row has an index
    final = [index.is_final(state) for index, state in zip(indexes, states)]
    if any(final):
        flags = torch.tensor(final, device=logits.device)
        rows = sampling.end_with_refused_mass(rows, allowed, flags, end_token)
    else:
        rows = sampling.mask_logits(rows, allowed)
    return logits.index_copy_(0, where, rows)


def mask_rows_numpy(
    values: np.ndarray,
    positions: Sequence[int],
    indexes: Sequence[fsm.TokenIndex],
    states: Sequence[int],
    end_token: int,
) -> None:
    """The CPU path, in place on ``values`` [N, V] (a view of the logits' memory)."""
    rows = np.asarray(positions, dtype=np.intp)
    allowed = allowed_numpy(indexes, states, values.shape[1])
    selected = values[rows]
    final = np.fromiter((i.is_final(s) for i, s in zip(indexes, states)), bool, len(rows))
    if final.any():
        refused = np.where(allowed[final], -np.inf, selected[final])
        end = np.logaddexp(selected[final, end_token], _logsumexp(refused))
    np.copyto(selected, -np.inf, where=~allowed)
    if final.any():
        selected[final, end_token] = end
    values[rows] = selected


def allowed_numpy(
    indexes: Sequence[fsm.TokenIndex], states: Sequence[int], width: int
) -> np.ndarray:
    """bool [n, width]: the tokens each (index, state) allows (none past its vocabulary)."""
    words = (width + 31) // 32
    packed = np.zeros((len(states), words), dtype="<i4")
    for k, (index, state) in enumerate(zip(indexes, states)):
        mask = index.bitmask(state)[:words]
        packed[k, : len(mask)] = mask
    bits = np.unpackbits(packed.view(np.uint8), axis=1, bitorder="little")
    return bits[:, :width].view(bool)


def _logsumexp(values: np.ndarray) -> np.ndarray:
    """Row-wise log-sum-exp of [n, V] (-inf for a row of -inf)."""
    top = values.max(axis=1, keepdims=True)
    shift = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(divide="ignore"):
        return (np.log(np.exp(values - shift).sum(axis=1, keepdims=True)) + shift)[:, 0]
