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
    """One sampled token of one row, as a hook sees it (the hook's only argument).

    Args:
        row: the row's flat index in the running batch.
        step: tokens generated so far in this span.
        token: the drawn token id.
        token_text: its text.
        probability: its probability under the sampler's distribution.
        top_tokens: the most likely allowed token ids, best first.
        top_probabilities: their probabilities.
        text: the span's text so far, before ``token``.
        logits: the row's masked logits (a 1-D tensor on the model's device).

    Example::

        def no_digits(event: ss.TokenEvent):
            if any(c.isdigit() for c in event.token_text):
                return ss.Resample()  # ban this token here and draw again

        s = model("Tell me a story: ") + ss.gen(max_tokens=40, hooks=[no_digits])
    """

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
    """Keep the sampled token (what a hook returning ``None`` means too).

    Example:
        >>> hook = lambda event: ss.Accept()
        >>> ss.gen(hooks=hook).hooks == (hook,)
        True
    """


@dataclass(frozen=True)
class Replace:
    """Commit ``token`` instead of the sampled one (it must be allowed by the constraint).

    Args:
        token: the token id to commit.

    Example::

        def always_second(event: ss.TokenEvent):
            return ss.Replace(event.top_tokens[1]) if len(event.top_tokens) > 1 else None
    """

    token: int


@dataclass(frozen=True)
class Resample:
    """Ban the sampled token at this position and sample again; the new token is shown to
    every hook again. Redraws per position are bounded by the generator's ``max_retries``.

    Example::

        def no_newline(event: ss.TokenEvent):
            return ss.Resample() if "\\n" in event.token_text else None
    """


@dataclass(frozen=True)
class Backtrack:
    """Drop the last ``n`` committed tokens of the span, ban the token that started the
    dropped text at its position, and continue from there (KV cropped, constraint state
    restored). Going back past the span's start raises ``BacktrackPastSpanStart``.

    Args:
        n: tokens to drop, from 1 to the tokens generated so far in the span.

    Example::

        def no_double_space(event: ss.TokenEvent):
            if event.text.endswith(" ") and event.token_text.startswith(" "):
                return ss.Backtrack(1)  # drop the token that wrote the first space, ban it
    """

    n: int


Action = Accept | Replace | Resample | Backtrack
Hook = Callable[[TokenEvent], Action | None]
