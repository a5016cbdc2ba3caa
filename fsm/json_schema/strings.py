"""String terms from ``minLength``, ``maxLength``, ``pattern`` and ``format``.

All three apply to the decoded string: the content term is over characters in their
``json.dumps`` encoding (``fsm.regex.json_string_encoding``), so a length counts code
points and a pattern sees the text, not its escapes.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import Generic, TypeVar, overload

from fsm.errors import UnsupportedRegex, UnsupportedSchema
from fsm.json_schema.formats import OBJECT_FORMATS, FormatTerms
from fsm.json_schema.json_text import JsonText
from fsm.regex import json_string_encoding, search_in
from fsm.term_builder import TermBuilder
from fsm.terms import Term
from fsm.unicode import Ranges

T = TypeVar("T")

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


class StringTerms(Generic[T]):
    """String terms built by ``formats``' builder, patterns kept per builder (the
    last 256: schemas repeat patterns, and a kept term keeps its derivatives, bounded
    by its automaton, for the next schema), and the encodings of the character classes
    and characters patterns read (the last 1,024: every pattern spells letters and
    classes others spelled, and a class's encoding costs tens of µs to build)."""

    def __init__(self, formats: FormatTerms[T]) -> None:
        self.formats = formats
        self.pieces: JsonText[T] = formats.pieces
        self.terms = formats.terms
        self.pattern_content: Callable[[str], T] = lru_cache(maxsize=256)(self._pattern)
        self._class_term: Callable[[tuple[tuple[int, int], ...]], T] = lru_cache(maxsize=1024)(
            self._encoded_class
        )

    def _pattern(self, pattern: str) -> T:
        """Encoded string contents in which ``pattern`` finds a match (ECMA
        ``search``)."""
        return search_in(self.terms, pattern, self._encoded)

    def _encoded(self, terms: TermBuilder[T], ranges: Ranges) -> T:
        """``json_string_encoding`` of ``ranges`` by this builder, kept."""
        assert terms is self.terms
        return self._class_term(tuple(ranges))

    def _encoded_class(self, ranges: tuple[tuple[int, int], ...]) -> T:
        return json_string_encoding(self.terms, list(ranges))

    def string_term(self, node: dict, refuse: Refuse) -> T:
        """The JSON strings meeting the string keywords of ``node``."""
        b = self.terms
        parts = []
        low = count(node.get("minLength"), 0)
        high = count(node.get("maxLength"), None)
        if low > 0 or high is not None:
            if high is not None and high < low:
                return b.empty
            parts.append(b.repeat(self.pieces.json_char, low, high))
        pattern = node.get("pattern")
        if isinstance(pattern, str):
            try:
                parts.append(self.pattern_content(pattern))
            except UnsupportedRegex as error:
                refuse("pattern", str(error))
        name = node.get("format")
        if isinstance(name, str):
            try:
                content = self.formats.format_content(name)
            except UnsupportedSchema as error:
                refuse("format", error.detail)
                content = None
            if content is not None:
                parts.append(content)
        return self.pieces.string_of(b.intersect(*parts)) if parts else self.pieces.any_string


def strings_in(terms: TermBuilder[T]) -> StringTerms[T]:
    """String terms, formats and JSON pieces all built by ``terms`` (a store's compile
    makes its own; object terms share ``OBJECT_STRINGS``)."""
    return StringTerms(FormatTerms(JsonText(terms)))


OBJECT_STRINGS: StringTerms[Term] = StringTerms(OBJECT_FORMATS)
"""String terms as objects, shared by every schema of the process."""

pattern_content = OBJECT_STRINGS.pattern_content
string_term = OBJECT_STRINGS.string_term
