"""String terms (``fsm.json_schema.strings``): patterns built with the encodings of their
characters kept across patterns are the patterns built afresh."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from fsm.json_schema.strings import strings_in
from fsm.regex import json_string_encoding, search_in
from fsm.term_builder import StoredTerms
from fsm.term_store import TermStore
from tests.fsm.strategies import small_regexes

ANCHORS = st.sampled_from([("^", "$"), ("", ""), ("^", ""), ("", "$")])


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(ANCHORS, small_regexes(count_ranges=True)), min_size=1, max_size=4))
def test_patterns_with_kept_encodings_are_the_patterns_built_afresh(
    patterns: list[tuple[tuple[str, str], str]],
) -> None:
    """Each pattern's content, built by a store's ``StringTerms`` (which keeps the
    encodings of the classes and characters earlier patterns read), is the term
    ``search_in`` builds with a fresh encoding of each: the same row, interned once."""
    store = TermStore()
    terms = StoredTerms(store)
    strings = strings_in(terms)
    for (start, end), core in patterns:
        pattern = f"{start}{core}{end}"
        assert strings.pattern_content(pattern) == search_in(terms, pattern, json_string_encoding)
