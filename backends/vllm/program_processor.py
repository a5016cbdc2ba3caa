"""The logits processor behind ``engine="vllm"``: the native decode loop's rules on top
of the constraint mask of ``SeqstateLogitsProcessor``.

A seqstate program run on vLLM must choose the tokens the native engine chooses, so a
request sent by ``backends.vllm.engine`` carries ``extra_args["seqstate_program"]``
(never ``"seqstate"``: the plain processor leaves it alone) with what the native loop
applies besides the mask and the end token's refused mass, which the base processor
gives (``backends.decode``):

- ``prefix``: token healing. The span first rewrites the removed prompt text, so its
  constraint is ``fsm.Prefixed(prefix, spec)``; a free-text span is unconstrained once
  the prefix is written (``prepare.active_index``).
- ``first_bans``: first tokens that would split the healed text (``prepare``).
- ``budget``: the span's ``max_tokens``. In its last tokens, tokens after which the
  constraint could not be completed in the tokens left are banned
  (``backends.closing``); tokens that only rewrite the healed text cost nothing.
- ``jump_forward``: after each sampled token, the text the constraint forces is
  written as its canonical tokens (``loop._jump_forward``): here each of them is the
  only token allowed at its step (one forward pass each, so the tokens are the native
  engine's, not its speed-up).

The request dict: ``{"spec": request_specs args or None, "prefix": str, "first_bans":
[ids], "budget": int, "jump_forward": bool}``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import torch
from vllm import SamplingParams
from vllm.exceptions import VLLMValidationError

import fsm
from backends.closing import over_budget_tokens
from backends.request_specs import check_spec, spec_from_args
from backends.vllm.processor import RowConstraint, SeqstateLogitsProcessor
from fsm.prefixed import Prefixed

PROGRAM_KEY = "seqstate_program"


def program_args(params: SamplingParams) -> Mapping[str, Any] | None:
    """The engine's request dict of ``params``, or None for other requests."""
    extra = params.extra_args or {}
    return extra.get(PROGRAM_KEY)


def program_spec(args: Mapping[str, Any]) -> Any:
    """The constraint a program request runs under (``Prefixed`` when healing)."""
    inner = None if args.get("spec") is None else spec_from_args(args["spec"])
    prefix = args.get("prefix", "")
    if not prefix:
        if inner is None:
            raise fsm.InvalidSpec("a program request needs a spec or a prefix")
        return inner
    return Prefixed(prefix.encode(), inner)


@dataclass
class ProgramRow(RowConstraint):
    """A program request's row: the constraint plus the native loop's extra rules."""

    first_bans: tuple[int, ...] = ()
    free: bool = False  # free text: unconstrained once the healed prefix is written
    budget: int | None = None  # max_tokens of the span, for the closing bans
    prefix_bytes: int = 0  # length of the healed prefix: tokens within it are free
    free_tokens: int = 0  # leading output tokens that only rewrote the prefix
    sized: int = 0  # output tokens looked at for ``free_tokens``
    size: int = 0  # bytes of those tokens
    jump_forward: bool = False
    forced: list[int] = field(default_factory=list)  # planned forced tokens, next first
    seen: int = 0  # output tokens the plan has accounted for


class ProgramLogitsProcessor(SeqstateLogitsProcessor):
    """Masks program requests as the native decode loop does (see the module doc)."""

    @classmethod
    def validate_params(cls, sampling_params: SamplingParams) -> None:
        args = program_args(sampling_params)
        if args is None:
            return
        try:
            spec = program_spec(args)
            check_spec(spec.inner if isinstance(spec, Prefixed) and spec.inner else spec)
        except Exception as error:  # a bad request is the request's fault
            raise VLLMValidationError(
                f"invalid seqstate program request: {error}", parameter=f"extra_args.{PROGRAM_KEY}"
            ) from error

    def _add(self, position: int, params: SamplingParams, output: list[int]) -> None:
        args = program_args(params)
        if args is None:
            self._rows.pop(position, None)
            return
        try:
            index = fsm.compile_index(program_spec(args), self.vocabulary, cache=self.indexes)
        except fsm.FsmError as error:
            self._rows[position] = self._end_only(output, f"constraint failed to compile: {error}")
            return
        self._rows[position] = ProgramRow(
            index,
            output,
            index.initial_state,
            first_bans=tuple(int(t) for t in args.get("first_bans", ())),
            free=args.get("spec") is None,
            budget=args.get("budget"),
            prefix_bytes=len(args.get("prefix", "").encode()),
            jump_forward=bool(args.get("jump_forward", False)),
        )

    def apply(self, logits: torch.Tensor) -> torch.Tensor:
        self._release_free_rows()
        logits = super().apply(logits)
        self._ban_first_tokens(logits)
        self._ban_over_budget(logits)
        self._force_planned(logits)
        return logits

    def _release_free_rows(self) -> None:
        """Free-text rows whose healed prefix is written leave the constraint."""
        for position, row in list(self._rows.items()):
            self._catch_up(position, row)
            row = self._rows[position]
            if isinstance(row, ProgramRow) and row.free and row.index.is_final(row.state):
                del self._rows[position]

    def _ban_first_tokens(self, logits: torch.Tensor) -> None:
        for position, row in self._rows.items():
            if isinstance(row, ProgramRow) and row.first_bans and not row.output:
                logits[position, list(row.first_bans)] = float("-inf")

    def _ban_over_budget(self, logits: torch.Tensor) -> None:
        """Near the end of a span's budget, ban the tokens after which its constraint
        could not be completed in time (``backends.closing``)."""
        for position, row in self._rows.items():
            if not isinstance(row, ProgramRow) or row.budget is None:
                continue
            spent = row.read - self._free_tokens(row)
            over = over_budget_tokens(row.index, row.state, row.budget - spent)
            if len(over):
                logits[position, torch.as_tensor(over, device=logits.device)] = float("-inf")

    def _free_tokens(self, row: ProgramRow) -> int:
        """Leading output tokens whose bytes stay within the healed prefix (no budget),
        as ``commit._only_replays`` counts them."""
        token_bytes = self.vocabulary.token_bytes
        while row.sized < row.read and row.free_tokens == row.sized:
            row.size += len(token_bytes[row.output[row.sized]] or b"")
            row.sized += 1
            if 0 < row.size <= row.prefix_bytes:
                row.free_tokens += 1
        return row.free_tokens

    def _force_planned(self, logits: torch.Tensor) -> None:
        """Rows with a jump-forward plan may write only its next token."""
        for position, row in self._rows.items():
            if not isinstance(row, ProgramRow) or not row.jump_forward:
                continue
            self._follow_plan(row)
            if row.forced:
                logits[position].fill_(float("-inf"))
                logits[position, row.forced[0]] = 0.0  # the only token: log-probability 0

    def _follow_plan(self, row: ProgramRow) -> None:
        """Account for the tokens written since the last step: a planned one is taken
        off the plan; a sampled one starts a new plan from the state after it."""
        while row.seen < row.read:
            token = row.output[row.seen]
            row.seen += 1
            if row.forced and row.forced[0] == token:
                row.forced.pop(0)
            else:
                row.forced = []
                if row.seen == row.read:
                    row.forced = self._plan(row.index, row.state)

    def _plan(self, index: fsm.TokenIndex, state: int) -> list[int]:
        """The canonical tokens of the text ``state`` forces (none when they would not
        follow the constraint), as ``backends.decode.loop._jump_forward`` finds them."""
        try:
            text = index.forced_bytes(state).decode("utf-8")
        except UnicodeDecodeError:
            return []
        ids = list(self.tokenizer.encode(text, add_special_tokens=False)) if text else []
        for token in ids:
            state = index.next_state(state, token)
            if state < 0:
                return []
        return ids

    @property
    def tokenizer(self) -> Any:
        """vLLM's tokenizer of the model (the one the vocabulary was built from)."""
        from vllm.tokenizers import cached_tokenizer_from_config

        return cached_tokenizer_from_config(self._model_config)
