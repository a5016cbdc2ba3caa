"""Terms for given JSON values (``const``, ``enum``): every way to write that value.

Whitespace varies as anywhere else, object members come in any order, and numbers
are compared by value: an integral value is also accepted with a zero fraction
(``1.0``) and in the form ``json.dumps`` gives its float. Other spellings of the same
number (``1e0``, ``10e-1``) are not accepted.
"""

from __future__ import annotations

import json

from fsm.json_schema.json_text import (
    ANY_STRING,
    NULL,
    NUMBER,
    any_array,
    any_object,
    sequence,
    string_except,
    string_literal,
)
from fsm.json_schema.objects import ObjectShape, object_term
from fsm.terms import EMPTY, Term, alt, cat, lexeme, literal, opt, plus


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
    """The texts of ``value``. A string, ``null`` and a boolean are lexemes (no text
    of one extends another), so an enum of them is walked as lexemes shared across
    schemas (``fsm.row_walk``)."""
    if value is None:
        return NULL
    if isinstance(value, bool):
        return lexeme(literal(b"true" if value else b"false"))
    if isinstance(value, (int, float)):
        return number_term(value)
    if isinstance(value, str):
        return string_literal(value)
    if isinstance(value, list):
        return sequence([value_term(v, ws_max) for v in value], ws_max, b"[", b"]")
    if isinstance(value, dict):
        named = tuple((key, value_term(item, ws_max)) for key, item in value.items())
        shape = ObjectShape(
            key=("value", canonical(value), ws_max),
            named=named,
            required=frozenset(value),
            ws_max=ws_max,
        )
        return object_term(shape)
    return EMPTY


def number_term(value: int | float) -> Term:
    """Writings of a number: its own text, and ``n``/``n.0...`` when it is integral."""
    if isinstance(value, float) and value != value or value in (float("inf"), float("-inf")):
        return EMPTY
    forms = [literal(json.dumps(value).encode())]
    if isinstance(value, int) or value.is_integer():
        whole = int(value)
        digits = literal(str(whole).encode())
        forms.append(cat(digits, opt(cat(literal(b"."), plus(literal(b"0"))))))
        if abs(whole) < 2**1000:
            forms.append(literal(json.dumps(float(whole)).encode()))
        if whole == 0:
            forms.append(cat(literal(b"-0"), opt(cat(literal(b"."), plus(literal(b"0"))))))
    return alt(*forms)


def is_word(value: object) -> bool:
    """Whether ``value`` has one writing: a string, a boolean or ``null``."""
    return value is None or isinstance(value, (str, bool))


def values_except(words: list, ws_max: int) -> Term:
    """Any JSON value but the given strings, booleans and ``null`` (``is_word``): a
    plain term, where a complement would need liveness searches."""
    strings = [w for w in words if isinstance(w, str)]
    booleans = [
        lexeme(literal(b"true" if b else b"false"))
        for b in (True, False)
        if not any(w is b for w in words)
    ]
    return alt(
        *([] if any(w is None for w in words) else [NULL]),
        *booleans,
        NUMBER,
        string_except(strings) if strings else ANY_STRING,
        any_array(ws_max),
        any_object(ws_max),
    )
