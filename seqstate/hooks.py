"""Post-sampling hooks: see each sampled token and accept, replace, resample or backtrack.

A hook is any callable ``hook(event) -> Action | None`` (``None`` means accept). The
decode loop calls hooks in order after sampling and before the token is committed,
so a hook can steer generation without re-running the model (exllamav2 #384).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class TokenEvent:
    """One sampled token of one row, as a hook sees it."""

    row: int  # flat row index in the running batch
    step: int  # tokens generated so far in this span
    token: int
    token_text: str
    probability: float
    top_tokens: tuple[int, ...]  # best first, allowed tokens only
    top_probabilities: tuple[float, ...]
    text: str  # text generated so far in this span, before the token
    logits: Any  # the row's (masked) logits, a 1-D tensor on the model's device


@dataclass(frozen=True)
class Accept:
    """Keep the sampled token."""


@dataclass(frozen=True)
class Replace:
    """Commit ``token`` instead of the sampled one (it must be allowed by the constraint)."""

    token: int


@dataclass(frozen=True)
class Resample:
    """Ban the sampled token at this position and sample again."""


@dataclass(frozen=True)
class Backtrack:
    """Drop the last ``n`` committed tokens of the span, ban the token that started the
    dropped text at its position, and continue from there (KV cropped, constraint state
    restored)."""

    n: int


Action = Accept | Replace | Resample | Backtrack
Hook = Callable[[TokenEvent], Action | None]
