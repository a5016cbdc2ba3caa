"""Draw one token per running row: mask, bans, sampler, then hooks.

A hook sees every drawn token, redraws after ``Resample()`` included; retries
(resamples, backtracks and banned-string rewinds) are bounded by ``max_retries`` per
position of the span. ``Backtrack(n)`` drops the last ``n`` tokens and bans, at the
position it returns to, the first dropped token; ``n`` larger than the span so far is
``BacktrackPastSpanStart`` (the loop never rewinds into the prompt).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from backends import sampling
from backends.closing import over_budget_tokens
from backends.decode.commit import Rules, start
from backends.decode.errors import BacktrackPastSpanStart, GenerationError
from backends.decode.hypothesis import Hypothesis
from backends.decode.logits import banned_logits, choose_tokens, constrained_logits
from backends.decode.model_view import DecodingModel
from backends.decode.prepare import Prepared, active_index
from seqstate.builtin_generators import SpanGenerator
from seqstate.hooks import Accept, Backtrack, Replace, Resample, TokenEvent

TOP_K_FOR_HOOKS = 5


@dataclass
class RowRun:
    """A plain (non-beam) row while one driver call runs it: its hypothesis plus the
    per-position bans and retry counts (mutable, owned by that call)."""

    prepared: Prepared
    hyp: Hypothesis
    bans: dict[int, set[int]] = field(default_factory=dict)  # position -> banned ids
    retries: dict[int, int] = field(default_factory=dict)  # position -> retries spent
    emitted: int = 0  # characters already streamed

    @classmethod
    def start(cls, prepared: Prepared, rules: Rules, ref: Any) -> RowRun:
        bans = {0: set(prepared.first_bans)} if prepared.first_bans else {}
        return cls(prepared, start(prepared, rules, ref), bans, emitted=len(prepared.replayed))

    @property
    def position(self) -> int:
        return len(self.hyp.tokens)

    def ban_over_budget(self, max_tokens: int) -> None:
        """Near the end of the budget, ban the tokens after which the constraint could
        not be completed in time (``backends.closing``)."""
        index = active_index(self.prepared, self.hyp.state)
        if index is None:
            return
        over = over_budget_tokens(index, self.hyp.state, max_tokens - self.hyp.spent)
        if len(over):
            self.bans.setdefault(self.position, set()).update(over.tolist())

    def rewind(self, position: int, max_retries: int, why: str) -> None:
        """Go back to ``position`` tokens, banning there the token that was written."""
        self.bans.setdefault(position, set()).add(self.hyp.tokens[position])
        self.count_retry(position, max_retries, why)
        self.hyp = self.hyp.truncated(position)
        self.bans = {p: b for p, b in self.bans.items() if p <= position}

    def backtrack(self, n: int, max_retries: int) -> None:
        if not 1 <= n <= self.position:
            raise BacktrackPastSpanStart(
                f"Backtrack({n}) at token {self.position} of the span: a hook may go back "
                f"1 to {self.position} tokens here, never into the text before the span"
            )
        self.rewind(self.position - n, max_retries, "backtracks")

    def count_retry(self, position: int, max_retries: int, why: str) -> None:
        self.retries[position] = self.retries.get(position, 0) + 1
        if self.retries[position] > max_retries:
            raise GenerationError(
                f"gave up at token {position} of the span after {max_retries} retries "
                f"(resamples, backtracks, banned-string rewinds; last: {why})"
            )


Drawn = tuple[int, float] | Backtrack


def draw_tokens(
    model: DecodingModel,
    runs: Sequence[RowRun],
    row_ids: Sequence[int],
    logits: torch.Tensor,
    generator: SpanGenerator,
    rng: torch.Generator | None,
) -> list[Drawn]:
    """One ``(token, logprob)`` per run, or the ``Backtrack`` a hook asked for."""
    logits = logits.float()
    indexes = [active_index(r.prepared, r.hyp.state) for r in runs]
    masked = constrained_logits(model, logits, indexes, [r.hyp.state for r in runs])
    masked = banned_logits(masked, [sorted(r.bans.get(r.position, ())) for r in runs])
    chosen = choose_tokens(masked, generator.sampler, rng)
    values = sampling.token_logprobs(masked, chosen)
    # One host transfer per step: tokens, their log-probabilities (-inf: nothing allowed).
    tokens, logprobs = chosen.tolist(), values.tolist()
    return [
        _hooked(model, run, row, tokens[k], logprobs[k], masked[k], generator, rng)
        for k, (run, row) in enumerate(zip(runs, row_ids))
    ]


def _hooked(
    model: DecodingModel,
    run: RowRun,
    row: int,
    token: int,
    logprob: float,
    logits: torch.Tensor,
    generator: SpanGenerator,
    rng: torch.Generator | None,
) -> Drawn:
    """Show the drawn token to the hooks until they accept it (redrawing on Resample)."""
    while True:
        if not math.isfinite(logprob):  # -inf or NaN: every token was masked
            raise GenerationError(
                f"row {row}: no token is allowed at this point (constraint state "
                f"{run.hyp.state}); the constraint cannot be completed with this vocabulary"
            )
        action = (
            _ask(generator.hooks, model, row, run.hyp, token, logits) if generator.hooks else None
        )
        if action is None:
            return token, logprob
        if isinstance(action, Replace):
            token = int(action.token)
            return token, float(torch.log_softmax(logits, -1)[token])
        if isinstance(action, Backtrack):
            return action
        run.bans.setdefault(run.position, set()).add(token)  # Resample
        run.count_retry(run.position, generator.max_retries, "resamples")
        logits = banned_logits(logits[None], [[token]])[0]
        if not torch.isfinite(logits).any():
            raise GenerationError(f"row {row}: every allowed token was banned at this position")
        token = int(choose_tokens(logits[None], generator.sampler, rng)[0])
        logprob = float(torch.log_softmax(logits, -1)[token])


def _ask(
    hooks: Sequence[Any], model: DecodingModel, row: int, hyp: Hypothesis, token: int, logits: torch.Tensor
) -> Replace | Resample | Backtrack | None:
    """The first hook's answer that is not an acceptance (None: every hook accepts)."""
    event = _event(model, row, hyp, token, logits)
    for hook in hooks:
        action = hook(event)
        if action is not None and not isinstance(action, Accept):
            return action
    return None


def _event(model: DecodingModel, row: int, hyp: Hypothesis, token: int, logits: torch.Tensor) -> TokenEvent:
    probs = torch.softmax(logits, -1)
    top = torch.topk(probs, min(TOP_K_FOR_HOOKS, int(torch.isfinite(logits).sum())))
    data = model.vocabulary.token_bytes[token] or b""
    return TokenEvent(
        row=row,
        step=len(hyp.tokens),
        token=token,
        token_text=data.decode("utf-8", "replace"),
        probability=float(probs[token]),
        top_tokens=tuple(int(t) for t in top.indices),
        top_probabilities=tuple(float(p) for p in top.values),
        text=hyp.text,
        logits=logits,
    )
