"""Prepare a row: tokenize its pending text, heal the seam, choose the constraint.

Token healing (on by default): appended text is tokenized together with the last token
before it, then the last prompt token is removed and regenerated as the start of the
span, so the model writes the merged token it would naturally write ("Name: " + "John"
-> ' John', not ' ' + 'John'). The span's constraint becomes ``Prefixed(healed bytes,
constraint)``, and its first token must *start with* the removed text: the model picks,
by its own probabilities, among the tokens that continue the prompt's text, never a
shorter token that would split it (' a' + 'nd' for ' and').
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from backends.decode.errors import GenerationError
from backends.decode.model_view import DecodingModel
from fsm.prefixed import Prefixed
from seqstate.builtin_generators import SpanGenerator
from seqstate.detokenize import Detokenizer
from seqstate.errors import SeqStateError
from seqstate.generator import Generator
from seqstate.kv import KVRef
from seqstate.row import ResumePoint, Row

if TYPE_CHECKING:
    from fsm import TokenIndex


@dataclass(frozen=True)
class Prepared:
    """A row ready to generate from: its tokens, what the model still has to compute,
    and where the constraint starts."""

    row: Row
    kv_base: KVRef | None  # covers the tokens before ``pending_ids``
    pending_ids: np.ndarray  # tokens to run before the first sample (>= 1)
    constraint_state: int | None
    index: TokenIndex | None  # the span's constraint (healed prefix included)
    generator: Generator[Any]  # the generator the span records
    healed: str = ""  # prompt text the span regenerates first (token healing)
    first_bans: frozenset[int] = frozenset()  # tokens refused as the first token (healing)
    resumed: bool = False  # continues a span whose healed text was written before

    @property
    def replayed(self) -> str:
        """Prompt text this run writes again before anything new: the healed text of a
        fresh span (a resumed span wrote it already)."""
        return "" if self.resumed else self.healed


def active_index(prepared: Prepared, state: int | None) -> TokenIndex | None:
    """The index that constrains the next token: none for free text once its healed
    prefix is written (then every token is allowed again, special tokens included)."""
    if state is None or prepared.index is None:
        return None
    if prepared.generator.constraint is None and prepared.index.is_final(state):
        return None
    return prepared.index


def prepare_row(
    model: DecodingModel, row: Row, generator: SpanGenerator, detok: Detokenizer
) -> Prepared:
    """Tokenize the row's pending text and find what the model must still compute.

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
    bans = _short_first_tokens(model, index, state, healed) if point is None and healed else ()
    ids = np.asarray(row.token_ids, dtype=np.int64)
    covered = 0 if row.kv is None else row.kv.length
    if covered >= len(ids):  # everything is cached: recompute the last position's logits
        covered = len(ids) - 1
    kv_base = None if row.kv is None or covered == 0 else row.kv.prefix(covered)
    return Prepared(
        row,
        kv_base,
        ids[covered:],
        state,
        index,
        generator,
        healed.decode(),
        frozenset(bans),
        point is not None,
    )


def _short_first_tokens(model: DecodingModel, index: Any, state: int, healed: bytes) -> list[int]:
    """Allowed first tokens that end inside the healed text (they would split it); none
    when no allowed token covers it (then the split is the only way)."""
    allowed = index.allowed_tokens(state).tolist()
    token_bytes = model.vocabulary.token_bytes
    short = [t for t in allowed if len(token_bytes[t] or b"") < len(healed)]
    return short if len(short) < len(allowed) else []


def _resume_point(row: Row) -> ResumePoint:
    point = row.resume_point
    if point is None:
        raise GenerationError("this row does not end in a generated span to resume")
    return point


def _remove_last_token(model: DecodingModel, row: Row) -> tuple[Row, bytes]:
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


def _tokenize_tail(model: DecodingModel, row: Row, pending: str, *, heal: bool, detok: Detokenizer) -> Row:
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
