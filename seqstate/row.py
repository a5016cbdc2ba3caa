"""`Row`: one cell of a state, a tuple of segments plus a `KVRef`.

Cumulative character and token counts per segment make every cut a binary search, so
`+` and slicing cost O(segments) whatever the number of tokens; texts and id arrays are
only joined when read (and then cached on the row).

A row is *settled* when all its pending text is at the end. Pending text followed by
tokens (from `state + "text" + other_state`) is tokenized by `settle` before the
backend runs the row; the trailing pending text is tokenized by the backend itself,
with token healing, through `with_tokenized_tail`.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from seqstate.detokenize import Decoded, Detokenizer, decode_tokens
from seqstate.errors import (
    CaptureParseError,
    InvalidSegment,
    TokenizationMismatch,
    TruncatedCapture,
)
from seqstate.generator import Generator
from seqstate.kv import KVRef, kv_prefix
from seqstate.segment import Origin, Segment, Span

_MISSING = object()  # sentinel: no default given to `capture`


@dataclass(frozen=True)
class ResumePoint:
    """Where generation can pick up a row that ends inside (or after) a generated span.

    `constraint_state` is the state after the last kept token (`None`: the constraint's
    initial state, no token of the span is kept); `pending_text` is text the span had
    produced after that token (a cut inside a token), which a resumed generation must
    reproduce first; `tokens_kept` counts the span's tokens before the cut; `healed` is
    the prompt text the span regenerated first (its constraint states count it).
    `generator` is the span's generator and `complete` whether the span had ended
    naturally. ``state.resume()`` reads one per row (``row.resume_point``).

    Example::

        s = model("Name: ") + ss.regex(r"[A-Z][a-z]{3,9}", name="n")
        point = s[:-2].row(0).resume_point     # cut inside the span
        point.tokens_kept, point.pending_text
        s[:-2].resume()                        # continues the regex from the cut
    """

    generator: Generator[Any]
    constraint_state: int | None
    pending_text: str
    tokens_kept: int
    complete: bool
    healed: str = ""


def _joined_offsets(left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """Cumulative offsets of two concatenated segment tuples."""
    offsets = np.concatenate((left, right[1:] + left[-1]))
    offsets.flags.writeable = False
    return offsets


def _truncated(segment: Segment) -> bool:
    """Whether a generated segment is an unfinished constrained span: it ended short
    of a final state, or a cut took part of it away (a span with stop strings is cut
    at its stop string by design, so only its ``complete`` flag counts)."""
    origin = segment.origin
    generator = origin.generator
    if getattr(generator, "constraint", None) is None:
        return False  # free text is whatever was generated, truncated or not
    cut = segment.is_cut and not getattr(generator, "stop", ())
    return not origin.complete or cut


def ends_where_generated(segment: Segment) -> bool:
    """Whether a generated segment still ends where generation ended its span: at the
    span's end, or right before the stop string that ended it. A slice that cuts the
    span earlier leaves a piece that did not finish (``state.resume()`` continues it)."""
    span = segment.span
    if segment.hi == len(span.text):
        return True
    stops = getattr(segment.origin.generator, "stop", ())
    return any(span.text.startswith(stop, segment.hi) for stop in stops)


def _continues(later: Origin, earlier: Origin) -> bool:
    """Whether two adjacent pieces belong to one capture: the same span, or a span
    that resumed the one before it."""
    return later is earlier or (later.resumes and later.capture == earlier.capture)


def _cumulative(counts: Sequence[int] | np.ndarray) -> np.ndarray:
    offsets = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    offsets.flags.writeable = False
    return offsets


@dataclass(frozen=True, eq=False)
class Row:
    """Committed tokens with their text, pending text, provenance, and a KV handle.

    Invariant: `kv` (when set) covers at most the tokens before the first pending
    character, so its positions are exactly those of the row's first tokens.

    A state is a grid of rows (``state.rows``, ``state.row(b, k)``); users rarely build
    one. `segments` are the row's pieces in order; `char_starts`/`token_starts` their
    cumulative offsets (computed when not given).

    Example:
        >>> row = ss.Row.of_span(ss.Span.of_text("hello", ss.Origin("prompt")))
        >>> row.text, row.pending_text, row.slice_chars(0, 2).text
        ('hello', 'hello', 'he')
    """

    segments: tuple[Segment, ...] = ()
    kv: KVRef | None = None
    # Cumulative offsets of the segments; `None` only as an argument (then computed).
    char_starts: np.ndarray = field(default=None, repr=False)  # type: ignore[arg-type]
    token_starts: np.ndarray = field(default=None, repr=False)  # type: ignore[arg-type]

    def __post_init__(self) -> None:
        """Compute the cumulative offsets, unless an operation passes them (then the KV
        handle was derived by the algebra's rules and is not checked again)."""
        if self.char_starts is not None and self.token_starts is not None:
            return
        object.__setattr__(self, "char_starts", _cumulative([s.n_chars for s in self.segments]))
        object.__setattr__(self, "token_starts", _cumulative([s.n_tokens for s in self.segments]))
        if self.kv is not None and self.kv.length > self.settled_tokens:
            raise InvalidSegment(
                f"a KVRef of length {self.kv.length} covers more than the "
                f"{self.settled_tokens} tokens before the first pending text"
            )

    # -- construction -------------------------------------------------------------------

    @classmethod
    def of_span(cls, span: Span, kv: KVRef | None = None) -> Row:
        """A row made of one whole span (empty text gives an empty row)."""
        if not span.text and not span.n_tokens:
            return cls((), kv)
        return cls((Segment.whole(span),), kv)

    def appended(self, span: Span, kv: KVRef | None) -> Row:
        """This row followed by `span`, with `kv` as its handle (the generation layer
        passes the handle that now also covers the new tokens, or `None`)."""
        extra = () if not span.text and not span.n_tokens else (Segment.whole(span),)
        return Row(self.segments + extra, kv)

    def with_kv(self, kv: KVRef | None) -> Row:
        """The same content with another KV handle."""
        return Row(self.segments, kv)

    # -- sizes and content --------------------------------------------------------------

    @property
    def n_chars(self) -> int:
        return int(self.char_starts[-1])

    @property
    def n_tokens(self) -> int:
        return int(self.token_starts[-1])

    @property
    def is_empty(self) -> bool:
        return not self.segments

    @cached_property
    def text(self) -> str:
        return "".join(s.text for s in self.segments)

    @cached_property
    def token_ids(self) -> np.ndarray:
        """All committed token ids, in order (read-only int32)."""
        ids = np.concatenate([s.token_ids for s in self.segments] or [np.zeros(0, np.int32)])
        ids.flags.writeable = False
        return ids

    @cached_property
    def token_offsets(self) -> np.ndarray:
        """`int64[n_tokens, 2]`: start and end character of each token in `text`."""
        pieces = [np.zeros((0, 2), np.int64)]
        for segment, start in zip(self.segments, self.char_starts[:-1], strict=True):
            starts, ends = segment.token_bounds()
            pieces.append(np.stack([starts, ends], axis=1) + start)
        offsets = np.concatenate(pieces)
        offsets.flags.writeable = False
        return offsets

    @cached_property
    def token_logprobs(self) -> np.ndarray:
        """Per-token log-probabilities (NaN where unknown, e.g. prompt tokens)."""
        parts = [s.span.logprobs[s.t0 : s.t1] for s in self.segments]
        values = np.concatenate(parts or [np.zeros(0, np.float32)])
        values.flags.writeable = False
        return values

    @property
    def logprob(self) -> float:
        """Sum of the known per-token log-probabilities (0.0 when none is known)."""
        return float(np.nansum(self.token_logprobs, dtype=np.float64))

    @property
    def pending_text(self) -> str:
        """Text after the last committed token."""
        for index in range(len(self.segments) - 1, -1, -1):
            segment = self.segments[index]
            if segment.n_tokens:
                start = int(self.char_starts[index]) + segment.tokens_end - segment.lo
                return self.text[start:]
        return self.text

    def _first_pending_index(self) -> int | None:
        """Index of the first segment that has pending text."""
        for index, segment in enumerate(self.segments):
            if segment.has_pending:
                return index
        return None

    @property
    def settled_tokens(self) -> int:
        """Number of tokens before the first pending character."""
        index = self._first_pending_index()
        return self.n_tokens if index is None else int(self.token_starts[index + 1])

    @property
    def is_settled(self) -> bool:
        """True when no pending text is followed by tokens."""
        return self.settled_tokens == self.n_tokens

    @property
    def finish_reason(self) -> str | None:
        """Finish reason of the last generated segment: None if there is none, or if a
        slice cut that span's end away (it did not finish there)."""
        for segment in reversed(self.segments):
            if segment.kind == "generated":
                return segment.origin.finish_reason if ends_where_generated(segment) else None
        return None

    @property
    def resume_point(self) -> ResumePoint | None:
        """How to resume the generated span this row ends in (None if it ends otherwise)."""
        last = self.segments[-1] if self.segments else None
        if last is None or last.kind != "generated" or last.origin.generator is None:
            return None
        span = last.span
        state = int(span.constraint_states[last.t1 - 1]) if last.t1 > 0 else None
        complete = last.origin.complete and not last.is_cut
        return ResumePoint(
            last.origin.generator, state, last.pending_text, last.t1, complete, last.origin.healed
        )

    def capture_names(self) -> list[str]:
        """Capture names recorded in this row, in order of first appearance."""
        names = (s.origin.capture for s in self.segments if s.origin.capture is not None)
        return list(dict.fromkeys(names))

    def capture(self, name: str, default: Any = _MISSING) -> Any:
        """The last capture called `name`: its text, parsed if it has a parser.

        A constrained span that ended before its constraint was met raises
        `TruncatedCapture` rather than reading back a prefix of a value as a value
        (``"1"`` of an integer that needed six digits)."""
        pieces: list[Segment] = []
        for segment in reversed(self.segments):
            if pieces and not _continues(pieces[-1].origin, segment.origin):
                break
            if segment.origin.capture == name:
                pieces.append(segment)
        if not pieces:
            if default is _MISSING:
                raise KeyError(name)
            return default
        text = "".join(s.text for s in reversed(pieces))
        healed = pieces[-1].origin.healed
        if healed and text.startswith(healed):
            text = text[len(healed) :]  # that text belongs to what came before the span
        last = pieces[0]
        if _truncated(last):
            raise TruncatedCapture(name, last.origin.finish_reason, text)
        parser = last.origin.parser
        if parser is None:
            return text
        try:
            return parser(text)
        except Exception as error:  # a parser may raise anything; report it typed
            raise CaptureParseError(f"capture {name!r} could not be parsed: {error}") from error

    def content_key(self) -> tuple[str, bytes, bytes]:
        """What equality compares: text, token ids, and token character offsets."""
        return (self.text, self.token_ids.tobytes(), self.token_offsets.tobytes())

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Row):
            return NotImplemented
        return self is other or self.content_key() == other.content_key()

    def __hash__(self) -> int:
        return hash(self.content_key())

    # -- algebra ------------------------------------------------------------------------

    def __add__(self, other: Row) -> Row:
        """Concatenation: the left KV handle is kept; the right one is dropped because its
        positions move (unless the left row is empty)."""
        if self.is_empty:
            return other
        if other.is_empty:
            return self
        return Row(
            self.segments + other.segments,
            self.kv,
            _joined_offsets(self.char_starts, other.char_starts),
            _joined_offsets(self.token_starts, other.token_starts),
        )

    def slice_chars(self, a: int, b: int) -> Row:
        """Characters `[a, b)`, `0 <= a <= b <= n_chars` (already resolved)."""
        if a >= b:
            return Row()
        if (a, b) == (0, self.n_chars):
            return self
        starts = self.char_starts
        first = max(bisect_right(starts, a) - 1, 0)
        while first > 0 and starts[first] == a and self.segments[first - 1].n_chars == 0:
            first -= 1  # zero-width segments at `a` belong to the slice
        last = bisect_left(starts, b, hi=len(self.segments)) - 1  # last segment starting before b
        if first == last:
            start = int(starts[first])
            pieces = self.segments[first].slice_chars(a - start, b - start)
            return self._keep(pieces, from_start=a == 0)
        head_start, tail_start = int(starts[first]), int(starts[last])
        head = self.segments[first].slice_chars(
            max(a - head_start, 0), self.segments[first].n_chars
        )
        tail = self.segments[last].slice_chars(0, b - tail_start)
        return self._keep(head, from_start=a == 0, middle=(first + 1, last), tail=tail)

    def slice_tokens(self, i: int, j: int | None) -> Row:
        """Tokens `[i, j)` exactly (already resolved, `0 <= i <= j <= n_tokens`) with the
        pending text between them; `j=None` also keeps the text after the last token."""
        n, starts, segments = self.n_tokens, self.token_starts, self.segments
        if j is not None and i >= j:
            return Row()
        if i >= n:  # only the text after the last token
            last = max((k for k, s in enumerate(segments) if s.n_tokens), default=-1)
            if last < 0:
                return self
            tail = segments[last].slice_tokens(
                segments[last].n_tokens, segments[last].n_tokens, True
            )
            return self._keep(tail, from_start=False, middle=(last + 1, len(segments)))
        first = bisect_right(starts, i) - 1  # the segment holding token i
        local_i = i - int(starts[first])
        if j is None:
            head = segments[first].slice_tokens(local_i, segments[first].n_tokens, True)
            return self._keep(head, from_start=i == 0, middle=(first + 1, len(segments)))
        last = bisect_right(starts, j - 1) - 1  # the segment holding token j - 1
        local_j = j - int(starts[last])
        if first == last:
            return self._keep(
                segments[first].slice_tokens(local_i, local_j, False), from_start=i == 0
            )
        head = segments[first].slice_tokens(local_i, segments[first].n_tokens, True)
        tail = segments[last].slice_tokens(0, local_j, False)
        return self._keep(head, from_start=i == 0, middle=(first + 1, last), tail=tail)

    def _keep(
        self,
        head: Sequence[Segment],
        *,
        from_start: bool,
        middle: tuple[int, int] = (0, 0),
        tail: Sequence[Segment] = (),
    ) -> Row:
        """The row `head + segments[middle] + tail`; offsets of the shared middle come
        from this row's arrays, so only the cut segments are measured. A slice from the
        start keeps the KV prefix it still covers."""
        lo, hi = middle
        pieces = (*head, *self.segments[lo:hi], *tail)

        def offsets(own: np.ndarray, size: Callable[[Segment], int]) -> np.ndarray:
            measured_head = np.array([size(p) for p in head], dtype=np.int64)
            measured_tail = np.array([size(p) for p in tail], dtype=np.int64)
            return _cumulative(
                np.concatenate((measured_head, np.diff(own[lo : hi + 1]), measured_tail))
            )

        row = Row(
            pieces,
            None,
            offsets(self.char_starts, lambda p: p.n_chars),
            offsets(self.token_starts, lambda p: p.n_tokens),
        )
        if not from_start or self.kv is None:
            return row
        return Row(
            pieces, kv_prefix(self.kv, row.settled_tokens), row.char_starts, row.token_starts
        )

    # -- tokenization of pending text (used by the backend) -----------------------------

    def with_tokenized_tail(
        self, n_dropped: int, new_ids: Sequence[int], detokenizer: Detokenizer
    ) -> Row:
        """Replace the last `n_dropped` tokens and the trailing pending text by `new_ids`.

        This is token healing: the backend re-tokenizes the seam together with the
        pending text. `new_ids` must decode to exactly the replaced text. Provenance is
        kept: each new token joins the segment its first character came from. The KV
        handle is cut back to the tokens that remain."""
        if not self.is_settled:
            raise InvalidSegment("settle() the row first: it has pending text before tokens")
        if not 0 <= n_dropped <= self.n_tokens:
            raise InvalidSegment(f"cannot drop {n_dropped} of {self.n_tokens} tokens")
        keep = self.n_tokens - n_dropped
        pending_start = self.n_chars - len(self.pending_text)
        char_lo = int(self.token_offsets[keep, 0]) if n_dropped else pending_start
        if keep and not self._token_ends_clean(keep - 1):
            raise InvalidSegment("cannot re-tokenize from inside a multi-byte character")
        return self._retokenized(keep, char_lo, self.n_chars, new_ids, detokenizer, None)

    def settle(self, encode: Callable[[str], Sequence[int]], detokenizer: Detokenizer) -> Row:
        """Tokenize (with `encode`) every run of pending text that tokens follow.

        After this only trailing pending text remains, which the backend tokenizes with
        `with_tokenized_tail`."""
        row = self
        while not row.is_settled:
            index = row._first_pending_index()
            assert index is not None  # an unsettled row has pending text
            segment = row.segments[index]
            keep = int(row.token_starts[index + 1])
            run_start = int(row.char_starts[index]) + segment.tokens_end - segment.lo
            run_end = int(row.token_offsets[keep, 0])
            text = row.text[run_start:run_end]
            row = row._retokenized(keep, run_start, run_end, encode(text), detokenizer, keep)
        return row

    def _token_ends_clean(self, token: int) -> bool:
        index = bisect_right(self.token_starts, token) - 1
        segment = self.segments[index]
        return bool(segment.span.token_clean[segment.t0 + token - int(self.token_starts[index])])

    def _retokenized(
        self,
        keep: int,
        char_lo: int,
        char_hi: int,
        new_ids: Sequence[int],
        detokenizer: Detokenizer,
        resume_token: int | None,
    ) -> Row:
        """Replace characters `[char_lo, char_hi)` (tokens from `keep` on, up to token
        `resume_token` or the end) by `new_ids`, which must decode to that text."""
        replaced = self.text[char_lo:char_hi]
        decoded = decode_tokens(detokenizer, new_ids)
        if decoded.text != replaced:
            raise TokenizationMismatch(
                f"the new ids decode to {decoded.text!r}, not to the replaced {replaced!r}"
            )
        middle = _assign_tokens(self._origins_between(char_lo, char_hi), decoded, new_ids)
        before = self.slice_tokens(0, keep).segments
        after = () if resume_token is None else self.slice_tokens(resume_token, None).segments
        return Row(before + middle + after, kv_prefix(self.kv, keep))

    def _origins_between(self, char_lo: int, char_hi: int) -> list[tuple[int, Origin]]:
        """(start offset relative to `char_lo`, origin) of each segment part in the range."""
        parts: list[tuple[int, Origin]] = []
        for index, segment in enumerate(self.segments):
            start, end = int(self.char_starts[index]), int(self.char_starts[index + 1])
            if end > char_lo and start < char_hi:
                parts.append((max(start, char_lo) - char_lo, segment.origin))
        return parts


def _assign_tokens(
    parts: list[tuple[int, Origin]], decoded: Decoded, new_ids: Sequence[int]
) -> tuple[Segment, ...]:
    """New segments for re-tokenized text: each token joins the part holding its first
    character; a part whose characters all went to earlier tokens disappears."""
    if not len(decoded.token_ends):
        return ()
    ids = np.asarray(new_ids, dtype=np.int32)
    ends = decoded.token_ends
    starts = np.concatenate(([0], ends[:-1]))
    part_starts = [start for start, _ in parts] or [0]
    owner = np.searchsorted(part_starts, starts, "right") - 1
    segments: list[Segment] = []
    for part in np.unique(owner):
        chosen = np.flatnonzero(owner == part)
        lo, hi = int(starts[chosen[0]]), int(ends[chosen[-1]])
        piece = Decoded(decoded.text[lo:hi], ends[chosen] - lo, decoded.token_clean[chosen])
        span = Span.of_tokens(ids[chosen], piece, parts[int(part)][1])
        segments.append(Segment.whole(span))
    return tuple(segments)
