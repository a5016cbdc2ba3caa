"""Masking a batch of logits rows to their constraints, for the logits processors
(``backends.vllm.processor``, ``backends.hf_processor``) as seqstate's own engine does.

Refused tokens go to -inf and, in a final state, the end token also carries the
probability of every refused token (``backends.sampling.end_with_refused_mass``): a
span ends when the model wants to write something its constraint does not allow, not
only when it wants to end the whole text. Masks are gathered and unpacked on the
logits' device (``DeviceMasks``).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

import fsm
from backends import sampling
from backends.masks import DeviceMasks


def mask_to_constraints(
    logits: torch.Tensor,
    indexes: Sequence[fsm.TokenIndex],
    states: Sequence[int],
    masks: DeviceMasks,
    end_token: int,
) -> torch.Tensor:
    """``logits`` [n, V] (row k under ``indexes[k]`` in ``states[k]``), masked (a new
    tensor). Ids past an index's vocabulary (a padded logits width) are refused."""
    allowed = masks.allowed(indexes, states, logits.shape[1])
    if allowed is None:
        return logits
    final = [index.is_final(state) for index, state in zip(indexes, states)]
    if not any(final):
        return sampling.mask_logits(logits, allowed)
    flags = torch.tensor(final, device=logits.device)
    return sampling.end_with_refused_mass(logits, allowed, flags, end_token)
