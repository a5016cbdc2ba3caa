"""Incremental detokenizer: token ids in, text chunks out, one token at a time.

Usable without a model: it is built from the bytes of each token id (e.g.
`fsm.Vocabulary.token_bytes`). It never emits a broken character (partial UTF-8 bytes
are held until the character completes; invalid bytes become U+FFFD exactly as
`bytes.decode("utf-8", "replace")` and the tokenizers' lossy decoders do), never emits
text that could still turn out to begin a stop string, and reports where a stop string
matched so the caller can cut the state at exactly that character. Chunks are final:
nothing emitted is ever taken back. Stop strings match only at or after the offset
given to `start(match_from=...)`: text before it (prompt text that token healing
regenerates) is emitted as is and can neither hold a stop string nor start one.

Style: `Detokenizer` is a frozen configuration and `DetokState` a frozen value;
`feed(state, token_id)` returns `(new_state, chunk)`, so decode loops can keep one state
per row, fork it, or roll it back for free.
"""

from __future__ import annotations

import codecs
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from seqstate.errors import DetokenizerFinished, UnknownTokenId


@dataclass(frozen=True)
class StopMatch:
    """A stop string found in the decoded text at characters `[start, end)`.

    Args:
        stop: the stop string that matched.
        start: character offset where it begins in the decoded text.
        end: character offset just past it.

    Example:
        >>> ss.StopMatch("!", 6, 7).end
        7
    """

    stop: str
    start: int
    end: int


@dataclass(frozen=True)
class Chunk:
    """What one `feed` (or `finish`) produced.

    `text` may be shown at once. `decoded_chars` is the length of all text decoded so far,
    held-back text included: it is the character offset where this token ends, which is
    what a row records per token. `clean` is false while bytes of an unfinished
    character are held (the token ends inside a character). `stop` is the stop string
    match, if this token completed one.

    Example:
        >>> d = ss.Detokenizer([b"Hel", b"lo"])
        >>> d.feed(d.start(), 0)[1]
        Chunk(text='Hel', decoded_chars=3, clean=True, stop=None)
    """

    text: str
    decoded_chars: int
    clean: bool
    stop: StopMatch | None = None


@dataclass(frozen=True)
class DetokState:
    """Immutable progress of one decoded sequence; ``Detokenizer.start`` makes one and
    ``feed``/``finish`` return the next. Keep one per row; fork or roll back by keeping
    an older one.

    Args:
        held_bytes: bytes of an unfinished character.
        held_text: decoded text held back because it may begin a stop string.
        decoded_chars: characters decoded so far, held text included.
        at_start: nothing decoded yet (for ``strip_leading_space``).
        stop: the stop string match that ended the sequence, if any.
        finished: ``finish`` was called.
        match_from: stop strings match only at character offsets ``>= match_from``.

    Example:
        >>> ss.Detokenizer([b"a"]).start().decoded_chars
        0
    """

    held_bytes: bytes = b""
    held_text: str = ""
    decoded_chars: int = 0
    at_start: bool = True
    stop: StopMatch | None = None
    finished: bool = False
    match_from: int = 0  # stop strings match only at character offsets >= this


def _utf8_prefix(data: bytes, final: bool) -> tuple[str, bytes]:
    """Decode as much of `data` as is certain; return the text and the bytes held back."""
    text, consumed = codecs.utf_8_decode(data, "replace", final)
    return text, data[consumed:]


def _longest_stop_prefix_suffix(text: str, stops: Sequence[str]) -> int:
    """Length of the longest suffix of `text` that is a proper prefix of some stop string."""
    best = 0
    for stop in stops:
        for k in range(min(len(stop) - 1, len(text)), best, -1):
            if text.endswith(stop[:k]):
                best = k
                break
    return best


def _first_stop(text: str, stops: Sequence[str]) -> tuple[int, str] | None:
    """Earliest occurrence of any stop string in `text` (the longer one on a tie)."""
    found: tuple[int, str] | None = None
    for stop in stops:
        at = text.find(stop)
        if at >= 0 and (found is None or (at, -len(stop)) < (found[0], -len(found[1]))):
            found = (at, stop)
    return found


@dataclass(frozen=True)
class Detokenizer:
    """Decoding rules for one vocabulary.

    `token_bytes[i]` is the exact byte string of token `i` (`None`: a special token that
    decodes to nothing). `strip_leading_space` drops one space at the very start of the
    decoded text, as SentencePiece decoders do for their dummy prefix. `stop_strings`
    end the sequence where the first of them appears.

    Example (a euro sign split over two tokens is held until complete):
        >>> d = ss.Detokenizer([b"Hel", b"lo", b"\\xe2\\x82", b"\\xac", b"!"], stop_strings=("!",))
        >>> state = d.start()
        >>> for token_id in [0, 1, 2, 3, 4]:
        ...     state, chunk = d.feed(state, token_id)
        ...     print(repr(chunk.text), chunk.stop)
        'Hel' None
        'lo' None
        '' None
        '€' None
        '' StopMatch(stop='!', start=6, end=7)
    """

    token_bytes: Sequence[bytes | None]
    stop_strings: tuple[str, ...] = ()
    strip_leading_space: bool = False
    _stops: tuple[str, ...] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "token_bytes", tuple(self.token_bytes))
        object.__setattr__(self, "_stops", tuple(s for s in self.stop_strings if s))

    def start(self, match_from: int = 0) -> DetokState:
        """The state before any token; stop strings will match only at character offsets
        `>= match_from` (text before it, e.g. prompt text token healing regenerates, can
        neither hold a stop string nor start one).

        Example:
            >>> ss.Detokenizer([b"a"]).start(match_from=3).match_from
            3
        """
        return DetokState(match_from=match_from)

    def feed(self, state: DetokState, token_id: int) -> tuple[DetokState, Chunk]:
        """Decode one more token: the next state and the chunk of text it makes final.

        Args:
            state: the sequence's state so far.
            token_id: the next token.

        Raises ``DetokenizerFinished`` after a stop or ``finish``, ``UnknownTokenId`` for
        an id outside the vocabulary.

        Example:
            >>> d = ss.Detokenizer([b"a", b"b"])
            >>> state, chunk = d.feed(d.start(), 1)
            >>> chunk.text
            'b'
        """
        if state.finished or state.stop is not None:
            raise DetokenizerFinished("this sequence already stopped or was finished")
        data = self._bytes_of(token_id)
        text, held = _utf8_prefix(state.held_bytes + data, final=False)
        return self._advance(state, text, held, finished=False)

    def finish(self, state: DetokState) -> tuple[DetokState, Chunk]:
        """End the sequence: flush held bytes (as U+FFFD) and held-back text.

        Args:
            state: the sequence's state so far.

        Example:
            >>> d = ss.Detokenizer([b"\\xe2\\x82"])
            >>> state, _ = d.feed(d.start(), 0)
            >>> d.finish(state)[1].text
            '\\ufffd'
        """
        if state.finished:
            raise DetokenizerFinished("this sequence was already finished")
        if state.stop is not None:
            done = replace(state, finished=True)
            return done, Chunk("", state.decoded_chars, True, state.stop)
        text, _ = _utf8_prefix(state.held_bytes, final=True)
        return self._advance(state, text, b"", finished=True)

    def _bytes_of(self, token_id: int) -> bytes:
        if not 0 <= token_id < len(self.token_bytes):
            raise UnknownTokenId(
                f"token id {token_id} is outside the vocabulary of {len(self.token_bytes)} ids"
            )
        return self.token_bytes[token_id] or b""

    def _advance(
        self, state: DetokState, text: str, held: bytes, *, finished: bool
    ) -> tuple[DetokState, Chunk]:
        at_start = state.at_start
        if at_start and text:
            if self.strip_leading_space and text.startswith(" "):
                text = text[1:]
            at_start = False
        decoded = state.decoded_chars + len(text)
        buffer = state.held_text + text
        buffer_start = decoded - len(buffer)
        free = min(max(state.match_from - buffer_start, 0), len(buffer))  # before match_from
        searched = buffer[free:]
        found = _first_stop(searched, self._stops)
        if found is not None:
            at, stop = found
            at += free
            match = StopMatch(stop, buffer_start + at, buffer_start + at + len(stop))
            new_state = DetokState(held, "", decoded, at_start, match, finished, state.match_from)
            return new_state, Chunk(buffer[:at], decoded, not held, match)
        keep = 0 if finished else _longest_stop_prefix_suffix(searched, self._stops)
        emitted, kept = buffer[: len(buffer) - keep], buffer[len(buffer) - keep :]
        new_state = DetokState(held, kept, decoded, at_start, None, finished, state.match_from)
        return new_state, Chunk(emitted, decoded, not held)


@dataclass(frozen=True, eq=False)
class Decoded:
    """Text of a run of tokens with, per token, the character offset where it ends and
    whether it ends on a character boundary (read-only arrays); ``decode_tokens``
    returns it.

    Args:
        text: the decoded text.
        token_ends: per token, the character offset where it ends.
        token_clean: per token, whether it ends on a character boundary.

    Example:
        >>> ss.decode_tokens(ss.Detokenizer([b"a", b"bc"]), [0, 1]).token_ends.tolist()
        [1, 3]
    """

    text: str
    token_ends: np.ndarray
    token_clean: np.ndarray


def decode_tokens(
    detokenizer: Detokenizer, token_ids: Iterable[int], *, flush: bool = True
) -> Decoded:
    """Decode a whole run with `detokenizer` (its stop strings are ignored) and flush it.

    Bytes still held at the end become U+FFFD and belong to the last token, exactly as a
    one-shot `bytes.decode(..., "replace")` of the run would give. With `flush=False`
    (a run that will continue) they stay out of the text until their character
    completes, and the last token is marked as ending inside a character.

    Args:
        detokenizer: the decoding rules (token bytes) to use.
        token_ids: the run of token ids.
        flush: end the run (default) or leave held bytes out for a continuation.

    Example:
        >>> ss.decode_tokens(ss.Detokenizer([b"Hel", b"lo", b"\\xe2\\x82", b"\\xac"]), [0, 1, 2, 3])
        Decoded(text='Hello€', token_ends=array([3, 5, 5, 6]), token_clean=array([ True,  True, False,  True]))
    """
    plain = replace(detokenizer, stop_strings=()) if detokenizer.stop_strings else detokenizer
    current = plain.start()
    pieces: list[str] = []
    ends: list[int] = []
    clean: list[bool] = []
    for token_id in token_ids:
        current, chunk = plain.feed(current, int(token_id))
        pieces.append(chunk.text)
        ends.append(chunk.decoded_chars)
        clean.append(chunk.clean)
    if flush:
        current, tail = plain.finish(current)
        pieces.append(tail.text)
        if ends:
            ends[-1] = tail.decoded_chars
            clean[-1] = True
    token_ends = np.asarray(ends, dtype=np.int64)
    token_clean = np.asarray(clean, dtype=bool)
    token_ends.flags.writeable = False
    token_clean.flags.writeable = False
    return Decoded("".join(pieces), token_ends, token_clean)
