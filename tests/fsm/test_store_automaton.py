"""The automaton over a store's rows against the one over object terms: the same
successors (live bytes) and verdicts at every state a text reaches, and the same token
masks when a token index walks it (``fsm.store_automaton``, issue 15)."""

from __future__ import annotations

import gzip
import json

import numpy as np
import pytest

from fsm.automaton import DEAD, ByteAutomaton
from fsm.derivative_automaton import DerivativeAutomaton
from fsm.errors import ConstraintTooLarge, InvalidSpec, UnsupportedSchema
from fsm.json_schema import schema_term, schema_term_in
from fsm.json_schema.strings import strings_in
from fsm.regex import regex_in, regex_term
from fsm.store_automaton import StoreAutomaton
from fsm.store_decompose import StoreSplits
from fsm.term_builder import StoredTerms
from fsm.term_store import TermStore
from fsm.token_index import TokenIndex
from fsm.vocabulary import Vocabulary
from tests.fsm.test_schema_compile_in_store import MASKBENCH, SCHEMAS, texts_of

REGEXES = {
    "money": (r"\$[0-9]{1,3}(,[0-9]{3})*\.[0-9]{2}", [b"$1,234.56", b"$12.5", b"$1234.00"]),
    "ipv4": (
        r"((25[0-5]|2[0-4][0-9]|1?[0-9]?[0-9])\.){3}(25[0-5]|2[0-4][0-9]|1?[0-9]?[0-9])",
        [b"192.168.0.1", b"256.1.1.1", b"1.2.3"],
    ),
    "and-not": (r"(a|b)*abb", [b"aabb", b"abab", b"abb"]),
}


def both_automata(
    schema: object, decompose: bool = True
) -> tuple[StoreAutomaton, DerivativeAutomaton]:
    store = TermStore()
    row = schema_term_in(strings_in(StoredTerms(store)), schema, whitespace_max=1)
    rows = StoreAutomaton(store, row, decompose=decompose)
    return rows, DerivativeAutomaton(schema_term(schema, whitespace_max=1))


def assert_walked_alike(rows: ByteAutomaton, objects: ByteAutomaton, text: bytes) -> None:
    """Along ``text``, byte by byte: the same live bytes and the same verdict at each
    state, until both reject."""
    here, there = rows.initial, objects.initial
    for position in range(len(text) + 1):
        successors, final = rows.expand(here)
        expected, expected_final = objects.expand(there)
        assert final == expected_final, text[:position]
        np.testing.assert_array_equal(successors != DEAD, expected != DEAD, str(text[:position]))
        if position == len(text):
            return
        here, there = int(successors[text[position]]), int(expected[text[position]])
        if here == DEAD:
            return


WALKED = [s for s in SCHEMAS if s[1] is not False]  # ``False``: refused before any walk
TOKEN_WALKED = [s for s in SCHEMAS if s[0] in ("person", "linked list", "pattern properties")]


@pytest.mark.parametrize(("name", "schema", "values"), WALKED, ids=[s[0] for s in WALKED])
def test_schema_rows_walk_as_the_object_terms_walk(
    name: str, schema: object, values: list[object]
) -> None:
    rows, objects = both_automata(schema)
    for value in values:
        for text in texts_of(value):
            assert_walked_alike(rows, objects, text)


@pytest.mark.parametrize("name", sorted(REGEXES))
def test_regex_rows_walk_as_the_object_terms_walk(name: str) -> None:
    pattern, texts = REGEXES[name]
    store = TermStore()
    rows = StoreAutomaton(store, regex_in(StoredTerms(store), pattern))
    objects = DerivativeAutomaton(regex_term(pattern))
    for text in texts:
        assert_walked_alike(rows, objects, text)


def test_an_intersection_is_searched_for_liveness() -> None:
    """``a*`` meeting ``(aa)*b|a{3}``: after ``aa`` only a third ``a`` is live (the
    syntax does not tell; a search does), and after it nothing."""
    store = TermStore()
    b = StoredTerms(store)
    row = b.intersect(regex_in(b, "a*"), regex_in(b, "(aa)*b|aaa"))
    automaton = StoreAutomaton(store, row)
    state = automaton.initial
    for _ in range(3):
        successors, final = automaton.expand(state)
        assert not final and successors[ord("a")] != DEAD and successors[ord("b")] == DEAD
        state = int(successors[ord("a")])
    successors, final = automaton.expand(state)
    assert final and (successors == DEAD).all()
    assert automaton.searches > 0


def test_states_past_the_cap_are_refused() -> None:
    store = TermStore()
    automaton = StoreAutomaton(store, regex_in(StoredTerms(store), "[a-z]{20}"), max_states=5)
    state = automaton.initial
    with pytest.raises(ConstraintTooLarge):
        for _ in range(20):
            state = int(automaton.expand(state)[0][ord("a")])


TOKENS = [
    b"{",
    b"}",
    b'{"',
    b'":',
    b'",',
    b'"',
    b"name",
    b"age",
    b"a",
    b"b",
    b"x-",
    b"1",
    b"36",
    b" ",
    b", ",
    b"null",
    b"true",
    b"[",
    b"]",
    b"v",
    b"next",
    b":",
    b",",
]


@pytest.mark.parametrize(
    ("name", "schema", "values"),
    [
        s
        for s in SCHEMAS
        if s[0] in ("person", "linked list", "pattern properties", "nested arrays")
    ],
    ids=lambda s: s if isinstance(s, str) else "",
)
@pytest.mark.parametrize("decompose", [True, False], ids=["taken apart", "plain"])
def test_token_masks_over_rows_are_the_object_terms(
    name: str, schema: object, values: list[object], decompose: bool
) -> None:
    """A token index walks each automaton (the objects' with its lexemes shared, the
    rows' taken apart alike, or state by state): the allowed tokens agree at every
    state a value's bytes reach, read one single-byte token at a time, and a shortest
    completion from the rows' state leads to acceptance."""
    vocabulary = Vocabulary.from_raw(
        [*TOKENS, *(bytes((b,)) for b in range(32, 127)), None], eos_ids=len(TOKENS) + 95
    )
    byte_token = {b: len(TOKENS) + b - 32 for b in range(32, 127)}
    rows, objects = both_automata(schema, decompose)
    assert rows.has_lexemes == decompose
    row_index = TokenIndex(rows, vocabulary)
    object_index = TokenIndex(objects, vocabulary)
    for value in values:
        text = json.dumps(value, separators=(",", ":")).encode()
        here, there = row_index.initial_state, object_index.initial_state
        for byte in text:
            allowed = row_index.allowed_tokens(here).tolist()
            assert allowed == object_index.allowed_tokens(there).tolist()
            if byte_token[byte] not in allowed:
                break
            here = row_index.next_state(here, byte_token[byte])
            there = object_index.next_state(there, byte_token[byte])
            completion = row_index.shortest_completion(here)
            if completion is not None:
                assert row_index.is_final(row_index.step_bytes(here, completion))
        assert row_index.is_final(here) == object_index.is_final(there)


def test_rows_taken_apart_expand_fewer_states() -> None:
    """Along the person schema's values, the index over rows taken apart expands fewer
    states than over plain rows, and at most as many as over the objects: the walk
    reads a key's or a string's states inside its lexeme, not once per place it
    appears (and the rows count a bounded string behind its whitespace below its
    quote, where the objects walk each count: ``test_bounded_strings_...``)."""
    name, schema, values = next(s for s in SCHEMAS if s[0] == "person")
    vocabulary = Vocabulary.from_raw([*TOKENS, None], eos_ids=len(TOKENS))
    expanded = []
    for automaton in (*both_automata(schema), both_automata(schema, False)[0]):
        index = TokenIndex(automaton, vocabulary)
        for value in values:
            text = json.dumps(value, separators=(",", ":")).encode()
            state = index.initial_state
            while text:
                allowed = index.allowed_tokens(state).tolist()
                token = next(
                    (t for t in allowed if t < len(TOKENS) and text.startswith(TOKENS[t])), None
                )
                if token is None:
                    break
                text = text[len(TOKENS[token]) :]
                state = index.next_state(state, token)
        expanded.append(index.num_states_expanded)
    rows, objects, plain = expanded
    assert rows <= objects < plain, expanded


BOUNDED = {
    "type": "object",
    "properties": {
        "code": {"type": "string", "minLength": 2, "maxLength": 6},
        "tags": {"type": "array", "items": {"type": "string", "maxLength": 4}},
    },
}
BOUNDED_TOKENS = [b'{"', b"code", b'":"', b"ab", b"c", b'"', b',"', b"tags", b'":["', b'","', b'"]']


def test_bounded_strings_are_counted_on_rows_as_on_objects() -> None:
    """Strings with length bounds, walked by tokens of several characters: the rows'
    index counts their units as the objects' does (``fsm.store_counted``), and their
    masks agree. The rows also count a string where a value starts, behind its
    whitespace and quote (``counted_after_prefix_in``), where the objects walk that
    lexeme a state per count: the rows number and expand fewer states."""
    vocabulary = Vocabulary.from_raw(
        [*BOUNDED_TOKENS, *(bytes((b,)) for b in range(32, 127)), None],
        eos_ids=len(BOUNDED_TOKENS) + 95,
    )
    text = json.dumps({"code": "abcab", "tags": ["ab", "abc", "x"]}, separators=(",", ":"))
    found = []
    for automaton in both_automata(BOUNDED):
        index = TokenIndex(automaton, vocabulary)
        state, left, masks = index.initial_state, text.encode(), []
        while left:
            allowed = index.allowed_tokens(state).tolist()
            masks.append(allowed)
            token = next(
                (t for t, b in enumerate(BOUNDED_TOKENS) if left.startswith(b) and t in allowed),
                len(BOUNDED_TOKENS) + left[0] - 32,
            )
            assert token in allowed
            left = left[len(BOUNDED_TOKENS[token]) if token < len(BOUNDED_TOKENS) else 1 :]
            state = index.next_state(state, token)
        assert index.is_final(state)
        found.append((masks, automaton.num_states, index.num_states_expanded))
    (masks, states, expanded), (object_masks, object_states, object_expanded) = found
    assert masks == object_masks
    assert states < object_states and expanded < object_expanded, found[0][1:] + found[1][1:]


def every_hundredth_maskbench_row() -> list[dict]:
    """Every 100th line of the development split (``../shared/data``), parsed."""
    with gzip.open(MASKBENCH, "rt", encoding="utf-8") as lines:
        return [json.loads(line) for number, line in enumerate(lines) if number % 100 == 0]


@pytest.mark.skipif(not MASKBENCH.exists(), reason="shared data not present")
def test_maskbench_rows_walk_as_the_object_terms_walk() -> None:
    """Every 100th schema of the development split: each test instance's text, valid or
    not, walked byte by byte through both automata."""
    rows = every_hundredth_maskbench_row()
    walked = 0
    for row in rows:
        try:
            automata = both_automata(row["schema"])
        except (InvalidSpec, UnsupportedSchema):
            continue
        for test in row["tests"]:
            text = json.dumps(test["data"], ensure_ascii=False).encode()
            assert_walked_alike(*automata, text)
        walked += 1
    assert walked > 0.9 * len(rows)


def test_unbuilt_branches_split_as_their_rows_and_stay_unbuilt() -> None:
    """Along texts of an object inside an object, every branch of every union state
    met is the row ``branch_terms`` builds, and its split is that row's split; taking
    the branches apart builds fewer rows than building them did."""
    from tests.fsm.test_store_decompose import NESTED, NESTED_VALUES

    store = TermStore()
    root = schema_term_in(strings_in(StoredTerms(store)), NESTED, whitespace_max=1)
    automaton = StoreAutomaton(store, root)
    splitter = StoreSplits(store)
    unions = fewer = 0
    for value in NESTED_VALUES:
        state = automaton.initial
        for byte in json.dumps(value).encode():
            branches = automaton.branches(state)
            if branches is not None:
                grown = len(store)
                splits = [automaton.lexeme_split(branch) for branch in branches]
                lazy = len(store) - grown
                built = splitter.branch_terms(automaton.row(state))
                assert built is not None
                building = len(store) - grown - lazy
                assert lazy <= building
                fewer += lazy < building
                assert tuple(automaton.row(branch) for branch in branches) == built
                for split, row in zip(splits, built):
                    expected = splitter.split_lexeme(row)
                    assert (split is None) == (expected is None)
                    if split is not None and expected is not None:
                        assert (automaton.row(split[0]), automaton.row(split[1])) == expected
                unions += 1
            state = automaton.step(state, byte)
            assert state != DEAD
    assert unions >= 3 and fewer >= 2


def test_branch_parts_are_the_branches_splits() -> None:
    """Along texts of an object inside an object, every union state's ``branch_parts``
    (each branch that splits given as its split, its own state never numbered) reads
    the rows that ``branches`` then ``lexeme_split`` give, in another automaton over
    the store: the walker's parts are the reference's."""
    from tests.fsm.test_store_decompose import NESTED, NESTED_VALUES

    store = TermStore()
    root = schema_term_in(strings_in(StoredTerms(store)), NESTED, whitespace_max=1)
    fast, reference = StoreAutomaton(store, root), StoreAutomaton(store, root)
    met = 0
    for value in NESTED_VALUES:
        a, b = fast.initial, reference.initial
        for byte in json.dumps(value).encode():
            parts, branches = fast.branch_parts(a), reference.branches(b)
            assert (parts is None) == (branches is None)
            if parts is not None and branches is not None:
                expected = []
                for branch in branches:
                    split = reference.lexeme_split(branch)
                    expected.append(
                        reference.row(branch)
                        if split is None
                        else (reference.row(split[0]), reference.row(split[1]))
                    )
                found = [
                    fast.row(part)
                    if isinstance(part, int)
                    else (fast.row(part[0]), fast.row(part[1]))
                    for part in parts
                ]
                assert found == expected
                met += 1
            a, b = fast.step(a, byte), reference.step(b, byte)
            assert a != DEAD and b != DEAD
    assert met >= 3


def test_an_unbuilt_branch_accepts_as_its_row_without_building_it() -> None:
    """Whether an unbuilt branch and its unbuilt rests accept is their rows' answer,
    read off their parts: asking builds no row."""
    from tests.fsm.test_store_decompose import NESTED

    store = TermStore()
    root = schema_term_in(strings_in(StoredTerms(store)), NESTED, whitespace_max=1)
    automaton = StoreAutomaton(store, root)
    state = automaton.initial
    for byte in b'{"inner": {"':
        state = automaton.step(state, byte)
    branches = automaton.branches(state)
    assert branches is not None
    rests = [split[1] for split in map(automaton.lexeme_split, branches) if split is not None]
    assert rests
    grown = len(store)
    answers = [automaton.accepts(s) for s in (*branches, *rests)]
    assert len(store) == grown
    assert answers == [store.nullable(automaton.row(s)) for s in (*branches, *rests)]
