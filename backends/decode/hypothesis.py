"""``Hypothesis``: one row's generated span so far, as an immutable value.

The same record serves a plain row and a beam: extending it returns a new value (a
beam's children share nothing mutable with it), and rewinding is slicing. It keeps,
per generated token, the constraint state and the detokenizer state after it, so a
rewind restores both for free.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from seqstate.detokenize import DetokState


@dataclass(frozen=True)
class Hypothesis:
    """Tokens generated so far with their log-probabilities, constraint states and
    detokenizer states (``states[i]``/``detoks[i]``: after ``i`` tokens), the text
    emitted so far (held-back bytes and stop-string prefixes excluded), and how the
    span ended (``finish_reason`` None while it runs)."""

    states: tuple[int | None, ...]
    detoks: tuple[DetokState, ...]
    ref: Any = None  # KVRef covering the prompt and every generated token but the last
    group: int = 0  # the input row it extends (beams of one row share a group)
    tokens: tuple[int, ...] = ()
    logprobs: tuple[float, ...] = ()
    text: str = ""
    total: float = 0.0  # sum of logprobs
    free: int = 0  # leading tokens that only regenerate healed prompt text (no budget)
    forced: tuple[bool, ...] = ()  # per token: appended by jump-forward, not sampled
    finish_reason: str | None = None
    complete: bool = False

    @classmethod
    def start(cls, state: int | None, detok: DetokState, ref: Any, group: int = 0) -> Hypothesis:
        return cls((state,), (detok,), ref, group)

    @property
    def state(self) -> int | None:
        """Constraint state after the last token."""
        return self.states[-1]

    @property
    def detok(self) -> DetokState:
        return self.detoks[-1]

    @property
    def spent(self) -> int:
        """Tokens that count against ``max_tokens``: those that add text past the prompt."""
        return len(self.tokens) - self.free

    @property
    def stop_at(self) -> int | None:
        """Character offset of the stop string that ended the span, if any."""
        stop = self.detok.stop
        return None if stop is None else stop.start

    @property
    def pending_text(self) -> str:
        """Decoded text the detokenizer still holds back (a possible stop-string start)."""
        return self.detok.held_text

    def appended(
        self,
        token: int,
        logprob: float,
        state: int | None,
        detok: DetokState,
        chunk: str,
        *,
        free: bool,
        forced: bool = False,
    ) -> Hypothesis:
        return replace(
            self,
            tokens=self.tokens + (token,),
            logprobs=self.logprobs + (logprob,),
            states=self.states + (state,),
            detoks=self.detoks + (detok,),
            text=self.text + chunk,
            total=self.total + logprob,
            free=self.free + free,
            forced=self.forced + (forced,),
        )

    def truncated(self, position: int) -> Hypothesis:
        """The first ``position`` tokens only (a rewind): their states and their text."""
        detok = self.detoks[position]
        emitted = detok.decoded_chars - len(detok.held_text)
        logprobs = self.logprobs[:position]
        return replace(
            self,
            tokens=self.tokens[:position],
            logprobs=logprobs,
            states=self.states[: position + 1],
            detoks=self.detoks[: position + 1],
            text=self.text[:emitted],
            total=float(sum(logprobs)),
            free=min(self.free, position),
            forced=self.forced[:position],
            finish_reason=None,
            complete=False,
        )

    def finished(self, reason: str, complete: bool) -> Hypothesis:
        return replace(self, finish_reason=reason, complete=complete)

    def with_ref(self, ref: Any) -> Hypothesis:
        return replace(self, ref=ref)
