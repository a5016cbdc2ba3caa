"""The term algebra: intersection, complement, repetition and thunks mean what they say."""

from __future__ import annotations

import itertools
import os
import re
import subprocess
import sys

import pytest
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

import fsm
from fsm.json_schema.json_text import ANY_STRING as JSON_STRING
from fsm.json_schema.json_text import (
    INTEGRAL_NUMBER,
    string_except,
    string_literal,
    string_of,
    whitespace,
)
from fsm.regex import regex_term
from fsm.terms import (
    EMPTY,
    EPS,
    Bytes,
    Cat,
    Lexeme,
    _derivative,
    alt,
    byte_partition,
    byte_set,
    cat,
    complement,
    derivative,
    finite_strings,
    first_bytes,
    intersect,
    lexeme,
    lexeme_bound,
    literal,
    nullable,
    plus,
    repeat,
    star,
    thunk,
)
from fsm.unicode import normalize_ranges, utf8_term

small_patterns = st.sampled_from(["a*", "(ab)*", "a?b?", "[ab]{1,3}", "b+a", "(a|bb)*a", ""])
words = st.lists(st.sampled_from("ab"), max_size=6).map("".join)


def matches(term, data: bytes) -> bool:
    for byte in data:
        term = derivative(term, byte)
    return nullable(term)


@settings(max_examples=200, deadline=None)
@given(small_patterns, small_patterns, words)
def test_intersection_and_complement(p, q, word):
    a, b = regex_term(p), regex_term(q)
    in_a, in_b = bool(re.fullmatch(p, word)), bool(re.fullmatch(q, word))
    assert matches(intersect(a, b), word.encode()) == (in_a and in_b)
    assert matches(complement(a), word.encode()) == (not in_a)
    assert matches(intersect(a, complement(b)), word.encode()) == (in_a and not in_b)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 0x10FFFF), st.integers(0, 3000)), min_size=1, max_size=3),
    st.integers(0, 0x10FFFF),
)
def test_utf8_term_matches_code_point_membership(spans, code_point):
    ranges = normalize_ranges([(lo, min(lo + width, 0x10FFFF)) for lo, width in spans])
    if 0xD800 <= code_point <= 0xDFFF:
        return
    inside = any(lo <= code_point <= hi for lo, hi in ranges)
    assert matches(utf8_term(ranges), chr(code_point).encode()) == inside


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 0x7F), st.integers(0, 40)), min_size=1, max_size=4))
def test_an_ascii_class_is_one_byte_set_of_its_members(spans):
    """An ASCII class is built as one byte set: the bytes of its code points, no other."""
    ranges = normalize_ranges([(lo, min(lo + width, 0x7F)) for lo, width in spans])
    members = {c for lo, hi in ranges for c in range(lo, hi + 1)}
    term = utf8_term(ranges)
    assert isinstance(term, Bytes)
    assert [b for b in range(256) if term.mask >> b & 1] == sorted(members)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.one_of(st.integers(0, 0x10FFFF), st.integers(0xD000, 0xE800)),
            st.integers(0, 0x1000),
        ),
        max_size=4,
    )
)
def test_normalized_ranges_are_sorted_disjoint_and_hold_no_surrogate(spans):
    ranges = normalize_ranges([(lo, min(lo + width, 0x10FFFF)) for lo, width in spans])
    wanted = {
        c
        for lo, width in spans
        for c in range(lo, min(lo + width, 0x10FFFF) + 1)
        if not 0xD800 <= c <= 0xDFFF
    }
    assert {c for lo, hi in ranges for c in range(lo, hi + 1)} == wanted
    assert all(a[1] + 1 < b[0] for a, b in zip(ranges, ranges[1:]))


@settings(max_examples=100, deadline=None)
@given(small_patterns, words)
def test_partition_never_merges_bytes_with_different_derivatives(p, word):
    term = regex_term(p)
    for byte in word.encode():
        labels = byte_partition(term)
        for other in (ord("a"), ord("b"), ord("c")):
            if labels[other] == labels[byte]:
                assert derivative(term, other) == derivative(term, byte)
        term = derivative(term, byte)


class_patterns = st.sampled_from(
    [
        "[a-c]*d",
        "[^b]{0,3}",
        "([0-4][5-9])*",
        "(a|[b-d]e)*[0-9]",
        "[a-f]+&",
        "(x[^y]|[xy])*",
        ".?[3-7]",
    ]
)
class_words = st.lists(st.sampled_from("abcdexy0369&"), max_size=6).map("".join)


@settings(max_examples=100, deadline=None)
@given(class_patterns, class_patterns, class_patterns, class_words)
def test_two_item_concatenation_equals_the_general_one(p, q, r, word):
    """``cat(head, a concatenation)`` takes a short cut: the same items, hash and flag as
    the general loop (reached here with a third, empty, item)."""
    rest = cat(regex_term(q), intersect(regex_term(r), complement(regex_term(p))))
    assume(isinstance(rest, Cat))
    for head in (regex_term(p), derivative(regex_term(p), (word.encode() or b"a")[0]), EPS):
        fast, general = cat(head, rest), cat(head, rest, EPS)
        assert fast == general
        assert hash(fast) == hash(general)
        assert fast.needs_liveness_check == general.needs_liveness_check
        assert type(fast) is type(general)
        assert getattr(fast, "items", None) == getattr(general, "items", None)
    assert cat(EMPTY, rest) is EMPTY


@settings(max_examples=100, deadline=None)
@given(class_patterns, class_patterns, class_patterns)
def test_one_item_ahead_of_a_concatenation_keeps_it_as_the_rest(p, q, r):
    """``cat(item, rest)`` (and ``cat`` over more arguments ending in ``rest``) hands
    ``rest`` itself back from ``rest()``; the items, hash and meaning are the general
    loop's."""
    rest = cat(regex_term(q), intersect(regex_term(r), complement(regex_term(p))))
    head = regex_term(p)
    assume(isinstance(rest, Cat) and not isinstance(head, Cat) and head not in (EPS, EMPTY))
    for joined in (cat(head, rest), cat(head, EPS, rest)):
        assert isinstance(joined, Cat) and joined.rest() is rest
        rebuilt = Cat(joined.items, hash(joined), joined.needs_liveness_check).suffix(1)
        assert joined.rest() == rebuilt and hash(joined.rest()) == hash(rebuilt)


@settings(max_examples=100, deadline=None)
@given(class_patterns, class_patterns, class_patterns)
def test_the_rest_of_a_concatenation_equals_the_general_one(p, q, r):
    """``Cat.rest()`` is built without the general loop: the same items, hash and flag
    as ``cat`` over every item but the first."""
    whole = cat(regex_term(p), regex_term(q), intersect(regex_term(r), complement(regex_term(p))))
    assume(isinstance(whole, Cat))
    while isinstance(whole, Cat):
        fast, general = whole.rest(), cat(*whole.items[1:])
        assert fast == general and hash(fast) == hash(general)
        assert fast.needs_liveness_check == general.needs_liveness_check
        assert type(fast) is type(general)
        whole = fast


@settings(max_examples=100, deadline=None)
@given(class_patterns, class_patterns, class_words)
def test_first_bytes_are_the_bytes_with_a_derivative(p, q, word):
    """One derivative per class of the partition; the mask must equal asking all 256."""
    term = cat(regex_term(p), intersect(regex_term(q), complement(regex_term(p))))
    for byte in [None, *word.encode()]:
        if byte is not None:
            term = derivative(term, byte)
        expected = sum(1 << b for b in range(256) if derivative(term, b) is not EMPTY)
        assert first_bytes(term) == expected


@settings(max_examples=200, deadline=None)
@given(class_patterns, class_patterns, class_words)
def test_derivatives_by_class_keep_the_language(p, q, word):
    """Derivatives are computed once per class of each term's own partition, and
    parents ask their items about any byte of a class: membership must not change."""
    a, b = regex_term(p), regex_term(q)
    in_a, in_b = bool(re.fullmatch(p, word, re.S)), bool(re.fullmatch(q, word, re.S))
    assert matches(a, word.encode()) == in_a
    assert matches(intersect(a, complement(b)), word.encode()) == (in_a and not in_b)
    assert matches(cat(a, b), word.encode()) == any(
        re.fullmatch(p, word[:i], re.S) and re.fullmatch(q, word[i:], re.S)
        for i in range(len(word) + 1)
    )


def test_bounded_repeat_counts():
    term = repeat(literal(b"ab"), 2, 3)
    assert [matches(term, b"ab" * n) for n in range(5)] == [False, False, True, True, False]


def test_recursive_thunk_balanced_parentheses():
    def body():
        return repeat(cat(literal(b"("), parens, literal(b")")), 0, None)

    parens = thunk("parens", body)
    for text, ok in [
        (b"", True),
        (b"()", True),
        (b"(())()", True),
        (b"(()", False),
        (b")(", False),
    ]:
        assert matches(parens, text) == ok


def test_unguarded_recursion_is_a_clear_error():
    loop = thunk("loop", lambda: cat(loop, literal(b"a")))
    with pytest.raises(fsm.InvalidSpec):
        derivative(loop, ord("a"))


def test_constants():
    assert nullable(EPS) and not nullable(EMPTY)
    assert cat(EMPTY, literal(b"a")) is EMPTY


@settings(max_examples=100, deadline=None)
@given(st.lists(class_patterns, min_size=2, max_size=6), st.data())
def test_a_concatenation_hashes_alike_however_it_is_split(patterns, data):
    """``cat`` of the two halves of a sequence, split anywhere, is the concatenation of
    the whole with its hash (folded from the right, ``_fold_hash``), and every hash
    stays below 2**61 (kept unboxed by the compiled modules)."""
    items = [regex_term(pattern) for pattern in patterns]
    split = data.draw(st.integers(0, len(items)))
    whole, halves = cat(*items), cat(cat(*items[:split]), cat(*items[split:]))
    assert whole == halves and hash(whole) == hash(halves)
    assert all(0 <= hash(term) < 2**61 for term in (whole, halves, *items))


def build_nested(word: bytes):
    """A term with every kind of sub-term, built afresh on each call."""
    body = alt(literal(word), repeat(byte_set(b"xy"), 1, 3))
    return cat(lexeme(cat(literal(b'"'), body, literal(b'"'))), complement(star(literal(b"z"))))


@settings(max_examples=50, deadline=None)
@given(words, words)
def test_equal_terms_built_apart_share_their_parts_once_compared(a, b):
    """``==`` hands the sub-terms of one of two equal terms to the other, so comparing
    them again stops at identity; unequal terms keep their own; meaning is unchanged."""
    x, y = build_nested(a.encode()), build_nested(b.encode())
    assert x is not y and x.items is not y.items
    probes = [b'"' + w.encode() + b'"' for w in ("", a, b, "x", "xyx")] + [b'"xx"z']
    before = [matches(y, probe) for probe in probes]
    if a == b:
        assert x == y and hash(x) == hash(y)
        assert y.items is x.items
    else:
        assert x != y
        assert y.items is not x.items
    assert [matches(y, probe) for probe in probes] == before


@settings(max_examples=100, deadline=None)
@given(class_patterns, class_patterns, class_words)
def test_a_term_never_partitioned_derives_as_a_partitioned_one(p, q, word):
    """A term whose partition was never computed (met once, by a walk) derives each
    byte directly; the same term partitioned first derives through class
    representatives. Both must give equal terms at every step."""
    fresh = intersect(regex_term(p), complement(regex_term(q)))
    partitioned = intersect(regex_term(p), complement(regex_term(q)))
    assume(fresh is not EMPTY)
    assert fresh is not partitioned and fresh._partition is None
    for byte in word.encode():
        byte_partition(partitioned)
        fresh, partitioned = derivative(fresh, byte), derivative(partitioned, byte)
        assert fresh == partitioned
        assert nullable(fresh) == nullable(partitioned)


@settings(max_examples=100, deadline=None)
@given(st.binary(min_size=1, max_size=4), small_patterns)
def test_a_byte_headed_concatenation_derives_by_the_general_rule(head, pattern):
    """``derivative`` answers one-byte sets and concatenations headed by one without
    a memo; the answer must equal the general rule's (``_derivative``)."""
    for term in (
        cat(literal(head), regex_term(pattern)),
        cat(byte_set(head), star(literal(head))),
        byte_set(head),
    ):
        for byte in range(256):
            assert derivative(term, byte) == _derivative(term, byte)


FINITE_PATTERNS = ["a", "ab|b", "(a|b){0,3}", "a?b?", "(ab|ba)a{1,2}", "", "[ab]b|a", "a*", "(ab)+"]


@pytest.mark.parametrize("pattern", FINITE_PATTERNS)
@pytest.mark.parametrize("limit", [1, 4, 64])
def test_finite_strings_are_the_whole_language(pattern, limit):
    """``finite_strings`` lists every string of the term, each once, when they are at
    most ``limit``; otherwise (too many, or infinitely many) None."""
    language = {
        "".join(word)
        for size in range(9)
        for word in itertools.product("ab", repeat=size)
        if re.fullmatch(pattern, "".join(word))
    }
    infinite = "*" in pattern or "+" in pattern
    strings = finite_strings(regex_term(pattern), limit)
    if infinite or len(language) > limit:
        assert strings is None
    else:
        assert strings is not None and len(strings) == len(set(strings))
        assert {s.decode() for s in strings} == language


def test_finite_strings_look_down_lexemes_before_listing():
    """Whitespace then a key is listed (eleven layouts); whitespace then any string is
    turned down, as is anything holding an unbounded repetition deep in concatenations
    and lexemes, while a bounded one is still listed."""
    spaced_key = lexeme(cat(whitespace(8), literal(b'"k"')))
    strings = finite_strings(spaced_key, 64)
    assert strings is not None and len(strings) == 11 and b'\n  "k"' in strings
    assert finite_strings(lexeme(cat(whitespace(8), JSON_STRING)), 64) is None
    deep = lexeme(cat(literal(b"x"), lexeme(cat(literal(b"y"), star(literal(b"z"))))))
    assert finite_strings(deep, 64) is None
    bounded = lexeme(cat(literal(b"x"), lexeme(cat(literal(b"y"), repeat(literal(b"z"), 0, 2)))))
    assert finite_strings(bounded, 64) == [b"xy", b"xyz", b"xyzz"]


def test_a_lexeme_within_another_but_some_strings_derives_as_the_other_off_them():
    """``within`` and ``apart`` are a promise, not part of the value: equal items make
    equal lexemes with or without it. A derivative carries both along, and is
    ``within``'s own derivative once the text leaves every ``apart`` string."""
    body = star(byte_set(b"ab"))
    plain = lexeme(cat(literal(b'"'), body, literal(b'"')))
    all_but_a = alt(
        literal(b'"'),
        cat(literal(b"b"), body, literal(b'"')),
        cat(literal(b"a"), byte_set(b"ab"), body, literal(b'"')),
    )
    keyed = lexeme(cat(literal(b'"'), all_but_a), plain, frozenset({b'"a"'}))
    assert keyed == lexeme(keyed.item)
    assert hash(keyed) == hash(lexeme(keyed.item))
    after = derivative(keyed, ord('"'))
    assert after.within == derivative(plain, ord('"')) and after.apart == {b'a"'}
    assert derivative(after, ord("b")) is derivative(derivative(plain, ord('"')), ord("b"))
    assert derivative(derivative(after, ord("a")), ord('"')) is EMPTY
    for size in range(6):
        for text in itertools.product(b'"ab', repeat=size):
            data = bytes(text)
            assert matches(keyed, data) == (matches(plain, data) and data != b'"a"')


def test_a_derivative_equal_to_its_term_is_that_term():
    """A JSON string's body read by one more character is the body itself, not an equal
    copy: copies would chain through the memos of the shared string term, one per path
    a text takes, and live as long as the process."""
    body = derivative(JSON_STRING, ord('"'))
    assert derivative(body, ord("a")) is body
    assert derivative(derivative(body, ord("b")), ord("c")) is body


def test_a_checked_term_keeps_no_derivatives():
    """A number's checked prefixes are new terms for every number written; the shared
    number term does not memoise them (it would keep every prefix a service ever
    wrote), so deriving it twice gives equal terms, not one kept term."""
    first, second = derivative(INTEGRAL_NUMBER, ord("7")), derivative(INTEGRAL_NUMBER, ord("7"))
    assert first == second and first is not second
    assert matches(first, b"") and not matches(first, b".")


# Intersections factored at their heads: members "key rest" met as (keys)(rests).

_CONTENTS = ["a*", "a[ab]*", "b", "(ab)+", "[ab]{0,2}"]
_RESTS = [":a", ":a*", ":[ab]?", "", ":(a|b:a)", 'b":a', '"?:a']


def _member_heads():
    """Heads a member may start with: JSON strings (bounded by every JSON string, some
    as every string but a few names), and one lexeme that is prefix-free alone but not
    with them (no bound): factoring it with a JSON string would be wrong."""
    return st.one_of(
        st.sampled_from(["", "a", "ab", "b", "ba"]).map(string_literal),
        st.sampled_from(_CONTENTS).map(lambda p: string_of(regex_term(p))),
        st.just(JSON_STRING),
        st.sampled_from([["a"], ["ab", "b"]]).map(string_except),
        st.just(lexeme(literal(b'"a'))),
    )


_members = st.tuples(_member_heads(), st.sampled_from(_RESTS)).map(
    lambda pair: cat(pair[0], regex_term(pair[1]))
)
_conjuncts = st.one_of(_members, st.lists(_members, min_size=2, max_size=3).map(lambda m: alt(*m)))
_PIECES = ['"', "a", "b", ":", '"a"', '"ab"', '"b"', ":a", 'b"']
_TEXTS = [
    "".join(pieces).encode()
    for count in range(4)
    for pieces in itertools.product(_PIECES, repeat=count)
]
"""Every text of at most three pieces: the keys, rests and their joins that the
members below accept or nearly accept."""


@settings(max_examples=150, deadline=None)
@given(st.lists(_conjuncts, min_size=2, max_size=3))
def test_a_factored_intersection_accepts_what_every_conjunct_does(conjuncts):
    met = intersect(*conjuncts)
    for text in _TEXTS:
        assert matches(met, text) == all(matches(c, text) for c in conjuncts), text


def test_members_with_different_keys_meet_in_nothing():
    rest = literal(b":1")
    assert intersect(cat(string_literal("a"), rest), cat(string_literal("b"), rest)) is EMPTY


def test_a_key_meeting_a_pattern_is_the_key_then_the_rests_met():
    key = string_literal("ab")
    met = intersect(
        cat(key, regex_term(":[ab]")), cat(string_of(regex_term("a[ab]*")), regex_term(":a?"))
    )
    assert isinstance(met, Cat) and met.items[0] is key
    assert matches(met.rest(), b":a") and not matches(met.rest(), b":b")


def test_other_keys_meeting_a_pattern_read_the_pattern_but_the_names():
    """An open object's other keys met with a pattern: the pattern's walk, but down the
    names (``Lexeme.within``), and still one of all JSON strings."""
    pattern = string_of(regex_term("a[ab]*"))
    met = intersect(string_except(["ab", "b"]), pattern)
    assert isinstance(met, Lexeme) and met.within is pattern and met.apart == {b'"ab"', b'"b"'}
    assert lexeme_bound(met) is JSON_STRING
    for text in (b'"a"', b'"ab"', b'"aba"', b'"b"', b'"ba"'):
        assert matches(met, text) == (matches(pattern, text) and text not in met.apart)


def test_lexemes_without_one_bound_are_not_factored():
    """``"a`` then ``b"`` meets ``"ab"``: the heads end at different places."""
    met = intersect(cat(lexeme(literal(b'"a')), literal(b'b"')), string_literal("ab"))
    assert matches(met, b'"ab"')


def test_long_literals_with_a_common_start_meet_without_recursing_per_byte():
    """The rests behind factored heads are met plainly: a byte per level of recursion
    would overflow the stack on a long common prefix."""
    prefix = b"a" * 5000
    met = intersect(literal(prefix + b"x"), cat(literal(prefix), byte_set(b"xy")))
    assert matches(met, prefix + b"x") and not matches(met, prefix + b"y")


def test_a_bounded_lexeme_derives_with_its_bound():
    quote = ord('"')
    derived = derivative(string_literal("ab"), quote)
    assert lexeme_bound(derived) is derivative(JSON_STRING, quote)


def derived_by(term, data: bytes):
    for byte in data:
        term = derivative(term, byte)
    return term


@settings(max_examples=80, deadline=None)
@given(
    st.sampled_from(["a", "ab|c", "[0-9]{2}", "x.y", "^a", "b$", "^a[0-9]*", "^a[0-9]"]),
    st.text("abcxy09.", max_size=6),
    st.text("abcxy09.", max_size=4),
)
@example("^a[0-9]*", "a", "")  # a star that may match nothing, then any string
@example("^a[0-9]", "a", "")  # a digit is still needed: not yet any string
def test_an_unanchored_pattern_derives_as_the_plain_string_once_matched(pattern, read, then):
    """A string lexeme holding its bound's state as a branch is that state: once an
    unanchored pattern is matched, what is left is any string, the plain JSON string's
    very term (its walks are the vocabulary's). Reading on keeps the language: the
    text read, then the rest of the string, matches as Python's ``re`` searches it."""
    term = fsm.JsonSchema({"type": "string", "pattern": pattern}).term()
    text = b'"' + read.encode()
    derived = derived_by(term, text)
    assert matches(derived, then.encode() + b'"') == bool(re.search(pattern, read + then))
    if re.search(pattern, read) and not pattern.endswith("$"):
        assert derived is derived_by(JSON_STRING, text)


@settings(max_examples=150, deadline=None)
@given(
    st.sampled_from(["a", "ab", "a|bc", "a|"]),
    st.integers(0, 2),
    st.one_of(st.none(), st.integers(0, 3)),
    st.integers(0, 2),
    st.one_of(st.none(), st.integers(0, 3)),
    st.text("abc", max_size=7),
)
def test_a_repetition_of_a_repetition_keeps_its_language(unit, lo, hi, outer_lo, outer_hi, text):
    """``repeat`` folds a repetition of a repetition into one where it can ((x+)* is
    x*, (x*){2,3} is x*): the strings it matches stay Python's ``re``'s."""
    assume(hi is None or hi >= lo)
    assume(outer_hi is None or outer_hi >= outer_lo)
    item = alt(*(literal(word.encode()) if word else EPS for word in unit.split("|")))
    term = repeat(repeat(item, lo, hi), outer_lo, outer_hi)
    bounds = [f"{{{a},{'' if b is None else b}}}" for a, b in ((lo, hi), (outer_lo, outer_hi))]
    pattern = f"(?:(?:{unit}){bounds[0]}){bounds[1]}"
    assert matches(term, text.encode()) == bool(re.fullmatch(pattern, text))


def test_a_pattern_of_repeated_runs_is_the_pattern_of_one_run():
    """``(.+)*`` folds to ``.*``: one repetition, whose derivatives are the term itself,
    where the nested one's were new unions of equal languages (more states, more rows)."""
    runs, run = (
        fsm.JsonSchema({"type": "string", "pattern": pattern}).term()
        for pattern in ("^(.+)*$", "^.*$")
    )
    assert derived_by(runs, b'"ab') == derived_by(run, b'"ab')
    assert repeat(plus(literal(b"a")), 2, None) == repeat(literal(b"a"), 2, None)
    assert repeat(star(literal(b"a")), 2, 3) == star(literal(b"a"))


_HASHES = """
from decimal import Decimal
from fsm.json_schema import schema_term
from fsm.json_schema.numbers import NumberChecker
from fsm.regex import regex_term
schema = {"type": "object", "properties": {"n": {"type": "integer", "minimum": 1}}}
print(hash(regex_term("a*b+c?")), hash(schema_term(schema)), hash(NumberChecker(maximum=Decimal(2))))
"""


def test_term_hashes_do_not_change_between_runs() -> None:
    """With the hash seed fixed, two processes hash equal terms alike: a term's hash
    holds no address (``hash(None)`` is one before Python 3.12), so sets of terms, and
    the orders that follow them, repeat from run to run."""
    environment = {**os.environ, "PYTHONHASHSEED": "0"}
    runs = [
        subprocess.run(
            [sys.executable, "-c", _HASHES],
            env=environment,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for _ in range(2)
    ]
    assert runs[0] == runs[1] and runs[0].strip()
