"""``fsm.regex_syntax``: patterns read as Python's ``re`` reads them, or a typed error.

The oracle is ``re`` itself (with ``re.ASCII``: ``\\d`` and ``\\w`` are ASCII here, as in
ECMAScript): on arbitrary strings of regex syntax, a pattern both accept has the same
language, and a pattern refused as invalid is refused by ``re`` too. The ECMAScript
forms that ``re`` reads otherwise or not at all (``[]``, ``[^]``, ``(?<name>``,
``\\cX``) are checked apart.
"""

from __future__ import annotations

import re
import warnings

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fsm
from fsm.automaton import DEAD
from fsm.derivative_automaton import DerivativeAutomaton
from fsm.regex import regex_term
from fsm.regex_syntax import MAX_REPEAT, parse_regex

SYNTAX = list("ab()[]^-|*+?{},012\\.dwsSx:iP<>=!#")
"""Characters of regex syntax the fuzzed patterns are drawn from."""
TEXT = ["a", "b", "A", "x", "1", "0", "-", "{", "}", ",", ".", " ", "\n", "\t", "é", "(", "*"]


def accepts(pattern: str, text: str) -> bool:
    automaton = DerivativeAutomaton(regex_term(pattern))
    state = automaton.initial
    for byte in text.encode():
        state = int(automaton.expand(state)[0][byte])
        if state == DEAD:
            return False
    return bool(automaton.expand(state)[1])


def python_compiles(pattern: str) -> re.Pattern[str] | None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "possible nested set" and the like
        try:
            return re.compile(pattern, re.ASCII)
        except (re.error, OverflowError, RecursionError):
            return None


@settings(max_examples=1500, deadline=None)
@given(
    st.text(st.sampled_from(SYNTAX), max_size=10),
    st.lists(st.text(st.sampled_from(TEXT), max_size=5), min_size=1, max_size=8),
)
def test_a_pattern_reads_as_python_reads_it_or_raises_a_typed_error(pattern, texts):
    if "[]" in pattern or "[^]" in pattern:
        return  # ECMAScript's empty and full classes: checked apart
    compiled = python_compiles(pattern)
    try:
        regex_term(pattern)
    except fsm.UnsupportedRegex:
        return
    except fsm.InvalidSpec:
        assert compiled is None, f"{pattern!r} is valid for re"
        return
    if compiled is None:
        return  # read more widely than re (ECMAScript's named groups, late flags)
    for text in texts:
        assert accepts(pattern, text) == bool(compiled.fullmatch(text)), (pattern, text)


@pytest.mark.parametrize(
    ("pattern", "matching", "not_matching"),
    [
        (r"\d{2,}", ["12", "123"], ["1", "1a", "٣٣"]),
        (r"\w+", ["a_Z9"], ["é", "a-b"]),
        (r"a\sb", ["a b", "a\u00a0b", "a\u3000b", "a\ufeffb"], ["ab", "a\u0085b"]),
        (r"[\S]", ["a", "é"], [" ", "\u00a0"]),
        (r"\x41\u00e9\U0001F600\N{BULLET}", ["Aé😀•"], ["Ae😀•"]),
        (r"\101\0\07", ["A\x00\x07"], ["A0"]),
        (r"\cC[\cj]", ["\x03\n"], ["cC\n"]),
        (r"[\101-\103\b]", ["A", "C", "\b"], ["D"]),
        (r"a{", ["a{"], ["a"]),
        (r"a{x}", ["a{x}"], ["a"]),
        (r"a{,2}", ["", "aa"], ["aaa"]),
        (r"a{2,}?", ["aa", "aaaa"], ["a"]),
        (r"{}", ["{}"], [""]),
        (r"(?P<year>\d{4})-(?<month>\d\d)", ["2024-05"], ["2024-5"]),
        (r"(?i)ab", ["AB", "aB"], ["AC"]),
        (r"(?i:é)E", ["ÉE"], ["Ée"]),
        (r"(?ai:é)", ["é"], ["É"]),
        (r"(?i)[^a]", ["b"], ["a", "A"]),
        (r"(?i)[^\W]", ["a", "_"], ["-"]),
        (r"(?s:.).", ["\na"], ["a\n"]),
        (r"[]a", [], ["a", ""]),
        (r"[^]", ["a", "\n", "日"], ["", "ab"]),
        (r"a(?#note)b", ["ab"], ["a"]),
        (r"[a-]+[-b]", ["a--b", "ab", "--"], ["b", "a"]),
    ],
)
def test_forms_read_as_documented(pattern, matching, not_matching):
    for text in matching:
        assert accepts(pattern, text), (pattern, text)
    for text in not_matching:
        assert not accepts(pattern, text), (pattern, text)


@pytest.mark.parametrize(
    ("pattern", "what"),
    [
        (r"(a)\1", "backreferences"),
        (r"(?P<n>a)(?P=n)", "backreferences"),
        (r"(?<n>a)\k<n>", "backreferences"),
        (r"a(?=b)", "lookahead"),
        (r"(?<!a)b", "lookbehind"),
        (r"a^b", "anchors"),
        (r"a$", "anchors"),
        (r"\bword", "word boundaries"),
        (r"\Aa", "anchors"),
        (r"(?(1)a|b)", "conditional"),
        (r"(?>a*)a", "atomic"),
        (r"a*+a", "possessive"),
        (r"(?m)a", "multiline"),
        (r"(?x) a ", "verbose"),
        (r"\p{L}", "Unicode properties"),
        (r"\uD83D\uDE00", "surrogate"),
    ],
)
def test_unsupported_forms_raise_unsupported_regex(pattern, what):
    with pytest.raises(fsm.UnsupportedRegex, match=what):
        parse_regex(pattern)


@pytest.mark.parametrize(
    ("pattern", "what"),
    [
        ("(a", "missing \\)"),
        ("a)", "unbalanced parenthesis"),
        ("[ab", "unterminated character set"),
        ("*a", "nothing to repeat"),
        ("a|?", "nothing to repeat"),
        ("a**", "multiple repeat"),
        ("a{2}{3}", "multiple repeat"),
        ("a{3,2}", "min repeat greater than max repeat"),
        (f"a{{{MAX_REPEAT + 1}}}", "too large"),
        ("[b-a]", "bad character range"),
        (r"[\d-z]", "bad character range"),
        ("\\", "bad escape"),
        (r"\q", r"bad escape \\q"),
        (r"\xg0", "incomplete escape"),
        (r"\777", "octal escape"),
        ("(?P<1>a)", "bad group name"),
        ("(?Q)", "unknown flag"),
        ("(?i-:a)", "missing flag"),
        ("(?-i)a", "flags without a :"),
        (r"\N{NO SUCH CHARACTER}", "undefined character name"),
    ],
)
def test_malformed_patterns_raise_invalid_spec_with_the_position(pattern, what):
    with pytest.raises(fsm.InvalidSpec, match=what) as raised:
        parse_regex(pattern)
    assert "at position" in str(raised.value)
    assert not isinstance(raised.value, fsm.UnsupportedRegex)
