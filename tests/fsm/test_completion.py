"""Shortest completions: the breadth-first search against brute-force enumeration on
small regexes, memoisation on the index, the budget, and JSON examples."""

from __future__ import annotations

import itertools
import json
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fsm
from fsm.completion import OutOfBudget, shortest_completion
from fsm.derivative_automaton import DerivativeAutomaton
from fsm.index_core import COMPLETION_BUDGET
from fsm.regex import regex_term
from tests.fsm.strategies import small_regexes

BYTES = fsm.Vocabulary.from_raw([bytes([b]) for b in range(256)] + [b""], eos_ids=[256])
ALPHABET = "abc"


def brute_force_completion(pattern: str, prefix: str, longest: int) -> str | None:
    """The first string over ``ALPHABET`` in (length, lexicographic) order that completes
    ``prefix`` into a full match, trying lengths up to ``longest``."""
    compiled = re.compile(pattern)
    for length in range(longest + 1):
        for letters in itertools.product(ALPHABET, repeat=length):
            suffix = "".join(letters)
            if compiled.fullmatch(prefix + suffix):
                return suffix
    return None


def index_of(pattern: str) -> fsm.TokenIndex:
    return fsm.TokenIndex(DerivativeAutomaton(regex_term(pattern)), BYTES)


@settings(max_examples=150)
@given(small_regexes(), st.text(ALPHABET, max_size=4))
def test_breadth_first_search_equals_brute_force(pattern: str, prefix: str) -> None:
    index = index_of(pattern)
    state = index.step_bytes(index.initial_state, prefix.encode())
    if state == fsm.DEAD:
        return
    found = index.shortest_completion(state)
    assert found is not None  # a live state of a small regex completes within the budget
    # Enumerating up to len(found) finds any shorter or lower completion first.
    assert found.decode() == brute_force_completion(pattern, prefix, longest=len(found))
    assert index.completion_distance(state) == len(found)
    assert index.is_final(index.step_bytes(state, found))


def test_every_suffix_of_a_completion_is_the_completion_of_its_state() -> None:
    index = index_of("x(ab|ba)+y|xz{5}")
    state = index.step_bytes(index.initial_state, b"x")
    completion = index.shortest_completion(state)
    assert completion == b"aby"
    for cut in range(len(completion) + 1):
        middle = index.step_bytes(state, completion[:cut])
        assert index.shortest_completion(middle) == completion[cut:]


def test_lowest_bytes_first_among_equally_short() -> None:
    index = index_of("q(c|b|a)(z|y)")
    assert index.shortest_completion(index.initial_state) == b"qay"


def test_completion_is_whole_utf8_characters() -> None:
    index = index_of("(é|日)+!")
    assert index.shortest_completion(index.initial_state).decode() == "é!"
    inside = index.step_bytes(index.initial_state, "日".encode()[:1])
    assert ("日".encode()[:1] + index.shortest_completion(inside)).decode() == "日!"


def test_too_far_a_final_state_answers_none() -> None:
    far = index_of(f"a{{{COMPLETION_BUDGET + 10}}}")
    assert far.shortest_completion(far.initial_state) is None
    assert far.completion_distance(far.initial_state) is None
    near = index_of(f"a{{{COMPLETION_BUDGET // 2}}}")
    assert near.completion_distance(near.initial_state) == COMPLETION_BUDGET // 2


def _chain(length: int, finals: set[int]) -> fsm.TableAutomaton:
    """States 0 -a-> 1 -a-> ... -a-> length (and length -a-> 0), the given ones final."""
    table = np.full((length + 1, 256), fsm.DEAD, np.int32)
    for state in range(length + 1):
        table[state, ord("a")] = (state + 1) % (length + 1)
    return fsm.TableAutomaton(table, np.isin(np.arange(length + 1), list(finals)))


def test_search_tells_no_final_state_from_out_of_budget() -> None:
    assert shortest_completion(_chain(3, set()).expand, 0, budget=8) is None
    ten = _chain(10, {10})
    assert shortest_completion(ten.expand, 0, budget=20) == b"a" * 10
    assert shortest_completion(ten.expand, 10, budget=1) == b""
    with pytest.raises(OutOfBudget):
        shortest_completion(ten.expand, 0, budget=5)


@settings(max_examples=150)
@given(small_regexes(), st.text(ALPHABET, max_size=3), st.integers(1, 40))
def test_finality_asked_when_met_gives_the_same_answer_expanding_less(pattern, prefix, budget):
    """With ``accepts`` the search stops at the first final state it meets, not the
    first it expands: the same completion (or None), never more expansions, and never
    ``OutOfBudget`` where the plain search found one."""
    automaton = DerivativeAutomaton(regex_term(pattern))
    state = automaton.initial
    for byte in prefix.encode():
        state = automaton.step(state, byte)
        if state == fsm.DEAD:
            return
    counted: list[list[int]] = [[], []]

    def expanding(n: int):
        def expand(at: int):
            counted[n].append(at)
            return automaton.expand(at)

        return expand

    answers = []
    for n, accepts in ((0, None), (1, automaton.accepts)):
        try:
            answers.append(shortest_completion(expanding(n), state, budget, accepts))
        except OutOfBudget:
            answers.append(OutOfBudget)
    plain, early = answers
    if plain is not OutOfBudget:
        assert early == plain
    assert (
        early is OutOfBudget or early is None or automaton.accepts(_walk(automaton, state, early))
    )
    assert len(counted[1]) <= len(counted[0])
    assert automaton.accepts(state) == (len(counted[1]) == 0)


def _walk(automaton: DerivativeAutomaton, state: int, data: bytes) -> int:
    for byte in data:
        state = automaton.step(state, byte)
    return state


def json_index(schema: object) -> fsm.TokenIndex:
    """With ``ss.json``'s generation defaults (closed objects, plain integers): what a
    span that must close is compiled with."""
    return fsm.compile_index(fsm.JsonSchema(schema, extra_keys=False, plain_integers=True), BYTES)


def complete(index: fsm.TokenIndex, text: str) -> str:
    state = index.step_bytes(index.initial_state, text.encode())
    assert state != fsm.DEAD, text
    return index.shortest_completion(state).decode()


def test_json_completions_close_cleanly() -> None:
    person = {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "string"}},
        "required": ["a", "b"],
    }
    index = json_index(person)
    assert complete(index, '{"a":') == '0,"b":""}'
    assert complete(index, '{"a": 12, "b": "x') == '"}'
    assert complete(index, "") == '{"a":0,"b":""}'
    nested = {"type": "array", "items": {"type": "object", "properties": {"n": {"type": "null"}}}}
    index = json_index(nested)
    assert complete(index, '[{"n": nu') == "ll}]"
    assert complete(index, "[{}, ") == "{}]"
    for text in ['{"a":', '{"a": 12, "b": "x']:
        json.loads(text + complete(json_index(person), text))
