"""`SequenceState`: the immutable `(batch, samples)` grid of rows users hold.

Every operation returns a new state and shares rows, segments and KV handles with its
operands; nothing is ever modified in place. States are always two-dimensional: an
integer index keeps its axis with size 1.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from seqstate.detokenize import Detokenizer, decode_tokens
from seqstate.display import state_html, state_repr
from seqstate.engine import Engine
from seqstate.errors import (
    EngineMismatch,
    IncompatibleOperand,
    InvalidGenerator,
    MissingCapture,
    NotScalarState,
    ShapeMismatch,
)
from seqstate.generator import Generator
from seqstate.indexing import (
    Shape,
    broadcast_cells,
    broadcast_shapes,
    expand_key,
    resolve_range,
    select,
)
from seqstate.row import ResumePoint, Row
from seqstate.segment import Origin, SegmentKind, Span


def _grid(values: Any, is_leaf: Callable[[Any], bool], what: str) -> tuple[list[Any], Shape]:
    """Flatten a leaf, a list of leaves (batch) or a list of lists (batch x samples)."""
    if is_leaf(values):
        return [values], (1, 1)
    outer = list(values)
    if outer and all(is_leaf(v) for v in outer):
        return outer, (len(outer), 1)
    nested = [list(v) for v in outer]
    widths = {len(v) for v in nested}
    if not nested or len(widths) != 1 or 0 in widths:
        raise ShapeMismatch(f"{what} must form a non-empty rectangular batch x samples grid")
    if not all(is_leaf(leaf) for v in nested for leaf in v):
        raise IncompatibleOperand(f"{what}: expected at most two levels of nesting")
    return [leaf for v in nested for leaf in v], (len(nested), widths.pop())


def _is_ids(value: Any) -> bool:
    """A flat sequence of token ids (an empty list counts as one)."""
    if isinstance(value, np.ndarray):
        return value.ndim == 1
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        return False
    return all(isinstance(v, numbers.Integral) for v in value)


@dataclass(frozen=True, eq=False, repr=False)
class SequenceState:
    """Rows of committed tokens and text on one engine, shaped `(batch, samples)`.

    `rows` is row-major: row `(b, k)` is `rows[b * samples + k]`. States are immutable
    values: `+`, slicing and `fork` return new states that share tokens, text and KV
    blocks with the old ones. Make one with ``model("text")`` or ``model.chat(...)``.

    Args:
        engine: the model the state belongs to.
        rows: its rows, row-major.
        shape: ``(batch, samples)``.

    Example::

        s = model("The capital of France is") + ss.regex(r" [A-Z][a-z]+", name="city")
        s["city"], str(s), s.shape         # e.g. (' Paris', 'The capital of France is Paris', (1, 1))
        s[:-3]                             # characters cut; the KV prefix is kept
        s.fork(4) + ss.gen(max_tokens=5, sampler=ss.sample(seed=0))  # shape (1, 4)
    """

    engine: Engine[SequenceState]
    rows: tuple[Row, ...]
    shape: Shape

    def __post_init__(self) -> None:
        batch, samples = self.shape
        if batch < 1 or samples < 1:
            raise ShapeMismatch(f"a state needs at least one row on each axis, got {self.shape}")
        if len(self.rows) != batch * samples:
            raise ShapeMismatch(f"{len(self.rows)} rows cannot have shape {self.shape}")
        object.__setattr__(self, "shape", (int(batch), int(samples)))
        object.__setattr__(self, "rows", tuple(self.rows))

    # -- construction -------------------------------------------------------------------

    @classmethod
    def from_text(cls, engine: Engine, texts: Any, kind: SegmentKind = "prompt") -> SequenceState:
        """Tokenize `texts` now (a str, a list of str per batch entry, or a batch x samples
        list of lists). The row text is the decoded text of the ids (what the model sees).

        Args:
            engine: the model.
            texts: the text(s).
            kind: segment kind of the text (``"prompt"`` by default).

        Example: ``ss.SequenceState.from_text(model, ["a", "b"]).shape == (2, 1)``.
        """
        flat, shape = _grid(texts, lambda v: isinstance(v, str), "texts")
        return cls.from_token_ids(engine, _reshape([engine.encode(t) for t in flat], shape), kind)

    @classmethod
    def from_token_ids(
        cls, engine: Engine, ids: Any, kind: SegmentKind = "prompt"
    ) -> SequenceState:
        """Rows from token ids (one list, a list per batch entry, or batch x samples lists);
        text and character offsets come from the engine's vocabulary bytes.

        Example: ``ss.SequenceState.from_token_ids(model, model.encode("Hi")).texts``.
        """
        flat, shape = _grid(ids, _is_ids, "token ids")
        detokenizer = Detokenizer(engine.text_bytes)
        rows = []
        for row_ids in flat:
            decoded = decode_tokens(detokenizer, row_ids)
            rows.append(Row.of_span(Span.of_tokens(row_ids, decoded, Origin(kind))))
        return cls(engine, tuple(rows), shape)

    def with_rows(self, rows: Sequence[Row], shape: Shape | None = None) -> SequenceState:
        """A state on the same engine with other rows (shape defaults to this one's).

        Example: ``s.with_rows(s.rows[::-1])`` reverses a batch.
        """
        return SequenceState(self.engine, tuple(rows), self.shape if shape is None else shape)

    def detokenizer(self, stop_strings: Sequence[str] = ()) -> Detokenizer:
        """A detokenizer over the engine's vocabulary.

        Args:
            stop_strings: strings that end decoding where they first appear.

        Example: ``ss.decode_tokens(s.detokenizer(), s.token_ids[0][0]).text``.
        """
        return Detokenizer(self.engine.text_bytes, tuple(stop_strings))

    def settle(self) -> SequenceState:
        """Tokenize pending text that tokens follow (see `Row.settle`); trailing pending
        text stays for the backend to tokenize with healing."""
        detokenizer = self.detokenizer()
        return self.with_rows([row.settle(self.engine.encode, detokenizer) for row in self.rows])

    # -- reading ------------------------------------------------------------------------

    def row(self, b: int, k: int = 0) -> Row:
        """The row at `(b, k)` (negative indices allowed)."""
        (b,), (k,) = select(self.shape[0], b, "batch"), select(self.shape[1], k, "samples")
        return self.rows[b * self.shape[1] + k]

    def _nested(self, read: Callable[[Row], Any]) -> list[list[Any]]:
        samples = self.shape[1]
        return [
            [read(self.rows[b * samples + k]) for k in range(samples)] for b in range(self.shape[0])
        ]

    @property
    def texts(self) -> list[list[str]]:
        return self._nested(lambda row: row.text)

    @property
    def token_ids(self) -> list[list[np.ndarray]]:
        """Committed token ids per row (read-only int32 arrays), `[b][k]`."""
        return self._nested(lambda row: row.token_ids)

    @property
    def logprobs(self) -> list[list[float]]:
        """Cumulative log-probability of the generated tokens of each row."""
        return self._nested(lambda row: row.logprob)

    @property
    def finish_reasons(self) -> list[list[str | None]]:
        return self._nested(lambda row: row.finish_reason)

    @property
    def resume_points(self) -> list[list[ResumePoint | None]]:
        return self._nested(lambda row: row.resume_point)

    @property
    def tokens(self) -> TokenView:
        """Token-level indexing: `s.tokens[b, k, i:j]` keeps tokens `i..j-1` exactly
        (with the shortcuts of `s[...]`: `s.tokens[i:j]` on a 1x1 state, ...)."""
        return TokenView(self)

    def capture(self, name: str) -> Any:
        """`s["name"]`: the capture's value for a 1x1 state, nested lists otherwise."""
        missing = [i for i, row in enumerate(self.rows) if name not in row.capture_names()]
        if missing:
            known = sorted({n for row in self.rows for n in row.capture_names()})
            cells = [divmod(i, self.shape[1]) for i in missing[:4]]
            raise MissingCapture(
                f"no capture named {name!r} in row(s) {cells}"
                f"{'...' if len(missing) > 4 else ''}; captures present: {known or 'none'}"
            )
        values = self._nested(lambda row: row.capture(name))
        return values[0][0] if self.shape == (1, 1) else values

    def __getitem__(self, key: Any) -> Any:
        """`s["name"]` reads a capture; any other key selects rows and cuts characters
        by the shape rule of `seqstate.indexing.expand_key`: `s[b, k, i:j]` always, and
        the shortcuts `s[i:j]` (1x1), `s[k, i:j]` (batch of one), `s[b, i:j]` (one
        sample per row). Integer indices keep their axis, with size 1."""
        if isinstance(key, str):
            return self.capture(key)
        return self._index(key, _slice_row_chars)

    def _index(self, key: Any, cut: Callable[[Row, Any], Row]) -> SequenceState:
        batch_key, sample_key, last = expand_key(key, self.shape)
        batches = select(self.shape[0], batch_key, "batch")
        samples = select(self.shape[1], sample_key, "samples")
        rows = [self.rows[b * self.shape[1] + k] for b in batches for k in samples]
        if last is not None:
            rows = [cut(row, last) for row in rows]
        return self.with_rows(rows, (len(batches), len(samples)))

    def __len__(self) -> int:
        """Number of items `list(s)` gives: `batch` if it is > 1, else `samples`."""
        return self.shape[0] if self.shape[0] > 1 else self.shape[1]

    def __iter__(self) -> Iterator[Any]:
        """The row texts, as in outlines PR #781: one str per row when at most one axis
        has size > 1 (so a 1x1 state gives a list of one str, never its characters),
        a list of str per batch entry when both do. `s.texts` is always nested."""
        texts = self.texts
        if self.shape[0] > 1 and self.shape[1] > 1:
            return iter(texts)
        return (text for row in texts for text in row)

    def __str__(self) -> str:
        if self.shape != (1, 1):
            raise NotScalarState(
                f"str() needs a 1x1 state, this one has shape {self.shape}; "
                "read s.texts or list(s), or pick one row first: str(s[b, k, :])"
            )
        return self.rows[0].text

    def __repr__(self) -> str:
        return state_repr(self.rows, self.shape, type(self.engine).__name__)

    def _repr_html_(self) -> str:
        return state_html(self.rows, self.shape, type(self.engine).__name__)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SequenceState):
            return NotImplemented
        return self.shape == other.shape and self.rows == other.rows

    def __hash__(self) -> int:
        return hash((self.shape, self.rows))

    # -- algebra ------------------------------------------------------------------------

    def __add__(self, other: Any) -> SequenceState:
        if isinstance(other, str):
            appended = _text_row(other)
            return self.with_rows([row + appended for row in self.rows])
        if isinstance(other, SequenceState):
            return self._concat(other)
        if isinstance(other, Generator):
            return other(self)
        raise IncompatibleOperand(
            f"cannot add {type(other).__name__} to a SequenceState; "
            "add a str, another SequenceState or a Generator"
        )

    def __radd__(self, other: Any) -> SequenceState:
        if isinstance(other, str):
            prefix = _text_row(other)
            return self.with_rows([prefix + row for row in self.rows])
        raise IncompatibleOperand(
            f"cannot add a SequenceState to {type(other).__name__}; only str + state is defined"
        )

    def _concat(self, other: SequenceState) -> SequenceState:
        if other.engine is not self.engine:
            raise EngineMismatch(
                "cannot combine states of two different engines (models); "
                "re-tokenize the text with SequenceState.from_text on one engine"
            )
        shape = broadcast_shapes(self.shape, other.shape)
        left, right = broadcast_cells(self.shape, shape), broadcast_cells(other.shape, shape)
        return self.with_rows(
            [self.rows[a] + other.rows[b] for a, b in zip(left, right, strict=True)], shape
        )

    def resume(self, **changes: Any) -> SequenceState:
        """Continue the generated span each row ends in, from the constraint state at the
        cut: slicing then resuming is constraint rollback. ``changes`` override fields of
        the generator (``max_tokens``, ``sampler``, ...)."""
        points = [row.resume_point for row in self.rows]
        if any(p is None for p in points):
            raise InvalidGenerator("resume() needs every row to end inside or after a generated span")
        generators = {id(p.generator): p.generator for p in points if p is not None}
        if len(generators) != 1:
            raise InvalidGenerator("resume() needs every row to end in a span of the same generator")
        (base,) = generators.values()
        return base.resumed(**changes)(self)

    def fork(self, n: int) -> SequenceState:
        """Repeat each row `n` times along samples, sharing everything: `(b, k*n)`.

        Example: ``model("Once upon a time").fork(8) + ss.gen(sampler=ss.sample())``
        computes the prompt once and samples 8 continuations from its logits.
        """
        if not isinstance(n, numbers.Integral) or n < 1:
            raise IncompatibleOperand(f"fork needs a positive int, got {n!r}")
        rows = [row for row in self.rows for _ in range(n)]
        return self.with_rows(rows, (self.shape[0], self.shape[1] * int(n)))

    def flatten(self) -> SequenceState:
        """All rows along the batch axis: `(batch * samples, 1)`.

        Example: ``s.fork(3).flatten().shape == (3, 1)`` for a 1x1 ``s``.
        """
        return self.with_rows(self.rows, (len(self.rows), 1))

    def reshape(self, batch: int, samples: int) -> SequenceState:
        """The same rows, row-major, in another grid of the same size.

        Args:
            batch: the new batch size.
            samples: the new samples size (``batch * samples`` must stay the same).

        Example: ``s.fork(4).reshape(2, 2).shape == (2, 2)`` for a 1x1 ``s``.
        """
        if batch * samples != len(self.rows) or batch < 1:
            raise ShapeMismatch(f"cannot reshape {self.shape} into {(batch, samples)}")
        return self.with_rows(self.rows, (batch, samples))


class TokenView:
    """`state.tokens[...]`: like `state[...]` (the same shape rule), but the last index
    counts tokens. Made by ``state.tokens``.

    Args:
        state: the state to index.

    Example: ``s.tokens[:-2]`` drops the last two tokens of a 1x1 state (constraint
    state and KV prefix kept, so ``.resume()`` continues from there).
    """

    def __init__(self, state: SequenceState) -> None:
        self._state = state

    def __getitem__(self, key: Any) -> SequenceState:
        return self._state._index(key, _slice_row_tokens)


def batch(states: Sequence[SequenceState]) -> SequenceState:
    """Stack states along the batch axis; they must share an engine and a samples size.

    Args:
        states: the states, in batch order.

    Example::

        both = ss.batch([model("Hello"), model("Bonjour")])   # shape (2, 1)
        both = both + ss.gen(max_tokens=5)                    # one batched generation
    """
    states = list(states)
    if not states:
        raise ShapeMismatch("batch() needs at least one state")
    if not all(isinstance(s, SequenceState) for s in states):
        raise IncompatibleOperand("batch() stacks SequenceStates only")
    first = states[0]
    if any(s.engine is not first.engine for s in states):
        raise EngineMismatch("batch() got states of different engines (models)")
    widths = {s.shape[1] for s in states}
    if len(widths) != 1:
        raise ShapeMismatch(f"batch() needs equal samples sizes, got {sorted(widths)}")
    rows = [row for s in states for row in s.rows]
    return first.with_rows(rows, (sum(s.shape[0] for s in states), first.shape[1]))


def _reshape(flat: list[Any], shape: Shape) -> list[list[Any]]:
    return [flat[b * shape[1] : (b + 1) * shape[1]] for b in range(shape[0])]


def _text_row(text: str) -> Row:
    return Row.of_span(Span.of_text(text, Origin("text")))


def _slice_row_chars(row: Row, index: Any) -> Row:
    start, stop = resolve_range(index, row.n_chars, "character")
    return row.slice_chars(start, stop)


def _slice_row_tokens(row: Row, index: Any) -> Row:
    start, stop = resolve_range(index, row.n_tokens, "token")
    open_end = isinstance(index, slice) and index.stop is None
    return row.slice_tokens(start, None if open_end else stop)
