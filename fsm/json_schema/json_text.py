"""Lexical pieces of JSON text as byte terms: whitespace, strings, numbers, any value.

Strings are written as ``json.dumps(..., ensure_ascii=False)`` writes them: every
character raw in UTF-8 except ``"``, ``\\`` and control characters, which take their
short or ``\\u00XX`` escape. One encoding per string keeps key matching, ``pattern``
and length checks exact on the decoded text.

``JsonText`` builds them with one ``fsm.term_builder.TermBuilder``, each piece once per
builder: ``OBJECTS`` is the object builder's, whose pieces the module's names below
are (every schema of a process shares them); a store's compile gets its own.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import lru_cache
from json.encoder import encode_basestring
from typing import Generic, TypeVar

from fsm.json_schema.numbers import NumberChecker
from fsm.term_builder import OBJECT_TERMS, TermBuilder
from fsm.terms import Term, byte_mask
from fsm.unicode import (
    MAX_CODE_POINT,
    chars_to_ranges,
    complement_ranges,
    json_escape,
    json_string_encodings,
    normalize_ranges,
    utf8_encodings,
)

T = TypeVar("T")

_ASCII_PLAIN = [b for b in range(0x20, 0x80) if b not in (0x22, 0x5C)]
_ESCAPED = [*range(0x20), 0x22, 0x5C]
"""The characters a JSON string escapes: control characters, ``"`` and ``\\``."""


class JsonText(Generic[T]):
    """The lexical pieces of JSON text, built by ``terms``: the constant ones when this
    is made, the others when first asked and then kept (the last 64 or 256 of each
    kind, as their keys vary: whitespace bounds, sets of excluded characters), so a
    kept piece keeps its derivatives for the next schema."""

    def __init__(self, terms: TermBuilder[T]) -> None:
        self.terms = b = terms
        self.quote = b.literal(b'"')
        self.null = b.lexeme(b.literal(b"null"))
        """``null`` and the booleans are lexemes (neither word extends another): a state
        "whitespace, then a boolean, then the rest" is walked as a lexeme shared across
        schemas, then the rest below where it ends, instead of expanding a state per
        letter of every continuation (``fsm.row_walk``)."""
        self.boolean = b.lexeme(b.alt(b.literal(b"true"), b.literal(b"false")))
        self.json_char = json_string_encodings(b, complement_ranges([]))
        """One character inside a JSON string, in its ``json.dumps`` encoding."""
        digit = b.byte_range(0x30, 0x39)
        nonzero = b.byte_range(0x31, 0x39)
        zero = b.literal(b"0")
        self.integer_literal = b.cat(
            b.opt(b.literal(b"-")), b.alt(zero, b.cat(nonzero, b.star(digit)))
        )
        """An integer written without fraction or exponent."""
        fraction = b.cat(b.literal(b"."), b.alt(zero, b.cat(b.star(digit), nonzero)))
        # A canonical fraction, as Python and JavaScript print numbers: ``.0`` or no
        # trailing zero. It loses no ``json.dumps`` output and keeps a model from padding
        # zeros forever. A canonical exponent: no leading zero except Python's two-digit
        # form (``1e-05``), and never zero (``1e0`` is written ``1.0``).
        exponent = b.cat(
            b.byte_set(byte_mask(b"eE")),
            b.opt(b.byte_set(byte_mask(b"+-"))),
            b.alt(b.cat(zero, nonzero), b.cat(nonzero, b.star(digit))),
        )
        self.number = b.cat(self.integer_literal, b.opt(fraction), b.opt(exponent))
        """Any JSON number."""
        self.integral_number = b.checked(NumberChecker(integer=True))
        """Every number whose value is an integer, as JSON Schema draft 6+ means
        ``integer``: ``1.0``, ``1e2``, ``3e+20`` and ``1.5e1`` too (with canonical
        fraction and exponent, and an exponent written within ``numbers.MAX_EXPONENT``).
        Not regular (the exponent must outweigh the fraction digits), hence the
        checker."""
        self.any_string = b.lexeme(b.cat(self.quote, b.star(self.json_char), self.quote))
        """Every JSON string: the bound of every other (``string_of``,
        ``string_literal``)."""
        self._non_ascii = utf8_encodings(b, normalize_ranges([(0x80, MAX_CODE_POINT)]))
        self._escapes = {code: b.literal(json_escape(code).encode()) for code in _ESCAPED}
        # kept per builder as ``functools.lru_cache`` keeps them: thread-safe, the most
        # recently used kept
        self.whitespace: Callable[[int], T] = lru_cache(maxsize=64)(self._whitespace)
        self.colon: Callable[[int], T] = lru_cache(maxsize=64)(self._colon)
        self.any_value: Callable[[int], T] = lru_cache(maxsize=64)(self._any_value)
        self.closing: Callable[[bytes, int, bool], T] = lru_cache(maxsize=64)(self._closing)
        self.comma: Callable[[int], T] = lru_cache(maxsize=64)(self._comma)
        self._other_string: Callable[[frozenset[str]], T] = lru_cache(maxsize=256)(
            self._build_other_string
        )
        self._other_char: Callable[[frozenset[str]], T] = lru_cache(maxsize=256)(
            self._build_other_char
        )

    def _whitespace(self, max_len: int) -> T:
        """The whitespace after ``{``, ``[`` and ``,`` and before ``}`` and ``]``, as
        writers lay it out: nothing, one space, or one line break (``\n``) followed by
        at most ``max_len`` spaces of indentation. ``max_len=0`` allows none at all.

        Bounding the shape, not only the length, keeps a model from padding a document
        with blank lines while still accepting compact, default and indented output;
        one kind of indentation (spaces, as ``json.dumps(indent=n)``) keeps a generated
        document from mixing tabs and spaces."""
        b = self.terms
        if max_len == 0:
            return b.eps
        newline = b.cat(b.literal(b"\n"), b.repeat(b.literal(b" "), 0, max_len))
        return b.alt(b.eps, b.literal(b" "), newline)

    def _colon(self, max_len: int) -> T:
        """The ``:`` between a key and its value: no whitespace before it, then nothing
        or one space (``json.dumps`` writes ``": "``, compact writers ``":"``;
        ``max_len=0`` allows only the latter). Whitespace never comes before ``:`` or
        ``,``, so once a key is known its ``":`` is forced, and after a value the choice
        is ``,`` or the close, not how much space to write first."""
        b = self.terms
        return b.literal(b":") if max_len == 0 else b.cat(b.literal(b":"), b.opt(b.literal(b" ")))

    def member(self, key: T, value: T, ws_max: int) -> T:
        """An object member, ``key: value`` (``colon``)."""
        return self.terms.cat(key, self.colon(ws_max), value)

    def string_of(self, content: T) -> T:
        """A JSON string whose encoded content is in ``content``: a lexeme, since a
        string ends at its first unescaped quote and encoded content never holds a raw
        one, and bounded by ``any_string``, so intersections of members factor at their
        keys (``fsm.terms.intersect``)."""
        b = self.terms
        return b.lexeme(b.cat(self.quote, content, self.quote), bound=self.any_string)

    def string_literal(self, text: str) -> T:
        """The JSON string of ``text`` (``encode_string``), bounded by ``any_string``."""
        b = self.terms
        return b.lexeme(b.literal(encode_string(text)), bound=self.any_string)

    def string_except(self, names: Iterable[str]) -> T:
        """JSON strings whose decoded text is none of ``names`` (a regular term, no
        complement).

        Built over the character trie of the names: at each node the string may close
        (unless the node is a name), continue with a trie child, or take any other
        character and then anything. It is any string but the names' encodings,
        declared so (a lexeme ``within`` any string, ``apart`` from the names): once a
        text has left every name its states are the plain string's, and its token walks
        take the plain string's but down the names.
        A child's node is a thunk, built when a text first reaches it, and identified
        by the names' suffixes below it: an object with hundreds of keys is compiled
        without its trie, and equal subtrees (the rest of ``"name"`` in two objects
        with different keys) are equal terms, whose walks the vocabulary shares. (A
        store holds the promise alone: it derives ``within`` but the names.)
        """
        names = frozenset(names)
        encoded = frozenset(encode_string(name) for name in names)
        b = self.terms
        return b.lexeme_except(
            lambda: b.cat(self.quote, self._except_rest(names)), self.any_string, encoded
        )

    def _except_rest(self, suffixes: frozenset[str]) -> T:
        """The rest of a string other than ``suffixes`` (what is left of the names after
        the characters read, all of which they share)."""
        b = self.terms
        after: dict[str, set[str]] = {}
        for suffix in suffixes:
            if suffix:
                after.setdefault(suffix[0], set()).add(suffix[1:])
        options = [self._other_string(frozenset(after))]
        if "" not in suffixes:
            options.append(self.quote)
        options.extend(
            b.cat(b.literal(json_escape(ord(char)).encode()), self._except_child(frozenset(rest)))
            for char, rest in after.items()
        )
        return b.alt(*options)

    def _except_child(self, suffixes: frozenset[str]) -> T:
        """``_except_rest`` built on first use, keyed by its suffixes."""
        return self.terms.thunk(("json-string-except", suffixes), _ExceptRest(self, suffixes))

    def _build_other_string(self, excluded: frozenset[str]) -> T:
        """A character other than ``excluded``, then the rest of any string: one term
        per set (the last 256 kept), so its derivatives are memoised once for every
        node of every key trie that offers the same next characters."""
        b = self.terms
        return b.cat(self._other_char(excluded), b.star(self.json_char), self.quote)

    def _build_other_char(self, excluded: frozenset[str]) -> T:
        """One string character other than ``excluded``, in its JSON encoding (the last
        256 sets kept: key names share first letters, and a kept term keeps its
        derivatives)."""
        b = self.terms
        if any(ord(c) >= 0x80 for c in excluded):
            return json_string_encodings(b, complement_ranges(chars_to_ranges(excluded)))
        codes = {ord(c) for c in excluded}
        return b.alt(
            b.byte_set(byte_mask(byte for byte in _ASCII_PLAIN if byte not in codes)),
            self._non_ascii,
            *(escape for code, escape in self._escapes.items() if code not in codes),
        )

    def _any_value(self, ws_max: int) -> T:
        """Any JSON value, with up to ``ws_max`` whitespace bytes wherever JSON allows
        it: a number, or any other value as one lexeme (``_delimited_value``)."""
        return self.terms.alt(self._delimited_value(ws_max), self.number)

    def _delimited_value(self, ws_max: int) -> T:
        """Any JSON value but a number, declared a lexeme. It is prefix-free: ``null``
        and the booleans are fixed words, a string ends at its closing quote, and an
        array or object at the bracket that closes its first one (every proper prefix
        of it leaves a bracket open). So "``: ``, any value, then the rest" splits into
        a head walked once per vocabulary and the rest below where it ends
        (``fsm.decompose``), where the value of an object's "any other key" was
        expanded anew after every key of every schema. Built without ``lexeme``'s
        nullability check, which would force the body, whose arrays and objects hold
        this term again."""
        b = self.terms
        body = b.thunk(
            ("json-any-value", ws_max),
            lambda: b.alt(
                self.null,
                self.boolean,
                self.any_string,
                self.any_array(ws_max),
                self.any_object(ws_max),
            ),
        )
        return b.known_lexeme(body)

    def any_array(self, ws_max: int) -> T:
        """Any JSON array."""
        b = self.terms
        ws, value = self.whitespace(ws_max), self.any_value(ws_max)
        rest = b.star(b.cat(b.literal(b","), ws, value))
        close = b.literal(b"]")
        return b.cat(b.literal(b"["), ws, b.alt(close, b.cat(value, rest, ws, close)))

    def any_object(self, ws_max: int) -> T:
        """Any JSON object (duplicate keys included, as JSON allows them)."""
        b = self.terms
        ws = self.whitespace(ws_max)
        member = b.cat(self.any_string, self.colon(ws_max), self.any_value(ws_max))
        rest = b.star(b.cat(b.literal(b","), ws, member))
        close = b.literal(b"}")
        return b.cat(b.literal(b"{"), ws, b.alt(close, b.cat(member, rest, ws, close)))

    def _closing(self, bracket: bytes, ws_max: int, first: bool) -> T:
        """The close of a container body: ``bracket`` right after the opening
        whitespace (``first``), else whitespace then ``bracket``."""
        b = self.terms
        return b.literal(bracket) if first else b.cat(self.whitespace(ws_max), b.literal(bracket))

    def _comma(self, ws_max: int) -> T:
        """``,`` then whitespace: between two members or items."""
        return self.terms.cat(self.terms.literal(b","), self.whitespace(ws_max))

    def sequence(self, items: list[T], ws_max: int, open_: bytes, close: bytes) -> T:
        """``open_`` items separated by commas ``close``, with whitespace around."""
        b = self.terms
        ws = self.whitespace(ws_max)
        if not items:
            return b.cat(b.literal(open_), ws, b.literal(close))
        parts: list[T] = [b.literal(open_), ws, items[0]]
        for item in items[1:]:
            parts += [b.literal(b","), ws, item]
        parts += [ws, b.literal(close)]
        return b.cat(*parts)


class _ExceptRest(Generic[T]):
    """``_except_rest(suffixes)`` when called: one object where a closure is two for
    the cyclic collector to track (``fsm.terms._ItemDerivative``). Not a keyed thunk's
    builder: asking one for ``opening_bytes`` that it does not have raises and catches
    an ``AttributeError``, 0.5 µs a question."""

    __slots__ = ("pieces", "suffixes")

    def __init__(self, pieces: JsonText[T], suffixes: frozenset[str]) -> None:
        self.pieces = pieces
        self.suffixes = suffixes

    def __call__(self) -> T:
        return self.pieces._except_rest(self.suffixes)


def encode_string(text: str) -> bytes:
    """The bytes of ``text`` as a JSON string literal, quotes included: what
    ``json.dumps(text, ensure_ascii=False)`` writes, through the encoder function it
    calls, without building an encoder per key (a fifth of a small schema's compile)."""
    return encode_basestring(text).encode()


OBJECTS: JsonText[Term] = JsonText(OBJECT_TERMS)
"""The pieces as object terms, shared by every schema of the process."""

QUOTE = OBJECTS.quote
NULL = OBJECTS.null
BOOLEAN = OBJECTS.boolean
JSON_CHAR = OBJECTS.json_char
INTEGER_LITERAL = OBJECTS.integer_literal
NUMBER = OBJECTS.number
INTEGRAL_NUMBER = OBJECTS.integral_number
ANY_STRING = OBJECTS.any_string
whitespace = OBJECTS.whitespace
colon = OBJECTS.colon
member = OBJECTS.member
string_of = OBJECTS.string_of
string_literal = OBJECTS.string_literal
string_except = OBJECTS.string_except
any_value = OBJECTS.any_value
any_array = OBJECTS.any_array
any_object = OBJECTS.any_object
closing = OBJECTS.closing
comma = OBJECTS.comma
sequence = OBJECTS.sequence
