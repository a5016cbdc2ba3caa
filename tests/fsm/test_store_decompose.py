"""``fsm.store_decompose`` against ``fsm.decompose``: on every state the object
automaton reaches along the walks of schemas and regexes, converted into a store, the
rows are taken apart as the objects are (the same head and rest, the same lexeme inside
a lexeme, the same branches, the same answer on whether lexemes may be held)."""

from __future__ import annotations

import json

import pytest

from fsm.automaton import DEAD
from fsm.decompose import SplitMemo, branch_terms, may_hold_lexemes, nested_split, split_lexeme
from fsm.derivative_automaton import DerivativeAutomaton
from fsm.errors import FsmError, InvalidSpec, UnsupportedSchema
from fsm.json_schema import schema_term
from fsm.regex import regex_term
from fsm.schema_rows import SchemaRows
from fsm.specs import JsonSchema
from fsm.store_decompose import StoreSplits, may_hold_lexemes_in
from fsm.term_store import EMPTY, TermStore
from fsm.terms import Lexeme, Term, matches
from fsm.token_index import TokenIndex
from tests.fsm.test_schema_compile_in_store import MASKBENCH, SCHEMAS, texts_of
from tests.fsm.test_schema_rows import BYTES
from tests.fsm.test_store_automaton import REGEXES, every_hundredth_maskbench_row


def reached_terms(term: Term, texts: list[bytes]) -> list[Term]:
    """The terms of the states the object automaton reaches along ``texts``, byte by
    byte, and of every live successor met on the way."""
    automaton = DerivativeAutomaton(term)
    seen: dict[int, None] = {automaton.initial: None}
    for text in texts:
        state = automaton.initial
        for byte in text:
            successors, _ = automaton.expand(state)
            seen.update(dict.fromkeys(int(s) for s in successors if s != DEAD))
            state = int(successors[byte])
            if state == DEAD:
                break
    return [automaton.term(state) for state in seen]


def assert_taken_apart_alike(terms: list[Term]) -> int:
    """Each term converted into one store, taken apart both ways; returns how many
    split."""
    store = TermStore()
    splits = StoreSplits(store)
    memo = SplitMemo()
    split_count = 0
    for term in terms:
        row = store.load(term)
        found = split_lexeme(term, memo)
        expected = None if found is None else (store.load(found[0]), store.load(found[1]))
        assert splits.split_lexeme(row) == expected, term
        if found is not None:
            split_count += 1
            inner = nested_split(found[0], memo)
            loaded = None if inner is None else (store.load(inner[0]), store.load(inner[1]))
            assert splits.nested_split(store.load(found[0])) == loaded, found[0]
        for require in (True, False):
            branches = branch_terms(term, require_lexeme=require, memo=memo)
            mine = splits.branch_terms(row, require_lexeme=require)
            if branches is None:
                assert mine is None, term
            else:
                assert mine is not None, term
                assert sorted(mine) == sorted({store.load(b) for b in branches}), term
        assert built_branches(store, splits.branches_unbuilt(row)) == splits.branch_terms(row)
        assert may_hold_lexemes_in(store, row) == may_hold_lexemes(term)
    return split_count


def built_branches(
    store: TermStore, branches: tuple[int | tuple[int, int], ...] | None
) -> tuple[int, ...] | None:
    """``branches_unbuilt``'s answer with each unbuilt pair built."""
    if branches is None:
        return None
    return tuple(b if isinstance(b, int) else store.cat(*b) for b in branches)


def states_along(term: Term, text: bytes) -> list[tuple[Term, bytes]]:
    """The object automaton's states along ``text`` with what is left of it there."""
    automaton = DerivativeAutomaton(term)
    state, found = automaton.initial, []
    for position, byte in enumerate(text):
        found.append((automaton.term(state), text[position:]))
        state = int(automaton.expand(state)[0][byte])
        if state == DEAD:
            break
    return found


def read_as_a_walk(store: TermStore, head: int, rest: int, text: bytes) -> bool:
    """Whether a walk of the split reads ``text``: in ``head`` while it reads the next
    byte, then in ``rest`` from where it stopped, when the head may end there."""
    read = 0
    while read < len(text) and store.derivative(head, text[read]) != EMPTY:
        head = store.derivative(head, text[read])
        read += 1
    return store.nullable(head) and store.matches(rest, text[read:])


def assert_splits_are_exact(term: Term, texts: list[bytes]) -> int:
    """Wherever a state's row splits into ``(head, rest)``, on what is left of each
    text: the row and ``head`` then ``rest`` read it alike, a lexeme head ends at one
    place at most (it is prefix-free), and a walk that stays in the head while it reads
    the next byte reads the text as the row does (a head that may end, a number, goes
    on while it can: ``rest`` cannot start with a byte it reads). Returns how many
    splits were checked."""
    store = TermStore()
    splits = StoreSplits(store)
    checked = 0
    for text in texts:
        for state, left in states_along(term, text):
            row = store.load(state)
            split = splits.split_lexeme(row)
            if split is None:
                continue
            head, rest = split
            ends = [n for n in range(len(left) + 1) if store.matches(head, left[:n])]
            if splits.is_lexeme(head):
                assert len(ends) <= 1, (state, left)
            whole = store.matches(row, left)
            assert store.matches(store.cat(head, rest), left) == whole, (state, left)
            assert read_as_a_walk(store, head, rest, left) == whole, (state, left)
            checked += 1
    return checked


WALKED = [s for s in SCHEMAS if s[1] is not False]


@pytest.mark.parametrize(("name", "schema", "values"), WALKED, ids=[s[0] for s in WALKED])
def test_schema_splits_are_exact_rewrites(name: str, schema: object, values: list[object]) -> None:
    texts = [text for value in values for text in texts_of(value)]
    assert_splits_are_exact(schema_term(schema, whitespace_max=1), texts)


def test_splits_are_checked_on_texts() -> None:
    """The person schema's texts meet many splits (the check above is not vacuous)."""
    name, schema, values = next(s for s in SCHEMAS if s[0] == "person")
    texts = [text for value in values for text in texts_of(value)]
    assert assert_splits_are_exact(schema_term(schema, whitespace_max=1), texts) > 50


@pytest.mark.parametrize(("name", "schema", "values"), WALKED, ids=[s[0] for s in WALKED])
def test_schema_states_are_taken_apart_as_the_objects_are(
    name: str, schema: object, values: list[object]
) -> None:
    texts = [text for value in values for text in texts_of(value)]
    assert_taken_apart_alike(reached_terms(schema_term(schema, whitespace_max=1), texts))


def test_object_states_split_into_keys_and_values() -> None:
    """The person schema's states: most split (a key, a value after ``: ``, ``}``)."""
    name, schema, values = next(s for s in SCHEMAS if s[0] == "person")
    texts = [text for value in values for text in texts_of(value)]
    terms = reached_terms(schema_term(schema, whitespace_max=1), texts)
    assert assert_taken_apart_alike(terms) > len(terms) // 2


def test_object_members_that_start_with_a_key_are_left_unbuilt() -> None:
    """An object's key members behind the text after the object are handed out as
    pairs, each the same branch built (the check above, on every state)."""
    texts = [text for value in NESTED_VALUES for text in texts_of(value)]
    store = TermStore()
    splits = StoreSplits(store)
    terms = reached_terms(schema_term(NESTED, whitespace_max=1), texts)
    assert_taken_apart_alike(terms)
    pairs = 0
    for term in terms:
        found = splits.branches_unbuilt(store.load(term)) or ()
        pairs += sum(1 for branch in found if not isinstance(branch, int))
    assert pairs > 10


REQUIRED_PAIR = {
    "type": "object",
    "properties": {
        "outer": {
            "type": "object",
            "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
            "required": ["a", "b"],
            "additionalProperties": False,
        },
        "c": {"type": "string"},
    },
    "required": ["outer", "c"],
    "additionalProperties": False,
}
"""Closed objects with every key required: after a value the body is one concatenation
(open objects offer other keys there, a union whose branches split already)."""


REQUIRED_PAIR_TEXT = b'{"outer":{"a":"x","b":"y"},"c":"z"}'


@pytest.mark.parametrize(
    ("read", "opening"),
    [
        (b'{"outer":{"a":"x"', b","),  # the inner body, a key required still: `, "` then keys
        (b'{"outer":{"a":"x","b":"y"', b"}"),  # the inner body ahead of the outer rest
        (b'{"outer":{"a":"x","b":"y"},"c":"z"', b"}"),  # the outer body alone
    ],
)
def test_an_object_body_after_a_value_splits_as_its_body(read: bytes, opening: bytes) -> None:
    """Where a value ends, the state is an object's body (a thunk), alone or ahead of
    the text after the object. That body is a concatenation (``, ws "`` then the keys
    left; ``ws }``), so the state splits as the body spelled out: a lexeme of the
    separators first, both ways alike, and exactly. The row below a value's closing
    bytes then walks that lexeme, where the thunk unsplit was expanded whole."""
    term = schema_term(REQUIRED_PAIR, whitespace_max=1)
    assert REQUIRED_PAIR_TEXT.startswith(read)
    reached, _ = states_along(term, REQUIRED_PAIR_TEXT)[len(read)]
    found = split_lexeme(reached)
    assert found is not None, reached
    head, _ = found
    assert isinstance(head, Lexeme), head
    assert matches(head, opening) or matches(head, opening + b'"'), head
    assert_taken_apart_alike([reached])
    assert_splits_are_exact(term, [REQUIRED_PAIR_TEXT, REQUIRED_PAIR_TEXT.replace(b",", b", ")])


NESTED = {
    "type": "object",
    "properties": {
        "inner": {
            "type": "object",
            "properties": {key: {"type": "integer"} for key in ("alpha", "beta", "gamma")},
        },
        "tail": {"type": "boolean"},
    },
}
NESTED_VALUES = [{"inner": {"beta": 1, "alpha": 2}, "tail": True}, {"inner": {}}]
"""An object inside an object: the inner keys are read with the outer object's rest
behind them."""


MAY_END = {
    "number then a digit": (r"(0|[1-9][0-9]*)5", [b"125", b"05"]),
    "number then a comma": (r"(0|[1-9][0-9]*),x", [b"12,x", b"0,x"]),
}
"""A head that may end (an unbounded union, a number's integer part): it splits off
only where what follows cannot start with a byte it reads."""


@pytest.mark.parametrize("name", sorted(REGEXES))
def test_regex_states_are_taken_apart_as_the_objects_are(name: str) -> None:
    pattern, texts = REGEXES[name]
    assert_taken_apart_alike(reached_terms(regex_term(pattern), texts))


@pytest.mark.parametrize("name", sorted(MAY_END))
def test_heads_that_may_end_split_where_the_objects_split(name: str) -> None:
    pattern, texts = MAY_END[name]
    split = assert_taken_apart_alike(reached_terms(regex_term(pattern), texts))
    assert (split > 0) == (name == "number then a comma")


@pytest.mark.parametrize("pattern_texts", [*REGEXES.values(), *MAY_END.values()])
def test_regex_splits_are_exact_rewrites(pattern_texts: tuple[str, list[bytes]]) -> None:
    pattern, texts = pattern_texts
    spoiled = [text + b"x" for text in texts] + [text[:-1] for text in texts]
    assert_splits_are_exact(regex_term(pattern), texts + spoiled)


@pytest.mark.skipif(not MASKBENCH.exists(), reason="shared data not present")
def test_maskbench_states_are_taken_apart_as_the_objects_are() -> None:
    """Every 100th schema of the development split, along its test instances."""
    rows = every_hundredth_maskbench_row()
    split = 0
    for row in rows:
        try:
            term = schema_term(row["schema"])
        except (InvalidSpec, UnsupportedSchema):
            continue
        texts = [json.dumps(t["data"], ensure_ascii=False).encode() for t in row["tests"]]
        split += assert_taken_apart_alike(reached_terms(term, texts))
    assert split > 1000


def test_splits_shared_by_a_store_s_automata_answer_as_fresh_ones() -> None:
    """The ``StoreSplits`` that every automaton over a store shares (``SchemaRows``),
    after the schemas were compiled and walked one after another over it, gives for
    every row it kept what a fresh one over the same store finds: each answer is a
    function of the rows alone, whichever schema's walk asked first."""
    rows = SchemaRows()
    shared = None
    for _, schema, values in SCHEMAS:
        try:
            automaton, lock = rows.compile(JsonSchema(schema))
        except FsmError:
            continue
        shared = automaton.splits
        index = TokenIndex(automaton, BYTES, lock=lock)
        for text in (t for value in values for t in texts_of(value)):
            state = index.initial_state
            for byte in text:
                index.bitmask(state)
                state = index.next_state(state, byte)
                if state < 0:
                    break
    assert shared is not None and rows.generations == 1
    fresh = StoreSplits(shared.store)
    assert len(shared.splits) > 100 and len(shared.unbuilt) > 20
    for row, split in list(shared.splits.items()):
        assert fresh.split_lexeme(row) == split, row
    for row, branches in list(shared.unbuilt.items()):
        assert fresh.branches_unbuilt(row) == branches, row


def test_separators_a_lexeme_may_start_with_do_not_split_off() -> None:
    """Whitespace then a lexeme splits off as one head only when the lexeme cannot
    start with a byte the whitespace reads: ``" "* lexeme(" ")`` would be a head that
    ends twice in ``"  "``."""
    store = TermStore()
    splits = StoreSplits(store)
    spaces = store.repeat(store.literal(b" "), 0, None)
    brace = store.literal(b"}")
    overlapping = store.cat(spaces, store.cat(store.lexeme(store.literal(b" ")), brace))
    assert splits.split_lexeme(overlapping) is None
    apart = store.cat(spaces, store.cat(store.lexeme(store.literal(b"x")), brace))
    split = splits.split_lexeme(apart)
    assert split is not None and split[1] == brace
    head = split[0]
    for text in (b"x}", b"  x}", b" }", b"x", b"  x}}"):
        assert store.matches(store.cat(head, brace), text) == store.matches(apart, text)
        assert read_as_a_walk(store, head, brace, text) == store.matches(apart, text)
