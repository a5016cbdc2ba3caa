"""Commit one token to a hypothesis: the rules every driver applies alike.

The end token ends the span (complete when the constraint is in a final state).
Any other token advances the constraint and the detokenizer; the span then ends at a
stop string (matched on the text across token boundaries, past the replayed prompt
text only, the stop text excluded) or when ``max_tokens`` tokens that add text past
the prompt have been written (regenerating healed prompt text is free).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from backends.decode.errors import GenerationError
from backends.decode.hypothesis import Hypothesis
from backends.decode.model_view import DecodingModel
from backends.decode.prepare import Prepared, active_index
from seqstate.builtin_generators import SpanGenerator
from seqstate.detokenize import Detokenizer


@dataclass(frozen=True)
class Rules:
    """What one generation call commits with: the detokenizer (with the generator's
    stop strings), token bytes, end ids, the budget and the banned strings."""

    detok: Detokenizer
    token_bytes: Sequence[bytes | None]
    eos: frozenset[int]
    max_tokens: int
    banned: tuple[str, ...]

    @classmethod
    def of(cls, model: DecodingModel, state: Any, generator: SpanGenerator) -> Rules:
        return cls(
            state.detokenizer(generator.stop),
            model.vocabulary.token_bytes,
            frozenset(model.vocabulary.eos_ids),
            generator.max_tokens,
            generator.banned,
        )


def start(prepared: Prepared, rules: Rules, ref: Any, group: int = 0) -> Hypothesis:
    """The empty hypothesis of a prepared row; stop strings match past its replayed text."""
    detok = rules.detok.start(match_from=len(prepared.replayed))
    return Hypothesis.start(prepared.constraint_state, detok, ref, group)


def commit(
    hyp: Hypothesis,
    token: int,
    logprob: float,
    prepared: Prepared,
    rules: Rules,
    *,
    forced: bool = False,
) -> Hypothesis:
    """``hyp`` extended by ``token`` (or ended by it), with its finish reason decided."""
    index = active_index(prepared, hyp.state)
    if token in rules.eos:
        return hyp.finished("eos", index is None or index.is_final(hyp.state))
    state = None if index is None else index.next_state(hyp.state, token)
    if state is not None and state < 0:
        raise GenerationError(f"token {token} is not allowed in constraint state {hyp.state}")
    detok, chunk = rules.detok.feed(hyp.detok, token)
    free = _only_replays(hyp, token, prepared, rules)
    hyp = hyp.appended(token, logprob, state, detok, chunk.text, free=free, forced=forced)
    index = active_index(prepared, state)
    if detok.stop is not None:
        return hyp.finished("stop", index is None or index.is_final(state))
    if hyp.spent >= rules.max_tokens:
        return hyp.finished("length", index is not None and index.is_final(state))
    return hyp


def _only_replays(hyp: Hypothesis, token: int, prepared: Prepared, rules: Rules) -> bool:
    """Whether ``token`` (with every token before it) stays within the replayed prompt
    text: then it adds nothing past the prompt and costs no budget."""
    replay = len(prepared.replayed.encode())
    if not replay or hyp.free < len(hyp.tokens):
        return False
    size = sum(len(rules.token_bytes[t] or b"") for t in (*hyp.tokens, token))
    return 0 < size <= replay


def forced_end(hyp: Hypothesis, prepared: Prepared, eos: np.ndarray) -> Hypothesis:
    """A running constrained hypothesis whose state is final with only end ids allowed is
    complete: it ends without sampling."""
    index = active_index(prepared, hyp.state)
    if hyp.finish_reason is not None or index is None or not index.is_final(hyp.state):
        return hyp
    if np.isin(index.allowed_tokens(hyp.state), eos).all():
        return hyp.finished("stop", True)
    return hyp


def banned_position(hyp: Hypothesis, prepared: Prepared, banned: Sequence[str]) -> int | None:
    """The token where the first banned string in the text past the replayed prompt text
    begins, or None."""
    text = hyp.text + hyp.pending_text
    skip = len(prepared.replayed)
    hits = [at for word in banned if (at := text.find(word, skip)) >= 0]
    if not hits:
        return None
    start = min(hits)
    return next(j for j, d in enumerate(hyp.detoks[1:]) if d.decoded_chars > start)


def safe_length(hyp: Hypothesis, prepared: Prepared, banned: Sequence[str]) -> int:
    """How much of ``hyp.text`` can be shown for good: text from the token where a
    banned string may be starting is held back (a rewind could take it away)."""
    text = hyp.text
    hold_from = len(text)
    for word in banned:
        for size in range(min(len(word) - 1, len(text) - len(prepared.replayed)), 0, -1):
            if text.endswith(word[:size]):
                hold_from = min(hold_from, len(text) - size)
                break
    if hold_from == len(text):
        return hold_from
    ends = [d.decoded_chars for d in hyp.detoks[1:]]
    token = next((j for j, end in enumerate(ends) if end > hold_from), None)
    return hold_from if token is None else min(hold_from, hyp.detoks[token].decoded_chars)
