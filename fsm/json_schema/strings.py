"""String terms from ``minLength``, ``maxLength``, ``pattern`` and ``format``.

All three apply to the decoded string: the content term is over characters in their
``json.dumps`` encoding (``fsm.regex.json_string_encoding``), so a length counts code
points and a pattern sees the text, not its escapes.
"""

from __future__ import annotations

from collections.abc import Callable

from fsm.errors import UnsupportedRegex
from fsm.json_schema.formats import format_pattern
from fsm.json_schema.json_text import JSON_CHAR, string_of
from fsm.regex import json_string_encoding, regex_term, search_term
from fsm.terms import EMPTY, Term, intersect, repeat, star

Refuse = Callable[[str, str], None]


def pattern_content(pattern: str) -> Term:
    """Encoded string contents in which ``pattern`` finds a match (ECMA ``search``)."""
    return search_term(pattern, encode_char=json_string_encoding)


def string_term(node: dict, refuse: Refuse) -> Term:
    """The JSON strings meeting the string keywords of ``node``."""
    parts = []
    low = node.get("minLength", 0)
    high = node.get("maxLength")
    if not isinstance(low, int) or isinstance(low, bool):
        low = 0
    if not isinstance(high, int) or isinstance(high, bool):
        high = None
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
    if isinstance(name, str) and (regex := format_pattern(name)) is not None:
        parts.append(regex_term(regex, encode_char=json_string_encoding))
    return string_of(intersect(*parts) if parts else star(JSON_CHAR))
