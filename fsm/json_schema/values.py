"""Terms for given JSON values (``const``, ``enum``): every way to write that value.

Whitespace varies as anywhere else, object members come in any order, and numbers
are compared by value: an integral value is also accepted with a zero fraction
(``1.0``) and in the form ``json.dumps`` gives its float. Other spellings of the same
number (``1e0``, ``10e-1``) are not accepted.
"""

from __future__ import annotations

import json
from typing import TypeVar

from fsm.json_schema.json_text import OBJECTS, JsonText
from fsm.json_schema.objects import ObjectShape, object_term
from fsm.terms import Term

T = TypeVar("T")


def canonical(value: object) -> str:
    """A canonical text of a JSON value (keys sorted), for keys and deduplication."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def json_equal(a: object, b: object) -> bool:
    """JSON Schema equality: numbers by value, booleans apart from numbers."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def value_term(value: object, ws_max: int) -> Term:
    """``value_in`` as object terms."""
    return value_in(OBJECTS, value, ws_max)


def value_in(pieces: JsonText[T], value: object, ws_max: int) -> T:
    """The texts of ``value``, built by ``pieces``. A string, ``null`` and a boolean
    are lexemes (no text of one extends another), so an enum of them is walked as
    lexemes shared across schemas (``fsm.row_walk``)."""
    b = pieces.terms
    if value is None:
        return pieces.null
    if isinstance(value, bool):
        return b.lexeme(b.literal(b"true" if value else b"false"))
    if isinstance(value, (int, float)):
        return number_in(pieces, value)
    if isinstance(value, str):
        return pieces.string_literal(value)
    if isinstance(value, list):
        items = [value_in(pieces, v, ws_max) for v in value]
        return pieces.sequence(items, ws_max, b"[", b"]")
    if isinstance(value, dict):
        named = tuple((key, value_in(pieces, item, ws_max)) for key, item in value.items())
        shape = ObjectShape(
            key=("value", canonical(value), ws_max),
            named=named,
            required=frozenset(value),
            ws_max=ws_max,
            pieces=pieces,
        )
        return object_term(shape)
    return b.empty


def number_term(value: int | float) -> Term:
    """``number_in`` as object terms."""
    return number_in(OBJECTS, value)


def number_in(pieces: JsonText[T], value: int | float) -> T:
    """Writings of a number: its own text, and ``n``/``n.0...`` when it is integral."""
    b = pieces.terms
    if isinstance(value, float) and value != value or value in (float("inf"), float("-inf")):
        return b.empty
    forms = [b.literal(json.dumps(value).encode())]
    if isinstance(value, int) or value.is_integer():
        whole = int(value)
        zeros = b.opt(b.cat(b.literal(b"."), b.plus(b.literal(b"0"))))
        forms.append(b.cat(b.literal(str(whole).encode()), zeros))
        if abs(whole) < 2**1000:
            forms.append(b.literal(json.dumps(float(whole)).encode()))
        if whole == 0:
            forms.append(b.cat(b.literal(b"-0"), zeros))
    return b.alt(*forms)


def is_word(value: object) -> bool:
    """Whether ``value`` has one writing: a string, a boolean or ``null``."""
    return value is None or isinstance(value, (str, bool))


def values_except(words: list, ws_max: int) -> Term:
    """``values_except_in`` as object terms."""
    return values_except_in(OBJECTS, words, ws_max)


def values_except_in(pieces: JsonText[T], words: list, ws_max: int) -> T:
    """Any JSON value but the given strings, booleans and ``null`` (``is_word``): a
    plain term, where a complement would need liveness searches."""
    b = pieces.terms
    strings = [w for w in words if isinstance(w, str)]
    booleans = [
        b.lexeme(b.literal(b"true" if flag else b"false"))
        for flag in (True, False)
        if not any(w is flag for w in words)
    ]
    return b.alt(
        *([] if any(w is None for w in words) else [pieces.null]),
        *booleans,
        pieces.number,
        pieces.string_except(strings) if strings else pieces.any_string,
        pieces.any_array(ws_max),
        pieces.any_object(ws_max),
    )
