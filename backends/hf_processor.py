"""seqstate's constraints as a transformers ``LogitsProcessor`` for ``model.generate``.

The pattern of outlines and xgrammar: an object owning what is built once per
tokenizer (the vocabulary and a cache of compiled indexes) makes one processor per
``generate`` call::

    constraints = HFConstraints(tokenizer, model)
    processor = constraints.processor(ss.json(schema))  # or fsm.Regex(...), {"regex": ...}
    out = model.generate(**inputs, logits_processor=[processor], max_new_tokens=200)

A processor reads the tokens each row generated after the prompt (the sequence length
of its first call) and masks the scores of every row to what the constraint allows
next, on the scores' device, as seqstate's own engine does (``backends.processor_masks``:
end ids allowed exactly in final states, where the end token also takes the
probability of the refused tokens); ids past the tokenizer (a padded vocabulary) are
never allowed. Rows are matched to the rows of
the previous step by their generated tokens, so beam search's reordering is followed;
a row whose tokens leave the constraint (a finished row padded by ``generate``) may only
end. A call that does not continue the previous one (another prompt, another length)
starts afresh, so one processor may serve several ``generate`` calls in turn.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import torch
from transformers import LogitsProcessor

import fsm
from backends.masks import DeviceMasks
from backends.processor_masks import mask_rows
from backends.request_specs import Spec, spec_from_args


class HFConstraints:
    """A tokenizer's vocabulary and the compiled indexes of the specs asked for."""

    def __init__(
        self,
        tokenizer: Any,
        model: Any = None,
        *,
        vocab_size: int | None = None,
        eos_token_id: int | Iterable[int] | None = None,
        cache_entries: int = 64,
    ) -> None:
        """``model`` (optional) gives the logits width (``config.vocab_size``) and the
        end ids of its generation config; ``vocab_size``/``eos_token_id`` override."""
        ends = set(_ids(eos_token_id))
        if model is not None:
            ends.update(_ids(getattr(model.generation_config, "eos_token_id", None)))
            vocab_size = vocab_size or model.config.vocab_size
        count = max(tokenizer.get_vocab().values()) + 1
        self.vocabulary = fsm.Vocabulary.from_tokenizer(
            tokenizer, size=max(vocab_size or 0, count), eos_ids=ends
        )
        self.indexes = fsm.IndexCache(max_entries=cache_entries)
        preferred = tokenizer.eos_token_id  # the end token, as seqstate's engine picks it
        eos = self.vocabulary.eos_ids
        self.end_token = preferred if preferred in eos else min(eos)

    def index(self, constraint: Any) -> fsm.TokenIndex:
        """The compiled index of a spec, a seqstate generator or a request dict."""
        return fsm.compile_index(as_spec(constraint), self.vocabulary, cache=self.indexes)

    def processor(self, constraint: Any) -> ConstraintLogitsProcessor:
        """A fresh logits processor for ``constraint`` (see the module docstring)."""
        return ConstraintLogitsProcessor(self.index(constraint), self.end_token)


def as_spec(constraint: Any) -> Spec:
    """An ``fsm`` spec from a spec, a generator (``ss.json(...)``) or a request dict."""
    if isinstance(constraint, Mapping | str):
        return spec_from_args(constraint)
    spec = getattr(constraint, "constraint", constraint)
    if not isinstance(spec, fsm.Regex | fsm.JsonSchema | fsm.Choice | fsm.Grammar):
        raise fsm.InvalidSpec(
            f"{type(constraint).__name__} is not a constraint; give an fsm spec, a "
            "constrained seqstate generator or a request dict such as {'regex': ...}"
        )
    return spec


class ConstraintLogitsProcessor(LogitsProcessor):
    """Masks ``generate``'s scores to one token index (one per generation call)."""

    def __init__(self, index: fsm.TokenIndex, end_token: int) -> None:
        self.index = index
        self.end_token = end_token
        self._end_only = fsm.compile_index(fsm.Regex(""), index.vocabulary)
        self._masks: DeviceMasks | None = None
        self._prompt: torch.Tensor | None = None
        self._states: dict[tuple[int, ...], tuple[fsm.TokenIndex, int]] = {}

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        if not self._continues(input_ids):
            self._prompt = input_ids.clone()
            self._states = {}
        generated = input_ids[:, self._prompt.shape[1] :].tolist()  # type: ignore[union-attr]
        states = {tuple(row): self._state_of(row) for row in generated}
        self._states = states
        if self._masks is None or self._masks.device != scores.device:
            self._masks = DeviceMasks(scores.device)
        rows = [states[tuple(row)] for row in generated]
        indexes, row_states = [i for i, _ in rows], [s for _, s in rows]
        positions = list(range(len(rows)))
        return mask_rows(scores, positions, indexes, row_states, self._masks, self.end_token)

    def _continues(self, input_ids: torch.Tensor) -> bool:
        """Whether ``input_ids`` is the previous call's batch one token longer."""
        if self._prompt is None or input_ids.shape[0] != self._prompt.shape[0]:
            return False
        if input_ids.shape[1] != self._prompt.shape[1] + 1 + self._length():
            return False
        prompt = self._prompt.to(input_ids.device)
        return bool(torch.equal(input_ids[:, : prompt.shape[1]], prompt))

    def _length(self) -> int:
        return len(next(iter(self._states))) if self._states else 0

    def _state_of(self, tokens: list[int]) -> tuple[fsm.TokenIndex, int]:
        """(index, state) after ``tokens``: one step from the state of their prefix at
        the previous call, or read from the start when no row had that prefix."""
        known = self._states.get(tuple(tokens[:-1])) if tokens else None
        if known is None:
            index, state, todo = self.index, self.index.initial_state, tokens
        else:
            (index, state), todo = known, tokens[-1:]
        for token in todo:
            following = index.next_state(state, token)
            if following == fsm.DEAD:
                index, following = self._end_only, self._end_only.initial_state
            state = following
        return index, state


def _ids(value: int | Iterable[int] | None) -> list[int]:
    if value is None:
        return []
    return [value] if isinstance(value, int) else [int(v) for v in value]
