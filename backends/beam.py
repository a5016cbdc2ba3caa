"""Batched beam search under constraints.

Every input row is a group of ``n`` beams. Each step scores the allowed continuations
of every live beam (log-softmax of the masked logits), keeps per group the best ``2n``
candidates, turns end-of-generation candidates into finished hypotheses and the rest
into the next beams. A beam with no allowed continuation simply produces no candidate
(it is dropped, never kept with ``-inf``). Beams share their prefix blocks: a child is
its parent's ``KVRef`` plus one token, so a reorder copies at most the parent's partly
filled last block.

Scores are summed log-probabilities divided by ``length ** length_penalty`` (length =
generated tokens), as in transformers; a group stops once it holds ``n`` finished
hypotheses that no live beam can beat, or at ``max_tokens``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from backends.generation import (
    GenerationError,
    Prepared,
    active_index,
    constrained_logits,
    needed_logits,
    prepare_row,
    span_row,
)
from seqstate.detokenize import DetokState
from seqstate.row import Row
from seqstate.state import SequenceState

if TYPE_CHECKING:
    from backends.model import Model


@dataclass(frozen=True)
class Beam:
    """One live beam or finished hypothesis (immutable: children are new values)."""

    group: int
    tokens: tuple[int, ...]
    logprobs: tuple[float, ...]
    states: tuple[int | None, ...]  # constraint state after 0..n tokens
    detok: DetokState
    ref: Any  # KVRef covering the prompt and all tokens but the last
    finish_reason: str | None = None
    complete: bool = False

    @property
    def total(self) -> float:
        return float(sum(self.logprobs))


def _score(total: float, length: int, length_penalty: float) -> float:
    return total / (max(length, 1) ** length_penalty)


def beam_search(model: Model, state: SequenceState, generator: Any) -> SequenceState:
    """Run ``generator`` (whose sampler is ``Beam``) on each row; returns ``(batch, n)``."""
    if state.shape[1] != 1:
        raise GenerationError(
            f"beam search starts from one sample per row, got shape {state.shape}; "
            "use state.flatten() or index a sample first"
        )
    n, penalty = generator.sampler.n, generator.sampler.length_penalty
    detok = state.detokenizer(generator.stop)
    plain = state.detokenizer()
    prepared = [prepare_row(model, row, generator, plain) for row in state.rows]
    eos = set(model.vocabulary.eos_ids)

    logits, refs = model.runner.forward(
        [(p.kv_base, p.pending_ids) for p in prepared],
        [
            needed_logits(model, active_index(p, p.constraint_state), p.constraint_state)
            for p in prepared
        ],
    )
    beams = [
        Beam(g, (), (), (p.constraint_state,), detok.start(), ref)
        for g, (p, ref) in enumerate(zip(prepared, refs))
    ]
    finished: list[list[tuple[float, Beam]]] = [[] for _ in prepared]
    for step in range(generator.max_tokens):
        scores = _step_scores(model, logits, beams, prepared)  # [n_beams, V] total log-probs
        candidates = _top_candidates(scores, beams, len(prepared), 2 * n)
        next_beams: list[Beam] = []
        for group, options in enumerate(candidates):
            kept = 0
            for total, parent_at, token in options:
                parent = beams[parent_at]
                index = active_index(prepared[group], parent.states[-1])
                logprob = total - parent.total
                if token in eos:
                    if index is None or index.is_final(parent.states[-1]):
                        done = Beam(
                            group,
                            parent.tokens,
                            parent.logprobs,
                            parent.states,
                            parent.detok,
                            parent.ref,
                            "eos",
                            True,
                        )
                        finished[group].append((_score(total, len(parent.tokens), penalty), done))
                    continue
                if kept == n:
                    continue
                child = _extend(parent, token, logprob, index, detok)
                if child.finish_reason is not None:
                    finished[group].append((_score(child.total, len(child.tokens), penalty), child))
                    continue
                next_beams.append(child)
                kept += 1
        for group in range(len(prepared)):
            finished[group] = sorted(finished[group], key=lambda item: -item[0])[:n]
        last_step = step + 1 == generator.max_tokens
        live = [b for b in next_beams if not _group_done(finished[b.group], b, n, penalty)]
        if last_step or not live:
            for b in live if last_step else ():
                index = active_index(prepared[b.group], b.states[-1])
                done = Beam(
                    b.group,
                    b.tokens,
                    b.logprobs,
                    b.states,
                    b.detok,
                    b.ref,
                    "length",
                    index is not None and index.is_final(b.states[-1]),
                )
                finished[b.group].append((_score(b.total, len(b.tokens), penalty), done))
            break
        logits, refs = model.runner.forward(
            [(b.ref, np.asarray(b.tokens[-1:], np.int64)) for b in live],
            [
                needed_logits(model, active_index(prepared[b.group], b.states[-1]), b.states[-1])
                for b in live
            ],
        )
        beams = [
            Beam(b.group, b.tokens, b.logprobs, b.states, b.detok, ref)
            for b, ref in zip(live, refs)
        ]
    rows = []
    for group, p in enumerate(prepared):
        ranked = sorted(finished[group], key=lambda item: -item[0])[:n]
        if not ranked:
            raise GenerationError(f"row {group}: every beam was dropped (no allowed continuation)")
        while len(ranked) < n:  # fewer distinct hypotheses than beams: repeat the worst
            ranked.append(ranked[-1])
        rows.extend(_result_row(p, beam, plain) for _, beam in ranked)
    return state.with_rows(rows, (len(prepared), n))


def _step_scores(
    model: Model, logits: torch.Tensor, beams: list[Beam], prepared: list[Prepared]
) -> torch.Tensor:
    """Total log-probability of every (beam, token), -inf where not allowed: [n_beams, V]."""
    logits = logits.float()
    masked = constrained_logits(
        model,
        logits,
        [active_index(prepared[b.group], b.states[-1]) for b in beams],
        [b.states[-1] for b in beams],
    )
    totals = torch.tensor([b.total for b in beams], device=logits.device, dtype=torch.float32)
    return torch.log_softmax(masked, dim=-1) + totals[:, None]


def _top_candidates(
    scores: torch.Tensor, beams: list[Beam], groups: int, k: int
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


def _extend(parent: Beam, token: int, logprob: float, index: Any, detok: Any) -> Beam:
    state = None if index is None else index.next_state(parent.states[-1], token)
    detok_state, _ = detok.feed(parent.detok, token)
    reason = "stop" if detok_state.stop is not None else None
    complete = reason is not None and (index is None or index.is_final(state))
    return Beam(
        parent.group,
        parent.tokens + (token,),
        parent.logprobs + (logprob,),
        parent.states + (state,),
        detok_state,
        parent.ref,
        reason,
        complete,
    )


def _group_done(done: list[tuple[float, Beam]], beam: Beam, n: int, penalty: float) -> bool:
    """Whether a group already has ``n`` hypotheses no live beam of it can beat."""
    if len(done) < n:
        return False
    best_possible = _score(beam.total, len(beam.tokens), penalty)
    return best_possible <= done[-1][0]


def _result_row(prepared: Prepared, beam: Beam, plain: Any) -> Row:
    stop_at = None if beam.detok.stop is None else beam.detok.stop.start
    return span_row(
        prepared,
        beam.tokens,
        beam.logprobs,
        beam.states[1:],
        beam.ref,
        beam.finish_reason,
        beam.complete,
        stop_at,
        plain,
    )
