"""Sets of Unicode code points as byte-level terms (UTF-8, or as written inside JSON strings).

A character class becomes the union of the byte sequences that encode its members, so
an automaton over bytes handles multi-byte characters exactly and a token may end in
the middle of one.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TypeVar

from fsm.term_builder import OBJECT_TERMS, TermBuilder
from fsm.terms import Term, range_mask

T = TypeVar("T")

MAX_CODE_POINT = 0x10FFFF
SURROGATES = (0xD800, 0xDFFF)
_LENGTH_BOUNDS = ((0, 0x7F), (0x80, 0x7FF), (0x800, 0xFFFF), (0x10000, MAX_CODE_POINT))
_CONT_LO, _CONT_HI = 0x80, 0xBF

Ranges = list[tuple[int, int]]


def normalize_ranges(ranges: Iterable[tuple[int, int]]) -> Ranges:
    """Sorted, merged, inclusive code point ranges without surrogates."""
    merged: Ranges = []
    for lo, hi in sorted(ranges):
        if merged and lo <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], hi))
        else:
            merged.append((lo, hi))
    if not merged or merged[-1][1] < SURROGATES[0]:  # the usual class: nothing to take out
        return merged
    return subtract_ranges(merged, [SURROGATES])


def chars_to_ranges(chars: Iterable[str]) -> Ranges:
    return normalize_ranges((ord(c), ord(c)) for c in chars)


def complement_ranges(ranges: Ranges) -> Ranges:
    """Every scalar value not in ``ranges`` (which must be normalised)."""
    out: Ranges = []
    start = 0
    for lo, hi in ranges:
        if lo > start:
            out.append((start, lo - 1))
        start = hi + 1
    if start <= MAX_CODE_POINT:
        out.append((start, MAX_CODE_POINT))
    return subtract_ranges(out, [SURROGATES])


def subtract_ranges(ranges: Ranges, removed: Ranges) -> Ranges:
    out: Ranges = []
    for lo, hi in ranges:
        pieces = [(lo, hi)]
        for rlo, rhi in removed:
            next_pieces = []
            for plo, phi in pieces:
                if rhi < plo or rlo > phi:
                    next_pieces.append((plo, phi))
                    continue
                if plo < rlo:
                    next_pieces.append((plo, rlo - 1))
                if phi > rhi:
                    next_pieces.append((rhi + 1, phi))
            pieces = next_pieces
        out.extend(pieces)
    return out


def utf8_term(ranges: Ranges) -> Term:
    """The UTF-8 encodings of the code points in ``ranges`` (normalised), as objects."""
    return utf8_encodings(OBJECT_TERMS, ranges)


def utf8_encodings(terms: TermBuilder[T], ranges: Ranges) -> T:
    """The UTF-8 encodings of the code points in ``ranges`` (normalised), built by
    ``terms``."""
    if ranges and ranges[-1][1] < 0x80:  # ASCII: one byte each, a single byte set
        mask = 0
        for lo, hi in ranges:
            mask |= range_mask(lo, hi)
        return terms.byte_set(mask)
    parts = []
    for lo, hi in ranges:
        for blo, bhi in _LENGTH_BOUNDS:
            a, b = max(lo, blo), min(hi, bhi)
            if a <= b:
                parts.append(_interval(terms, chr(a).encode(), chr(b).encode(), 0))
    return terms.alt(*parts) if parts else terms.empty


def _interval(terms: TermBuilder[T], low: bytes, high: bytes, i: int) -> T:
    """Fixed-length encodings between ``low`` and ``high`` (lexicographic), from byte i."""
    if i == len(low) - 1:
        return terms.byte_range(low[i], high[i])
    if low[i] == high[i]:
        return terms.cat(terms.literal(low[i : i + 1]), _interval(terms, low, high, i + 1))
    parts = [
        terms.cat(terms.literal(low[i : i + 1]), _at_least(terms, low, i + 1)),
        terms.cat(terms.literal(high[i : i + 1]), _at_most(terms, high, i + 1)),
    ]
    if low[i] + 1 <= high[i] - 1:
        middle = terms.byte_range(low[i] + 1, high[i] - 1)
        parts.append(terms.cat(middle, _any_continuation(terms, len(low) - i - 1)))
    return terms.alt(*parts)


def _at_least(terms: TermBuilder[T], low: bytes, i: int) -> T:
    if i == len(low) - 1:
        return terms.byte_range(low[i], _CONT_HI)
    return terms.alt(
        terms.cat(terms.literal(low[i : i + 1]), _at_least(terms, low, i + 1)),
        terms.cat(
            terms.byte_range(low[i] + 1, _CONT_HI), _any_continuation(terms, len(low) - i - 1)
        ),
    )


def _at_most(terms: TermBuilder[T], high: bytes, i: int) -> T:
    if i == len(high) - 1:
        return terms.byte_range(_CONT_LO, high[i])
    return terms.alt(
        terms.cat(terms.literal(high[i : i + 1]), _at_most(terms, high, i + 1)),
        terms.cat(
            terms.byte_range(_CONT_LO, high[i] - 1), _any_continuation(terms, len(high) - i - 1)
        ),
    )


def _any_continuation(terms: TermBuilder[T], count: int) -> T:
    return terms.cat(*(terms.byte_range(_CONT_LO, _CONT_HI) for _ in range(count)))


_JSON_SHORT_ESCAPES = {
    '"': '\\"',
    "\\": "\\\\",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\b": "\\b",
    "\f": "\\f",
}


def json_escape(code_point: int) -> str:
    """How ``json.dumps(..., ensure_ascii=False)`` writes one character inside a string."""
    char = chr(code_point)
    if char in _JSON_SHORT_ESCAPES:
        return _JSON_SHORT_ESCAPES[char]
    if code_point < 0x20:
        return f"\\u{code_point:04x}"
    return char


_JSON_SPECIAL = normalize_ranges([(0, 0x1F), (ord('"'), ord('"')), (ord("\\"), ord("\\"))])


def json_string_term(ranges: Ranges) -> Term:
    """``json_string_encodings`` as objects."""
    return json_string_encodings(OBJECT_TERMS, ranges)


def json_string_encodings(terms: TermBuilder[T], ranges: Ranges) -> T:
    """The code points in ``ranges`` as ``json.dumps(ensure_ascii=False)`` writes them
    inside a string: specials escaped, everything else raw UTF-8; built by ``terms``."""
    plain = subtract_ranges(ranges, _JSON_SPECIAL)
    escaped = [
        terms.literal(json_escape(cp).encode())
        for lo, hi in ranges
        for cp in range(lo, min(hi, ord("\\")) + 1)  # the specials are all <= "\\"
        if cp < 0x20 or cp in (ord('"'), ord("\\"))
    ]
    return terms.alt(utf8_encodings(terms, plain), *escaped)
