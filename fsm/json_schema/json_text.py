"""Lexical pieces of JSON text as byte terms: whitespace, strings, numbers, any value.

Strings are written as ``json.dumps(..., ensure_ascii=False)`` writes them: every
character raw in UTF-8 except ``"``, ``\\`` and control characters, which take their
short or ``\\u00XX`` escape. One encoding per string keeps key matching, ``pattern``
and length checks exact on the decoded text.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache
from json.encoder import encode_basestring

from fsm.json_schema.numbers import NumberChecker
from fsm.terms import (
    EPS,
    Lexeme,
    Term,
    alt,
    byte_range,
    byte_set,
    cat,
    checked,
    lexeme,
    literal,
    opt,
    repeat,
    star,
    thunk,
)
from fsm.unicode import (
    MAX_CODE_POINT,
    chars_to_ranges,
    complement_ranges,
    json_escape,
    json_string_term,
    normalize_ranges,
    utf8_term,
)

QUOTE = literal(b'"')
NULL = lexeme(literal(b"null"))
BOOLEAN = lexeme(alt(literal(b"true"), literal(b"false")))
"""``null`` and the booleans are lexemes (neither word extends another): a state
"whitespace, then a boolean, then the rest" is walked as a lexeme shared across
schemas, then the rest below where it ends, instead of expanding a state per letter
of every continuation (``fsm.row_walk``)."""
JSON_CHAR = json_string_term(complement_ranges([]))
"""One character inside a JSON string, in its ``json.dumps`` encoding."""

_DIGIT = byte_range(0x30, 0x39)
_INT = cat(opt(literal(b"-")), alt(literal(b"0"), cat(byte_range(0x31, 0x39), star(_DIGIT))))
_FRACTION = cat(literal(b"."), alt(literal(b"0"), cat(star(_DIGIT), byte_range(0x31, 0x39))))
"""A canonical fraction, as Python and JavaScript print numbers: ``.0`` or no trailing
zero. It loses no ``json.dumps`` output and keeps a model from padding zeros forever."""
_EXPONENT = cat(
    byte_set(b"eE"),
    opt(byte_set(b"+-")),
    alt(cat(literal(b"0"), byte_range(0x31, 0x39)), cat(byte_range(0x31, 0x39), star(_DIGIT))),
)
"""A canonical exponent: no leading zero except Python's two-digit form (``1e-05``),
and never zero (``1e0`` is written ``1.0``), so a model cannot pad zeros forever."""
INTEGER_LITERAL = _INT
"""An integer written without fraction or exponent."""
NUMBER = cat(_INT, opt(_FRACTION), opt(_EXPONENT))
"""Any JSON number."""
INTEGRAL_NUMBER = checked(NumberChecker(integer=True))
"""Every number whose value is an integer, as JSON Schema draft 6+ means ``integer``:
``1.0``, ``1e2``, ``3e+20`` and ``1.5e1`` too (with canonical fraction and exponent,
and an exponent written within ``numbers.MAX_EXPONENT``). Not regular (the exponent
must outweigh the fraction digits), hence the checker."""


@lru_cache(maxsize=64)
def whitespace(max_len: int) -> Term:
    """The whitespace after ``{``, ``[`` and ``,`` and before ``}`` and ``]``, as
    writers lay it out: nothing, one space, or one line break (``\n``) followed by at
    most ``max_len`` spaces of indentation. ``max_len=0`` allows none at all.

    Bounding the shape, not only the length, keeps a model from padding a document
    with blank lines while still accepting compact, default and indented output; one
    kind of indentation (spaces, as ``json.dumps(indent=n)``) keeps a generated
    document from mixing tabs and spaces."""
    if max_len == 0:
        return EPS
    newline = cat(literal(b"\n"), repeat(literal(b" "), 0, max_len))
    return alt(EPS, literal(b" "), newline)


@lru_cache(maxsize=64)
def colon(max_len: int) -> Term:
    """The ``:`` between a key and its value: no whitespace before it, then nothing or
    one space (``json.dumps`` writes ``": "``, compact writers ``":"``; ``max_len=0``
    allows only the latter). Whitespace never comes before ``:`` or ``,``, so once a
    key is known its ``":`` is forced, and after a value the choice is ``,`` or the
    close, not how much space to write first."""
    return literal(b":") if max_len == 0 else cat(literal(b":"), opt(literal(b" ")))


ANY_STRING = lexeme(cat(QUOTE, star(JSON_CHAR), QUOTE))
"""Every JSON string: the bound of every other (``string_of``, ``string_literal``)."""


def string_of(content: Term) -> Term:
    """A JSON string whose encoded content is in ``content``: a lexeme, since a string
    ends at its first unescaped quote and encoded content never holds a raw one, and
    bounded by ``ANY_STRING``, so intersections of members factor at their keys
    (``fsm.terms.intersect``)."""
    return lexeme(cat(QUOTE, content, QUOTE), bound=ANY_STRING)


def string_literal(text: str) -> Term:
    """The JSON string of ``text`` (``encode_string``), bounded by ``ANY_STRING``."""
    return lexeme(literal(encode_string(text)), bound=ANY_STRING)


def encode_string(text: str) -> bytes:
    """The bytes of ``text`` as a JSON string literal, quotes included: what
    ``json.dumps(text, ensure_ascii=False)`` writes, through the encoder function it
    calls, without building an encoder per key (a fifth of a small schema's compile)."""
    return encode_basestring(text).encode()


def string_except(names: Iterable[str]) -> Term:
    """JSON strings whose decoded text is none of ``names`` (a regular term, no complement).

    Built over the character trie of the names: at each node the string may close
    (unless the node is a name), continue with a trie child, or take any other
    character and then anything. It is any string but the names' encodings, declared
    so (``Lexeme``: ``within`` any string, ``apart`` from the names): once a text has
    left every name its states are the plain string's, and its token walks take the
    plain string's but down the names.
    A child's node is a thunk, built when a text first reaches it, and identified by
    the names' suffixes below it: an object with hundreds of keys is compiled without
    its trie, and equal subtrees (the rest of ``"name"`` in two objects with different
    keys) are equal terms, whose walks the vocabulary shares.
    """
    names = frozenset(names)
    encoded = frozenset(encode_string(name) for name in names)
    return lexeme(cat(QUOTE, _except_rest(names)), ANY_STRING, encoded)


def _except_rest(suffixes: frozenset[str]) -> Term:
    """The rest of a string other than ``suffixes`` (what is left of the names after
    the characters read, all of which they share)."""
    after: dict[str, set[str]] = {}
    for suffix in suffixes:
        if suffix:
            after.setdefault(suffix[0], set()).add(suffix[1:])
    options = [_other_string(frozenset(after))]
    if "" not in suffixes:
        options.append(QUOTE)
    options.extend(
        cat(literal(json_escape(ord(char)).encode()), _except_child(frozenset(rest)))
        for char, rest in after.items()
    )
    return alt(*options)


def _except_child(suffixes: frozenset[str]) -> Term:
    """``_except_rest`` built on first use, keyed by its suffixes."""
    return thunk(("json-string-except", suffixes), _ExceptRest(suffixes))


class _ExceptRest:
    """``_except_rest(suffixes)`` when called: one object where a closure is two for
    the cyclic collector to track (``fsm.terms._ItemDerivative``). Not a keyed thunk's
    builder: asking one for ``opening_bytes`` that it does not have raises and catches
    an ``AttributeError``, 0.5 µs a question."""

    __slots__ = ("suffixes",)

    def __init__(self, suffixes: frozenset[str]) -> None:
        self.suffixes = suffixes

    def __call__(self) -> Term:
        return _except_rest(self.suffixes)


@lru_cache(maxsize=256)
def _other_string(excluded: frozenset[str]) -> Term:
    """A character other than ``excluded``, then the rest of any string: one term per
    set (the last 256 kept), so its derivatives are memoised once for every node of
    every key trie that offers the same next characters."""
    return cat(_other_char(excluded), star(JSON_CHAR), QUOTE)


@lru_cache(maxsize=256)
def _other_char(excluded: frozenset[str]) -> Term:
    """One string character other than ``excluded``, in its JSON encoding (the last 256
    sets kept: key names share first letters, and a kept term keeps its derivatives)."""
    if any(ord(c) >= 0x80 for c in excluded):
        return json_string_term(complement_ranges(chars_to_ranges(excluded)))
    codes = {ord(c) for c in excluded}
    return alt(
        byte_set(b for b in _ASCII_PLAIN if b not in codes),
        _NON_ASCII,
        *(escape for code, escape in _ESCAPES.items() if code not in codes),
    )


_ASCII_PLAIN = [b for b in range(0x20, 0x80) if b not in (0x22, 0x5C)]
_NON_ASCII = utf8_term(normalize_ranges([(0x80, MAX_CODE_POINT)]))
_ESCAPES = {code: literal(json_escape(code).encode()) for code in [*range(0x20), 0x22, 0x5C]}


@lru_cache(maxsize=64)
def any_value(ws_max: int) -> Term:
    """Any JSON value, with up to ``ws_max`` whitespace bytes wherever JSON allows it:
    a number, or any other value as one lexeme (``_delimited_value``)."""
    return alt(_delimited_value(ws_max), NUMBER)


@lru_cache(maxsize=64)
def _delimited_value(ws_max: int) -> Term:
    """Any JSON value but a number, declared a lexeme. It is prefix-free: ``null`` and
    the booleans are fixed words, a string ends at its closing quote, and an array or
    object at the bracket that closes its first one (every proper prefix of it leaves a
    bracket open). So "``: ``, any value, then the rest" splits into a head walked once
    per vocabulary and the rest below where it ends (``fsm.decompose``), where the value
    of an object's "any other key" was expanded anew after every key of every schema.
    Built without ``lexeme``'s nullability check, which would force the body, whose
    arrays and objects hold this term again."""
    body = thunk(
        ("json-any-value", ws_max),
        lambda: alt(NULL, BOOLEAN, ANY_STRING, any_array(ws_max), any_object(ws_max)),
    )
    return Lexeme(body)


def any_array(ws_max: int) -> Term:
    """Any JSON array."""
    ws, value = whitespace(ws_max), any_value(ws_max)
    rest = star(cat(literal(b","), ws, value))
    return cat(literal(b"["), ws, alt(literal(b"]"), cat(value, rest, ws, literal(b"]"))))


def any_object(ws_max: int) -> Term:
    """Any JSON object (duplicate keys included, as JSON allows them)."""
    ws = whitespace(ws_max)
    member = cat(ANY_STRING, colon(ws_max), any_value(ws_max))
    rest = star(cat(literal(b","), ws, member))
    return cat(literal(b"{"), ws, alt(literal(b"}"), cat(member, rest, ws, literal(b"}"))))


@lru_cache(maxsize=64)
def closing(bracket: bytes, ws_max: int, first: bool) -> Term:
    """The close of a container body: ``bracket`` right after the opening whitespace
    (``first``), else whitespace then ``bracket``."""
    return literal(bracket) if first else cat(whitespace(ws_max), literal(bracket))


@lru_cache(maxsize=64)
def comma(ws_max: int) -> Term:
    """``,`` then whitespace: between two members or items."""
    return cat(literal(b","), whitespace(ws_max))


def sequence(items: list[Term], ws_max: int, open_: bytes, close: bytes) -> Term:
    """``open_`` items separated by commas ``close``, with whitespace around."""
    ws = whitespace(ws_max)
    if not items:
        return cat(literal(open_), ws, literal(close))
    parts: list[Term] = [literal(open_), ws, items[0]]
    for item in items[1:]:
        parts += [literal(b","), ws, item]
    parts += [ws, literal(close)]
    return cat(*parts)
