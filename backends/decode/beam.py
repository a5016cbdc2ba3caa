"""Batched beam search under constraints, ranked as transformers ranks.

Every input row is a group of ``n`` beams. Each step scores the allowed continuations
of every live beam (log-softmax of the masked logits plus the beam's total), and takes
per group the best ``k = max(2, 1 + #end ids) * n`` candidates, best first. Tokens are
committed by the same rules as every driver (``commit``: constraint, detokenizer, stop
strings, budget). Among the first ``n`` candidates, those that end (end token, stop
string, budget) become finished hypotheses scored ``total / length ** length_penalty``,
where the total and the length count the end token, as transformers'
``generate(num_beams=n)`` does; the best ``n`` unfinished candidates are the next
beams. A candidate that writes a banned string is dropped; hypotheses with the same
text (tokenized two ways) are merged, keeping the best. A group stops once it holds
``n`` hypotheses and its best live beam, scored at its current length, cannot beat the
worst of them (transformers' default ``early_stopping=False`` heuristic). First tokens that
would split healed text, and near the end of the budget tokens after which the
constraint cannot end in time (``backends.closing``), are banned as in the plain
loop. Beams share their prefix blocks: a child is its parent's ``KVRef`` plus one token.
Hooks are not called (their actions steer one row's single path).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from backends.closing import over_budget_tokens
from backends.decode.commit import Rules, banned_position, commit, start
from backends.decode.errors import GenerationError
from backends.decode.hypothesis import Hypothesis
from backends.decode.logits import banned_logits, constrained_logits, next_masks
from backends.decode.model_view import DecodingModel
from backends.decode.prepare import Prepared, active_index, prepare_row
from backends.decode.result import span_row
from seqstate.builtin_generators import SpanGenerator
from seqstate.state import SequenceState

Scored = tuple[float, Hypothesis]


def beam_search(model: DecodingModel, state: SequenceState, generator: SpanGenerator) -> SequenceState:
    """Run ``generator`` (whose sampler is ``Beam``) on each row; returns ``(batch, n)``."""
    if state.engine is not model:
        raise GenerationError("this state belongs to another model")
    if state.shape[1] != 1:
        raise GenerationError(
            f"beam search starts from one sample per row, got shape {state.shape}; "
            "use state.flatten() or index a sample first"
        )
    n, penalty = generator.sampler.n, generator.sampler.length_penalty
    rules = Rules.of(model, state, generator)
    plain = state.detokenizer()
    prepared = [prepare_row(model, row, generator, plain) for row in state.rows]
    width = max(2, 1 + len(rules.eos)) * n
    logits, refs = model.runner.forward(
        [(p.kv_base, p.pending_ids) for p in prepared],
        next_masks(model, [(p, p.constraint_state) for p in prepared]),
    )
    beams = [start(p, rules, ref, g) for g, (p, ref) in enumerate(zip(prepared, refs))]
    finished: list[dict[bytes, Scored]] = [{} for _ in prepared]
    while beams:
        scores = _step_scores(model, logits, beams, prepared, generator.max_tokens)
        live: list[Hypothesis] = []
        for group, options in enumerate(_top_candidates(scores, beams, len(prepared), width)):
            live += _select(options, beams, prepared[group], rules, n, penalty, finished[group])
        live = [b for b in live if not _group_done(finished[b.group], live, b.group, n, penalty)]
        if not live:
            break
        logits, refs = model.runner.forward(
            [(b.ref, np.asarray(b.tokens[-1:], np.int64)) for b in live],
            next_masks(model, [(prepared[b.group], b.state) for b in live]),
        )
        beams = [b.with_ref(ref) for b, ref in zip(live, refs)]
    rows = []
    for group, p in enumerate(prepared):
        ranked = [hyp for _, hyp in sorted(finished[group].values(), key=lambda s: -s[0])[:n]]
        if not ranked:
            raise GenerationError(f"row {group}: every beam was dropped (no allowed continuation)")
        ranked += [ranked[-1]] * (n - len(ranked))  # fewer distinct hypotheses than beams
        rows.extend(span_row(p, hyp, plain) for hyp in ranked)
    return state.with_rows(rows, (len(prepared), n))


def _select(
    options: Sequence[tuple[float, int, int]],
    beams: Sequence[Hypothesis],
    prepared: Prepared,
    rules: Rules,
    n: int,
    penalty: float,
    finished: dict[bytes, Scored],
) -> list[Hypothesis]:
    """Commit a group's candidates (best first): the first ``n`` may finish; the best
    ``n`` unfinished ones with distinct texts are returned as the next beams."""
    live: list[Hypothesis] = []
    texts: set[bytes] = set()
    for rank, (total, parent_at, token) in enumerate(options):
        parent = beams[parent_at]
        child = commit(parent, token, total - parent.total, prepared, rules)
        if rules.banned and banned_position(child, prepared, rules.banned) is not None:
            continue
        key = _text_key(child, rules)
        if child.finish_reason is not None:
            if rank < n:
                score = total / (len(parent.tokens) + 1) ** penalty
                if key not in finished or finished[key][0] < score:
                    finished[key] = (score, child)
            continue
        if len(live) < n and key not in texts:
            texts.add(key)
            live.append(child)
    return live


def _group_done(
    finished: dict[bytes, Scored], live: Sequence[Hypothesis], group: int, n: int, penalty: float
) -> bool:
    """Whether a group holds ``n`` hypotheses that its best live beam, scored at its
    current length, cannot beat."""
    if len(finished) < n:
        return False
    worst = sorted(score for score, _ in finished.values())[-n]
    best = max(b.total / len(b.tokens) ** penalty for b in live if b.group == group)
    return best <= worst


def _text_key(hyp: Hypothesis, rules: Rules) -> bytes:
    return b"".join(rules.token_bytes[t] or b"" for t in hyp.tokens)


def _bans(prepared: Prepared, beam: Hypothesis, max_tokens: int) -> list[int]:
    """Tokens a beam may not write next: first tokens that split healed text, and, near
    the end of the budget, tokens after which the constraint cannot end in time."""
    bans = sorted(prepared.first_bans) if not beam.tokens else []
    index = active_index(prepared, beam.state)
    if index is not None:
        bans += over_budget_tokens(index, beam.state, max_tokens - beam.spent).tolist()
    return bans


def _step_scores(
    model: DecodingModel,
    logits: torch.Tensor,
    beams: Sequence[Hypothesis],
    prepared: Sequence[Prepared],
    max_tokens: int,
) -> torch.Tensor:
    """Total log-probability of every (beam, token), -inf where not allowed: [n_beams, V]."""
    logits = logits.float()
    indexes = [active_index(prepared[b.group], b.state) for b in beams]
    masked = constrained_logits(model, logits, indexes, [b.state for b in beams])
    masked = banned_logits(masked, [_bans(prepared[b.group], b, max_tokens) for b in beams])
    totals = torch.tensor([b.total for b in beams], device=logits.device, dtype=torch.float32)
    return torch.log_softmax(masked, dim=-1) + totals[:, None]


def _top_candidates(
    scores: torch.Tensor, beams: Sequence[Hypothesis], groups: int, k: int
) -> list[list[tuple[float, int, int]]]:
    """Per group, the best ``k`` finite (total, beam index, token), best first."""
    out: list[list[tuple[float, int, int]]] = [[] for _ in range(groups)]
    group_of = np.asarray([b.group for b in beams])
    vocab = scores.shape[1]
    for group in range(groups):
        members = np.flatnonzero(group_of == group)
        if not len(members):
            continue
        flat = scores[torch.as_tensor(members, device=scores.device)].reshape(-1)
        values, positions = torch.topk(flat, min(k, flat.numel()))
        for value, position in zip(values.tolist(), positions.tolist()):
            if value == float("-inf"):
                break
            out[group].append((value, int(members[position // vocab]), position % vocab))
    return out
