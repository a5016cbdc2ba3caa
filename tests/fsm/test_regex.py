"""Regex -> byte automaton: acceptance equals ``re.fullmatch`` and prefixes stay live."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fsm
from fsm.automaton import DEAD
from fsm.derivative_automaton import DerivativeAutomaton
from fsm.regex import json_string_encoding, regex_term, search_in, search_term
from fsm.term_builder import OBJECT_TERMS
from fsm.terms import matches
from fsm.unicode import complement_ranges

ALPHABET = ["a", "b", "c", "é", "日", "😀", "."]

atoms = st.sampled_from(
    ["a", "b", "c", "é", "日", "😀", r"\.", ".", "[ab]", "[^a]", "[a-c]", "[é-日]", r"\d"]
)


def _regexes():
    def extend(inner):
        return st.one_of(
            st.tuples(inner, inner).map(lambda p: p[0] + p[1]),
            st.tuples(inner, inner).map(lambda p: f"(?:{p[0]}|{p[1]})"),
            inner.map(lambda p: f"(?:{p})*"),
            inner.map(lambda p: f"(?:{p})+"),
            inner.map(lambda p: f"(?:{p})?"),
            st.tuples(inner, st.integers(0, 2), st.integers(0, 2)).map(
                lambda p: f"(?:{p[0]}){{{min(p[1], p[2])},{max(p[1], p[2])}}}"
            ),
        )

    return st.recursive(atoms, extend, max_leaves=6)


texts = st.lists(st.sampled_from(ALPHABET + ["1", "x"]), max_size=6).map("".join)


def walk(automaton: DerivativeAutomaton, data: bytes) -> tuple[int, list[int]]:
    """Final state after ``data`` (DEAD if rejected on the way) and the states passed."""
    state, path = automaton.initial, []
    for byte in data:
        successors, _ = automaton.expand(state)
        state = int(successors[byte])
        if state == DEAD:
            return DEAD, path
        path.append(state)
    return state, path


def accepts(automaton: DerivativeAutomaton, text: str) -> bool:
    state, _ = walk(automaton, text.encode())
    return state != DEAD and automaton.expand(state)[1]


@settings(max_examples=300, deadline=None)
@given(_regexes(), texts)
def test_acceptance_equals_fullmatch(pattern, text):
    automaton = DerivativeAutomaton(regex_term(pattern))
    assert accepts(automaton, text) == bool(re.fullmatch(pattern, text))


@settings(max_examples=200, deadline=None)
@given(_regexes(), texts)
def test_prefixes_of_matches_stay_live(pattern, text):
    if not re.fullmatch(pattern, text):
        return
    automaton = DerivativeAutomaton(regex_term(pattern))
    data = text.encode()
    for cut in range(len(data) + 1):  # including cuts inside a multi-byte character
        state, _ = walk(automaton, data[:cut])
        assert state != DEAD


@settings(max_examples=200, deadline=None)
@given(_regexes(), texts)
def test_search_equals_re_search(pattern, text):
    automaton = DerivativeAutomaton(search_term(pattern))
    assert accepts(automaton, text) == bool(re.search(pattern, text))


@pytest.mark.parametrize(
    ("pattern", "text", "expected"),
    [
        ("^ab", "abz", True),
        ("^ab", "zab", False),
        ("b$", "zab", True),
        ("^a$|^b$", "b", True),
        ("^a$|^b$", "ab", False),
    ],
)
def test_search_anchors(pattern, text, expected):
    assert accepts(DerivativeAutomaton(search_term(pattern)), text) == expected


def test_json_string_encoding_escapes_specials():
    automaton = DerivativeAutomaton(regex_term(r'a"\n.', encode_char=json_string_encoding))
    assert accepts(automaton, 'a\\"\\nb')
    assert not accepts(automaton, 'a"\nb')  # raw quote and newline are not how JSON writes them


def test_invalid_utf8_is_never_accepted():
    automaton = DerivativeAutomaton(regex_term(".*"))
    assert accepts(automaton, "日本")
    state, _ = walk(automaton, b"\xed\xa0\x80")  # an encoded surrogate
    assert state == DEAD
    state, _ = walk(automaton, b"\xc0\xaf")  # an overlong encoding
    assert state == DEAD


@pytest.mark.parametrize("pattern", [r"(a)\1", r"(?=a)a", r"a^b"])
def test_unsupported_features_raise_typed_error(pattern):
    with pytest.raises(fsm.UnsupportedRegex):
        regex_term(pattern)


def test_choice_options_are_literal_and_share_prefixes():
    automaton = DerivativeAutomaton(fsm.Choice(["a.b", "a.bc", "(x)"]).term())
    assert accepts(automaton, "a.b") and accepts(automaton, "a.bc") and accepts(automaton, "(x)")
    assert not accepts(automaton, "axb") and not accepts(automaton, "x")


def test_choice_rejects_bad_input():
    with pytest.raises(fsm.InvalidSpec):
        fsm.Choice("yes")
    with pytest.raises(fsm.InvalidSpec):
        fsm.Choice([])


@pytest.mark.parametrize("space", ["\u00a0", "\u2003", "\u3000", "\ufeff", "\u2028"])
def test_backslash_s_matches_unicode_spaces_as_in_ecmascript(space):
    assert accepts(DerivativeAutomaton(regex_term(r"a\sb")), f"a{space}b")
    assert accepts(DerivativeAutomaton(regex_term(r"a[\s,]b")), f"a{space}b")
    assert not accepts(DerivativeAutomaton(regex_term(r"a\Sb")), f"a{space}b")
    assert not accepts(DerivativeAutomaton(regex_term(r"a[^\s]b")), f"a{space}b")


@pytest.mark.parametrize(
    ("pattern", "text", "expected"),
    [
        ("(^a$)", "a", True),
        ("(^a$)", "ba", False),
        ("(?:^a|b$)", "ac", True),
        ("(?:^a|b$)", "cab", True),
        ("(^a|^b)|c$", "bz", True),
        ("(^a|^b)|c$", "zb", False),
        ("(a)(b)", "xaby", True),
    ],
)
def test_search_anchors_inside_enclosing_groups(pattern, text, expected):
    assert accepts(DerivativeAutomaton(search_term(pattern)), text) == expected


def test_a_constraint_matching_nothing_is_refused_at_compile_time():
    vocabulary = fsm.Vocabulary.from_raw([b"a", b"b", b""], eos_ids=[2])
    with pytest.raises(fsm.Unsatisfiable, match="accepts no text at all"):
        fsm.compile_index(
            fsm.JsonSchema({"type": "string", "minLength": 3, "maxLength": 1}), vocabulary
        )


def test_a_regex_matching_nothing_is_refused_and_an_empty_branch_dropped():
    """A plain regex compiles to positions without the emptiness test; one holding a
    class of no character still fails at compile time, and a branch of one is dropped."""
    vocabulary = fsm.Vocabulary.from_raw([b"a", b"b", b""], eos_ids=[2])
    with pytest.raises(fsm.Unsatisfiable, match="accepts no text at all"):
        fsm.compile_index(fsm.Regex(r"a[^\s\S]"), vocabulary)
    index = fsm.compile_index(fsm.Regex(r"a|[^\s\S]b"), vocabulary)
    assert index.allowed_tokens(index.initial_state).tolist() == [0]


@pytest.mark.parametrize(
    ("pattern", "asked"),
    [("^ab$", 0), ("^a$|^b$", 0), ("ab", 1), ("^a|b$", 1), ("^a$|b", 1)],
)
def test_any_character_is_encoded_only_for_an_unanchored_branch(pattern: str, asked: int) -> None:
    """``search_in`` encodes "any character" (every code point, the most a pattern
    builds) only when a branch is unanchored, and once for all such branches."""
    everything = complement_ranges([])
    met = []

    def encoder(terms, ranges):
        if ranges == everything:
            met.append(ranges)
        return json_string_encoding(terms, ranges)

    term = search_in(OBJECT_TERMS, pattern, encoder)
    assert len(met) == asked
    assert term == search_term(pattern, encode_char=json_string_encoding)


@pytest.mark.parametrize(
    ("pattern", "everywhere"),
    [(".*", True), ("^.*", True), ("a*$", True), ("", True), ("x|.*", True)]
    + [("^.*$", False), (".+", False), ("^a*$", False), ("^a|.*b", False)],
)
def test_a_pattern_with_an_empty_match_at_an_open_end_is_any_text(
    pattern: str, everywhere: bool
) -> None:
    """A branch open at one end whose core matches the empty string finds a match in
    every text: ``search_in`` gives "any characters" itself for it (so its complement
    is empty on sight). Anchored at both ends, or with no empty match, it keeps its
    own term; both read as Python's ``re.search`` does."""
    any_text = OBJECT_TERMS.star(json_string_encoding(OBJECT_TERMS, complement_ranges([])))
    term = search_term(pattern, encode_char=json_string_encoding)
    assert (term == any_text) is everywhere
    for text in ["", "a", "b", "ab", "line\nbreak", "x"]:
        assert matches(term, json.dumps(text)[1:-1].encode()) == bool(re.search(pattern, text))
