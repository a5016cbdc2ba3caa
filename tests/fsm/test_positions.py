"""``fsm.positions``: a plain regular term's position automaton against its derivatives.

The derivative automaton is the reference: on drawn regexes and texts, both accept the
same prefixes and texts, and a token index over either gives the same masks along a
text. Terms that are not plain, or too large, are left to derivatives.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fsm
from fsm.automaton import DEAD
from fsm.derivative_automaton import DerivativeAutomaton
from fsm.positions import MAX_POSITIONS, PositionAutomaton, position_automaton
from fsm.regex import regex_term
from fsm.store_automaton import StoreAutomaton
from fsm.terms import Bytes, Term, cat, complement, intersect, lexeme, literal, thunk
from tests.fsm.strategies import small_regexes

ALPHABET = "abcé"
TOKENS = sorted(
    {"".join(p).encode() for n in (1, 2) for p in itertools.product(ALPHABET, repeat=n)}
    | {"é".encode()[:1], "é".encode()[1:]}
)
VOCAB = fsm.Vocabulary.from_raw([*TOKENS, b""], eos_ids=[len(TOKENS)])


def regexes() -> st.SearchStrategy[str]:
    """Regexes over ``a``, ``b``, ``c``, ``é`` and classes (a negated one too), with
    unions, the three repeaters, and counts with and without an upper bound."""
    leaves = ("a", "b", "c", "é", "[ab]", "[^a]", "[bé]", "()")
    return small_regexes(leaves, max_leaves=7, count_ranges=True)


def _walk(automaton: fsm.ByteAutomaton, data: bytes) -> list[tuple[bool, bool]]:
    """(alive, final) after each prefix of ``data``, until it dies."""
    state = automaton.initial
    seen = []
    for byte in data:
        successors, final = automaton.expand(state)
        seen.append((True, bool(final)))
        state = int(successors[byte])
        if state == DEAD:
            seen.append((False, False))
            return seen
    seen.append((True, bool(automaton.expand(state)[1])))
    return seen


def _plain(pattern: str) -> tuple[PositionAutomaton, DerivativeAutomaton]:
    term = regex_term(pattern)
    positions = position_automaton(term)
    assert positions is not None, pattern
    return positions, DerivativeAutomaton(term)


@settings(max_examples=400, deadline=None)
@given(regexes(), st.lists(st.text(ALPHABET, max_size=6), min_size=1, max_size=6))
def test_positions_accept_the_prefixes_and_texts_derivatives_accept(pattern, texts):
    positions, derivatives = _plain(pattern)
    for text in texts:
        assert _walk(positions, text.encode()) == _walk(derivatives, text.encode()), (
            pattern,
            text,
        )


@settings(max_examples=150, deadline=None)
@given(regexes(), st.text(ALPHABET, max_size=6))
def test_a_token_index_over_positions_gives_the_masks_of_one_over_derivatives(pattern, text):
    positions, derivatives = _plain(pattern)
    fast = fsm.TokenIndex(positions, VOCAB)
    reference = fsm.TokenIndex(derivatives, VOCAB)
    fast_state, reference_state = fast.initial_state, reference.initial_state
    for token in _tokens(text):
        assert np.array_equal(fast.bitmask(fast_state), reference.bitmask(reference_state))
        assert fast.is_final(fast_state) == reference.is_final(reference_state)
        fast_state = fast.next_state(fast_state, token)
        reference_state = reference.next_state(reference_state, token)
        assert (fast_state == DEAD) == (reference_state == DEAD), (pattern, text)
        if fast_state == DEAD:
            return
    assert np.array_equal(fast.bitmask(fast_state), reference.bitmask(reference_state))


def _tokens(text: str) -> list[int]:
    """``text`` as this test's tokens: two characters at a time where the vocabulary
    has them, the bytes of ``é`` apart now and then."""
    ids = {token: i for i, token in enumerate(TOKENS)}
    data, out, at = text.encode(), [], 0
    while at < len(data):
        for width in (4, 3, 2, 1):
            if data[at : at + width] in ids:
                out.append(ids[data[at : at + width]])
                at += width
                break
    return out


@pytest.mark.parametrize(
    "term",
    [
        lexeme(literal(b"ab")),
        cat(literal(b"a"), thunk("t", lambda: literal(b"b"))),
        intersect(regex_term("a*"), regex_term("(?:aa)*")),
        complement(literal(b"a")),
        cat(literal(b"a"), Bytes(0)),
    ],
    ids=["lexeme", "thunk", "intersection", "complement", "empty byte set"],
)
def test_a_term_that_is_not_plain_is_left_to_derivatives(term: Term):
    assert position_automaton(term) is None


def test_a_repetition_past_the_position_budget_is_left_to_derivatives():
    assert position_automaton(regex_term(f"[ab]{{{MAX_POSITIONS + 1}}}")) is None
    assert position_automaton(regex_term(f"[ab]{{{MAX_POSITIONS - 1}}}")) is not None


def test_compile_index_takes_positions_for_regexes_and_rows_for_json():
    regex = fsm.compile_index(fsm.Regex("[0-9]{1,3}(\\.[0-9]+)?"), VOCAB)
    schema = fsm.compile_index(fsm.JsonSchema({"type": "string"}), VOCAB)
    assert isinstance(regex.automaton, PositionAutomaton)
    assert isinstance(schema.automaton, StoreAutomaton)
    assert schema.automaton.store is VOCAB.schema_rows.current_store


def test_the_state_cap_raises_constraint_too_large():
    automaton = position_automaton(regex_term("[ab]{6}"), max_states=4)
    assert automaton is not None
    state = automaton.initial
    with pytest.raises(fsm.ConstraintTooLarge):
        for _ in range(6):
            state = int(automaton.expand(state)[0][ord("a")])


def test_positions_with_one_future_are_one_state():
    """In ``(?:a|b)c*`` the text after ``a``, ``b`` or ``ac`` has the same future, so
    it is one state (as it is one derivative), not one per position."""
    automaton = position_automaton(regex_term("(?:a|b)c*"))
    assert automaton is not None
    successors, final = automaton.expand(automaton.initial)
    assert not final and successors[ord("a")] == successors[ord("b")] != DEAD
    after = int(successors[ord("a")])
    looped, final = automaton.expand(after)
    assert final and looped[ord("c")] == after and looped[ord("a")] == DEAD
    assert automaton.num_states == 2
