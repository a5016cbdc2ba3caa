"""The model's own decode loop (greedy and sampling), as a generator of text chunks.

Each step: the runner's logits for the running rows -> ``draw_tokens`` (mask, bans,
sampler, hooks) -> ``commit`` (constraint, detokenizer, stop strings, budget) ->
banned strings (rewind) -> jump-forward -> one batched forward pass for the new tokens.
Rows leave the batch when they finish. Beam search runs in ``backends.decode.beam``.
"""

from __future__ import annotations

from collections.abc import Generator as PyGenerator
from collections.abc import Sequence
from typing import Any

import numpy as np

from backends.decode.commit import Rules, banned_position, commit, forced_end, safe_length
from backends.decode.draw import RowRun, draw_tokens
from backends.decode.errors import GenerationError
from backends.decode.logits import next_masks, seeded_rng
from backends.decode.model_view import DecodingModel
from backends.decode.prepare import active_index, prepare_row
from backends.decode.result import span_row
from backends.progress import Progress
from seqstate.builtin_generators import SpanGenerator
from seqstate.hooks import Backtrack
from seqstate.kv import kv_prefix
from seqstate.state import SequenceState

Chunks = list[list[str]]


def generate(model: DecodingModel, state: SequenceState, generator: SpanGenerator) -> SequenceState:
    """Run ``generator`` on every row of ``state``; returns the extended state."""
    steps = decode(model, state, generator)
    while True:
        try:
            next(steps)
        except StopIteration as done:
            return done.value


def decode(
    model: DecodingModel, state: SequenceState, generator: SpanGenerator
) -> PyGenerator[Chunks, None, SequenceState]:
    """Yield, after every step, each row's new text (``[batch][samples]``); return the
    extended state. Text is shown once final: whole characters only, without what may
    still begin a stop string or a banned string."""
    if state.engine is not model:
        raise GenerationError("this state belongs to another model")
    rules = Rules.of(model, state, generator)
    plain = state.detokenizer()
    prepared = [prepare_row(model, row, generator, plain) for row in state.rows]
    logits, refs = model.runner.forward(
        [(p.kv_base, p.pending_ids) for p in prepared],
        next_masks(model, [(p, p.constraint_state) for p in prepared]),
    )
    runs = [RowRun.start(p, rules, ref) for p, ref in zip(prepared, refs)]
    rng = seeded_rng(generator.sampler, model.device)
    eos = np.asarray(sorted(rules.eos), dtype=np.int64)
    report = Progress(model.progress, generator.max_tokens, unit="tok")
    active = list(range(len(runs)))
    while active:
        for i in active:
            runs[i].hyp = forced_end(runs[i].hyp, runs[i].prepared, eos)
        keep = [k for k, i in enumerate(active) if runs[i].hyp.finish_reason is None]
        if len(keep) != len(active):
            logits, active = logits[keep], [active[k] for k in keep]
        if not active:
            break
        for i in active:
            runs[i].ban_over_budget(generator.max_tokens)
        drawn = draw_tokens(model, [runs[i] for i in active], active, logits, generator, rng)
        feeds: list[tuple[Any, np.ndarray]] = []
        still: list[int] = []
        for i, choice in zip(active, drawn):
            feed = _advance(model, runs[i], choice, rules, generator)
            if feed is not None:
                feeds.append(feed)
                still.append(i)
        report.update(max(run.hyp.spent for run in runs))
        yield _chunks(runs, state.shape, rules.banned)
        active = still
        if active:
            upcoming = [(runs[i].prepared, runs[i].hyp.state) for i in active]
            logits, refs = model.runner.forward(feeds, next_masks(model, upcoming))
            for i, ref in zip(active, refs):
                runs[i].hyp = runs[i].hyp.with_ref(ref)
    report.close()
    forced = sum(sum(run.hyp.forced) for run in runs)
    model.counters["tokens_forced"] += forced
    model.counters["tokens_sampled"] += sum(len(run.hyp.tokens) for run in runs) - forced
    result = state.with_rows([span_row(run.prepared, run.hyp, plain) for run in runs])
    yield _final_chunks(runs, result, state.shape)
    return result


def _advance(
    model: DecodingModel, run: RowRun, choice: Any, rules: Rules, generator: SpanGenerator
) -> tuple[Any, np.ndarray] | None:
    """Apply one drawn token (or a backtrack) to ``run``; the next forward input, or
    None when the row is finished."""
    if isinstance(choice, Backtrack):
        run.backtrack(choice.n, generator.max_retries)
        return _rewind_feed(run)
    token, logprob = choice
    run.hyp = commit(run.hyp, token, logprob, run.prepared, rules)
    if rules.banned:
        position = banned_position(run.hyp, run.prepared, rules.banned)
        if position is not None:
            run.rewind(position, generator.max_retries, "banned-string rewinds")
            return _rewind_feed(run)
    if run.hyp.finish_reason is not None:
        return None
    forced = _jump_forward(model, run, rules)
    if run.hyp.finish_reason is not None:  # the forced text ended the span
        return None
    return run.hyp.ref, np.asarray([token, *forced], dtype=np.int64)


def _rewind_feed(run: RowRun) -> tuple[Any, np.ndarray]:
    """Forward input that recomputes the logits after the kept tokens."""
    prompt = np.asarray(run.prepared.row.token_ids, np.int64)
    kept = np.concatenate([prompt, np.asarray(run.hyp.tokens, np.int64)])
    return kv_prefix(run.hyp.ref, len(kept) - 1), kept[-1:]


def _jump_forward(model: DecodingModel, run: RowRun, rules: Rules) -> list[int]:
    """Tokens the constraint forces next (canonical tokenization), appended unsampled
    while the constraint agrees with them and the span runs."""
    index = active_index(run.prepared, run.hyp.state)
    if index is None or not model.jump_forward:
        return []
    forced = index.forced_bytes(run.hyp.state)
    try:
        text = forced.decode("utf-8")
    except UnicodeDecodeError:
        return []
    ids = model.encode(text) if text else []
    state = run.hyp.state
    for token in ids:
        state = index.next_state(state, token)
        if state < 0:
            return []
    taken: list[int] = []
    for token in ids:
        if run.hyp.finish_reason is not None:
            break
        run.hyp = commit(run.hyp, token, 0.0, run.prepared, rules, forced=True)
        taken.append(token)
    return taken


def _chunks(runs: Sequence[RowRun], shape: tuple[int, int], banned: Sequence[str]) -> Chunks:
    """New text per row since the last call (see ``commit.safe_length``)."""
    flat = []
    for run in runs:
        text = run.hyp.text
        safe = len(text) if run.hyp.finish_reason else safe_length(run.hyp, run.prepared, banned)
        flat.append(text[run.emitted : max(safe, run.emitted)])
        run.emitted = max(safe, run.emitted)
    return [flat[b * shape[1] : (b + 1) * shape[1]] for b in range(shape[0])]


def _final_chunks(runs: Sequence[RowRun], result: SequenceState, shape: tuple[int, int]) -> Chunks:
    """What each row's final text adds to what was streamed (held-back text that never
    became a stop string, a flushed partial character)."""
    flat = []
    for run, row in zip(runs, result.rows):
        generated = row.text[run.prepared.row.n_chars :]
        flat.append(generated[run.emitted :])
    return [flat[b * shape[1] : (b + 1) * shape[1]] for b in range(shape[0])]
