"""Pure tensor steps between logits and tokens: masking, filtering, sampling, scoring.

Every function takes tensors and returns tensors, with no host synchronisation, so a
decode step can run ahead on the device. Shapes: ``n`` rows, ``V`` vocabulary (logits
width), ``W = ceil(V / 32)`` mask words.
"""

from __future__ import annotations

import torch

_SHIFTS = torch.arange(32, dtype=torch.int32)


def unpack_bitmask(bitmask: torch.Tensor, width: int) -> torch.Tensor:
    """Packed int32 masks [n, W] -> bool [n, width]; bit ``t % 32`` of word ``t // 32``."""
    shifts = _SHIFTS.to(bitmask.device)
    bits = (bitmask.unsqueeze(-1) >> shifts) & 1  # [n, W, 32]
    return bits.reshape(bitmask.shape[0], -1)[:, :width].bool()


def mask_logits(logits: torch.Tensor, allowed: torch.Tensor) -> torch.Tensor:
    """Logits [n, V] with disallowed entries set to -inf (allowed: bool [n, V'], V' <= V)."""
    width = allowed.shape[1]
    out = torch.full_like(logits, float("-inf"))
    out[:, :width] = torch.where(allowed, logits[:, :width], float("-inf"))
    return out


def ban_tokens(logits: torch.Tensor, rows: torch.Tensor, tokens: torch.Tensor) -> torch.Tensor:
    """A copy of ``logits`` with ``(rows[i], tokens[i])`` set to -inf."""
    out = logits.clone()
    out[rows, tokens] = float("-inf")
    return out


def filter_logits(
    logits: torch.Tensor,
    *,
    temperature: float = 1.0,
    top_k: int | None = None,
    top_p: float | None = None,
    min_p: float | None = None,
) -> torch.Tensor:
    """Temperature, then top-k, top-p and min-p filters (removed entries -> -inf)."""
    scores = logits / temperature
    if top_k is not None and top_k < scores.shape[-1]:
        kth = torch.topk(scores, top_k, dim=-1).values[:, -1:]
        scores = scores.masked_fill(scores < kth, float("-inf"))
    if min_p is not None and min_p > 0:
        probs = torch.softmax(scores, dim=-1)
        threshold = probs.max(dim=-1, keepdim=True).values * min_p
        scores = scores.masked_fill(probs < threshold, float("-inf"))
    if top_p is not None and top_p < 1:
        sorted_scores, order = torch.sort(scores, dim=-1, descending=True)
        cumulative = torch.softmax(sorted_scores, dim=-1).cumsum(dim=-1)
        # Drop a token when the mass before it already reaches top_p (keeps at least one).
        drop_sorted = (cumulative - torch.softmax(sorted_scores, dim=-1)) >= top_p
        drop = torch.zeros_like(drop_sorted).scatter(-1, order, drop_sorted)
        scores = scores.masked_fill(drop, float("-inf"))
    return scores


def greedy_tokens(logits: torch.Tensor) -> torch.Tensor:
    """Argmax per row: [n] int64."""
    return logits.argmax(dim=-1)


def sample_tokens(scores: torch.Tensor, generator: torch.Generator | None) -> torch.Tensor:
    """One multinomial draw per row from softmax(scores): [n] int64."""
    probs = torch.softmax(scores.float(), dim=-1)
    return torch.multinomial(probs, 1, generator=generator).squeeze(-1)


def token_logprobs(logits: torch.Tensor, tokens: torch.Tensor) -> torch.Tensor:
    """Log-probability of each row's token under softmax(logits): [n] float32."""
    logp = torch.log_softmax(logits.float(), dim=-1)
    return logp.gather(-1, tokens.unsqueeze(-1)).squeeze(-1)


def end_with_refused_mass(
    logits: torch.Tensor, allowed: torch.Tensor, final: torch.Tensor, end_token: int
) -> torch.Tensor:
    """Masked logits [n, V] where, in rows whose constraint state is final, the end
    token also carries the probability of every token the constraint refuses.

    Inside a chained program a span ends when the model wants to write something its
    constraint does not allow (``"56"`` then ``"."``), not only when it wants to end the
    whole text: P(end of span) = P(EOS) + P(refused tokens)."""
    width = allowed.shape[1]
    refused = logits[:, :width].masked_fill(allowed, float("-inf"))
    outside = torch.logsumexp(refused, dim=-1)  # [n]
    masked = mask_logits(logits, allowed)
    end = torch.logaddexp(masked[:, end_token], outside)
    masked[:, end_token] = torch.where(final, end, masked[:, end_token])
    return masked
