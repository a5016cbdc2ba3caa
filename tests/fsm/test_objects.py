"""Object shapes: the members every body offers are built once, and mean what the
general construction means."""

from __future__ import annotations

from fsm.json_schema.json_text import encode_string
from fsm.json_schema.objects import ObjectShape, member, object_term
from fsm.regex import regex_term
from fsm.terms import EMPTY, lexeme, literal, matches


def test_members_equal_the_general_construction_and_are_shared_by_bodies() -> None:
    number = regex_term("[0-9]+")
    shape = ObjectShape(key="test", named=(("a", number), ("gone", EMPTY), ("b", number)))
    for (name, value), built in zip(shape.named, shape.members, strict=True):
        expected = (
            EMPTY if value is EMPTY else member(lexeme(literal(encode_string(name))), value, 0)
        )
        assert built == expected
    term = object_term(shape)
    assert matches(term, b'{"a":1,"b":2}') and matches(term, b'{"b":2,"a":1}')
    assert not matches(term, b'{"gone":1}') and not matches(term, b'{"a":1,"a":2}')


def test_literals_share_their_byte_terms() -> None:
    assert literal(b"a") is literal(b"a")
    assert literal(b"ab").items[1] is literal(b"b")
