"""``format`` values as regular expressions over the decoded string (full match).

The data this library is checked against treats ``format`` as an assertion, so the
formats below are enforced; unknown formats are annotations and are ignored. Every
pattern is written for ``fsm.regex_syntax`` (no anchors, no lookaround).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache, partial
from typing import Generic, TypeVar

from fsm.errors import UnsupportedSchema
from fsm.json_schema.json_text import OBJECTS, JsonText
from fsm.json_schema.regex_format import RegexSyntaxChecker
from fsm.regex import json_string_encoding, regex_in
from fsm.terms import Term

T = TypeVar("T")

_D = "[0-9]"
_YEAR = f"{_D}{{4}}"
_LEAP_YEAR = f"(?:{_D}{{2}}(?:0[48]|[2468][048]|[13579][26])|(?:[02468][048]|[13579][26])00)"
_DAY_31 = "(?:0[1-9]|[12][0-9]|3[01])"
_DAY_30 = "(?:0[1-9]|[12][0-9]|30)"
_DATE = (
    f"(?:{_YEAR}-(?:0[13578]|1[02])-{_DAY_31}"
    f"|{_YEAR}-(?:0[469]|11)-{_DAY_30}"
    f"|{_YEAR}-02-(?:0[1-9]|1[0-9]|2[0-8])"
    f"|{_LEAP_YEAR}-02-29)"
)
_HOUR, _MINUTE = "(?:[01][0-9]|2[0-3])", "[0-5][0-9]"
_OFFSET = f"(?:[zZ]|[+-]{_HOUR}:{_MINUTE})"
_TIME = f"{_HOUR}:{_MINUTE}:[0-5][0-9](?:\\.{_D}+)?{_OFFSET}"
_HEX = "[0-9a-fA-F]"
_OCTET = "(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])"
_IPV4 = f"{_OCTET}(?:\\.{_OCTET}){{3}}"
_H16 = f"{_HEX}{{1,4}}"
_LS32 = f"(?:{_H16}:{_H16}|{_IPV4})"
_IPV6 = (
    "(?:"
    f"(?:{_H16}:){{6}}{_LS32}"
    f"|::(?:{_H16}:){{5}}{_LS32}"
    f"|(?:{_H16})?::(?:{_H16}:){{4}}{_LS32}"
    f"|(?:(?:{_H16}:){{0,1}}{_H16})?::(?:{_H16}:){{3}}{_LS32}"
    f"|(?:(?:{_H16}:){{0,2}}{_H16})?::(?:{_H16}:){{2}}{_LS32}"
    f"|(?:(?:{_H16}:){{0,3}}{_H16})?::{_H16}:{_LS32}"
    f"|(?:(?:{_H16}:){{0,4}}{_H16})?::{_LS32}"
    f"|(?:(?:{_H16}:){{0,5}}{_H16})?::{_H16}"
    f"|(?:(?:{_H16}:){{0,6}}{_H16})?::"
    ")"
)
_LABEL = "[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?"
_HOSTNAME = f"{_LABEL}(?:\\.{_LABEL})*"
# RFC 3986, with characters outside ASCII refused (those make an IRI, not a URI).
_PCT = f"%{_HEX}{{2}}"
_UNRESERVED_SUB = "[a-zA-Z0-9._~!$&'()*+,;=-]"
_PCHAR = f"(?:{_UNRESERVED_SUB}|{_PCT}|[:@])"
_SCHEME = "[a-zA-Z][a-zA-Z0-9+.-]*"
_AUTHORITY = f"(?:(?:{_UNRESERVED_SUB}|{_PCT}|:)*@)?(?:\\[{_IPV6}\\]|(?:{_UNRESERVED_SUB}|{_PCT})*)(?::{_D}*)?"
_PATH_ABEMPTY = f"(?:/{_PCHAR}*)*"
_HIER = f"(?://{_AUTHORITY}{_PATH_ABEMPTY}|/?(?:{_PCHAR}+(?:/{_PCHAR}*)*)?)"
_QUERY = f"(?:\\?(?:{_PCHAR}|[/?])*)?"
_FRAGMENT = f"(?:#(?:{_PCHAR}|[/?])*)?"
_URI = f"{_SCHEME}:{_HIER}{_QUERY}{_FRAGMENT}"
_SEGMENT_NC = f"(?:{_UNRESERVED_SUB}|{_PCT}|@)+"
_RELATIVE_PART = f"(?://{_AUTHORITY}{_PATH_ABEMPTY}|/(?:{_PCHAR}+(?:/{_PCHAR}*)*)?|{_SEGMENT_NC}(?:/{_PCHAR}*)*|)"
_URI_REFERENCE = f"(?:{_URI}|{_RELATIVE_PART}{_QUERY}{_FRAGMENT})"
_EMAIL_LOCAL = "[a-zA-Z0-9!#$%&'*+/=?^_`{|}~-]+(?:\\.[a-zA-Z0-9!#$%&'*+/=?^_`{|}~-]+)*"
_EMAIL_QUOTED = '"(?:[^"\\\\]|\\\\.)*"'
_EMAIL = f"(?:{_EMAIL_LOCAL}|{_EMAIL_QUOTED})@(?:{_HOSTNAME}|\\[{_IPV4}\\]|\\[IPv6:{_IPV6}\\])"
_DURATION_TIME = f"T(?:{_D}+H(?:{_D}+M(?:{_D}+S)?)?|{_D}+M(?:{_D}+S)?|{_D}+S)"
_DURATION = (
    f"P(?:(?:{_D}+D|{_D}+M(?:{_D}+D)?|{_D}+Y(?:{_D}+M(?:{_D}+D)?)?)(?:{_DURATION_TIME})?"
    f"|{_DURATION_TIME}|{_D}+W)"
)
_JSON_POINTER = "(?:/(?:[^/~]|~[01])*)*"

FORMATS: dict[str, str] = {
    "date": _DATE,
    "email": _EMAIL,
    "idn-email": "[^@\\s]+@[^@\\s]+",
    "uuid": f"{_HEX}{{8}}-{_HEX}{{4}}-{_HEX}{{4}}-{_HEX}{{4}}-{_HEX}{{12}}",
    "uri": _URI,
    "uri-reference": _URI_REFERENCE,
    "ipv4": _IPV4,
    "ipv6": _IPV6,
    "hostname": _HOSTNAME,
    "duration": _DURATION,
    "json-pointer": _JSON_POINTER,
    "relative-json-pointer": f"(?:0|[1-9][0-9]*)(?:#|{_JSON_POINTER})",
}
"""Enforced formats: name -> pattern that the whole decoded string must match."""

UNENFORCED = frozenset({"idn-hostname", "iri", "iri-reference", "uri-template"})
"""Standard formats that are not enforced: a schema using them is refused."""


class FormatTerms(Generic[T]):
    """The terms of the formats, built by ``pieces``' builder, each once per builder
    (the last 64 kept): every schema with ``"format": "email"`` shares one term, so its
    regex is parsed once, the leap-second tree of ``time`` is built once, and the
    derivatives memoised on the term (bounded by its automaton) serve every later
    schema."""

    def __init__(self, pieces: JsonText[T]) -> None:
        self.pieces = pieces
        self.terms = pieces.terms
        self.format_content: Callable[[str], T | None] = lru_cache(maxsize=64)(self._content)

    def _content(self, name: str) -> T | None:
        """The encoded string contents of format ``name``; None for annotation-only
        formats. Raises ``UnsupportedSchema("format")`` for the standard formats not
        enforced."""
        b = self.terms
        if name in UNENFORCED:
            raise UnsupportedSchema("format", f"{name!r} is not enforced")
        if name == "time":
            return self._time_term()
        if name == "date-time":
            date = regex_in(b, f"{_DATE}[tT]", json_string_encoding)
            return b.cat(date, self._time_term())
        if name == "regex":
            return b.intersect(b.star(self.pieces.json_char), b.checked(RegexSyntaxChecker()))
        pattern = FORMATS.get(name)
        if pattern is None:
            return None
        content = regex_in(b, pattern, json_string_encoding)
        if name == "hostname":
            content = b.intersect(content, b.repeat(self.pieces.json_char, 1, 253))
        return content

    def _time_term(self) -> T:
        """RFC 3339 ``full-time``; a leap second only where it falls at 23:59:60 UTC."""
        b = self.terms
        ordinary = regex_in(b, _TIME, json_string_encoding)
        leap = b.thunk(
            ("format-leap-second",), self.leap_seconds, shortest=partial(_leap_shortest, b"")
        )
        return b.alt(ordinary, leap)

    def leap_seconds(self) -> T:
        """The leap-second times (``HH:MM:60``, a fraction, an offset that puts them at
        23:59:60 UTC)."""
        return self._leap_branch(b"")

    def _leap_branch(self, prefix: bytes) -> T:
        """The leap-second times that start with ``prefix``, as a prefix tree whose
        branches are thunks: a derivative looks at the 10 or fewer options sharing its
        next byte, and only the branches a text reads are ever built (not all 1,440
        stamps)."""
        b = self.terms
        if len(prefix) == len(LEAP_STAMP):
            local = int(prefix[:2]) * 60 + int(prefix[3:5])
            fraction = b.opt(b.cat(b.literal(b"."), b.plus(b.byte_range(0x30, 0x39))))
            return b.cat(fraction, b.alt(*(b.literal(offset) for offset in _leap_offsets(local))))
        branches = []
        for byte in _leap_following(prefix):
            longer = prefix + bytes((byte,))
            rest = b.thunk(
                ("format-leap-second", longer),
                partial(self._leap_branch, longer),
                shortest=partial(_leap_shortest, longer),
            )
            branches.append(b.cat(b.literal(bytes((byte,))), rest))
        return b.alt(*branches)


def _leap_offsets(local: int) -> list[bytes]:
    """The UTC offsets at which local time ``local`` (minutes) is 23:59 UTC."""
    ahead = (local - (23 * 60 + 59)) % (24 * 60)  # offset east of UTC
    offsets = [
        f"+{ahead // 60:02d}:{ahead % 60:02d}",
        f"-{(-ahead) % 1440 // 60:02d}:{(-ahead) % 60:02d}",
    ]
    if ahead == 0:
        offsets += ["Z", "z"]
    return [offset.encode() for offset in offsets]


LEAP_STAMP = b"23:59:60"
"""The leap second at offset zero: the only stamp a one-byte offset (``Z``) ends."""
_STAMP_BYTES = (b"012", b"0123456789", b":", b"012345", b"0123456789", b":", b"6", b"0")
"""The bytes of a local ``HH:MM:60`` by position (an hour ``2`` goes on with ``0-3``)."""


def _leap_following(prefix: bytes) -> bytes:
    """The bytes that may follow ``prefix``, a proper prefix of a local ``HH:MM:60``:
    every minute of the day is 23:59 UTC at some offset, so they are the clock's own."""
    return b"0123" if prefix == b"2" else _STAMP_BYTES[len(prefix)]


def _leap_shortest(prefix: bytes) -> bytes:
    """The shortest, then lowest, rest of a leap-second time after ``prefix`` (a
    completion states it, so the tree is never built for it): ``23:59:60Z`` is the
    one time with a one-byte offset; any other ends with a six-byte one, so the lowest
    is the lowest stamp below ``prefix`` (its lowest byte at each position) with its
    ``+HH:MM`` offset (``+`` sorts before ``-``)."""
    if LEAP_STAMP.startswith(prefix):
        return LEAP_STAMP[len(prefix) :] + b"Z"
    stamp = prefix
    while len(stamp) < len(LEAP_STAMP):
        stamp += _leap_following(stamp)[:1]
    local = int(stamp[:2]) * 60 + int(stamp[3:5])
    return stamp[len(prefix) :] + _leap_offsets(local)[0]


OBJECT_FORMATS: FormatTerms[Term] = FormatTerms(OBJECTS)
"""The formats as object terms, shared by every schema of the process."""

format_content = OBJECT_FORMATS.format_content
