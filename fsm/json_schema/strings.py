"""String terms from ``minLength``, ``maxLength``, ``pattern`` and ``format``.

All three apply to the decoded string: the content term is over characters in their
``json.dumps`` encoding (``fsm.regex.json_string_encoding``), so a length counts code
points and a pattern sees the text, not its escapes.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import overload

from fsm.errors import UnsupportedRegex, UnsupportedSchema
from fsm.json_schema.formats import format_content
from fsm.json_schema.json_text import ANY_STRING, JSON_CHAR, string_of
from fsm.regex import json_string_encoding, search_term
from fsm.terms import EMPTY, Term, intersect, repeat

Refuse = Callable[[str, str], None]


@overload
def count(value: object, default: int) -> int: ...
@overload
def count(value: object, default: None) -> int | None: ...
def count(value: object, default: int | None) -> int | None:
    """A non-negative integer keyword value (``2.0`` counts as 2), else ``default``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        return default
    if isinstance(value, float) and not value.is_integer():
        return default
    return int(value)


@lru_cache(maxsize=256)
def pattern_content(pattern: str) -> Term:
    """Encoded string contents in which ``pattern`` finds a match (ECMA ``search``).
    The last 256 patterns are kept: schemas repeat patterns, and a kept term keeps its
    derivatives (bounded by its automaton) for the next schema."""
    return search_term(pattern, encode_char=json_string_encoding)


def string_term(node: dict, refuse: Refuse) -> Term:
    """The JSON strings meeting the string keywords of ``node``."""
    parts = []
    low = count(node.get("minLength"), 0)
    high = count(node.get("maxLength"), None)
    if low > 0 or high is not None:
        if high is not None and high < low:
            return EMPTY
        parts.append(repeat(JSON_CHAR, low, high))
    pattern = node.get("pattern")
    if isinstance(pattern, str):
        try:
            parts.append(pattern_content(pattern))
        except UnsupportedRegex as error:
            refuse("pattern", str(error))
    name = node.get("format")
    if isinstance(name, str):
        try:
            content = format_content(name)
        except UnsupportedSchema as error:
            refuse("format", error.detail)
            content = None
        if content is not None:
            parts.append(content)
    return string_of(intersect(*parts)) if parts else ANY_STRING
