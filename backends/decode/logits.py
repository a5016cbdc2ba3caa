"""From a logits row to a token: the constraint mask, bans, and the sampler."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch

from backends import sampling
from backends.decode.errors import GenerationError
from backends.decode.model_view import DecodingModel
from backends.decode.prepare import Prepared, active_index
from backends.runner import Scored
from seqstate.samplers import Beam, Greedy, Sample


def constrained_logits(
    model: DecodingModel, logits: torch.Tensor, indexes: Sequence[Any], states: Sequence[int | None]
) -> torch.Tensor:
    """Logits [n, V] with the constraints applied: refused tokens at -inf and, in final
    states, the end token carrying the mass of the refused ones (see
    ``sampling.end_with_refused_mass``)."""
    allowed = model.masks.allowed(indexes, states, logits.shape[1])
    if allowed is None:
        return logits
    final = [i is not None and i.is_final(s) for i, s in zip(indexes, states)]
    if not any(final):
        return sampling.mask_logits(logits, allowed)
    flags = torch.tensor(final, device=logits.device)
    return sampling.end_with_refused_mass(logits, allowed, flags, model.end_token)


def banned_logits(logits: torch.Tensor, bans: Sequence[Sequence[int]]) -> torch.Tensor:
    """``logits`` [n, V] with ``bans[k]`` set to -inf in row ``k`` (a copy if any)."""
    pairs = [(k, t) for k, tokens in enumerate(bans) for t in tokens]
    if not pairs:
        return logits
    where = torch.tensor(pairs, device=logits.device)
    return sampling.ban_tokens(logits, where[:, 0], where[:, 1])


def scored_token_ids(model: DecodingModel, index: Any, state: int | None) -> np.ndarray | None:
    """The token ids whose logits the next step from ``state`` uses: the allowed ones,
    or None for all of them (free text; a final state, where the end token takes the
    mass of every refused token; or ``model.restrict_head`` off)."""
    if index is None or state is None or not model.restrict_head or index.is_final(state):
        return None
    return index.allowed_tokens(state)


def next_masks(
    model: DecodingModel, rows: Sequence[tuple[Prepared, int | None]]
) -> Scored | Callable[[], Scored]:
    """Build the masks of each row's next state and give the token ids its logits need
    (``scored_token_ids``). With ``model.mask_worker`` the masks are built there while
    the forward pass runs, and the forward gets a callable that waits for them: a
    fresh constraint's cold rows then cost no step time when the forward is longer."""

    def build() -> Scored:
        scored = []
        for prepared, state in rows:
            index = active_index(prepared, state)
            if index is not None and state is not None:
                index.bitmask(state)  # the row draw_tokens will read
            scored.append(scored_token_ids(model, index, state))
        return scored

    worker = model.mask_worker
    return build() if worker is None else worker.submit(build).result


def choose_tokens(
    logits: torch.Tensor, sampler: Any, generator: torch.Generator | None
) -> torch.Tensor:
    """Sampled token per row from already masked logits [n, V]."""
    if isinstance(sampler, Greedy | Beam):
        return sampling.greedy_tokens(logits)
    if isinstance(sampler, Sample):
        scores = sampling.filter_logits(
            logits,
            temperature=sampler.temperature,
            top_k=sampler.top_k,
            top_p=sampler.top_p,
            min_p=sampler.min_p,
        )
        return sampling.sample_tokens(scores, generator)
    raise GenerationError(f"unknown sampler {sampler!r}")


def seeded_rng(sampler: Any, device: torch.device) -> torch.Generator | None:
    """The random generator a seeded sampler draws from (None: torch's global one)."""
    if isinstance(sampler, Sample) and sampler.seed is not None:
        return torch.Generator(device=device).manual_seed(sampler.seed)
    return None
