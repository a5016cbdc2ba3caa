"""A hypothesis back into a row: the prepared row followed by the generated span."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from backends.decode.hypothesis import Hypothesis
from backends.decode.prepare import Prepared
from seqstate.detokenize import Detokenizer, decode_tokens
from seqstate.kv import kv_prefix
from seqstate.row import Row
from seqstate.segment import Origin, Segment, Span


def span_row(prepared: Prepared, hyp: Hypothesis, plain: Detokenizer) -> Row:
    """The prepared row extended by ``hyp``'s span, cut before its stop string if any.

    A span still running (``ss.step``) keeps the bytes of an unfinished character out of
    its text; a finished one flushes them (as U+FFFD, like ``bytes.decode``). An empty
    span (an end token first, or a stop string at once) is kept as an empty segment, so
    the row still says how its span ended and its capture reads as ``""``."""
    base, generator = prepared.row, prepared.generator
    origin = Origin(
        "generated",
        generator=replace(generator, resume=False),
        capture=generator.name,
        parser=generator.parse,
        finish_reason=hyp.finish_reason,
        complete=hyp.complete,
        resumes=generator.resume,
        healed=prepared.healed,
    )
    recorded = [-1 if s is None else s for s in hyp.states[1:]]
    decoded = decode_tokens(plain, hyp.tokens, flush=hyp.finish_reason is not None)
    span = Span.of_tokens(hyp.tokens, decoded, origin, hyp.logprobs, recorded)
    ref = hyp.ref
    kv = ref if ref is not None and ref.length <= base.n_tokens + len(hyp.tokens) else None
    stop_at = hyp.stop_at
    if stop_at is None:
        return Row(base.segments + (Segment.whole(span),), kv)
    kept = int(np.searchsorted(decoded.token_ends, stop_at, "right"))  # tokens before the stop
    segment = Segment(span, 0, stop_at, 0, kept)
    return Row(base.segments + (segment,), kv_prefix(kv, base.n_tokens + kept))
