"""The decode loop: a state and a generator in, the extended state out.

Every row of the state (batch x samples, flattened) is prepared (pending text
tokenized with healing at the seam, constraint state chosen), then all rows advance
together one token per step: logits -> constraint mask -> banned tokens -> sampler ->
hooks -> commit (constraint state, detokenizer, stop strings, banned strings) -> the
next forward pass computes only the new tokens. Rows leave the batch when they finish.
Beam search has its own loop in ``backends.beam``; both share the pieces here.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from backends import sampling
from backends.closing import over_budget_tokens
from backends.progress import Progress
from fsm.prefixed import Prefixed
from seqstate.detokenize import Detokenizer, DetokState, decode_tokens
from seqstate.errors import SeqStateError
from seqstate.hooks import Backtrack, Replace, Resample, TokenEvent
from seqstate.row import ResumePoint, Row
from seqstate.samplers import Beam, Greedy, Sample
from seqstate.segment import Origin, Span
from seqstate.state import SequenceState

if TYPE_CHECKING:
    from backends.model import Model
    from fsm import TokenIndex

TOP_K_FOR_HOOKS = 5


class GenerationError(SeqStateError, RuntimeError):
    """Generation cannot start or continue (empty row, no allowed token, ...)."""


@dataclass
class Prepared:
    """A row ready to generate from: its tokens, what the model still has to compute,
    and where the constraint starts."""

    row: Row
    kv_base: Any  # KVRef | None: covers the tokens before ``pending_ids``
    pending_ids: np.ndarray  # tokens to run before the first sample (>= 1)
    constraint_state: int | None
    index: TokenIndex | None  # the span's constraint (healed prefix included)
    generator: Any  # the generator the span records
    healed: str = ""  # prompt text the span regenerates first (token healing)


@dataclass
class RowProgress:
    """What one row has generated so far inside one call (owned by the loop)."""

    prepared: Prepared
    detok_states: list[DetokState]  # detokenizer state after 0..n tokens
    constraint_states: list[int | None]  # constraint state after 0..n tokens
    tokens: list[int] = field(default_factory=list)
    logprobs: list[float] = field(default_factory=list)
    banned: dict[int, set[int]] = field(default_factory=dict)  # position -> banned ids
    chunks: list[str] = field(default_factory=list)
    ref: Any = None  # KVRef covering the prompt and every generated token but the last
    finish_reason: str | None = None
    complete: bool = False
    stop_at: int | None = None  # character offset (in the generated text) of a stop string
    retries: int = 0
    forced: int = 0
    emitted: int = 0  # characters already streamed

    @property
    def state(self) -> int | None:
        return self.constraint_states[-1]

    @property
    def index(self) -> TokenIndex | None:
        return active_index(self.prepared, self.state)

    @property
    def text(self) -> str:
        return "".join(self.chunks)


# ----------------------------------------------------------------------------- prepare


def prepare_row(model: Model, row: Row, generator: Any, detok: Detokenizer) -> Prepared:
    """Tokenize the row's pending text and find what the model must still compute.

    Token healing, on by default: appended text is tokenized together with the last
    token before it, and the last prompt token is then removed and regenerated as the
    start of the span (its bytes prefix the constraint), so the model picks the merged
    token it would naturally write ("Name: " + "John" -> ' John', not ' ' + 'John').
    The constraint starts at its initial state, or, when the generator resumes, at the
    state recorded where the row was cut, advanced over the cut token's leading text."""
    point = _resume_point(row) if generator.resume else None
    row = row.settle(model.encode, detok)
    pending = row.pending_text
    if pending:
        row = _tokenize_tail(model, row, pending, heal=generator.heal, detok=detok)
    if point is not None:
        healed = point.healed.encode()
    elif generator.heal:
        row, healed = _remove_last_token(model, row)
    else:
        healed = b""
    if row.n_tokens == 0:
        raise GenerationError("cannot generate from an empty row: start from a prompt")
    spec = Prefixed(healed, generator.constraint) if healed else generator.constraint
    index = None if spec is None else model.index(spec)
    state = None if index is None else _start_state(point, index)
    ids = np.asarray(row.token_ids, dtype=np.int64)
    covered = 0 if row.kv is None else row.kv.length
    if covered >= len(ids):  # everything is cached: recompute the last position's logits
        covered = len(ids) - 1
    kv_base = None if row.kv is None or covered == 0 else row.kv.prefix(covered)
    return Prepared(row, kv_base, ids[covered:], state, index, generator, healed.decode())


def active_index(prepared: Prepared, state: int | None) -> TokenIndex | None:
    """The index that constrains the next token: none for free text once its healed
    prefix is written (then every token is allowed again, special tokens included)."""
    if state is None or prepared.index is None:
        return None
    if prepared.generator.constraint is None and prepared.index.is_final(state):
        return None
    return prepared.index


def _resume_point(row: Row) -> ResumePoint:
    point = row.resume_point
    if point is None:
        raise GenerationError("this row does not end in a generated span to resume")
    return point


def _remove_last_token(model: Model, row: Row) -> tuple[Row, bytes]:
    """The row without its last token and that token's bytes, when healing applies:
    a text token (not special) on character boundaries, with a token before it."""
    if row.n_tokens < 2 or row.pending_text:
        return row, b""
    data = model.vocabulary.token_bytes[int(row.token_ids[-1])]
    if not data:
        return row, b""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return row, b""
    if not row.text.endswith(text):
        return row, b""
    return row.slice_tokens(0, row.n_tokens - 1), data


def _start_state(point: ResumePoint | None, index: TokenIndex) -> int:
    """The initial state, or the state at a resume point (after its pending text)."""
    if point is None:
        return index.initial_state
    start = index.initial_state if point.constraint_state is None else point.constraint_state
    if start < 0:
        raise GenerationError("the constraint state at this cut is unknown (re-tokenized text)")
    state = index.step_bytes(start, point.pending_text.encode()) if point.pending_text else start
    if state < 0:
        raise GenerationError("the text at this cut does not continue the constraint")
    return state


def _tokenize_tail(model: Model, row: Row, pending: str, *, heal: bool, detok: Detokenizer) -> Row:
    """Tokenize trailing pending text; with ``heal``, the last committed token is
    re-tokenized together with it so the seam gets its canonical tokens."""
    n_drop = 0
    if heal and row.n_tokens:
        last = int(row.token_ids[-1])
        if model.vocabulary.token_bytes[last] is not None:
            n_drop = 1
    for drop in (n_drop, 0) if n_drop else (0,):
        start = (
            int(row.token_offsets[row.n_tokens - drop, 0]) if drop else row.n_chars - len(pending)
        )
        text = row.text[start:]
        try:
            return row.with_tokenized_tail(drop, model.encode(text), detok)
        except SeqStateError:
            continue  # healing impossible here (e.g. a token ending mid-character)
    raise GenerationError(f"could not tokenize the pending text {pending!r}")


# ------------------------------------------------------------------------------ steps


def constrained_logits(
    model: Model, logits: torch.Tensor, indexes: Sequence[Any], states: Sequence[int | None]
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


def needed_logits(model: Model, index: Any, state: int | None) -> np.ndarray | None:
    """The token ids whose logits the next step from ``state`` uses: the allowed ones,
    or None for all of them (free text; a final state, where the end token takes the
    mass of every refused token; or ``model.restrict_head`` off)."""
    if index is None or state is None or not model.restrict_head or index.is_final(state):
        return None
    return index.allowed_tokens(state)


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


def _rng(sampler: Any, device: torch.device) -> torch.Generator | None:
    if isinstance(sampler, Sample) and sampler.seed is not None:
        return torch.Generator(device=device).manual_seed(sampler.seed)
    return None


# ------------------------------------------------------------------------------- loop


def generate(model: Model, state: SequenceState, generator: Any) -> SequenceState:
    """Run ``generator`` on every row of ``state``; returns the extended state."""
    steps = decode(model, state, generator)
    while True:
        try:
            next(steps)
        except StopIteration as done:
            return done.value


def decode(model: Model, state: SequenceState, generator: Any):
    """The decode loop as a generator of per-step chunks; returns the new state."""
    if state.engine is not model:
        raise GenerationError("this state belongs to another model")
    if isinstance(generator.sampler, Beam):
        from backends.beam import beam_search

        return beam_search(model, state, generator)
    detok = state.detokenizer(generator.stop)
    plain = state.detokenizer()
    prepared = [prepare_row(model, row, generator, plain) for row in state.rows]
    progress = [
        RowProgress(p, [detok.start()], [p.constraint_state], emitted=len(p.healed))
        for p in prepared
    ]
    device = model.device
    rng = _rng(generator.sampler, device)
    eos = np.asarray(sorted(model.vocabulary.eos_ids), dtype=np.int64)

    report = Progress(model.progress, generator.max_tokens, unit="tok")
    logits, refs = model.runner.forward(
        [(p.kv_base, p.pending_ids) for p in prepared],
        [needed_logits(model, row.index, row.state) for row in progress],
    )
    active = list(range(len(progress)))
    for i, ref in zip(active, refs):
        progress[i].ref = ref
    while active:
        _finish_forced_ends(progress, active, eos)
        live = [i for i in active if progress[i].finish_reason is None]
        keep = [k for k, i in enumerate(active) if progress[i].finish_reason is None]
        logits = logits[keep] if len(keep) != len(active) else logits
        active = live
        if not active:
            break
        for i in active:
            _ban_over_budget(progress[i], generator.max_tokens - len(progress[i].tokens))
        tokens = _sample_step(model, progress, active, logits, generator, rng)
        feeds: list[tuple[Any, np.ndarray]] = []
        still: list[int] = []
        for i, token in zip(active, tokens):
            row = progress[i]
            if token is None:  # backtracked: recompute the logits at the rewound position
                feeds.append(_rewind_feed(row))
                still.append(i)
                continue
            if _commit(row, token, detok, generator, eos):
                feeds.append(_rewind_feed(row))  # a banned string was rewound
                still.append(i)
            elif row.finish_reason is None:
                forced = _jump_forward(model, row, detok)
                feeds.append((row.ref, np.asarray([token, *forced], dtype=np.int64)))
                still.append(i)
        report.update(max(len(row.tokens) for row in progress))
        yield _chunks(progress, state.shape, generator.banned)
        active = still
        if active:
            needed = [needed_logits(model, progress[i].index, progress[i].state) for i in active]
            logits, refs = model.runner.forward(feeds, needed)
            for i, ref in zip(active, refs):
                progress[i].ref = ref
    report.close()
    model.counters["tokens_forced"] += sum(row.forced for row in progress)
    model.counters["tokens_sampled"] += sum(len(row.tokens) - row.forced for row in progress)
    for row in progress:
        row.chunks.append(detok.finish(row.detok_states[-1])[1].text if row.stop_at is None else "")
    yield _chunks(progress, state.shape, generator.banned)
    return state.with_rows([_result_row(row, plain) for row in progress])


def _chunks(
    progress: Sequence[RowProgress], shape: tuple[int, int], banned: Sequence[str]
) -> list[list[str]]:
    """New text per row since the last call, holding back what a banned-string rewind
    could still take away (from the start of the token where a banned prefix begins)."""
    flat = []
    for row in progress:
        text = row.text
        safe = len(text) if row.finish_reason is not None else _safe_length(row, text, banned)
        flat.append(text[row.emitted : max(safe, row.emitted)])
        row.emitted = max(safe, row.emitted)
    return [flat[b * shape[1] : (b + 1) * shape[1]] for b in range(shape[0])]


def _safe_length(row: RowProgress, text: str, banned: Sequence[str]) -> int:
    hold_from = len(text)
    for word in banned:
        for size in range(min(len(word) - 1, len(text)), 0, -1):
            if text.endswith(word[:size]):
                hold_from = min(hold_from, len(text) - size)
                break
    if hold_from == len(text):
        return hold_from
    ends = [s.decoded_chars for s in row.detok_states[1:]]
    token = next((j for j, end in enumerate(ends) if end > hold_from), None)
    return hold_from if token is None else min(hold_from, row.detok_states[token].decoded_chars)


def _finish_forced_ends(progress: list[RowProgress], active: list[int], eos: np.ndarray) -> None:
    """A constrained row whose state is final with nothing else allowed is complete."""
    for i in active:
        row = progress[i]
        index = row.index
        if index is not None and row.finish_reason is None and index.is_final(row.state):
            allowed = index.allowed_tokens(row.state)
            if np.isin(allowed, eos).all():
                row.finish_reason, row.complete = "stop", True


def _sample_step(
    model: Model,
    progress: list[RowProgress],
    active: list[int],
    logits: torch.Tensor,
    generator: Any,
    rng: torch.Generator | None,
) -> list[int | None]:
    """One token per active row (None where a hook asked to backtrack)."""
    logits = logits.float()
    rows = [progress[i] for i in active]
    masked = constrained_logits(model, logits, [r.index for r in rows], [r.state for r in rows])
    masked = _apply_bans(masked, [progress[i] for i in active])
    chosen = choose_tokens(masked, generator.sampler, rng)
    logprobs = sampling.token_logprobs(masked, chosen)
    # One host transfer per step: tokens, their log-probabilities (-inf: nothing allowed).
    tokens, values = chosen.tolist(), logprobs.tolist()
    result: list[int | None] = []
    for k, i in enumerate(active):
        row = progress[i]
        token, logprob = tokens[k], values[k]
        if not math.isfinite(logprob):  # -inf or NaN: every token was masked
            raise GenerationError(
                f"row {i}: no token is allowed at this point (constraint state {row.state}); "
                "the constraint cannot be completed with this vocabulary"
            )
        for hook in generator.hooks:
            action = hook(_event(model, i, row, token, masked[k]))
            if isinstance(action, Replace):
                token = int(action.token)
                logprob = float(torch.log_softmax(masked[k], -1)[token])
            elif isinstance(action, Resample):
                row.banned.setdefault(len(row.tokens), set()).add(token)
                token, logprob = _resample(masked[k], row, generator, rng)
            elif isinstance(action, Backtrack):
                _backtrack(row, action.n, generator)
                token = None
                break
        if token is not None:
            row.logprobs.append(logprob)
        result.append(token)
    return result


def _ban_over_budget(row: RowProgress, remaining: int) -> None:
    """Near the end of the budget, ban the tokens after which the constraint could not
    be completed in time (``backends.closing``): the span ends cleanly, not cut."""
    index = row.index
    if index is None:
        return
    over = over_budget_tokens(index, row.state, remaining)
    if len(over):
        row.banned.setdefault(len(row.tokens), set()).update(over.tolist())


def _apply_bans(logits: torch.Tensor, rows: Sequence[RowProgress]) -> torch.Tensor:
    pairs = [(k, t) for k, row in enumerate(rows) for t in row.banned.get(len(row.tokens), ())]
    if not pairs:
        return logits
    where = torch.tensor(pairs, device=logits.device)
    return sampling.ban_tokens(logits, where[:, 0], where[:, 1])


def _resample(
    logits: torch.Tensor, row: RowProgress, generator: Any, rng: torch.Generator | None
) -> tuple[int, float]:
    row.retries += 1
    if row.retries > generator.max_retries:
        raise GenerationError(
            f"gave up after {generator.max_retries} resamples/backtracks in one row"
        )
    banned = torch.tensor(sorted(row.banned[len(row.tokens)]), device=logits.device)
    masked = logits.clone()
    masked[banned] = float("-inf")
    if not torch.isfinite(masked).any():
        raise GenerationError("every allowed token was banned at this position")
    token = int(choose_tokens(masked[None], generator.sampler, rng)[0])
    return token, float(torch.log_softmax(masked, -1)[token])


def _event(model: Model, i: int, row: RowProgress, token: int, logits: torch.Tensor) -> TokenEvent:
    probs = torch.softmax(logits, -1)
    top = torch.topk(probs, min(TOP_K_FOR_HOOKS, int(torch.isfinite(logits).sum())))
    data = model.vocabulary.token_bytes[token] or b""
    return TokenEvent(
        row=i,
        step=len(row.tokens),
        token=token,
        token_text=data.decode("utf-8", "replace"),
        probability=float(probs[token]),
        top_tokens=tuple(int(t) for t in top.indices),
        top_probabilities=tuple(float(p) for p in top.values),
        text=row.text,
        logits=logits,
    )


def _commit(
    row: RowProgress, token: int, detok: Detokenizer, generator: Any, eos: np.ndarray
) -> bool:
    """Append one sampled token: constraint, text, stop strings, banned strings, limits.

    Returns True when a banned string made the row rewind (its next input differs)."""
    index = row.index
    if token in eos:
        row.logprobs.pop()
        row.finish_reason = "eos"
        row.complete = index is None or index.is_final(row.state)
        return False
    _append(row, token, detok)
    if generator.banned and _rewind_banned(row, generator):
        return True
    if row.stop_at is None and row.detok_states[-1].stop is not None:
        row.stop_at = row.detok_states[-1].stop.start
        row.finish_reason, row.complete = "stop", index is None or index.is_final(row.state)
    elif len(row.tokens) >= generator.max_tokens:
        row.finish_reason = "length"
        row.complete = index is not None and index.is_final(row.state)
    return False


def _append(row: RowProgress, token: int, detok: Detokenizer) -> None:
    new_state = None if row.index is None else row.index.next_state(row.state, token)
    if new_state is not None and new_state < 0:
        raise GenerationError(f"token {token} is not allowed in constraint state {row.state}")
    detok_state, chunk = detok.feed(row.detok_states[-1], token)
    row.tokens.append(token)
    row.constraint_states.append(new_state)
    row.detok_states.append(detok_state)
    row.chunks.append(chunk.text)


def _rewind_banned(row: RowProgress, generator: Any) -> bool:
    """If the text now contains a banned string, rewind to the token that started it,
    ban that token there, and report True (the row resamples from that position)."""
    text = _generated_text(row)
    hits = [text.find(b) for b in generator.banned if b in text]
    if not hits:
        return False
    start = min(hits)
    ends = [s.decoded_chars for s in row.detok_states[1:]]
    position = next(j for j, end in enumerate(ends) if end > start)
    banned_token = row.tokens[position]
    _truncate(row, position)
    row.banned.setdefault(position, set()).add(banned_token)
    row.retries += 1
    if row.retries > generator.max_retries:
        raise GenerationError(
            f"gave up avoiding banned strings after {generator.max_retries} retries"
        )
    return True


def _generated_text(row: RowProgress) -> str:
    return "".join(row.chunks) + row.detok_states[-1].held_text


def _backtrack(row: RowProgress, n: int, generator: Any) -> None:
    """Drop the last ``n`` tokens and ban, at the rewound position, the first dropped one."""
    position = max(len(row.tokens) - n, 0)
    if position < len(row.tokens):
        row.banned.setdefault(position, set()).add(row.tokens[position])
    _truncate(row, position)
    row.retries += 1
    if row.retries > generator.max_retries:
        raise GenerationError(f"gave up after {generator.max_retries} backtracks in one row")


def _truncate(row: RowProgress, position: int) -> None:
    """Keep the first ``position`` generated tokens (and their constraint/text states)."""
    del row.tokens[position:]
    del row.logprobs[position:]
    del row.constraint_states[position + 1 :]
    del row.detok_states[position + 1 :]
    decoded = row.detok_states[-1].decoded_chars - len(row.detok_states[-1].held_text)
    text = "".join(row.chunks)[:decoded]
    row.chunks = [text] if text else []
    row.banned = {p: b for p, b in row.banned.items() if p <= position}


def _rewind_feed(row: RowProgress) -> tuple[Any, np.ndarray]:
    """Forward input that recomputes the logits after the kept tokens."""
    prompt = row.prepared.row.token_ids
    kept = np.concatenate([np.asarray(prompt, np.int64), np.asarray(row.tokens, np.int64)])
    return row.ref.prefix(len(kept) - 1), kept[-1:]


def _jump_forward(model: Model, row: RowProgress, detok: Detokenizer) -> list[int]:
    """Tokens the constraint forces next (canonical tokenization), appended unsampled."""
    index = row.index
    if index is None or not model.jump_forward:
        return []
    forced = index.forced_bytes(row.state)
    if not forced:
        return []
    try:
        text = forced.decode("utf-8")
    except UnicodeDecodeError:
        return []
    ids = model.encode(text)
    state = row.state
    for token in ids:  # take the forced tokens only while the constraint agrees
        state = index.next_state(state, token)
        if state < 0:
            return []
    taken: list[int] = []
    for token in ids:
        _append(row, token, detok)
        row.logprobs.append(0.0)
        row.forced += 1
        taken.append(token)
    return taken


def _result_row(row: RowProgress, plain: Detokenizer) -> Row:
    return span_row(
        row.prepared,
        row.tokens,
        row.logprobs,
        row.constraint_states[1:],
        row.ref,
        row.finish_reason,
        row.complete,
        row.stop_at,
        plain,
    )


def span_row(
    prepared: Prepared,
    tokens: Sequence[int],
    logprobs: Sequence[float],
    states: Sequence[int | None],
    ref: Any,
    finish_reason: str | None,
    complete: bool,
    stop_at: int | None,
    plain: Detokenizer,
) -> Row:
    """The prepared row extended by a generated span (cut at a stop string if any)."""
    base, generator = prepared.row, prepared.generator
    origin = Origin(
        "generated",
        generator=replace(generator, resume=False),
        capture=generator.name,
        parser=generator.parse,
        finish_reason=finish_reason,
        complete=complete,
        resumes=generator.resume,
        healed=prepared.healed,
    )
    recorded = [-1 if s is None else s for s in states]
    span = Span.of_tokens(tokens, decode_tokens(plain, tokens), origin, logprobs, recorded)
    covers = ref is not None and ref.length <= base.n_tokens + len(tokens)
    result = base.appended(span, ref if covers else None)
    if stop_at is not None:
        result = result.slice_chars(0, base.n_chars + stop_at)
    return result


def step(
    model: Model,
    state: SequenceState,
    logits: Any,
    generator: Any,
    *,
    rng: torch.Generator | None = None,
) -> SequenceState:
    """One token per row from logits the caller computed (``[rows, V]``, for the last
    token of each row, rows in ``state.rows`` order): the constraint, sampler, hooks,
    detokenization and stop strings of ``generator`` are applied exactly as in the
    model's own loop (the same ``_sample_step`` and ``_commit``).

    A row that ends in an unfinished span of ``generator`` continues it (its constraint
    state is read from the span); other rows start a new span. Rows whose span already
    finished are returned unchanged. Token healing, banned strings and backtracking
    need the model's own forward passes and are not available here."""
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
    detok = state.detokenizer(generator.stop)
    plain = state.detokenizer()
    eos = np.asarray(sorted(model.vocabulary.eos_ids), dtype=np.int64)
    progress: dict[int, RowProgress] = {}
    before: dict[int, int] = {}  # tokens the continued span already has
    for i, row in enumerate(state.rows):
        if row.pending_text:
            raise GenerationError("step() needs tokenized rows: this row ends in pending text")
        point = row.resume_point
        continuing = point is not None and point.generator == own
        if continuing and row.finish_reason is not None:
            continue  # that span is finished: the row stays as it is
        prepared = prepare_row(model, row, replace(own, resume=continuing), plain)
        progress[i] = RowProgress(prepared, [detok.start()], [prepared.constraint_state])
        before[i] = _span_tokens(row, own) if continuing else 0
    rows = list(progress.values())
    _finish_forced_ends(rows, list(range(len(rows))), eos)
    live = [i for i, row in progress.items() if row.finish_reason is None]
    if live:
        order = list(progress)
        positions = [order.index(i) for i in live]
        for i in live:
            row = progress[i]
            _ban_over_budget(row, generator.max_tokens - before[i] - len(row.tokens))
        chosen = _sample_step(model, rows, positions, logits[live].to(model.device), generator, rng)
        for i, token in zip(live, chosen):
            if token is None:
                raise GenerationError("a Backtrack hook needs the model's own loop; call generate")
            row = progress[i]
            _commit(row, token, detok, generator, eos)
            if row.finish_reason is None and before[i] + len(row.tokens) >= generator.max_tokens:
                row.finish_reason = "length"
                row.complete = row.index is not None and row.index.is_final(row.state)
        _finish_forced_ends(rows, positions, eos)  # completed by this token: say so now
    new_rows = [
        _result_row(progress[i], plain) if i in progress else row
        for i, row in enumerate(state.rows)
    ]
    return state.with_rows(new_rows)


def _span_tokens(row: Row, generator: Any) -> int:
    """Tokens of the generated span ``row`` ends in, resumed pieces included."""
    total = 0
    for segment in reversed(row.segments):
        if segment.kind != "generated" or segment.origin.generator != generator:
            break
        total += segment.n_tokens
        if not segment.origin.resumes:
            break
    return total
