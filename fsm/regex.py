"""Regular expressions (Python/ECMA syntax, parsed by interegular) to byte-level terms.

``regex_term`` gives full-match semantics for ``fsm.Regex``. ``search_term`` gives the
JSON-schema ``pattern`` semantics: the pattern may match anywhere unless anchored with
``^``/``$`` at the ends of its top-level alternatives.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

import interegular
from interegular import patterns as ip

from fsm.errors import InvalidSpec, UnsupportedRegex
from fsm.terms import Term, alt, cat, repeat, star
from fsm.unicode import (
    Ranges,
    chars_to_ranges,
    complement_ranges,
    json_string_term,
    normalize_ranges,
    utf8_term,
)

CharEncoder = Callable[[Ranges], Term]
"""Turns a set of code points into the term of their byte encodings."""

utf8_encoding: CharEncoder = utf8_term
json_string_encoding: CharEncoder = json_string_term


UNICODE_SPACES = "\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
"""What ECMAScript's ``\\s`` (the dialect of JSON-schema patterns) matches beyond ASCII
whitespace. Python's ``\\s`` differs slightly (it adds U+001C-U+001F and U+0085 and
omits U+FEFF); we follow ECMAScript for both."""


def _unicode_spaces(pattern: str) -> str:
    """Give ``\\s``/``\\S`` their Unicode meaning (interegular only knows ASCII spaces)."""
    out, in_class, i = [], False, 0
    while i < len(pattern):
        char = pattern[i]
        if char == "\\" and i + 1 < len(pattern):
            escape = pattern[i : i + 2]
            if escape == "\\s":
                out.append("\\s" + UNICODE_SPACES if in_class else "[\\s" + UNICODE_SPACES + "]")
            elif escape == "\\S" and not in_class:
                out.append("[^\\s" + UNICODE_SPACES + "]")
            else:
                out.append(escape)
            i += 2
            continue
        if in_class:
            in_class = char != "]" or pattern[i - 1] == "["
        elif char == "[":
            in_class = True
            if pattern[i + 1 : i + 2] == "^":
                out.append("[^")
                i += 2
                continue
        out.append(char)
        i += 1
    return "".join(out)


def _syntax_error(pattern: str, error: Exception) -> str:
    """The clearest description of why ``pattern`` does not parse: Python's own
    message when ``re`` rejects it too, else interegular's (or its error type)."""
    try:
        re.compile(pattern)
    except re.error as python_error:
        return str(python_error)
    return str(error) or type(error).__name__


def regex_term(pattern: str, *, encode_char: CharEncoder = utf8_encoding) -> Term:
    """The byte strings whose decoding fully matches ``pattern``."""
    try:
        parsed = interegular.parse_pattern(_unicode_spaces(pattern))
    except ip.Unsupported as error:
        raise UnsupportedRegex(f"{pattern!r}: {error}") from None
    except Exception as error:  # interegular raises several syntax error types
        raise InvalidSpec(
            f"{pattern!r} is not a valid regex: {_syntax_error(pattern, error)}"
        ) from None
    return _convert(parsed, encode_char, ip.REFlags(0))


def search_term(pattern: str, *, encode_char: CharEncoder = utf8_encoding) -> Term:
    """Strings that contain a match of ``pattern`` (``^``/``$`` anchor the ends).

    Anchors are read at the ends of the top-level alternatives, also through groups
    that enclose a whole alternative (``(^a|b$)``)."""
    anything = star(encode_char(complement_ranges([])))
    options = []
    for branch in _anchorable_branches(pattern):
        start = branch.startswith("^")
        end = branch.endswith("$") and not _is_escaped(branch, len(branch) - 1)
        core = branch[1 if start else 0 : len(branch) - 1 if end else len(branch)]
        options.append(
            cat(
                anything if not start else cat(),
                regex_term(core, encode_char=encode_char) if core else cat(),
                anything if not end else cat(),
            )
        )
    return alt(*options)


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


def _convert(node: object, encode: CharEncoder, flags: ip.REFlags) -> Term:
    if isinstance(node, ip.Pattern):
        inner = (flags | node.added_flags) & ~node.removed_flags
        if inner & ip.REFlags.MULTILINE:
            raise UnsupportedRegex("the multiline flag (?m) is not supported")
        return alt(*(_convert(option, encode, inner) for option in node.options))
    if isinstance(node, ip._Concatenation):
        return cat(*(_convert(part, encode, flags) for part in node.parts))
    if isinstance(node, ip._Repeated):
        return repeat(_convert(node.base, encode, flags), node.min, node.max)
    if isinstance(node, ip._CharGroup):
        chars = node.chars
        if flags & ip.REFlags.CASE_INSENSITIVE:
            chars = frozenset(
                c for ch in chars for c in {ch, ch.lower(), ch.upper()} if len(c) == 1
            )
        ranges = chars_to_ranges(chars)
        return encode(complement_ranges(ranges) if node.negated else ranges)
    if type(node).__name__ == "__DotCls":
        if flags & ip.REFlags.SINGLE_LINE:
            return encode(complement_ranges([]))
        return encode(complement_ranges(normalize_ranges([(10, 10)])))
    if isinstance(node, ip._NonCapturing):
        raise UnsupportedRegex("lookahead and lookbehind assertions are not supported")
    raise UnsupportedRegex(f"unsupported regex construct {type(node).__name__}")
