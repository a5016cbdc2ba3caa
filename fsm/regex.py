"""Regular expressions (Python/ECMA syntax, ``fsm.regex_syntax``) to byte-level terms.

``regex_term`` gives full-match semantics for ``fsm.Regex``. ``search_term`` gives the
JSON-schema ``pattern`` semantics: the pattern may match anywhere unless anchored with
``^``/``$`` at the ends of its top-level alternatives.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TypeVar

from fsm.regex_syntax import (
    ASCII_ONLY,
    DOTALL,
    IGNORECASE,
    AnyChar,
    CharClass,
    Flagged,
    RegexNode,
    Repetition,
    Sequence,
    parse_regex,
)
from fsm.term_builder import OBJECT_TERMS, TermBuilder
from fsm.terms import Term
from fsm.unicode import (
    Ranges,
    complement_ranges,
    json_string_encodings,
    normalize_ranges,
    utf8_encodings,
)

T = TypeVar("T")

CharEncoder = Callable[[TermBuilder[T], Ranges], T]
"""Turns a set of code points into the term of their byte encodings, built by the
builder it is given."""

utf8_encoding = utf8_encodings
json_string_encoding = json_string_encodings


def regex_term(pattern: str, *, encode_char: CharEncoder[Term] = utf8_encoding) -> Term:
    """The byte strings whose decoding fully matches ``pattern``, as objects."""
    return regex_in(OBJECT_TERMS, pattern, encode_char)


def regex_in(terms: TermBuilder[T], pattern: str, encode_char: CharEncoder[T] = utf8_encoding) -> T:
    """``regex_term`` built by ``terms``."""
    parsed = parse_regex(pattern)
    return _convert(terms, parsed.root, encode_char, parsed.flags)


def search_term(pattern: str, *, encode_char: CharEncoder[Term] = utf8_encoding) -> Term:
    """Strings that contain a match of ``pattern`` (``^``/``$`` anchor the ends).

    Anchors are read at the ends of the top-level alternatives, also through groups
    that enclose a whole alternative (``(^a|b$)``)."""
    return search_in(OBJECT_TERMS, pattern, encode_char)


def search_in(
    terms: TermBuilder[T], pattern: str, encode_char: CharEncoder[T] = utf8_encoding
) -> T:
    """``search_term`` built by ``terms``. The text around an unanchored branch
    (any characters) is encoded only when a branch needs it: every code point's
    encoding is the most a pattern builds (160 µs compiled for JSON's), and a schema's
    patterns are mostly anchored at both ends.

    A branch open at one end whose core matches the empty string (``.*``, ``^[a-z]*``)
    finds a match in every text: the pattern is then "any characters" itself, so a key
    no such pattern matches is none (``x & ~x`` is empty on sight), where the language
    as written needed a search over its complement's states to be found empty."""
    options = []
    around: T | None = None  # any characters, once a branch is unanchored
    for branch in _anchorable_branches(pattern):
        start = branch.startswith("^")
        end = branch.endswith("$") and not _is_escaped(branch, len(branch) - 1)
        core = branch[1 if start else 0 : len(branch) - 1 if end else len(branch)]
        core_term = regex_in(terms, core, encode_char) if core else terms.eps
        before = after = terms.eps
        if not (start and end):
            if around is None:
                around = terms.star(encode_char(terms, complement_ranges([])))
            if terms.nullable(core_term):  # its empty match at the open end: everywhere
                return around
            before = terms.eps if start else around
            after = terms.eps if end else around
        options.append(terms.cat(before, core_term, after))
    return terms.alt(*options)


def _anchorable_branches(pattern: str) -> list[str]:
    """Top-level alternatives, with groups enclosing a whole alternative opened up."""
    out = []
    for branch in _split_top_level(pattern):
        opened = _unwrap_group(branch)
        out.extend(_anchorable_branches(opened) if opened != branch else [branch])
    return out


def _is_escaped(text: str, index: int) -> bool:
    backslashes = 0
    while index - 1 - backslashes >= 0 and text[index - 1 - backslashes] == "\\":
        backslashes += 1
    return backslashes % 2 == 1


def _structure(pattern: str) -> Iterator[tuple[int, str, int]]:
    """``(index, char, depth)`` of each character outside escapes and classes; a
    group's parentheses both report the depth outside the group."""
    depth, in_class, i = 0, False, 0
    while i < len(pattern):
        char = pattern[i]
        if char == "\\":
            i += 2
            continue
        if in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
        else:
            depth -= char == ")"
            yield i, char, depth
            depth += char == "("
        i += 1


def _split_top_level(pattern: str) -> list[str]:
    """Split on ``|`` outside groups and classes, so each branch's anchors can be read."""
    cuts = [i for i, char, depth in _structure(pattern) if char == "|" and depth == 0]
    bounds = [-1, *cuts, len(pattern)]
    return [pattern[a + 1 : b] for a, b in zip(bounds, bounds[1:])]


def _unwrap_group(pattern: str) -> str:
    """``pattern`` without a capturing or ``(?:`` group enclosing all of it (one level)."""
    if pattern.startswith("(?:"):
        inner = 3
    elif pattern.startswith("(") and not pattern.startswith("(?"):
        inner = 1
    else:
        return pattern
    closing = next((i for i, char, depth in _structure(pattern) if char == ")" and depth == 0), -1)
    return pattern[inner:-1] if closing == len(pattern) - 1 else pattern


def _convert(terms: TermBuilder[T], node: RegexNode, encode: CharEncoder[T], flags: int) -> T:
    if isinstance(node, CharClass):
        return encode(terms, _class_ranges(node, flags))
    if isinstance(node, Sequence):
        return terms.cat(*(_convert(terms, item, encode, flags) for item in node.items))
    if isinstance(node, Repetition):
        return terms.repeat(_convert(terms, node.item, encode, flags), node.low, node.high)
    if isinstance(node, AnyChar):
        newline = [] if flags & DOTALL else [(10, 10)]
        return encode(terms, complement_ranges(newline))
    if isinstance(node, Flagged):
        return _convert(terms, node.item, encode, (flags | node.added) & ~node.removed)
    return terms.alt(*(_convert(terms, option, encode, flags) for option in node.options))


def _class_ranges(node: CharClass, flags: int) -> Ranges:
    """The code points of a class: its listed ones (with their other cases under
    ``IGNORECASE``) and its class escapes, complemented when negated."""
    listed = list(node.listed)
    if flags & IGNORECASE:
        listed.extend(_other_cases(node.listed, ascii_only=bool(flags & ASCII_ONLY)))
    for escaped in node.fixed:
        listed.extend(escaped)
    ranges = normalize_ranges(listed)
    return complement_ranges(ranges) if node.negated else ranges


def _other_cases(ranges: tuple[tuple[int, int], ...], ascii_only: bool) -> Ranges:
    """The lower and upper case forms (of one character) of the code points in ``ranges``."""
    out: Ranges = []
    for low, high in ranges:
        top = min(high, 0x7F) if ascii_only else high
        for code_point in range(low, top + 1):
            char = chr(code_point)
            for other in (char.lower(), char.upper()):
                if len(other) == 1 and other != char and (not ascii_only or other.isascii()):
                    out.append((ord(other), ord(other)))
    return out
