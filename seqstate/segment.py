"""Segments: the immutable pieces a row is made of, and how one is cut.

A `Span` stores one produced piece once (its text, token ids, per-token character ends,
log-probabilities and constraint states). A `Segment` is a window `[lo, hi)` of
characters and `[t0, t1)` of tokens onto a span, so cutting a segment is O(log n) and
copies nothing. Within a segment, tokens cover the characters `[lo, token_end)` without
gaps; the characters after them, up to `hi`, are *pending* text (not yet tokenized).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from seqstate.detokenize import Decoded
from seqstate.errors import InvalidSegment
from seqstate.generator import Generator

SegmentKind = Literal["prompt", "text", "generated"]
UNKNOWN_STATE = -1
"""Constraint state recorded for tokens whose state is not known (re-tokenized text)."""


@dataclass(frozen=True, eq=False)
class Origin:
    """Provenance shared by every piece cut from one span (compared by identity).

    `generator` is the spec that produced a generated span (opaque here); `capture`
    names the span's text; `parser` turns that text into the capture's value (json,
    pydantic, ...); `complete` says whether generation ended naturally.

    Args:
        kind: ``"prompt"``, ``"text"`` (appended) or ``"generated"``.
        generator: the generator of a generated span.
        capture: the capture name, if any.
        parser: turns the captured text into its value.
        finish_reason: how generation ended (``"stop"``, ``"length"``, ...).
        complete: whether generation ended naturally (the constraint was met).
        resumes: the span continues the generated span right before it.
        healed: text before the span that it regenerated first (token healing).

    Example:
        >>> ss.Origin("generated", capture="name", finish_reason="stop").capture
        'name'
    """

    kind: SegmentKind
    generator: Generator[Any] | None = None
    capture: str | None = None
    parser: Callable[[str], Any] | None = None
    finish_reason: str | None = None
    complete: bool = True
    resumes: bool = False  # continues the generated span right before it (``state.resume()``)
    healed: str = ""  # text before the span that it regenerated first (token healing)


def _frozen(values: Any, dtype: type, n: int, name: str) -> np.ndarray:
    array: np.ndarray = np.asarray(values, dtype=dtype)
    if array.shape != (n,):
        raise InvalidSegment(f"{name} has shape {array.shape}, expected ({n},)")
    if array.flags.writeable:
        array = array.copy()
        array.flags.writeable = False
    return array


@dataclass(frozen=True, eq=False)
class Span:
    """Storage of one produced piece, shared by all segments cut from it.

    `token_ends[i]` is the character offset in `text` where token `i` ends (token `i`
    starts where token `i-1` ends); `token_clean[i]` is false when token `i` ends inside
    a multi-byte character. `logprobs` is NaN where unknown (prompt tokens);
    `constraint_states[i]` is the constraint state after token `i` (`UNKNOWN_STATE` when
    none). All arrays are read-only. `origin` says where the piece came from and
    `token_ids` holds its tokens (none for text not tokenized yet).

    Example:
        >>> decoded = ss.decode_tokens(ss.Detokenizer([b"he", b"llo"]), [0, 1])
        >>> span = ss.Span.of_tokens([0, 1], decoded, ss.Origin("generated"))
        >>> span.text, span.n_tokens, span.token_start(1)
        ('hello', 2, 2)
    """

    origin: Origin
    text: str
    token_ids: np.ndarray
    token_ends: np.ndarray
    token_clean: np.ndarray
    logprobs: np.ndarray
    constraint_states: np.ndarray

    @classmethod
    def of_text(cls, text: str, origin: Origin) -> Span:
        """A span of untokenized text.

        Args:
            text: the text.
            origin: its provenance.

        Example:
            >>> ss.Span.of_text("hi", ss.Origin("text")).n_tokens
            0
        """
        return cls.of_tokens((), Decoded(text, np.zeros(0, np.int64), np.zeros(0, bool)), origin)

    @classmethod
    def of_tokens(
        cls,
        token_ids: Any,
        decoded: Decoded,
        origin: Origin,
        logprobs: Any = None,
        constraint_states: Any = None,
    ) -> Span:
        """A span of tokens whose text and offsets come from the detokenizer.

        Args:
            token_ids: the tokens.
            decoded: their text and offsets (``decode_tokens``).
            origin: their provenance.
            logprobs: per token log-probability (default NaN: unknown).
            constraint_states: per token constraint state after it (default
                ``UNKNOWN_STATE``).

        Example:
            >>> decoded = ss.decode_tokens(ss.Detokenizer([b"a"]), [0, 0])
            >>> ss.Span.of_tokens([0, 0], decoded, ss.Origin("prompt")).text
            'aa'
        """
        n = len(decoded.token_ends)
        return cls(
            origin,
            decoded.text,
            _frozen(token_ids, np.int32, n, "token_ids"),
            _frozen(decoded.token_ends, np.int64, n, "token_ends"),
            _frozen(decoded.token_clean, bool, n, "token_clean"),
            _frozen(
                np.full(n, np.nan) if logprobs is None else logprobs, np.float32, n, "logprobs"
            ),
            _frozen(
                np.full(n, UNKNOWN_STATE) if constraint_states is None else constraint_states,
                np.int32,
                n,
                "constraint_states",
            ),
        )

    def __post_init__(self) -> None:
        ends = self.token_ends
        if len(ends) and (ends[0] < 0 or ends[-1] > len(self.text) or np.any(np.diff(ends) < 0)):
            raise InvalidSegment("token_ends must be non-decreasing offsets within the text")

    @property
    def n_tokens(self) -> int:
        return len(self.token_ids)

    def token_start(self, i: int) -> int:
        """Character offset where token `i` starts."""
        return 0 if i == 0 else int(self.token_ends[i - 1])

    def starts_clean(self, i: int) -> bool:
        """Whether token `i` starts on a character boundary."""
        return i == 0 or bool(self.token_clean[i - 1])


@dataclass(frozen=True, eq=False)
class Segment:
    """Characters `[lo, hi)` and tokens `[t0, t1)` of a span: the piece of a span a
    row holds. Slicing a state slices its segments, sharing the span.

    Args:
        span: the storage.
        lo: first character.
        hi: end character (exclusive).
        t0: first whole token.
        t1: end token (exclusive); characters after token ``t1 - 1`` are pending text.

    Example:
        >>> segment = ss.Segment.whole(ss.Span.of_text("hello", ss.Origin("text")))
        >>> segment.text, segment.slice_chars(1, 3)[0].text
        ('hello', 'el')
    """

    span: Span
    lo: int
    hi: int
    t0: int
    t1: int

    @classmethod
    def whole(cls, span: Span) -> Segment:
        return cls(span, 0, len(span.text), 0, span.n_tokens)

    @property
    def origin(self) -> Origin:
        return self.span.origin

    @property
    def kind(self) -> SegmentKind:
        return self.span.origin.kind

    @property
    def n_chars(self) -> int:
        return self.hi - self.lo

    @property
    def n_tokens(self) -> int:
        return self.t1 - self.t0

    @property
    def text(self) -> str:
        return self.span.text[self.lo : self.hi]

    @property
    def token_ids(self) -> np.ndarray:
        return self.span.token_ids[self.t0 : self.t1]

    @property
    def tokens_end(self) -> int:
        """Span offset where the tokens of this segment end (= `lo` without tokens)."""
        return int(self.span.token_ends[self.t1 - 1]) if self.t1 > self.t0 else self.lo

    @property
    def has_pending(self) -> bool:
        return self.tokens_end < self.hi

    @property
    def pending_text(self) -> str:
        """Text after this segment's tokens, not tokenized yet."""
        return self.span.text[self.tokens_end : self.hi]

    @property
    def is_cut(self) -> bool:
        """Whether this segment is less than the whole span it was made from."""
        span = self.span
        return (self.lo, self.hi, self.t0, self.t1) != (0, len(span.text), 0, span.n_tokens)

    def token_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """Start and end character offsets (relative to `lo`) of each token."""
        ends = self.span.token_ends[self.t0 : self.t1] - self.lo
        starts = np.concatenate(([0], ends[:-1])) if len(ends) else ends
        return starts, ends

    def _first_clean_token_from(self, at: int) -> int:
        """First token index `>= t0` starting on a character boundary at or after `at`."""
        if at <= self.lo:
            return self.t0
        ends = self.span.token_ends
        i = int(np.searchsorted(ends[self.t0 : self.t1], at, "left")) + self.t0 + 1
        while i < self.t1 and not self.span.starts_clean(i):
            i += 1
        return min(i, self.t1)

    def _last_clean_token_until(self, at: int, first: int) -> int:
        """End index of the tokens from `first` that fit in `[.., at)` ending cleanly."""
        if at >= self.hi:
            return self.t1
        span = self.span
        g = int(np.searchsorted(span.token_ends[self.t0 : self.t1], at, "right")) + self.t0
        while g > first and not span.token_clean[g - 1]:
            g -= 1
        return g

    def slice_chars(self, a: int, b: int) -> tuple[Segment, ...]:
        """Characters `[a, b)` of this segment (relative offsets, `0 <= a <= b <= n`).

        Whole tokens inside the range are kept; the leading characters of a token cut at
        `b` become pending text; the trailing characters of a token cut at `a` become a
        separate untokenized segment in front."""
        if (a, b) == (0, self.n_chars):
            return (self,)
        if a >= b:
            return ()
        start, stop = self.lo + a, self.lo + b
        first = self._first_clean_token_from(start)
        end = self._last_clean_token_until(stop, first)
        if end <= first or self.span.token_start(first) >= stop:
            before = self._last_clean_token_until(start, self.t0) if start > self.lo else self.t0
            return (Segment(self.span, start, stop, before, before),)
        token_lo = self.span.token_start(first)
        main = Segment(self.span, token_lo, stop, first, end)
        if token_lo > start:
            return (Segment(self.span, start, token_lo, first, first), main)
        return (main,)

    def slice_tokens(self, i: int, j: int, keep_pending: bool) -> tuple[Segment, ...]:
        """Tokens `[i, j)` of this segment (relative indices), exactly; with
        `keep_pending` and `j == n_tokens`, also the pending text after them."""
        first, end = self.t0 + i, self.t0 + j
        lo = self.lo if i == 0 else self.span.token_start(first)
        if keep_pending and end == self.t1:
            hi = self.hi
        else:
            hi = int(self.span.token_ends[end - 1]) if end > first else lo
        if first == end and lo == hi:
            return ()
        if (lo, hi, first, end) == (self.lo, self.hi, self.t0, self.t1):
            return (self,)
        return (Segment(self.span, lo, hi, first, end),)
