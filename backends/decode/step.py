"""One step on logits the caller computed: ``ss.step(state, logits, generator)``.

The same rules as the model's own loop (``draw_tokens``, ``commit``), on the caller's
logits (exllamav2 PR #330). A row that ends in an unfinished span of ``generator``
continues it: its tokens are replayed through the constraint and the detokenizer, so
stop strings match across steps and a character split over tokens is held back until
it completes; the result holds that span as one piece, exactly as ``generate`` would
have produced it. Rows whose span already finished are returned unchanged. Token
healing, banned strings and backtracking need the model's own forward passes and are
refused here.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
import torch

from backends.decode.commit import Rules, commit, forced_end
from backends.decode.draw import RowRun, draw_tokens
from backends.decode.errors import GenerationError
from backends.decode.model_view import DecodingModel
from backends.decode.prepare import prepare_row
from backends.decode.result import span_row
from seqstate.builtin_generators import SpanGenerator
from seqstate.detokenize import Detokenizer
from seqstate.hooks import Backtrack
from seqstate.row import Row
from seqstate.samplers import Beam
from seqstate.state import SequenceState


def step(
    model: DecodingModel,
    state: SequenceState,
    logits: Any,
    generator: SpanGenerator,
    *,
    rng: torch.Generator | None = None,
) -> SequenceState:
    """One token per row from ``logits`` (``[rows, V]``, for the last token of each row,
    rows in ``state.rows`` order)."""
    if state.engine is not model:
        raise GenerationError("this state belongs to another model")
    if isinstance(generator.sampler, Beam) or generator.banned:
        raise GenerationError("step() does not run beam search or banned strings; call generate")
    logits = torch.as_tensor(logits)
    if logits.ndim != 2 or logits.shape[0] != len(state.rows):
        raise GenerationError(
            f"expected logits of shape [{len(state.rows)}, vocab], got {tuple(logits.shape)}"
        )
    own = replace(generator, resume=False, heal=False)
    rules = Rules.of(model, state, own)
    plain = state.detokenizer()
    eos = np.asarray(sorted(rules.eos), dtype=np.int64)
    runs: dict[int, RowRun] = {}
    for i, row in enumerate(state.rows):
        run = _run_of(model, row, own, rules, plain)
        if run is not None:
            run.hyp = forced_end(run.hyp, run.prepared, eos)
            runs[i] = run
    live = [i for i, run in runs.items() if run.hyp.finish_reason is None]
    if live:
        rows = [runs[i] for i in live]
        for run in rows:
            run.ban_over_budget(generator.max_tokens)
        drawn = draw_tokens(model, rows, live, logits[live].to(model.device), generator, rng)
        for run, choice in zip(rows, drawn):
            if isinstance(choice, Backtrack):
                raise GenerationError("a Backtrack hook needs the model's own loop; call generate")
            run.hyp = forced_end(commit(run.hyp, *choice, run.prepared, rules), run.prepared, eos)
    return state.with_rows(
        [
            span_row(runs[i].prepared, runs[i].hyp, plain) if i in runs else row
            for i, row in enumerate(state.rows)
        ]
    )


def _run_of(
    model: DecodingModel, row: Row, generator: SpanGenerator, rules: Rules, plain: Detokenizer
) -> RowRun | None:
    """The row as a run of ``generator``: its unfinished span replayed, a new span, or
    None when its span of ``generator`` is finished."""
    if row.pending_text:
        raise GenerationError("step() needs tokenized rows: this row ends in pending text")
    point = row.resume_point
    if point is None or point.generator != generator:
        return RowRun.start(prepare_row(model, row, generator, plain), rules, None)
    if row.finish_reason is not None:
        return None
    last = row.segments[-1]
    base = row.slice_tokens(0, row.n_tokens - last.n_tokens)
    # a piece that resumed an earlier one starts from the state recorded at that cut
    again = replace(generator, resume=last.origin.resumes)
    run = RowRun.start(prepare_row(model, base, again, plain), rules, None)
    tokens, logprobs = row.token_ids[base.n_tokens :], row.token_logprobs[base.n_tokens :]
    for token, logprob in zip(tokens.tolist(), logprobs.tolist()):
        run.hyp = commit(run.hyp, token, logprob, run.prepared, rules)
    return run
