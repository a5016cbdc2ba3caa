"""Sets of Unicode code points as byte-level terms (UTF-8, or as written inside JSON strings).

A character class becomes the union of the byte sequences that encode its members, so
an automaton over bytes handles multi-byte characters exactly and a token may end in
the middle of one.
"""

from __future__ import annotations

from collections.abc import Iterable

from fsm.terms import EMPTY, Term, alt, byte_range, cat, literal

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
    """The UTF-8 encodings of the code points in ``ranges`` (normalised)."""
    if ranges and ranges[-1][1] < 0x80:  # ASCII: one byte each
        return alt(*(byte_range(lo, hi) for lo, hi in ranges))
    parts = []
    for lo, hi in ranges:
        for blo, bhi in _LENGTH_BOUNDS:
            a, b = max(lo, blo), min(hi, bhi)
            if a <= b:
                parts.append(_interval(chr(a).encode(), chr(b).encode(), 0))
    return alt(*parts) if parts else EMPTY


def _interval(low: bytes, high: bytes, i: int) -> Term:
    """Fixed-length encodings between ``low`` and ``high`` (lexicographic), from byte i."""
    if i == len(low) - 1:
        return byte_range(low[i], high[i])
    if low[i] == high[i]:
        return cat(literal(low[i : i + 1]), _interval(low, high, i + 1))
    parts = [
        cat(literal(low[i : i + 1]), _at_least(low, i + 1)),
        cat(literal(high[i : i + 1]), _at_most(high, i + 1)),
    ]
    if low[i] + 1 <= high[i] - 1:
        parts.append(cat(byte_range(low[i] + 1, high[i] - 1), _any_continuation(len(low) - i - 1)))
    return alt(*parts)


def _at_least(low: bytes, i: int) -> Term:
    if i == len(low) - 1:
        return byte_range(low[i], _CONT_HI)
    return alt(
        cat(literal(low[i : i + 1]), _at_least(low, i + 1)),
        cat(byte_range(low[i] + 1, _CONT_HI), _any_continuation(len(low) - i - 1)),
    )


def _at_most(high: bytes, i: int) -> Term:
    if i == len(high) - 1:
        return byte_range(_CONT_LO, high[i])
    return alt(
        cat(literal(high[i : i + 1]), _at_most(high, i + 1)),
        cat(byte_range(_CONT_LO, high[i] - 1), _any_continuation(len(high) - i - 1)),
    )


def _any_continuation(count: int) -> Term:
    return cat(*(byte_range(_CONT_LO, _CONT_HI) for _ in range(count)))


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
    """The code points in ``ranges`` as ``json.dumps(ensure_ascii=False)`` writes them
    inside a string: specials escaped, everything else raw UTF-8."""
    plain = subtract_ranges(ranges, _JSON_SPECIAL)
    escaped = [
        literal(json_escape(cp).encode())
        for lo, hi in ranges
        for cp in range(lo, min(hi, ord("\\")) + 1)  # the specials are all <= "\\"
        if cp < 0x20 or cp in (ord('"'), ord("\\"))
    ]
    return alt(utf8_term(plain), *escaped)
