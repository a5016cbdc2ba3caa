"""One generator call as vLLM requests, and vLLM's outputs back into rows.

Each row of the state becomes one request whose prompt is the row's token ids after
``prepare_row`` (pending text tokenized, the seam healed: the same preparation as the
native loop), so vLLM's prefix cache finds the blocks earlier calls computed. The
returned tokens are replayed through ``commit`` and ``span_row``, the native loop's
own rules, so spans, captures, finish reasons and stop-string cuts are built exactly
as on the native engine; vLLM only chooses the tokens.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from vllm import SamplingParams
from vllm.inputs import TokensPrompt

from backends.decode.commit import Rules, commit, forced_end, start
from backends.decode.hypothesis import Hypothesis
from backends.decode.prepare import Prepared, active_index, prepare_row
from backends.decode.result import span_row
from backends.request_specs import spec_to_args
from backends.vllm.program_processor import PROGRAM_KEY
from seqstate.errors import UnsupportedOnEngine
from seqstate.samplers import Beam, Sample
from seqstate.state import SequenceState

ENGINE = "vLLM"


def check_supported(generator: Any) -> None:
    """Refuse, before any request is sent, what the vLLM engine cannot run."""
    if isinstance(generator.sampler, Beam):
        raise UnsupportedOnEngine(
            "beam search (ss.beam)",
            ENGINE,
            "vLLM's beam search takes no per-request constraint; use the native engine",
        )
    if generator.hooks:
        raise UnsupportedOnEngine(
            "hooks (hooks=..., and ss.json's distinct-keys hook for schemas that allow "
            "undeclared keys)",
            ENGINE,
            "vLLM samples inside its engine, where no Python hook can see the token",
        )
    if generator.banned:
        raise UnsupportedOnEngine("banned strings (banned=..., rewinds)", ENGINE)
    if generator.resume:
        raise UnsupportedOnEngine("resuming a cut span (state.resume())", ENGINE)


def run_call(model: Any, state: SequenceState, generator: Any) -> SequenceState:
    """Every row of ``state`` extended by ``generator``: one batch of vLLM requests."""
    rules = Rules.of(model, state, generator)
    plain = state.detokenizer()
    prepared = [prepare_row(model, row, generator, plain) for row in state.rows]
    prompts = [TokensPrompt(prompt_token_ids=p.row.token_ids.tolist()) for p in prepared]
    params = [sampling_params(model, p, generator, k) for k, p in enumerate(prepared)]
    outputs = model.llm.generate(prompts, params, use_tqdm=False)
    model.cache_stats.record(outputs)
    eos = np.asarray(sorted(rules.eos), dtype=np.int64)
    hyps = [replay(p, rules, out.outputs[0], eos) for p, out in zip(prepared, outputs)]
    model.counters["tokens_sampled"] += sum(len(h.tokens) for h in hyps)
    return state.with_rows([span_row(p, h, plain) for p, h in zip(prepared, hyps)])


def sampling_params(model: Any, prepared: Prepared, generator: Any, row: int) -> SamplingParams:
    """The request of one prepared row: sampler, budget, stop strings, constraint."""
    replayed = len(prepared.replayed.encode())  # healed tokens cost no budget
    options: dict[str, Any] = {
        "max_tokens": generator.max_tokens + replayed,
        "stop_token_ids": sorted(model.vocabulary.eos_ids),
        "stop": list(_stops(prepared, generator.stop)),
        "logprobs": 0,
        "temperature": 0.0,
    }
    sampler = generator.sampler
    if isinstance(sampler, Sample):
        options["temperature"] = sampler.temperature
        for name in ("top_k", "top_p", "min_p"):
            if getattr(sampler, name) is not None:
                options[name] = getattr(sampler, name)
        if sampler.seed is not None:
            options["seed"] = sampler.seed + row  # rows (and forks) draw differently
    if prepared.index is not None:
        options["extra_args"] = {PROGRAM_KEY: program_request(model, prepared)}
    return SamplingParams(**options)


def program_request(model: Any, prepared: Prepared) -> dict[str, Any]:
    """The ``seqstate_program`` dict (``backends.vllm.program_processor``)."""
    generator: Any = prepared.generator
    constraint = generator.constraint
    return {
        "spec": None if constraint is None else spec_to_args(constraint),
        "prefix": prepared.replayed,
        "first_bans": sorted(prepared.first_bans),
        "budget": generator.max_tokens,
        "jump_forward": bool(model.jump_forward),
    }


def _stops(prepared: Prepared, stops: Sequence[str]) -> Sequence[str]:
    """Stop strings vLLM may apply itself: none when one could start inside the healed
    text the span rewrites first (the native loop ignores matches there, vLLM would
    stop on them); the replay cuts at the right stop either way."""
    healed = prepared.replayed
    for stop in stops:
        for at in range(len(healed)):
            tail = healed[at:]
            if stop.startswith(tail) or tail.startswith(stop):
                return ()
    return stops


def replay(prepared: Prepared, rules: Rules, output: Any, eos: np.ndarray) -> Hypothesis:
    """The native loop's hypothesis for the tokens vLLM chose: ``forced_end`` before
    each token and ``commit`` of each, until the rules end the span."""
    hyp = start(prepared, rules, None)
    values = _logprobs(output)
    for token, logprob in zip(output.token_ids, values):
        hyp = forced_end(hyp, prepared, eos)
        if hyp.finish_reason is not None:
            return hyp
        hyp = commit(hyp, int(token), logprob, prepared, rules)
        if hyp.finish_reason is not None:
            return hyp
    hyp = forced_end(hyp, prepared, eos)
    if hyp.finish_reason is not None:
        return hyp
    # vLLM ended for a reason of its own (the model's context length): cut, as "length"
    # (complete when the constraint is in a final state, as ``commit`` decides).
    index, state = active_index(prepared, hyp.state), hyp.state
    return hyp.finished("length", index is not None and state is not None and index.is_final(state))


def _logprobs(output: Any) -> list[float]:
    """The sampled tokens' log-probabilities (NaN where vLLM gave none)."""
    entries = output.logprobs
    if entries is None:
        return [math.nan] * len(output.token_ids)
    values = []
    for token, entry in zip(output.token_ids, entries):
        found = entry.get(token) if entry is not None else None
        values.append(math.nan if found is None else float(found.logprob))
    return values
