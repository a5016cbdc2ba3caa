"""seqstate's constraints as a vLLM v1 logits processor.

A request opts in with ``SamplingParams(extra_args={"seqstate": args})`` where ``args``
is a request dict of ``backends.request_specs`` (``{"regex": ...}``, ``{"json": ...}``,
``{"choice": [...]}``, ``{"grammar": ...}``) or its JSON text (``vllm serve`` takes only
flat ``vllm_xargs`` values, so there it is ``{"seqstate": json.dumps(args)}``).
Requests without it are left alone.

How it follows vLLM's persistent batch: ``update_state`` applies the batch's removed,
added and moved rows (in that order, as ``BatchUpdate`` prescribes) to a map from batch
row to ``RowConstraint``; each one holds a reference to its request's output token list,
which vLLM grows in place, and reads the tokens it has not seen yet through the index
(a ``-1`` placeholder of async scheduling is read later, in ``apply``). ``apply`` masks
the constrained rows only, in place, with a few batched operations on the logits'
device (``backends.processor_masks``: on an accelerator the packed bitmask rows are
gathered there, ``DeviceMasks`` keeping each index's table on the device and uploading
only new rows, then unpacked and written back once; on the CPU the same is done in
numpy through the tensor's memory); ids past the tokenizer (a padded logits width) are
masked too. End ids are allowed
exactly in final states, where the end token also takes the probability of the tokens
the constraint refuses, as in seqstate's own engine (``backends.processor_masks``).

A token outside the constraint (another processor forced it, or a request was resumed
with foreign output) or an index that cannot be built leaves its row on an "end only"
constraint: the next token ends the request, and a warning names the reason. Nothing a
request carries can stop the engine: ``validate_params`` refuses a bad constraint
before it is scheduled (HTTP 400 under ``vllm serve``), and later failures stay in
their row.

Compiled indexes are cached by (spec fingerprint, vocabulary fingerprint) in a bounded
``fsm.IndexCache`` owned by the processor instance, so requests with the same spec
share one index (and its built rows). The vocabulary is built from vLLM's tokenizer on
the first constrained request.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import torch
from vllm import SamplingParams
from vllm.exceptions import VLLMValidationError
from vllm.v1.sample.logits_processor import BatchUpdate, LogitsProcessor, MoveDirectionality

import fsm
from backends.masks import DeviceMasks
from backends.processor_masks import mask_rows
from backends.request_specs import Spec, check_spec, spec_from_args

if TYPE_CHECKING:
    from vllm.config import VllmConfig

EXTRA_ARGS_KEY = "seqstate"
"""The key of ``SamplingParams.extra_args`` (and of ``vllm_xargs``) holding a constraint."""

INDEX_CACHE_ENTRIES = 256
PLACEHOLDER = -1  # an output id async scheduling has not filled in yet

logger = logging.getLogger(__name__)


def request_spec(params: SamplingParams) -> Spec | None:
    """The constraint a request asks for, or None; ``fsm.InvalidSpec`` if malformed."""
    extra = params.extra_args or {}
    if EXTRA_ARGS_KEY not in extra:
        return None
    return spec_from_args(extra[EXTRA_ARGS_KEY])


@dataclass
class RowConstraint:
    """One request's constraint: its index, the automaton state after the output
    tokens read so far, and the (shared, growing) output token list."""

    index: fsm.TokenIndex
    output: list[int]
    state: int
    read: int = 0
    broken: str | None = None  # why the row left its constraint: it may only end now

    def catch_up(self) -> str | None:
        """Read the output tokens not read yet; the reason, once, if one breaks the
        constraint (the row is then left to its caller to end)."""
        output = self.output
        while self.read < len(output) and self.broken is None:
            token = output[self.read]
            if token == PLACEHOLDER:
                return None
            following = self.index.next_state(self.state, token)
            if following == fsm.DEAD:
                self.broken = f"token {token} at output position {self.read} is not allowed"
                return self.broken
            self.state = following
            self.read += 1
        return None


class SeqstateLogitsProcessor(LogitsProcessor):
    """Masks the logits of requests that carry ``extra_args["seqstate"]``."""

    def __init__(self, vllm_config: VllmConfig, device: torch.device, is_pin_memory: bool):
        self._setup(vllm_config.model_config, device, None)

    @classmethod
    def over(
        cls, vocabulary: fsm.Vocabulary, end_token: int, device: str | torch.device = "cpu"
    ) -> SeqstateLogitsProcessor:
        """A processor over a given vocabulary, outside any engine (tests, benchmarks)."""
        processor = cls.__new__(cls)
        processor._setup(None, device, ModelTokens(vocabulary, end_token))
        return processor

    def _setup(self, model_config: Any, device: str | torch.device, tokens: ModelTokens | None):
        self.device = torch.device(device)
        self._model_config = model_config
        self.indexes = fsm.IndexCache(max_entries=INDEX_CACHE_ENTRIES)
        self._masks = DeviceMasks(self.device)
        self._rows: dict[int, RowConstraint] = {}
        self._model_tokens = tokens

    def constraint_of(self, position: int) -> RowConstraint | None:
        """The constraint of batch row ``position`` (None: a free row); its ``broken``
        says why it left its own constraint, if it did."""
        return self._rows.get(position)

    # ------------------------------------------------------------ vLLM interface

    @classmethod
    def validate_params(cls, sampling_params: SamplingParams) -> None:
        """Refuse a malformed or unparsable constraint, naming the problem."""
        try:
            spec = request_spec(sampling_params)
            if spec is not None:
                check_spec(spec)
        except Exception as error:  # any failure of a request's spec is the request's fault
            raise VLLMValidationError(
                f"invalid seqstate constraint: {error}",
                parameter=f"extra_args.{EXTRA_ARGS_KEY}",
            ) from error

    def is_argmax_invariant(self) -> bool:
        return False

    def update_state(self, batch_update: BatchUpdate | None) -> None:
        if batch_update is not None:
            for index in batch_update.removed:
                self._rows.pop(index, None)
            for index, params, _, output in batch_update.added:
                self._add(index, params, output)
            for source, target, direction in batch_update.moved:
                self._move(source, target, direction)
        for position, row in self._rows.items():
            self._catch_up(position, row)

    def apply(self, logits: torch.Tensor) -> torch.Tensor:
        if not self._rows:
            return logits
        rows = sorted(self._rows.items())
        for position, row in rows:
            self._catch_up(position, row)
            self._build_row(position, row)
        return mask_rows(
            logits,
            [position for position, _ in rows],
            [row.index for _, row in rows],
            [row.state for _, row in rows],
            self._masks,
            self.end_token,
        )

    # ---------------------------------------------------------------- batch rows

    def _add(self, position: int, params: SamplingParams, output: list[int]) -> None:
        try:
            spec = request_spec(params)
        except fsm.FsmError as error:  # validate_params refuses these first
            logger.warning("seqstate: request at row %d: %s", position, error)
            spec = None
        if spec is None:
            self._rows.pop(position, None)
            return
        try:
            index = fsm.compile_index(spec, self.vocabulary, cache=self.indexes)
        except fsm.FsmError as error:
            self._rows[position] = self._end_only(output, f"constraint failed to compile: {error}")
            return
        self._rows[position] = RowConstraint(index, output, index.initial_state)

    def _move(self, source: int, target: int, direction: MoveDirectionality) -> None:
        moving = self._rows.pop(source, None)
        replaced = self._rows.pop(target, None)
        if moving is not None:
            self._rows[target] = moving
        if replaced is not None and direction == MoveDirectionality.SWAP:
            self._rows[source] = replaced

    def _catch_up(self, position: int, row: RowConstraint) -> None:
        reason = row.catch_up()
        if reason is not None:
            self._rows[position] = self._end_only(row.output, reason)

    def _build_row(self, position: int, row: RowConstraint) -> None:
        """Build the index row of the row's state now, so an explosion ends this
        request rather than the batch."""
        try:
            row.index.bitmask(row.state)
        except fsm.FsmError as error:
            self._rows[position] = self._end_only(row.output, f"constraint too large: {error}")

    def _end_only(self, output: list[int], reason: str) -> RowConstraint:
        """A constraint that allows only end ids, for a row whose own one broke."""
        logger.warning("seqstate: ending a request early: %s", reason)
        index = fsm.compile_index(fsm.Regex(""), self.vocabulary, cache=self.indexes)
        return RowConstraint(index, output, index.initial_state, len(output), broken=reason)

    # ---------------------------------------------------------------- vocabulary

    @property
    def vocabulary(self) -> fsm.Vocabulary:
        """The model's vocabulary, built from vLLM's tokenizer on first use."""
        return self.model_tokens.vocabulary

    @property
    def end_token(self) -> int:
        """The end id that takes a final state's refused mass (``backends.processor_masks``)."""
        return self.model_tokens.end_token

    @property
    def model_tokens(self) -> ModelTokens:
        if self._model_tokens is None:
            self._model_tokens = model_tokens(self._model_config)
        return self._model_tokens


@dataclass(frozen=True)
class ModelTokens:
    """What the processor needs of a model's tokenizer."""

    vocabulary: fsm.Vocabulary
    end_token: int


def model_tokens(model_config: Any) -> ModelTokens:
    """The vocabulary of a vLLM model (its tokenizer's token bytes, the end ids of the
    tokenizer and the generation config, which vLLM stops on, and the model's vocabulary
    size as the mask width) and the end token: the tokenizer's EOS when it is an end
    id, else the smallest end id, as seqstate's own engine picks it."""
    from vllm.tokenizers import cached_tokenizer_from_config

    tokenizer = cached_tokenizer_from_config(model_config)
    if tokenizer is None:
        raise fsm.InvalidVocabulary("seqstate constraints need the tokenizer (skip_tokenizer_init)")
    eos = model_config.try_get_generation_config().get("eos_token_id")
    count = max(tokenizer.get_vocab().values()) + 1
    vocabulary = fsm.Vocabulary.from_tokenizer(
        tokenizer, size=max(model_config.get_vocab_size(), count), eos_ids=_ids(eos)
    )
    preferred = tokenizer.eos_token_id
    end = preferred if preferred in vocabulary.eos_ids else min(vocabulary.eos_ids)
    return ModelTokens(vocabulary, end)


def _ids(value: int | Sequence[int] | None) -> list[int]:
    if value is None:
        return []
    return [value] if isinstance(value, int) else list(value)
