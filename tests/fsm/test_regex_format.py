"""``format: regex``: merged prefixes keep exactly their valid continuations."""

from __future__ import annotations

import json

from hypothesis import example, given, settings
from hypothesis import strategies as st

from fsm.json_schema.regex_format import RegexSyntaxChecker, canonical_prefix
from fsm.terms import checked, derivative, matches, nullable

CHECKER = RegexSyntaxChecker()

PATTERN_CHARACTERS = st.sampled_from(
    list("abcxyzAZ019_ -|()[]{}^$.*+?\\,:=!<>#'/PkcNdDsSwWbBuqé\"") + ["\n", "\ud83d", "\x00"]
)
"""The characters of random patterns: regex syntax, the letters that begin escapes and
Python's extensions, and characters JSON escapes (a quote, controls, a surrogate)."""


def encoded(pattern: str) -> bytes:
    """String contents as JSON writes them (``surrogatepass``: a lone surrogate too)."""
    return json.dumps(pattern)[1:-1].encode("utf-8", "surrogatepass")


def prefixes(text: bytes) -> list[bytes]:
    return [text[:cut] for cut in range(len(text) + 1)]


@settings(max_examples=3_000)
@given(st.text(PATTERN_CHARACTERS, max_size=14), st.text(PATTERN_CHARACTERS, max_size=8))
@example("^[a-zA-Z0-9_]{3,16}$", "")
@example("(abc|def)+\\d{2}", "x")
@example("\\\\bcd", "")  # an escaped backslash: "\\a" would be refused, "\\bcd" is not
@example("[abc", "-a]")  # a range starts at the run's last character
@example("[x-abc", "]")  # and ends at a run's first
@example("a?bc", "")
@example("\\(?bcd", ")")  # "(?b" is no extension; "(?a" would be refused
@example("a)", "")  # a ")" that closes no group
@example("(*", "a)")  # nothing to repeat
@example("a*+", "?")  # a repeat, its possessive "+", then one more: refused
@example("a{3,", "2}")  # min repeat greater than max repeat, once closed
@example("[z-a", "]")  # a range out of order
@example("[\\d-", "z]")  # a set as the end of a range
@example("[\\q", "]")  # a bad escape in a class, and out of one
@example("\\q", "")
@example("[a(?", "a]")  # "(?a" is refused as written, inside a class too
@example("[xé", "-z]")  # a character begun after a member: that member is done
@example("[]abc", "|x")  # an empty class, then runs merged
def test_a_merged_prefix_has_the_same_continuations(pattern: str, rest: str) -> None:
    """Equivalence against the reference: for every cut of an encoded pattern (inside a
    JSON escape too), the merged prefix followed by any continuation is accepted exactly
    when the prefix as written is; a prefix called not viable has no accepted
    continuation; the checker's guessed completions are strings of the prefix."""
    text, continuation = encoded(pattern), encoded(rest)
    for prefix in prefixes(text):
        tails = [text[len(prefix) :], continuation, text[len(prefix) :] + continuation]
        if not CHECKER.viable(prefix):
            tails += CHECKER.completions(prefix)
            assert not any(CHECKER.accepts(prefix + tail) for tail in tails), prefix
            continue
        merged = canonical_prefix(prefix)
        assert CHECKER.viable(merged)
        for tail in tails:
            assert CHECKER.accepts(merged + tail) == CHECKER.accepts(prefix + tail), (
                prefix,
                merged,
                tail,
            )


def test_guessed_completions_close_what_is_open():
    """Equivalence of the guess with the reference where the guess is meant to work:
    an escape, a class and groups left open are closed by the first guess."""
    for prefix in (b"(a|(b", b"[a-", b"(x\\\\", b"((\\u00", b"(\xc3", b"a{2,"):
        assert CHECKER.viable(prefix)
        assert CHECKER.accepts(prefix + CHECKER.completions(prefix)[0]), prefix


def test_plain_runs_merge():
    """The merge is real: prefixes differing only in the letters of a literal, or in a
    class member that starts and ends no range, are one state."""
    assert canonical_prefix(b"^hello") == canonical_prefix(b"^world") == b"^a"
    assert canonical_prefix(b"(foo|bar") == b"(a|a"
    assert canonical_prefix(b"[abcd") == canonical_prefix(b"[xyd") == b"[d"
    assert canonical_prefix(b"[a-zbcA") == b"[a-zA"
    assert canonical_prefix(b"\\\\dvalue") == b"\\\\da"  # \d, then a literal run
    assert canonical_prefix(b"ab\\u00") == b"a\\u00"  # an escape cut short stays
    assert canonical_prefix(b"(?:abc") == b"(?:a"  # a group's body
    assert canonical_prefix(b"a{xyz") == b"a{a"  # "x" made the brace a literal
    assert canonical_prefix(b"^-----=====") == b"^a"  # punctuation that is a literal


def test_prefixes_whose_letters_matter_are_kept():
    for kept in (
        b"a{12",  # a count
        b"a{,5",  # a count from 0
        b"(?-im",  # a group's flags
        b"\\N{LATIN",  # a character's name
        b"(?<name",  # a name, and rewritten for Python
        b"\\\\k<a",  # a named backreference
        b"\\\\x4",  # an escape's own digits, not all there yet
        b"\\\\\\\\bcd",  # after an escaped backslash
        b"\\u00",  # an escape cut short: nothing decodes yet
    ):
        assert canonical_prefix(kept) == kept


@settings(max_examples=500)
@given(st.text(PATTERN_CHARACTERS, max_size=10), st.text(PATTERN_CHARACTERS, max_size=8))
@example("[a", "-z]")
@example("(a", ")")
@example("a", "\n")  # a control byte: refused by the JSON layer, not only by re
def test_matches_asks_the_checker_once_as_its_derivatives_would(prefix: str, rest: str) -> None:
    """Fast path == reference: ``matches`` on a checked leaf (one ``accepts``) agrees
    with the leaf's derivatives taken byte by byte (``viable`` and ``canonical`` at
    each), from the leaf of any viable prefix."""
    text, continuation = encoded(prefix), encoded(rest)
    if not CHECKER.viable(text):
        return
    leaf = checked(CHECKER, text)
    reference = leaf
    for byte in continuation:
        reference = derivative(reference, byte)
    assert matches(leaf, continuation) == nullable(reference), (text, continuation)


def test_cross_read_spellings_merge_as_python_reads_them():
    """The merge reaches past an empty class and a control escape: what follows them
    is shortened, written as Python reads them."""
    assert canonical_prefix(b"[]abc") == canonical_prefix(b"[]xyz") == b"(?!)a"
    assert canonical_prefix(b"[^]hello") == b"[\\\\s\\\\S]a"
    assert canonical_prefix(b"\\\\cAbcd") == b"\\\\x01a"
    assert canonical_prefix(b"[\\\\u0041xyz") == b"[\\\\u0041z"  # a code's digits, then a run
    assert canonical_prefix(b"[](") == b"[]("  # the end may begin a spelling: kept


CLASS_STARTS = ["[", "[^", "[a", "[z", "[\\d", "[a-", "[\\n", "[#", "a[]b[x"]
"""Inside a class, before a run of dashes: nothing yet, a member (low, high, a set,
an escape), a range begun, and a class after spellings that are rewritten."""

CLASS_ENDS = ["", "]", "-]", "a]", "-a]", "--]", "-z]", "a-z]", "\\d]", "[]]", "]*", "-\\d]"]


def test_runs_of_dashes_in_a_class_merge_to_the_same_continuations():
    """Equivalence against the reference over every start and run length up to 11: a
    run of dashes in a class, read as the parser reads members and ranges, is merged
    with a shorter one exactly when every continuation agrees (all lengths past four
    merge into two, three or four)."""
    for start in CLASS_STARTS:
        for count in range(1, 12):
            prefix = encoded(start + "-" * count)
            merged = canonical_prefix(prefix)
            assert merged.count(b"-") <= start.count("-") + 4, (prefix, merged)
            for end in CLASS_ENDS:
                tail = encoded(end)
                assert CHECKER.accepts(merged + tail) == CHECKER.accepts(prefix + tail), (
                    prefix,
                    merged,
                    end,
                )


def test_escapes_of_one_character_end_where_the_parser_ends_them():
    """A code escape reads exactly its hex digits and an escaped space or other
    non-alphanumeric character is one literal: the run after either is merged, and
    the errors after a code escape are seen (a quantifier too many, a range out of
    order)."""
    assert canonical_prefix(b"\\\\ Thessalon") == canonical_prefix(b"\\\\ pungent") == b"\\\\ a"
    assert canonical_prefix(b"\\\\x4") == b"\\\\x4"  # digits still to come: kept
    assert not CHECKER.viable(b"\\\\x01+++")
    assert not CHECKER.viable(b"[\\\\x41-\\\\x40")
    assert CHECKER.viable(b"[\\\\x40-\\\\x41")
