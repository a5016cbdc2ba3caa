"""Prefixed specs accept exactly the prefix followed by the inner language."""

from __future__ import annotations

import re

import pytest

import fsm
from fsm.automaton import DEAD
from fsm.prefixed import Prefixed

GRAMMAR = 'start: "a"+ "b"'


def accepts(automaton, data: bytes) -> bool:
    state = automaton.initial
    for byte in data:
        state = int(automaton.expand(state)[0][byte])
        if state == DEAD:
            return False
    return automaton.expand(state)[1]


@pytest.mark.parametrize("inner", [fsm.Regex("[0-9]+"), fsm.Grammar(GRAMMAR)])
def test_prefix_then_inner(inner):
    automaton = Prefixed(b" x", inner).automaton(max_states=1000)
    body = "12" if isinstance(inner, fsm.Regex) else "aab"
    assert accepts(automaton, b" x" + body.encode())
    assert not accepts(automaton, body.encode())
    assert not accepts(automaton, b" x")
    assert not accepts(automaton, b" y" + body.encode())


def test_free_text_after_prefix():
    automaton = Prefixed(b"ab").automaton(max_states=100)
    assert accepts(automaton, b"ab") and accepts(automaton, b"ab\xff anything")
    assert not accepts(automaton, b"a")


def test_fingerprint_depends_on_prefix_and_inner():
    prints = {
        Prefixed(b"a").fingerprint,
        Prefixed(b"b").fingerprint,
        Prefixed(b"a", fsm.Regex("x")).fingerprint,
    }
    assert len(prints) == 3
    assert re.fullmatch(r"[0-9a-f]{64}", Prefixed(b"a").fingerprint)


def test_empty_prefix_is_rejected():
    with pytest.raises(fsm.InvalidSpec):
        Prefixed(b"")
