"""Row walks that take states apart (lexemes, unions) against plain walks: the same rows.

The fast path (``share_lexemes=True``, the default) must allow exactly the tokens the
plain walk allows at every step, with the same finality, on random walks through real
schemas over SmolLM2's vocabulary and through random small schemas over a small
vocabulary. State numbers differ between the two, so rows are compared by walking both
indexes in lockstep.
"""

from __future__ import annotations

import json
import random
from decimal import Decimal
from functools import reduce

import numpy as np
import pytest
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

from fsm import JsonSchema, Regex, TokenIndex, Vocabulary
from fsm.byte_table import ByteTable
from fsm.compiler import automaton_of
from fsm.decompose import (
    SplitMemo,
    branch_terms,
    first_bytes_over,
    nested_split,
    split_lexeme,
)
from fsm.derivative_automaton import DerivativeAutomaton
from fsm.json_schema.json_text import (
    ANY_STRING,
    INTEGER_LITERAL,
    NUMBER,
    encode_string,
    string_except,
    whitespace,
)
from fsm.json_schema.numbers import NumberChecker
from fsm.json_schema.strings import string_term
from fsm.lexeme_cache import LexemeWalkCache
from fsm.row_walk import (
    KEYS_WALKED_TOGETHER,
    ROOT,
    RowWalker,
    _CutWalk,
    _distinct_states,
    _HeldWalk,
    _LexemeWalk,
    _paths,
    distinct_with_inverse,
)
from fsm.terms import (
    EMPTY,
    EPS,
    Alt,
    Cat,
    Lexeme,
    Term,
    alt,
    byte_mask,
    byte_range,
    byte_set,
    cat,
    checked,
    complement,
    derivative,
    first_bytes,
    lexeme,
    literal,
    matches,
    nullable,
    opt,
    repeat,
    star,
    thunk,
)
from fsm.token_row import mask_tokens
from fsm.trie_walk import follow_paths, literal_tokens, pack_bitmask

SCHEMAS = {
    "open object": {
        "type": "object",
        "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
        "required": ["name"],
    },
    "closed object, patterns and formats": {
        "type": "object",
        "properties": {
            "email": {"type": "string", "format": "email"},
            "zip": {"type": "string", "pattern": "^[0-9]{5}$"},
            "when": {"type": "string", "format": "date"},
        },
        "required": ["email", "zip"],
        "additionalProperties": False,
    },
    "unanchored patterns": {
        "type": "object",
        "properties": {
            "mac": {"type": "string", "pattern": "([0-9a-f]{2}[:-]){2}[0-9a-f]{2}"},
            "tag": {"type": "string", "pattern": "v[0-9]+"},
        },
    },
    "array of strings and enum": {
        "type": "array",
        "items": {"anyOf": [{"type": "string", "maxLength": 3}, {"enum": ["red", "green"]}]},
    },
    "pattern properties": {
        "type": "object",
        "patternProperties": {"^x-": {"type": "integer"}},
        "additionalProperties": {"type": "string"},
    },
    "named keys and overlapping patterns": {
        "type": "object",
        "properties": {"xa": {"type": "string"}, "id": {"type": "integer"}},
        "patternProperties": {"^x": {"type": "string", "maxLength": 4}, "a$": {"type": "string"}},
        "additionalProperties": {"type": "boolean"},
    },
    "any value": {},
    "date-time and time": {
        "type": "object",
        "properties": {
            "at": {"type": "string", "format": "date-time"},
            "alarm": {"type": "string", "format": "time"},
        },
        "required": ["at", "alarm"],
    },
    "a string or null after a space": {
        "type": "object",
        "properties": {
            "a": {"type": ["string", "null"]},
            "b": {"anyOf": [{"type": "string", "format": "date"}, {"type": "integer"}]},
        },
        "required": ["a"],
    },
    "strings or nulls in an array": {"type": "array", "items": {"type": ["string", "null"]}},
    "numbers with bounds and multiples": {
        "type": "object",
        "properties": {
            "price": {"type": "number", "minimum": 0},
            "count": {"type": "integer", "minimum": 1, "maximum": 500},
            "step": {"type": "number", "multipleOf": 0.25, "exclusiveMaximum": 10},
            "xs": {"type": "array", "items": {"type": "number", "exclusiveMinimum": -3}},
        },
        "required": ["price", "xs"],
        "additionalProperties": False,
    },
    "objects of several shapes in an array": {
        "type": "array",
        "items": {
            "type": "object",
            "properties": {"name": {"type": "string"}},
            "required": ["name"],
            "oneOf": [
                {
                    "properties": {"status": {"enum": ["changed"]}, "mode": {"type": "string"}},
                    "required": ["status", "mode"],
                },
                {
                    "properties": {"status": {"enum": ["error"]}, "error": {"type": "string"}},
                    "required": ["status", "error"],
                },
            ],
        },
    },
    "one of several keys, each with its own value": {
        "type": "array",
        "items": {
            "type": "object",
            "properties": {"equal": True, "exists": True, "not": {"type": "boolean"}},
            "additionalProperties": False,
            "oneOf": [
                {
                    "properties": {
                        "equal": {"type": "object", "properties": {"path": {"type": "string"}}}
                    },
                    "required": ["equal"],
                },
                {"properties": {"exists": {"type": "string"}}, "required": ["exists"]},
            ],
        },
    },
    "numbers without bounds": {
        "type": "object",
        "properties": {
            "x": {"type": "number"},
            "maybe": {"anyOf": [{"type": "number"}, {"type": "null"}]},
            "xs": {"type": "array", "items": {"type": "number"}},
            "n": {"type": "integer"},
        },
        "required": ["x", "xs"],
    },
    "draft 4 integers": {
        "$schema": "http://json-schema.org/draft-04/schema#",
        "type": "array",
        "items": {"type": "integer"},
    },
    "booleans, null and enums of them": {
        "type": "object",
        "properties": {
            "ok": {"type": "boolean"},
            "gone": {"type": "null"},
            "mode": {"enum": [True, None, "auto", "manual"]},
        },
        "required": ["ok", "mode"],
    },
}


@pytest.fixture(scope="module")
def smol_vocab(smol_tokenizer) -> Vocabulary:
    return Vocabulary.from_tokenizer(smol_tokenizer)


def pair(spec: object, vocabulary: Vocabulary) -> tuple[TokenIndex, TokenIndex]:
    """The same spec indexed with and without taking states apart."""
    return tuple(  # type: ignore[return-value]
        TokenIndex(automaton_of(spec), vocabulary, share_lexemes=share)  # type: ignore[arg-type]
        for share in (True, False)
    )


def assert_same_walks(fast: TokenIndex, plain: TokenIndex, seed: int, steps: int) -> None:
    """Random walks in lockstep: equal allowed tokens and finality at every step."""
    rng = random.Random(seed)
    eos = fast.vocabulary.eos_ids
    for _ in range(4):
        a, b = fast.initial_state, plain.initial_state
        for _ in range(steps):
            allowed = fast.allowed_tokens(a)
            np.testing.assert_array_equal(allowed, plain.allowed_tokens(b))
            np.testing.assert_array_equal(fast.bitmask(a), plain.bitmask(b))
            assert fast.is_final(a) == plain.is_final(b)
            assert_same_completion(fast, a, plain, b)
            choices = [t for t in allowed.tolist() if t not in eos]
            if not choices:
                break
            token = rng.choice(choices)
            a, b = fast.next_state(a, token), plain.next_state(b, token)
            assert a >= 0 and b >= 0


def assert_same_along(fast: TokenIndex, plain: TokenIndex, tokens: list[int]) -> None:
    """Both read ``tokens`` to the end, where both accept, allowing the same tokens at
    every step."""
    a, b = fast.initial_state, plain.initial_state
    for token in tokens:
        np.testing.assert_array_equal(fast.allowed_tokens(a), plain.allowed_tokens(b))
        a, b = fast.next_state(a, token), plain.next_state(b, token)
        assert a >= 0 and b >= 0
    assert fast.is_final(a) and plain.is_final(b)


def assert_same_completion(fast: TokenIndex, a: int, plain: TokenIndex, b: int) -> None:
    """Completion by parts: a valid completion, the plain search's one where that
    search answers (by parts it may answer where the plain search runs out)."""
    found = fast.shortest_completion(a)
    expected = plain.shortest_completion(b)
    if expected is not None:
        assert found == expected
    if found is not None:
        assert fast.is_final(fast.step_bytes(a, found))


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_shared_walks_equal_plain_walks_on_smol(smol_vocab, name):
    fast, plain = pair(JsonSchema(SCHEMAS[name]), smol_vocab)
    assert_same_walks(fast, plain, seed=len(name), steps=40)


def test_shared_walks_follow_a_real_instance(smol_tokenizer, smol_vocab):
    """The tokens of an instance (healing-sized pieces) are accepted by both, to the end."""
    schema = SCHEMAS["closed object, patterns and formats"]
    text = '{"email": "ada@example.org", "zip": "12345", "when": "2024-02-29"}'
    fast, plain = pair(JsonSchema(schema), smol_vocab)
    assert_same_along(fast, plain, smol_tokenizer.encode(text, add_special_tokens=False))


def test_alternatives_met_in_one_state_are_walked_key_by_key(smol_tokenizer, smol_vocab):
    """After ``", "`` inside an object of a ``oneOf`` in an array, the token leads to the
    union of each alternative's state, "its keys, then its rest": a union whose items
    are unions. It is taken apart down to the keys (each a lexeme) instead of expanded
    whole, and the rows stay the plain walk's, through the whole instance."""
    schema = SCHEMAS["objects of several shapes in an array"]
    text = json.dumps(
        [
            {"name": "a", "status": "changed", "mode": "644"},
            {"name": "b", "status": "error", "error": "x"},
        ]
    )
    fast, plain = pair(JsonSchema(schema), smol_vocab)
    parts = fast._parts
    assert parts is not None
    a, b = fast.initial_state, plain.initial_state
    nested = 0
    for token in smol_tokenizer.encode(text, add_special_tokens=False):
        np.testing.assert_array_equal(fast.allowed_tokens(a), plain.allowed_tokens(b))
        term = parts.term(a)
        if isinstance(term, Alt) and any(
            isinstance(item, Cat) and isinstance(item.items[0], Alt) for item in term.items
        ):
            branches = parts.branches(a)
            assert branches is not None, "a union of unions of keys walked whole"
            assert all(parts.lexeme_split(branch) is not None for branch in branches)
            nested += 1
        a, b = fast.next_state(a, token), plain.next_state(b, token)
        assert a >= 0 and b >= 0
    assert fast.is_final(a) and plain.is_final(b)
    assert nested > 0, "the instance never met a union of alternatives"


@pytest.mark.parametrize("other_keys", [True, False])
def test_an_object_s_new_keys_are_walked_together_and_kept(smol_vocab, other_keys):
    """The row after ``{"`` of an object whose key names the vocabulary has not met
    keeps every key's walk from the root in the vocabulary's cache, all from one kernel
    call, each what a walk of its own reads (``literal_tokens``), and the row is the
    plain walk's."""
    names = [f"qzv_{word}{k}" for k, word in enumerate(["alpha", "beta", "gamma", "delta"] * 4)]
    schema = {
        "type": "object",
        "properties": {name: {"type": "integer"} for name in names},
        "additionalProperties": other_keys,
    }
    fast, plain = pair(JsonSchema(schema), smol_vocab)
    a, b = fast.initial_state, plain.initial_state
    for byte in b'{"':
        a, b = fast.step_bytes(a, bytes((byte,))), plain.step_bytes(b, bytes((byte,)))
    assert a >= 0 and b >= 0
    np.testing.assert_array_equal(fast.allowed_tokens(a), plain.allowed_tokens(b))
    trie = smol_vocab.trie
    buffers = set()
    for name in names:
        text = name.encode() + b'"'
        kept = smol_vocab.lexeme_walks.get(("literal", text, ROOT.tobytes()))
        assert kept is not None, f"{name}'s walk is not kept"
        buffers.add(id(kept.tokens.base))
        alone = literal_tokens(
            trie.labels,
            trie.ends,
            trie.token_starts,
            trie.token_ids,
            ROOT,
            np.frombuffer(text, np.uint8),
        )
        for array, expected in zip(
            (kept.tokens, kept.inverse, kept.read, kept.exits), alone, strict=True
        ):
            np.testing.assert_array_equal(array, expected)
    assert len(buffers) == 1, "the keys were walked one call each"


def test_any_other_key_walks_down_many_names_as_down_each_one(smol_vocab):
    """The walk of "any other key" down an object's 16 key names at once (their trie
    paths from one kernel call), from the root and below the nodes of one and two
    spaces (SmolLM2 has `` name``, not ``  name``), reads what its walks down each name
    read: the same state at every node, each token ending in the same state, the same
    exits."""
    words = ["name", "description", "address", "value"] * 4
    names = [f"{word}_{k}" for k, word in enumerate(words)]
    schema = {"type": "object", "properties": {name: {"type": "integer"} for name in names}}
    index = TokenIndex(automaton_of(JsonSchema(schema)), smol_vocab)
    walker, parts = index._walker, index._walker.parts
    state = index.step_bytes(index.initial_state, b'{"')
    splits = [parts.lexeme_split(branch) for branch in parts.branches(state)]
    (lexeme,) = [s[0] for s in splits if s is not None and parts.lexeme_within(s[0]) is not None]
    apart = sorted(parts.lexeme_within(lexeme)[1])
    assert len(apart) >= KEYS_WALKED_TOGETHER
    spaces = sorted(walker._paths_of(ROOT, [text])[0][0][-1] for text in (b" ", b"  "))
    for starts in (ROOT, np.asarray(spaces, np.int32)):
        together, state_at = walker._down_strings(lexeme, apart, starts)
        each = [walker._down_strings(lexeme, [name], starts) for name in apart]
        assert state_at == {node: at for _, at_each in each for node, at in at_each.items()}
        ends = dict(zip(together.tokens.tolist(), together.ends[together.inverse].tolist()))
        assert len(ends) == len(together.tokens)
        assert ends == {
            token: end
            for walk, _ in each
            for token, end in zip(walk.tokens.tolist(), walk.ends[walk.inverse].tolist())
        }
        exits = {node for walk, _ in each for node in walk.exits.tolist()}
        assert sorted(together.exits.tolist()) == sorted(exits)
        assert len(ends) >= 8  # the names' paths end tokens below either start


def test_a_row_numbers_its_joins_when_they_are_taken(smol_tokenizer, smol_vocab):
    """Inside an object key a row leads to tens of joins ("this key prefix, then the
    rest of the object"): taking a token numbers at most its own target, asking for
    the whole row numbers the others, and both give the same state for that token."""
    index = TokenIndex(automaton_of(JsonSchema(SCHEMAS["open object"])), smol_vocab)
    state = index.initial_state
    for token in smol_tokenizer.encode('{"', add_special_tokens=False):
        state = index.next_state(state, token)
    allowed = index.allowed_tokens(state)
    assert len(allowed) > 1000
    token = int(smol_tokenizer.encode('{"na', add_special_tokens=False)[-1])
    assert token in allowed.tolist()
    before = index.num_states
    taken = index.next_state(state, token)
    assert taken >= 0 and index.num_states - before <= 1
    every = index.next_states(state)
    assert index.num_states - before > 10, "the other targets were numbered eagerly"
    assert every.min() >= 0
    assert int(every[allowed.tolist().index(token)]) == taken
    assert index.next_state(state, token) == taken


def test_a_union_of_joins_is_walked_join_by_join_without_its_term(smol_tokenizer, smol_vocab):
    """``{"na`` is read by the key ``name`` and by "any other key": it leads to a union
    of two joins (each key's prefix, then its rest of the object). Its row and its
    finality come from the joins themselves, so the union's term is never built, and
    every row on the way reads as the plain walk's."""
    fast, plain = pair(JsonSchema(SCHEMAS["open object"]), smol_vocab)
    parts = fast._parts
    assert parts is not None
    a, b = fast.initial_state, plain.initial_state
    text = '{"na'
    for token in smol_tokenizer.encode(text, add_special_tokens=False):
        a, b = fast.next_state(a, token), plain.next_state(b, token)
    joins = parts.union_joins(a)
    assert joins is not None and len(joins) == 2
    np.testing.assert_array_equal(fast.allowed_tokens(a), plain.allowed_tokens(b))
    assert fast.is_final(a) == plain.is_final(b)
    assert parts._terms[a] is None, "the union's term was built to walk its row"
    for token in smol_tokenizer.encode('me": "x", "n": 1}', add_special_tokens=False):
        a, b = fast.next_state(a, token), plain.next_state(b, token)
        assert a >= 0 and b >= 0
        np.testing.assert_array_equal(fast.allowed_tokens(a), plain.allowed_tokens(b))
    assert fast.is_final(a) and plain.is_final(b)
    assert parts.union_joins(parts.initial) is None


def test_a_key_s_walk_numbers_its_prefix_states_and_derives_them_when_asked(smol_vocab):
    """A lexeme of one string (an object key) is walked down its trie path with a state
    per prefix that ends tokens, numbered but not derived (``after``); asked for, each
    state's term is the lexeme's derivative by its prefix, and the walk is the one
    stepping each node gives."""
    key = lexeme(literal(b'description"'))  # after the opening quote
    automaton = DerivativeAutomaton(cat(key, literal(b":")))
    table = ByteTable(automaton, 10_000)
    walker = RowWalker(table, smol_vocab.trie, smol_vocab.size, automaton)
    state = automaton.lexeme_state(key)
    before = automaton.num_states
    walked = walker._literal_walk(state, b'description"')
    pending = [end for end in walked.ends.tolist() if end != automaton.exit_state]
    assert len(pending) >= 2 and all(end >= before for end in pending)
    assert all(end in automaton._pending_prefixes for end in pending), "derived eagerly"
    expected, _ = walker._down_strings(state, [b'description"'])
    np.testing.assert_array_equal(walked.tokens, expected.tokens)
    np.testing.assert_array_equal(walked.exits, expected.exits)
    terms = [automaton.term(end) for end in walked.ends.tolist()]
    assert terms == [automaton.term(end) for end in expected.ends.tolist()]


@pytest.mark.parametrize("read", [1, 4, 11])
def test_a_key_read_in_part_walks_its_rest_without_a_term(smol_vocab, read):
    """A state a key's walk numbered (``after``) knows the string left to it: its own
    root walk follows that string with its term still unbuilt, and it accepts nothing
    yet; built afterwards, the term is the key's derivative by what was read, and the
    walk is the one the kernel reads from the built term's expanded states."""
    text = b'description"'
    key = lexeme(literal(text))
    walker, automaton = walker_of(cat(key, literal(b":")), smol_vocab)
    state = automaton.after(automaton.lexeme_state(key), text, read)
    assert automaton.literal_text(state) == text[read:]
    assert automaton.literal_text(automaton.lexeme_state(key)) is None  # not numbered so
    assert not automaton.accepts(state)
    fast = walker._root_walk(state)
    assert isinstance(fast, _LexemeWalk)
    assert state in automaton._pending_prefixes, "the term was built"
    assert automaton.term(state) == reduce(derivative, text[:read], key)
    assert walk_differences(fast, walker._lexeme_walk(ROOT, state), automaton) == []


def test_branches_meeting_in_one_lexeme_state_lead_to_its_join():
    """Two union branches whose lexemes reach the same state on a token, with the same
    continuation, hand out that pair twice (a code per lexeme walk): the token leads to
    the pair's join, not to a second state for a union of two equal items."""
    continuation = literal(b"!")
    first = lexeme(alt(literal(b"xa"), literal(b"ya")))
    second = lexeme(alt(literal(b"xa"), literal(b"za")))
    union = alt(cat(first, continuation), cat(second, continuation))
    vocabulary = Vocabulary.from_raw([b"x", b"y", b"z", b"a", b"!", b"a!", None], eos_ids=6)
    automaton = DerivativeAutomaton(union)
    index = TokenIndex(automaton, vocabulary)
    assert automaton.branches(index.initial_state) is not None, "walked branch by branch"
    target = index.next_state(index.initial_state, 0)  # "x": both branches read it
    inside = automaton.lexeme_state(derivative(first, ord("x")))
    assert target == automaton.join(inside, automaton.lexeme_state(continuation))
    assert index.allowed_tokens(target).tolist() == [3, 5]  # "a", "a!"


def test_automata_without_parts_walk_as_before(smol_vocab):
    """A regex has no lexemes: both settings give one and the same walk."""
    fast, plain = pair(Regex(r"[a-z]+@[a-z]+\.(com|org)"), smol_vocab)
    assert_same_walks(fast, plain, seed=1, steps=12)


# ------------------------------------------------------- random schemas, small vocab

WORDS = [b'"', b"a", b"b", b'"a', b'a"', b'":', b'",', b"{", b"}", b'{"', b'"}', b",", b":"]
WORDS += [
    b" ",
    b"\\",
    b'\\"',
    b"1",
    b"12",
    b"[",
    b"]",
    b'["',
    b'"]',
    b"ab",
    b'b"',
    b"\xc3",
    b"\xa9",
    b"-",
    b".",
    b"5",
    b"e",
    b"e-",
    b"0.",
    b"1,",
    b"2]",
    b".5}",
]

keys = st.sampled_from(["a", "b", "ab", 'a"b'])
leaves = st.sampled_from(
    [
        {"type": "string"},
        {"type": "string", "maxLength": 2},
        {"type": "string", "pattern": "^a+$"},
        {"type": "integer"},
        {"type": "integer", "minimum": 3},
        {"type": "number", "maximum": 12, "exclusiveMinimum": -2},
        {"type": "number", "multipleOf": 0.5},
        {"enum": ["a", "ab", 1]},
        {"const": "b"},
    ]
)
schemas = st.recursive(
    leaves,
    lambda inner: st.one_of(
        st.builds(lambda items: {"type": "array", "items": items}, inner),
        st.builds(
            lambda properties, extra: {
                "type": "object",
                "properties": properties,
                "additionalProperties": extra,
            },
            st.dictionaries(keys, inner, max_size=3),
            st.one_of(st.booleans(), inner),
        ),
        st.builds(lambda branches: {"anyOf": branches}, st.lists(inner, min_size=1, max_size=3)),
    ),
    max_leaves=5,
)


@settings(max_examples=60)
@given(schemas, st.integers(0, 1000))
def test_shared_walks_equal_plain_walks_on_random_schemas(schema, seed):
    vocabulary = Vocabulary.from_raw([*WORDS, None], eos_ids=len(WORDS))
    fast, plain = pair(JsonSchema(schema), vocabulary)
    assert_same_walks(fast, plain, seed=seed, steps=25)


@settings(max_examples=80, deadline=None)
@given(schemas, st.lists(st.sampled_from(WORDS), max_size=12))
def test_splits_kept_by_an_automaton_s_memo_are_fresh_splits(schema, words):
    """``SplitMemo`` keeps ``split_lexeme``'s answer per concatenation: every term a
    text leads to, and every branch of those, split through one memo shared along the
    walk (each asked twice, the second time read back) splits as it does alone."""
    memo = SplitMemo()
    term = JsonSchema(schema).term()
    met = []
    for byte in b"".join(words):
        met.append(term)
        met.extend(branch_terms(term, memo=memo) or ())
        term = derivative(term, byte)
        if term is EMPTY:
            break
    for item in met:
        fresh = split_lexeme(item)
        assert split_lexeme(item, memo) == fresh
        assert split_lexeme(item, memo) == fresh


# --------------------------------------------------------------------- the term


def test_unions_inside_a_union_are_taken_apart_to_the_lexemes():
    """``(A x | B y) k | (C z | A z) m``, none of whose items splits, gives the
    branches ``A x k``, ``B y k``, ``C z m``, ``A z m``: the same language, each a
    lexeme then the rest. Behind a union of whitespace forms, a thunk whose body is a
    union (an object's members) is taken apart into whitespace then each member."""
    a, b, c = (lexeme(literal(word)) for word in (b'"a"', b'"b"', b'"c"'))
    x, y, z, k, m = (literal(byte) for byte in (b"x", b"y", b"z", b"k", b"m"))
    term = alt(cat(alt(cat(a, x), cat(b, y)), k), cat(alt(cat(c, z), cat(a, z)), m))
    branches = branch_terms(term)
    assert branches is not None
    assert set(branches) == {cat(a, x, k), cat(b, y, k), cat(c, z, m), cat(a, z, m)}
    for text in (b'"a"xk', b'"b"yk', b'"c"zm', b'"a"zm', b'"a"yk', b'"c"zk', b'"b"zm'):
        assert matches(term, text) == matches(alt(*branches), text)
    body = thunk("members", lambda: alt(cat(a, x), cat(b, y)))  # an object's members
    space = alt(literal(b" "), literal(b"\n"), EPS)
    spaced = cat(space, body, k)
    assert set(branch_terms(spaced) or ()) == {cat(space, a, x, k), cat(space, b, y, k)}
    for text in (b' "a"xk', b'"b"yk', b'\n"a"yk', b'"a"x'):
        assert matches(spaced, text) == matches(alt(*branch_terms(spaced)), text)


def test_branches_that_do_not_split_and_share_a_head_are_joined():
    """``q* y | q* z`` beside a branch that splits is walked as ``q* (y | z)``: one
    plain walk, not one per branch (``oneOf`` alternatives keyed by which key is
    present hold one refused value, then different rests). The language is the same."""
    a = lexeme(literal(b'"a"'))
    head = star(literal(b"q"))
    x, y, z = (literal(byte) for byte in (b"x", b"y", b"z"))
    term = alt(cat(a, x), cat(head, y), cat(head, z))
    branches = branch_terms(term)
    assert branches is not None
    assert set(branches) == {cat(a, x), cat(head, alt(y, z))}
    for text in (b'"a"x', b"qqy", b"z", b"qz", b"qqx", b'"a"y'):
        assert matches(term, text) == matches(alt(*branches), text)


def test_lexeme_derivatives_stay_lexemes_and_end_in_eps():
    word = lexeme(literal(b'"ab"'))
    assert isinstance(word, Lexeme) and not nullable(word)
    after = word
    for byte in b'"ab':
        after = derivative(after, byte)
        assert isinstance(after, Lexeme)
    assert derivative(after, ord('"')) is EPS
    assert lexeme(literal(b"")) is EPS and lexeme(word) is word


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(["ab", "abc", "b", "ba", "cab", "a"]), min_size=2, max_size=4))
def test_a_union_state_is_the_union_of_its_items(words):
    """``union`` numbers a state at once and builds its term on first use: the term
    must be the union of the items (a state, or a lexeme then its continuation), and
    the same items must give the same state."""
    automaton = DerivativeAutomaton(literal(b"x"))
    states = [automaton.lexeme_state(literal(word.encode())) for word in words]
    items = (states[0], (automaton.lexeme_state(lexeme(literal(b"q"))), states[1]), *states[2:])
    union = automaton.union(items)
    assert automaton.union(items) == union
    expected = alt(
        literal(words[0].encode()),
        cat(lexeme(literal(b"q")), literal(words[1].encode())),
        *(literal(word.encode()) for word in words[2:]),
    )
    assert automaton.term(union) == expected
    for word in [words[0], "q" + words[1], *words[2:]]:
        assert matches(automaton.term(union), word.encode())


# ------------------------------------------------------------------ walk shortcuts


def walker_of(
    term, vocabulary: Vocabulary, shared: LexemeWalkCache | None = None
) -> tuple[RowWalker, DerivativeAutomaton]:
    automaton = DerivativeAutomaton(term)
    table = ByteTable(automaton, 10_000)
    walker = RowWalker(table, vocabulary.trie, vocabulary.size, automaton, shared)
    return walker, automaton


def walked(walk, automaton: DerivativeAutomaton) -> tuple[dict[int, object], list[int]]:
    """``{token: the term it ends in}`` and the sorted exit nodes of a lexeme walk."""
    ends = walk.ends[walk.inverse].tolist()
    terms = {token: automaton.term(end) for token, end in zip(walk.tokens.tolist(), ends)}
    return terms, sorted(walk.exits.tolist())


def walk_differences(walk, expected, automaton, expected_automaton=None) -> list[object]:
    """The first few differences between two lexeme walks (tokens read by one only or
    ending in other terms, exits of one only): empty when they read alike. Short, so
    a failure reports fast (pytest's diff of two vocabulary-sized dicts does not)."""
    (terms, exits), (other_terms, other_exits) = (
        walked(walk, automaton),
        walked(expected, expected_automaton or automaton),
    )
    tokens = sorted(terms.keys() | other_terms.keys())
    differ = [("token", t) for t in tokens if terms.get(t) != other_terms.get(t)]
    differ += [("exit", node) for node in sorted(set(exits) ^ set(other_exits))]
    return differ[:5]


FINITE_LEXEMES = {
    "key": literal(b'"name"'),
    "short key": literal(b'"id"'),
    "escaped key": literal(b'"a\\"b"'),
    "non-ascii key": literal(b'"\xc3\xa9t\xc3\xa9"'),
    "no token": literal(b"\xff\xfe"),
    "whitespace then a key": cat(whitespace(8), literal(b'"name"')),
    "a separator, whitespace, a key": cat(literal(b","), whitespace(2), literal(b'"id"')),
    "enum": alt(*(literal(json.dumps(word).encode()) for word in ["red", "green", "re", "x"])),
    "spaces then a colon": cat(repeat(byte_set(b" \t"), 0, 3), literal(b":")),
}


@pytest.mark.parametrize("name", FINITE_LEXEMES)
def test_finite_walks_equal_kernel_walks(smol_vocab, name):
    """A lexeme with few strings walked down their trie paths reads the tokens, ends
    and exits the kernel's walk over expanded states reads."""
    walker, automaton = walker_of(lexeme(FINITE_LEXEMES[name]), smol_vocab)
    state = automaton.initial
    strings = automaton.lexeme_strings(state, 64)
    assert strings is not None
    fast = walker._finite_walk(state, strings)
    assert len(set(fast.tokens.tolist())) == len(fast.tokens)  # each token once
    assert walk_differences(fast, walker._lexeme_walk(ROOT, state), automaton) == []


def string_exits(vocabulary: Vocabulary) -> np.ndarray:
    """The trie nodes with children where a JSON string ends (``"``, ``",``, ``", ``...):
    where an object's next key is walked below."""
    walker, automaton = walker_of(ANY_STRING, vocabulary)
    inside = automaton.step(automaton.initial, ord('"'))
    return walker._lexeme_walk(ROOT, inside).exits


@pytest.mark.parametrize("name", FINITE_LEXEMES)
def test_finite_walks_below_nodes_equal_kernel_walks(smol_vocab, name):
    """Below where a string ends, a lexeme with few strings walked down their paths
    from each node reads the tokens, ends and exits of the kernel's walk below them."""
    exits = string_exits(smol_vocab)
    walker, automaton = walker_of(lexeme(cat(literal(b", "), FINITE_LEXEMES[name])), smol_vocab)
    state = automaton.initial
    strings = automaton.lexeme_strings(state, 64)
    assert strings is not None
    fast = walker._finite_walk(state, strings, exits)
    assert len(set(fast.tokens.tolist())) == len(fast.tokens)
    assert walk_differences(fast, walker._lexeme_walk(exits, state), automaton) == []
    if name == "key":
        assert len(fast.tokens), "SmolLM2 spells ', \"name' below a string's end"


KEY_CHARS = st.sampled_from(["a", "b", "n", "\u00e9", "\u65e5", '"', "\\", "\n", "\x01"])


@settings(max_examples=30, deadline=None)
@given(
    st.lists(st.text(KEY_CHARS, max_size=5), min_size=1, max_size=5),
    st.text(KEY_CHARS, max_size=4),
    st.integers(0, 3),
)
@example(["name", "nap"], "", 0)  # tokens such as 'name":' run past a whole key
@example(["name", "nap"], "na", 0)
def test_walks_within_a_string_equal_kernel_walks(smol_vocab, names, read, cut):
    """ "Any other key" walked down its keys, taking slices of the plain string's walk
    everywhere else, reads the tokens, ends and exits of the kernel's walk, and its
    mask packs those tokens: after a random text (cut inside a character or not), with
    the string's walk sorted per walk (no cache) and kept sorted by a cache another
    index filled."""
    text = encode_string(read)[: -1 - cut] or b'"'
    shared = LexemeWalkCache()
    for cache in (None, shared, shared):
        walker, automaton = walker_of(string_except(names), smol_vocab, cache)
        state = automaton.initial
        for byte in text:
            state = automaton.step(state, byte)
        assume(state >= 0)
        within = automaton.lexeme_within(state)
        if within is None:
            return  # the text left every key: the state is the plain string's
        found = walker._within_walk(state, *within)
        kernel = walker._lexeme_walk(ROOT, state)
        if isinstance(found, _CutWalk):  # the string's walk read through the cut mask
            assert walk_differences(read_through(found), kernel, automaton) == []
            fast = found.materialized(walker.trie, walker.words)
        else:
            fast = found
        assert len(set(fast.tokens.tolist())) == len(fast.tokens)  # each token once
        assert walk_differences(fast, kernel, automaton) == []
        mask = fast.packed(walker.words)
        if mask is not None:
            np.testing.assert_array_equal(mask, pack_bitmask(fast.tokens, walker.words))


@settings(max_examples=30, deadline=None)
@given(st.lists(st.text(KEY_CHARS, max_size=5), min_size=1, max_size=5), st.integers(0, 3))
@example(["name", "nap"], 0)
@example(["", "a"], 1)
def test_walks_within_a_string_below_nodes_equal_kernel_walks(smol_vocab, names, read):
    """ "Any other key" after ``, `` below where a string ends (``", "na``), walked down
    its keys below each node and taking the plain string's walk below them everywhere
    else, reads the tokens, ends and exits of the kernel's walk below those nodes."""
    exits = string_exits(smol_vocab)
    walker, automaton = walker_of(string_except(names), smol_vocab, LexemeWalkCache())
    state = automaton.initial
    for byte in encode_string(names[0])[:read]:
        state = automaton.step(state, byte)
    assume(state >= 0)
    within = automaton.lexeme_within(state)
    assume(within is not None)
    fast = walker._within_below(exits, state, *within)
    assert len(set(fast.tokens.tolist())) == len(fast.tokens)
    assert walk_differences(fast, walker._lexeme_walk(exits, state), automaton) == []


def test_a_cut_walk_is_kept_by_the_vocabulary_and_read_back(smol_vocab):
    """ "Any other key" after a key prefix is cut from the JSON string's walk, and kept
    by the vocabulary as the cut (its mask, exits and own tokens, over the string's
    walk): another index over the same keys reads it back, the same arrays, instead of
    walking down the keys again, and reads what the kernel reads."""
    shared = LexemeWalkCache()
    cuts = []
    for _ in range(2):
        walker, automaton = walker_of(string_except(["name", "nap"]), smol_vocab, shared)
        state = automaton.initial
        for byte in b'"na':
            state = automaton.step(state, byte)
        held = len(shared)
        cut = walker._root_walk(state)
        assert isinstance(cut, _CutWalk)
        assert (
            walk_differences(read_through(cut), walker._lexeme_walk(ROOT, state), automaton) == []
        )
        cuts.append((cut, len(shared) - held))
    (first, added), (second, added_again) = cuts
    assert added >= 1 and added_again == 0
    assert second.mask is first.mask and second.base.tokens is first.base.tokens


def read_through(cut: _CutWalk) -> _LexemeWalk:
    """The tokens a row reads from ``cut``'s blocks: the base's that its mask holds,
    then its own, as one walk."""
    base, own = cut.base, cut.own
    kept = np.isin(base.tokens, mask_tokens(cut.mask))
    return _LexemeWalk(
        np.concatenate([base.tokens[kept], own.tokens]),
        np.concatenate([base.inverse[kept], own.inverse + len(base.ends)]),
        np.concatenate([base.ends, own.ends]),
        cut.exits,
    )


def pattern_states(pattern: str, text: bytes, vocabulary: Vocabulary, shared=None):
    """A walker over the string of an unanchored ``pattern``, and its lexeme states
    after each byte of ``text`` (its opening quote first) while it lives."""
    term = JsonSchema({"type": "string", "pattern": pattern}).term()
    walker, automaton = walker_of(term, vocabulary, shared)
    states, state = [], automaton.initial
    for byte in b'"' + text:
        state = automaton.step(state, byte)
        if state < 0:
            break
        states.append(state)
    return walker, automaton, states


def assert_root_walk_is_the_kernel_s(walker: RowWalker, automaton, state: int) -> object:
    """``state``'s root walk (cut or whole) reads what the kernel's walk reads: through
    a row's blocks and materialized. Returns the walk."""
    found = walker._root_walk(state)
    kernel = walker._lexeme_walk(ROOT, state)
    if isinstance(found, _CutWalk):
        assert walk_differences(read_through(found), kernel, automaton) == []
        whole = found.materialized(walker.trie, walker.words)
    else:
        whole = found
    assert len(set(whole.tokens.tolist())) == len(whole.tokens)  # each token once
    assert walk_differences(whole, kernel, automaton) == []
    return found


@settings(max_examples=25, deadline=None)
@given(
    st.sampled_from(["[0-9]{2}-", "ab|ba", "a[0-9]?b", "(ab){2}", "[0-9]+[.][0-9]", "z$"]),
    st.text("0123ab-.x ", max_size=8),
)
@example("[0-9]{3}-", "x12")
@example("[0-9]+[.][0-9]", "1.2 ")
@example("z$", "az")  # the closing quote ends the string only after a z
def test_walks_cut_by_first_byte_equal_kernel_walks(smol_vocab, pattern, read):
    """An unanchored pattern's string after each character of a text: its root walk,
    cut from an earlier state's walk where most first bytes enter alike and walked
    below the others, reads the tokens, ends and exits of the kernel's walk."""
    walker, automaton, states = pattern_states(pattern, read.encode(), smol_vocab)
    for state in states:
        assert_root_walk_is_the_kernel_s(walker, automaton, state)


def test_a_match_in_progress_walks_only_the_first_bytes_it_changes(smol_vocab):
    """Each hex digit read into a MAC address is a new state of the unanchored pattern;
    its walk is cut from the first content state's, and only the children of the root
    entered otherwise (hex digits, the separators, the quote) are walked again. A
    second index reads the cuts back from the vocabulary, the same arrays."""
    shared = LexemeWalkCache()
    pattern, text = "([0-9a-f]{2}[:-]){2}[0-9a-f]{2}", b"x 01:2"
    cuts = []
    for _ in range(2):
        walker, automaton, states = pattern_states(pattern, text, smol_vocab, shared)
        found = [assert_root_walk_is_the_kernel_s(walker, automaton, s) for s in states[1:]]
        cut = [walk for walk in found if isinstance(walk, _CutWalk)]
        assert len(cut) >= 4  # "0", "1", ":" and "2" read into the match
        for walk in cut:
            assert len(walk.own.tokens) * 4 < len(walk.base.tokens)
        cuts.append(cut)
    first, second = cuts
    assert [walk.mask for walk in second] == [walk.mask for walk in first]
    assert all(a.mask is b.mask for a, b in zip(first, second))


def test_a_walk_cut_by_first_byte_ends_at_the_root_where_its_head_may_end(smol_vocab):
    """A head that may end (``text*``, as a number may) and the same head before its
    first byte (``text+``) enter every child of the root alike: the second's walk is
    the first's, cut, less the root among the exits (the continuation may start right
    there after the first, not after the second)."""
    text = byte_set(range(0x20, 0x7F))
    walker, automaton = walker_of(cat(text, star(text)), smol_vocab)
    going = automaton.initial
    may_end = automaton.step(going, ord("a"))
    first, cut_from = walker._by_first_bytes(may_end)
    second, cut_from_again = walker._by_first_bytes(going)
    assert isinstance(first, _LexemeWalk) and cut_from is None
    assert isinstance(second, _CutWalk) and cut_from_again == may_end
    assert walk_differences(first, walker._lexeme_walk(ROOT, may_end), automaton) == []
    kernel = walker._lexeme_walk(ROOT, going)
    assert walk_differences(read_through(second), kernel, automaton) == []
    assert 0 in first.exits.tolist() and 0 not in second.exits.tolist()
    assert len(second.own.tokens) == 0


def test_other_keys_are_in_the_string_s_states_once_off_the_keys():
    """Off every key, "any other key" is in the plain string's states (the same terms,
    so one automaton state), and on a key it is not."""
    other, string = string_except(["name", "nap"]), ANY_STRING
    for text, same in [
        (b'"', False),
        (b'"na', False),
        (b'"x', True),
        (b'"nb', True),
        (b'"nam', False),
    ]:
        for byte in text:
            other, string = derivative(other, byte), derivative(string, byte)
        assert (other is string) == same
        other, string = string_except(["name", "nap"]), ANY_STRING


def test_walks_below_a_string_s_exits_are_shared_across_indexes(smol_vocab):
    """The walk of an object's next key below the nodes where a JSON string ends (tokens
    such as ``", "a``), kept by one index, reads in another the tokens, ends and exits
    that index's own kernel walk reads."""
    shared = LexemeWalkCache()
    string_walker, string_automaton = walker_of(ANY_STRING, smol_vocab)
    inside = string_automaton.step(string_automaton.initial, ord('"'))
    exits = string_walker._lexeme_walk(ROOT, inside).exits
    assert len(exits) > 5
    key = lexeme(cat(literal(b","), whitespace(2), literal(b'"age"')))
    first, first_automaton = walker_of(key, smol_vocab)
    first.shared = shared
    kept = first._below_walk(exits, first_automaton.initial)
    held = len(shared)  # the walk, and the trie paths its strings spell
    assert len(kept.tokens) and held >= 1
    second, second_automaton = walker_of(alt(key, literal(b"}")), smol_vocab)
    second.shared = shared
    state = second_automaton.lexeme_state(first_automaton.lexeme_key(first_automaton.initial))
    reused = second._below_walk(exits, state)
    assert len(shared) == held  # read from the cache, nothing new kept
    own = second._lexeme_walk(exits, state)
    assert walk_differences(reused, own, second_automaton) == []
    assert walk_differences(reused, kept, second_automaton, first_automaton) == []


def test_a_literal_s_trie_paths_kept_by_the_vocabulary_are_fresh_walks(smol_vocab):
    """A key's name (or the rest of one) walked by one index from the root and below a
    string's exits, then by another index over the same vocabulary: the second reads the
    vocabulary's entries, and its walks read what a walk without the cache reads, at
    either place (it fails when an entry is kept for one place and read at the other)."""
    string_walker, string_automaton = walker_of(ANY_STRING, smol_vocab)
    inside = string_automaton.step(string_automaton.initial, ord('"'))
    exits = string_walker._lexeme_walk(ROOT, inside).exits
    names = [b'name"', b'e"', b'", "id"', b'"']
    shared = LexemeWalkCache()
    for kept_by_first in (True, False):
        for text in names:
            walker, automaton = walker_of(lexeme(literal(text)), smol_vocab, shared)
            bare, bare_automaton = walker_of(lexeme(literal(text)), smol_vocab)
            for starts in (ROOT, exits):
                held = len(shared)
                walk = walker._literal_walk(automaton.initial, text, starts)
                fresh = bare._literal_walk(bare_automaton.initial, text, starts)
                assert walk_differences(walk, fresh, automaton, bare_automaton) == []
                assert len(shared) == held + (1 if kept_by_first else 0)
                strings, _ = walker._down_strings(automaton.initial, [text], starts)
                alone, _ = bare._down_strings(bare_automaton.initial, [text], starts)
                found = walk_differences(strings, alone, automaton, bare_automaton)
                assert found == []


def test_a_few_new_strings_are_followed_together_and_kept_one_by_one(smol_vocab):
    """Strings the vocabulary's cache lacks (fewer than ``KEYS_WALKED_TOGETHER``) are
    followed down the trie by one kernel call: each one's paths are what ``_paths``
    finds for it alone, from the root and below several starts, and each is kept, so
    the second time reads them all from the cache."""
    string_walker, string_automaton = walker_of(ANY_STRING, smol_vocab)
    inside = string_automaton.step(string_automaton.initial, ord('"'))
    exits = string_walker._lexeme_walk(ROOT, inside).exits
    texts = [b'name"', b'"', b"", b'zq\xff\x00"', b'id"', b'name"']
    shared = LexemeWalkCache()
    walker, _ = walker_of(lexeme(literal(b'name"')), smol_vocab, shared)
    for starts in (ROOT, exits):
        held = len(shared)
        found = walker._paths_of(starts, texts)
        assert found == [_paths(smol_vocab.trie, starts, text) for text in texts]
        assert len(shared) == held + len(set(texts) - {b""})
        assert walker._paths_of(starts, texts) == found
        assert len(shared) == held + len(set(texts) - {b""})


def test_a_number_with_bounds_is_taken_apart_where_what_follows_cannot_go_on_with_it():
    """A checked number then a delimiter splits at the number; then a digit or ``e`` may
    follow it, and the next byte would not tell whether the number goes on: no split."""
    number = checked(NumberChecker(minimum=Decimal(0)))
    rest = cat(whitespace(2), alt(literal(b","), literal(b"]")))
    assert split_lexeme(cat(number, rest)) == (number, rest)
    assert split_lexeme(cat(number, literal(b"5"))) is None
    assert split_lexeme(cat(number, alt(literal(b"e"), literal(b",")))) is None


@pytest.mark.parametrize(
    "number",
    [checked(NumberChecker(minimum=Decimal(1))), NUMBER, INTEGER_LITERAL],
    ids=["checked", "plain number", "plain integer"],
)
def test_separators_then_a_number_are_taken_apart_as_one_head(number):
    """``: 12,`` splits after the number, separators, fraction and exponent included,
    when what follows cannot start with a byte the number may read: the next byte tells
    where the number ends. Whitespace after it stays with the rest; a continuation the
    number may go on with (``5``, ``e``) leaves the term whole."""
    space = opt(literal(b" "))
    rest = cat(whitespace(2), alt(literal(b","), literal(b"}")))
    assert split_lexeme(cat(literal(b":"), space, number, rest)) == (
        cat(literal(b":"), space, number),
        rest,
    )
    assert split_lexeme(cat(space, number, rest)) == (cat(space, number), rest)
    assert split_lexeme(cat(number, rest)) == (number, rest)
    assert split_lexeme(cat(space, number, literal(b"5"))) is None
    if number is not INTEGER_LITERAL:
        assert split_lexeme(cat(space, number, literal(b"e"))) is None


@pytest.mark.parametrize(
    "after",
    [literal(b","), alt(literal(b"e1"), literal(b",")), alt(literal(b"5"), literal(b"}"))],
    ids=["a comma", "e or a comma", "a digit or a brace"],
)
@pytest.mark.parametrize("number", [NUMBER, checked(NumberChecker(maximum=Decimal(99)))])
def test_a_key_then_a_number_walks_as_the_plain_walk(smol_vocab, after, number):
    """A number after a key and ``: `` walked as a head that may end where what follows
    cannot go on with it, and whole where it can (``5``, ``e``): the rows equal the
    plain walk's in lockstep, through the digits the random walks take."""
    term = cat(lexeme(literal(b'"k"')), literal(b":"), opt(literal(b" ")), number, after)
    fast, plain = (
        TokenIndex(DerivativeAutomaton(term), smol_vocab, share_lexemes=share)
        for share in (True, False)
    )
    for seed in range(6):
        assert_same_walks(fast, plain, seed=seed, steps=12)


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_first_bytes_read_from_the_structure_hold_the_exact_ones(smol_vocab, name):
    """``first_bytes_over`` (no derivative) holds every byte ``first_bytes`` finds, on
    every state a random walk of each schema meets and on their parts, and is the
    same set on the parts the splits ask about here (JSON continuations)."""
    index = TokenIndex(automaton_of(JsonSchema(SCHEMAS[name])), smol_vocab)
    automaton = index.automaton
    rng = random.Random(len(name))
    state = index.initial_state
    equal = 0
    for _ in range(30):
        term = automaton.term(state)
        parts = [term] + (list(term.items) if isinstance(term, Cat) else [])
        for part in parts:
            exact, over = first_bytes(part), first_bytes_over(part)
            assert exact & ~over == 0
            equal += exact == over
        choices = [t for t in index.allowed_tokens(state).tolist() if t not in smol_vocab.eos_ids]
        if not choices:
            break
        state = index.next_state(state, rng.choice(choices))
    assert equal > 0


def test_first_bytes_over_a_thunk_inside_itself_or_a_complement_is_every_byte():
    """A thunk met again inside its own body, or a complement, counts as every byte:
    more than the exact set, never less. A thunk met twice along one concatenation is
    read both times (the answer must not depend on the order items are visited)."""
    every = (1 << 256) - 1
    item = thunk("item", lambda: literal(b"a"))
    twice = cat(opt(item), item, literal(b"}"))
    assert first_bytes(twice) == first_bytes_over(twice) == byte_mask(b"a")
    unguarded: Term = thunk("unguarded", lambda: cat(opt(unguarded), literal(b"]")))
    assert first_bytes_over(unguarded) == every  # (a derivative refuses it)
    assert first_bytes_over(cat(item, item)) == byte_mask(b"a")
    assert first_bytes_over(cat(opt(literal(b" ")), literal(b"}"))) == byte_mask(b" }")
    assert first_bytes_over(complement(literal(b"x"))) == every


def test_a_bounded_plain_union_is_not_a_head_that_may_end():
    """Only a union that may go on without bound splits as a head that may end: a
    literal alternative is left to the byte walk, as plain literals are."""
    rest = cat(literal(b","), literal(b"x"))
    assert split_lexeme(cat(alt(literal(b"ab"), literal(b"c")), rest)) is None
    assert split_lexeme(cat(alt(literal(b"a"), repeat(literal(b"b"), 1, None)), rest)) == (
        alt(literal(b"a"), repeat(literal(b"b"), 1, None)),
        rest,
    )


def test_separators_then_a_number_walk_once_and_are_shared_across_indexes(smol_vocab):
    """The walk of ``: `` then a number with bounds, from the root: the separators and
    the number's bytes are read inside it, nothing after it, and it does not end at the
    root. An index of another continuation reads it from the vocabulary's cache, equal
    to its own walk."""
    shared = LexemeWalkCache()
    head = cat(literal(b":"), opt(literal(b" ")), checked(NumberChecker(maximum=Decimal(50))))
    first, first_automaton = walker_of(cat(head, literal(b",")), smol_vocab, shared)
    lexeme_state, _ = first_automaton.lexeme_split(first_automaton.initial)
    assert first_automaton.term(lexeme_state) == head
    kept = first._root_walk(lexeme_state)
    read = {smol_vocab.token_bytes[t] for t in kept.tokens.tolist()}
    assert {b":", b":-"} <= read and not any(b"," in token for token in read)
    assert 0 not in kept.exits.tolist()  # ":" alone is not a number
    second, second_automaton = walker_of(cat(head, literal(b"}")), smol_vocab, shared)
    state, _ = second_automaton.lexeme_split(second_automaton.initial)
    reused = second._root_walk(state)
    own = second._lexeme_walk(ROOT, state)
    assert walk_differences(reused, own, second_automaton) == []
    assert walk_differences(reused, kept, second_automaton, first_automaton) == []


def test_a_number_s_walk_ends_where_it_accepts_and_is_shared_across_indexes(smol_vocab):
    """The walk of a number with bounds from the root: digits, ``.`` and ``e`` are read
    inside it, and where it accepts (the root itself, after ``9``) what follows takes
    over. Kept by one index, it is read by another instead of walked again."""
    shared = LexemeWalkCache()
    number = checked(NumberChecker(minimum=Decimal(0)), b"9")
    first, first_automaton = walker_of(cat(number, literal(b",")), smol_vocab, shared)
    lexeme_state, _ = first_automaton.lexeme_split(first_automaton.initial)
    kept = first._root_walk(lexeme_state)
    read = {smol_vocab.token_bytes[t] for t in kept.tokens.tolist()}
    assert {b"0", b"7", b".", b"e"} <= read and not read & {b",", b" ", b"-"}
    assert 0 in kept.exits.tolist()  # "9" is a whole number: the comma may come next
    assert len(shared) == 1
    second, second_automaton = walker_of(cat(number, literal(b"]")), smol_vocab, shared)
    state, _ = second_automaton.lexeme_split(second_automaton.initial)
    reused = second._root_walk(state)
    assert len(shared) == 1  # read from the cache, nothing new kept
    own = second._lexeme_walk(ROOT, state)
    assert walk_differences(reused, own, second_automaton) == []
    assert walk_differences(reused, kept, second_automaton, first_automaton) == []


_READS = st.lists(st.sampled_from(["a", "é", "\\n", "\\u00e9", '\\"', "\xc3", "\\u0"]), max_size=6)


@settings(max_examples=40, deadline=None)
@given(lo=st.integers(0, 6), extra=st.one_of(st.none(), st.integers(0, 6)), read=_READS)
def test_counted_strings_walk_as_the_kernel_does(smol_vocab, lo, extra, read):
    """A string with length bounds, after any text that still fits (characters,
    escapes, a character cut inside its UTF-8 bytes or its escape), is walked from the
    plain string's counted walk to the tokens, end states and exits of a kernel walk."""
    hi = None if extra is None else lo + extra
    walker, automaton = walker_of(
        string_term({"minLength": lo, **({} if hi is None else {"maxLength": hi})}, _refuse),
        smol_vocab,
    )
    state = automaton.step(automaton.initial, ord('"'))
    for byte in "".join(read).encode("utf-8", "surrogatepass").replace(b"\xc3\x83", b"\xc3"):
        if state < 0:
            break
        state = automaton.step(state, byte)
    assume(state >= 0 and state != automaton.exit_state)
    counted = walker._counted_walk(state)
    if automaton.counting(state) is not None and (lo, hi) != (0, None):
        assert counted is not None
    if counted is not None:
        assert_counted_walk_is_the_kernel_s(walker, automaton, state, counted)


@pytest.mark.parametrize(
    ("lo", "hi", "read"), [(0, 300, 0), (90, 120, 0), (90, 120, 50), (150, None, 3)]
)
def test_bounds_past_the_longest_token_walk_as_the_kernel_does(smol_vocab, lo, hi, read):
    """Bounds further than any token's characters are clamped before the tokens are
    selected (``_counted_walk``): the walk is still the kernel's, where the clamp
    applies (a fresh string) and where it no longer does (after 50 of 120)."""
    bounds = {"minLength": lo, **({} if hi is None else {"maxLength": hi})}
    walker, automaton = walker_of(string_term(bounds, _refuse), smol_vocab)
    state = automaton.step(automaton.initial, ord('"'))
    for _ in range(read):
        state = automaton.step(state, ord("a"))
    counted = walker._counted_walk(state)
    assert counted is not None
    assert_counted_walk_is_the_kernel_s(walker, automaton, state, counted)


def assert_counted_walk_is_the_kernel_s(walker: RowWalker, automaton, state, counted) -> None:
    """A counted walk reads what the kernel's walk of ``state`` reads: through its mask,
    as a row's block does (each token looked up in trie order, as ``TokenRow`` does),
    and materialized."""
    kernel = walker._lexeme_walk(ROOT, state)
    if isinstance(counted, _HeldWalk):
        base = counted.walk
        nodes = walker.trie.token_nodes[base.tokens]
        assert (np.diff(nodes) > 0).all()  # trie order: a row's lookups search it
        kept = np.isin(base.tokens, mask_tokens(counted.mask))
        through = _LexemeWalk(base.tokens[kept], base.inverse[kept], base.ends, counted.exits)
        assert walk_differences(through, kernel, automaton) == []
        counted = counted.materialized(walker.trie, walker.words)
    assert len(set(counted.tokens.tolist())) == len(counted.tokens)
    assert walk_differences(counted, kernel, automaton) == []


@settings(max_examples=30, deadline=None)
@given(read=_READS)
@example(read=[])
@example(read=["\\u00e9", "a"])
def test_a_plain_string_after_its_counted_walk_is_read_off_it(smol_vocab, read):
    """Once a string of ``minLength: 1`` was walked by counting its characters (the row
    after its quote), the plain string it is after one character (``json_char*``
    then the quote) is walked from that counted walk, its counts dropped: the tokens,
    end states and exits of a kernel walk. A state inside a character is no plain
    repetition, and is walked on its own."""
    walker, automaton = walker_of(string_term({"minLength": 1}, _refuse), smol_vocab)
    state = automaton.step(automaton.initial, ord('"'))
    assert walker._counted_walk(state) is not None
    state = automaton.step(state, ord("a"))
    for byte in "".join(read).encode("utf-8", "surrogatepass"):
        state = automaton.step(state, byte)
    assume(state >= 0 and state != automaton.exit_state)
    plain = walker._plain_walk(state)
    assert (plain is None) == (automaton.plain_key(state) is None)
    if not read or read[-1] in ("a", "é", "\\n", '\\"'):  # a whole character last
        assert plain is not None
    if plain is not None:
        assert walk_differences(plain, walker._lexeme_walk(ROOT, state), automaton) == []


PLAIN_AFTER_COUNTED = {
    "a pattern's characters": {"type": "string", "pattern": "^[^/]+$"},
    "two runs of them": {"type": "string", "pattern": "^[^/]+/[^/]+$"},
    "a bounded string, then a plain one": {
        "type": "array",
        "items": {"type": "string", "minLength": 1},
    },
}
PLAIN_AFTER_COUNTED_VALUES = {
    "a pattern's characters": ["sec", "a b c", "é"],
    "two runs of them": ["sec/12345", "a/b", "été/x y"],
    "a bounded string, then a plain one": [["ab", "c"], ["é"]],
}


@pytest.mark.parametrize("name", sorted(PLAIN_AFTER_COUNTED))
def test_plain_rows_after_counted_rows_walk_as_the_plain_walk(smol_tokenizer, smol_vocab, name):
    """On a schema's rows (``StoreAutomaton``): the row after a pattern's first character
    is read off the counted walk of the row before it (``_plain_walk``), and the rows
    are the plain walk's along valid values and on random walks."""
    fast, plain = rows_pair(PLAIN_AFTER_COUNTED[name], smol_vocab)
    parts = fast._parts
    assert parts is not None
    read_off = 0
    for value in PLAIN_AFTER_COUNTED_VALUES[name]:
        text = json.dumps(value, ensure_ascii=False)
        tokens = smol_tokenizer.encode(text, add_special_tokens=False)
        assert_same_along(fast, plain, tokens)
        data = text.encode()
        for end in range(1, len(data)):
            state = fast.step_bytes(fast.initial_state, data[:end])
            split = parts.lexeme_split(state)
            lexeme = state if split is None else split[0]
            if parts.plain_key(lexeme) is not None:
                read_off += fast._walker._plain_walk(lexeme) is not None
    assert read_off > 0
    assert_same_walks(fast, plain, seed=len(name), steps=12)


def test_the_characters_of_a_long_bounded_string_share_one_selection(smol_vocab):
    """Each character of a string with ``maxLength: 1000`` is a new state, ending its
    tokens in new states, but the tokens it reads are the same until the bound comes
    within a token's length: they are selected once and kept by the vocabulary."""
    shared = LexemeWalkCache()
    walker, automaton = walker_of(string_term({"maxLength": 1000}, _refuse), smol_vocab, shared)
    state = automaton.step(automaton.initial, ord('"'))
    walks = []
    for byte in b"abcdefgh":
        state = automaton.step(state, byte)
        walks.append(walker._counted_walk(state))
    assert all(isinstance(walk, _HeldWalk) for walk in walks)
    assert len({id(walk.mask) for walk in walks}) == 1  # one selection
    assert len({id(walk.walk.tokens) for walk in walks}) == 1  # of one counted walk
    assert len(shared) == 2  # the plain string's counted walk and the selection
    inside = [int(walk.walk.ends[walk.walk.inverse[0]]) for walk in walks]
    assert len({automaton.term(end) for end in inside}) == len(walks)  # each count's own


def test_a_small_counted_walk_s_copy_is_selected_once_per_vocabulary(smol_vocab):
    """A uuid's last hex group and its closing quote (``[0-9a-fA-F]{12}"``) is a counted
    walk small enough that a row copies its block: the copy is made once per bounds
    and kept by the vocabulary, so a second index over it reads the same token array,
    and each index's walk, at every count read so far, is the kernel's walk with its
    own end states."""
    shared = LexemeWalkCache()
    copies = []
    for _ in range(2):
        term = JsonSchema({"type": "string", "format": "uuid"}).term()
        walker, automaton = walker_of(term, smol_vocab, shared)
        states, state = [], automaton.initial
        for byte in b'"123e4567-e89b-12d3-a456-4266':
            state = automaton.step(state, byte)
            split = automaton.lexeme_split(state)
            states.append(state if split is None else split[0])
        counted = [(s, walker._counted_walk(s)) for s in states]
        counted = [(s, walk) for s, walk in counted if walk is not None]
        assert len(counted) >= 3
        for state, walk in counted:
            assert isinstance(walk, _LexemeWalk)  # the copy, not read through a mask
            assert_counted_walk_is_the_kernel_s(walker, automaton, state, walk)
        copies.append([walk.tokens for _, walk in counted])
    first, second = copies
    assert all(a is b for a, b in zip(first, second))  # read back, not selected again


def _refuse(keyword: str, detail: str) -> None:
    raise AssertionError(f"{keyword}: {detail}")


@pytest.mark.parametrize("value", ["true", "null", '"auto"'])
def test_a_boolean_null_or_enum_value_is_walked_as_a_lexeme(smol_vocab, value):
    """After a key, whitespace then ``true``, ``null`` or an enum string splits into a
    lexeme and the rest, so its walk is shared across schemas."""
    schema = SCHEMAS["booleans, null and enums of them"]
    automaton = automaton_of(JsonSchema(schema))
    key = "ok" if value == "true" else "gone" if value == "null" else "mode"
    state = automaton.initial
    for byte in f'{{"{key}":'.encode():
        state = automaton.step(state, byte)
    branches = automaton.branches(state) or (state,)
    assert any(automaton.lexeme_split(branch) is not None for branch in branches)
    for byte in f" {value}".encode():
        state = automaton.step(state, byte)
    assert state >= 0


@pytest.mark.parametrize(
    ("name", "text"),
    [("a string or null after a space", b'{"a":'), ("strings or nulls in an array", b'["x",')],
)
def test_a_union_behind_optional_whitespace_is_walked_branch_by_branch(name, text):
    """``' '? ("..." | null) rest`` (after a key) and ``ws ("..." | null) rest`` (an
    array's next item, behind a union of whitespace forms) are taken apart as
    ``' '? "..." rest`` and ``' '? null rest``: the string branch splits as
    "separators, then a lexeme", so its walk is the vocabulary's shared one, where the
    union as a whole splits into nothing."""
    automaton, branches = two_branches_after(name, text)
    assert any(automaton.lexeme_split(branch) is not None for branch in branches)


def two_branches_after(name: str, text: bytes) -> tuple[DerivativeAutomaton, tuple[int, ...]]:
    """The automaton of ``SCHEMAS[name]`` and the two branches of its state after
    ``text``, a state that does not split whole."""
    automaton = automaton_of(JsonSchema(SCHEMAS[name]))
    assert isinstance(automaton, DerivativeAutomaton)
    state = automaton.initial
    for byte in text:
        state = automaton.step(state, byte)
    assert automaton.lexeme_split(state) is None
    branches = automaton.branches(state)
    assert branches is not None and len(branches) == 2
    return automaton, branches


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 300), max_size=150))
def test_distinct_states_small_and_large_paths_match_numpy(states):
    """Both paths of ``distinct_with_inverse`` and ``_distinct_states`` (a set when few, arrays
    when many) give ``np.unique``'s answer."""
    array = np.asarray(states, np.int32)
    distinct, inverse = distinct_with_inverse(array)
    expected, expected_inverse = np.unique(array, return_inverse=True)
    assert distinct.tolist() == expected.tolist()
    assert inverse.tolist() == expected_inverse.reshape(-1).tolist()
    assert distinct.dtype == np.int32 and inverse.dtype == np.int32
    assert _distinct_states(array) == expected.tolist()


@pytest.mark.parametrize("text", [b'{"other"', b'{"other":', b'{"name": "x", "other": '])
def test_any_value_of_another_key_is_walked_as_a_lexeme_or_a_number(text):
    """An open object's other key takes any value: ``: ' '? (V | number) rest``, where
    ``V`` is any value but a number, declared a lexeme (``json_text.any_value``). Behind
    the key's ``:`` and the optional space, the union is taken apart into ``: ' '? V
    rest`` and ``: ' '? number rest``, and both split into a head and the rest, so the
    head's walk is shared by every key of every schema rather than the whole state
    expanded after each key."""
    automaton, branches = two_branches_after("open object", text)
    assert all(automaton.lexeme_split(branch) is not None for branch in branches)


def test_each_named_key_costs_no_expansion_for_other_keys_values(smol_tokenizer, smol_vocab):
    """After each named key of an open object, the rows read "another key, then any
    value, then the object's rest", a rest of its own per key. Its value's head walks
    once per index: six more keys expand fewer than six more states (before, each key
    expanded that state and the one after its ``:``, about three states per key)."""

    def expansions(keys: int) -> int:
        schema = {
            "type": "object",
            "properties": {f"p{i}": {"type": "string"} for i in range(keys)},
        }
        index = TokenIndex(automaton_of(JsonSchema(schema)), smol_vocab)
        state = index.initial_state
        text = json.dumps({f"p{i}": "v" for i in range(keys)})
        for token in smol_tokenizer.encode(text, add_special_tokens=False):
            index.bitmask(state)
            state = index.next_state(state, token)
        assert index.is_final(state)
        return index.num_states_expanded

    expansions(3)  # the vocabulary's shared walks, as a service has them after a while
    few, many = expansions(2), expansions(8)
    assert many - few < 8 - 2, (few, many)


@pytest.mark.parametrize("name", ["open object", "closed object, patterns and formats"])
def test_an_object_s_opening_splits_off_as_one_head_before_its_keys(smol_vocab, name):
    """An object whose every member starts with a key: its body is a thunk whose body
    is ``"`` then the keys, so ``{``, the whitespace and that ``"`` are one head (opened
    in place: ``fsm.decompose._opened``), walked once per vocabulary, and the keys are
    walked below where it ends instead of a state expanded per count of indenting
    spaces. The same language, and the same walks as the plain index's."""
    automaton = automaton_of(JsonSchema(SCHEMAS[name]))
    split = automaton.lexeme_split(automaton.initial)
    assert split is not None
    head = automaton.term(split[0])
    assert isinstance(head, Lexeme)
    for text in (b'{"', b'{ "', b'{\n    "'):
        assert matches(head, text)
    assert not matches(head, b"{") and not matches(head, b"{}")
    fast, plain = pair(JsonSchema(SCHEMAS[name]), smol_vocab)
    assert_same_walks(fast, plain, seed=3, steps=30)


def test_a_lexeme_headed_by_a_lexeme_is_taken_apart_at_the_inner_one():
    """A lexeme whose item is a lexeme then more (a key's string inside an arbitrary
    value, a map's key inside the lexeme of its members) is the inner lexeme then the
    rest: the walker takes the inner one's walk, shared, instead of walking each state
    of the outer one whole. Separators ahead of the inner lexeme join it as one head; a
    ``within`` promise, a head that may end, or no lexeme inside leave it whole."""
    key = lexeme(cat(star(byte_range(ord("a"), ord("z"))), literal(b'"')))
    after = cat(literal(b":"), opt(literal(b" ")), literal(b"1"))
    assert nested_split(lexeme(cat(key, after))) == (key, after)
    space = opt(literal(b" "))
    assert nested_split(lexeme(cat(space, key, after))) == (lexeme(cat(space, key)), after)
    assert nested_split(lexeme(cat(space, key))) is None  # the head is the lexeme itself
    assert nested_split(lexeme(cat(literal(b"a"), after))) is None
    within = lexeme(cat(key, after), within=key, apart=frozenset({b"id"}))
    assert nested_split(within) is None
    number = checked(NumberChecker(minimum=Decimal(0)))
    assert nested_split(lexeme(cat(number, literal(b"}")))) is None


def test_a_lexeme_inside_another_is_where_its_pairs_are_taken_apart():
    """``inside`` of "outer lexeme, then K" is the inner lexeme's state, then a state
    whose term is the outer one's rest followed by ``K`` (the same pair each time it is
    asked); None for a lexeme with no lexeme inside and for the inner one itself."""
    key = lexeme(cat(star(byte_range(ord("a"), ord("z"))), literal(b'"')))
    after = cat(literal(b":"), literal(b"1"))
    automaton = DerivativeAutomaton(cat(lexeme(cat(key, after)), literal(b"}")))
    outer, rest = automaton.lexeme_split(automaton.initial)
    inner, then = automaton.inside(outer, rest)
    assert automaton.term(inner) == key
    assert automaton.term(then) == cat(after, literal(b"}"))
    assert automaton.inside(outer, rest) == (inner, then)
    assert automaton.inside(inner, then) is None
    bare = DerivativeAutomaton(cat(lexeme(cat(literal(b"x"), after)), literal(b"}")))
    assert bare.inside(*bare.lexeme_split(bare.initial)) is None


_NESTED_VALUE = {"a": {"bc": {"d": ["x y", {"e": "f"}]}, "g": "h"}, "n": 1}


@pytest.mark.parametrize(
    ("schema", "instance"),
    [
        ({"type": "object", "properties": {"n": {"type": "integer"}}}, _NESTED_VALUE),
        (
            {"type": "object", "additionalProperties": {"type": "number"}},
            {"a": 1, "bcd": 2.5, "e f": -3},
        ),
        ({"type": "array", "items": {}}, [_NESTED_VALUE, {"k": "v"}]),
    ],
    ids=["other keys, any values", "a map of numbers", "an array of any values"],
)
def test_strings_nested_in_lexemes_walk_as_the_plain_walk(
    smol_tokenizer, smol_vocab, schema, instance
):
    """Keys and strings at several depths inside arbitrary values and maps: the rows
    taken apart at the inner strings equal the plain walk's, token by token."""
    fast, plain = pair(JsonSchema(schema), smol_vocab)
    a, b = fast.initial_state, plain.initial_state
    text = json.dumps(instance)
    for token in smol_tokenizer.encode(text, add_special_tokens=False):
        np.testing.assert_array_equal(fast.bitmask(a), plain.bitmask(b))
        a, b = fast.next_state(a, token), plain.next_state(b, token)
        assert a >= 0 and b >= 0
    assert fast.is_final(a) and plain.is_final(b)


def test_keys_no_token_goes_on_into_are_not_walked_below_a_value_s_end(smol_tokenizer, smol_vocab):
    """Below ``", "`` (a string value's end, the next key's quote) a row reaches every
    key left of its object. The keys that start with no byte a token reads next there
    are left out (``RowWalker._opening_below``): each of them reads nothing there, the
    keys kept may, and the rows stay the plain walk's through an instance."""
    names = [f"{first}{k}_field" for k, first in enumerate("ab_c$d#e-fgh(ij")]
    schema = {
        "type": "object",
        "properties": {name: {"type": "string"} for name in names},
        "additionalProperties": False,
    }
    fast, plain = pair(JsonSchema(schema), smol_vocab)
    text = json.dumps({name: "v" for name in names[::3]})
    assert_same_along(fast, plain, smol_tokenizer.encode(text, add_special_tokens=False))

    walker, parts = fast._walker, fast._parts
    keys = fast.step_bytes(fast.initial_state, f'{{"{names[0]}": "v", "'.encode())
    items = parts.branch_parts(keys)
    assert items is not None and len(items) == len(names) - 1
    assert all(isinstance(item, tuple) for item in items), "a key's branch does not split"
    trie = smol_vocab.trie
    (path,) = follow_paths(trie.labels, trie.ends, ROOT, np.frombuffer(b' "', np.uint8))
    nodes = path[-1:]
    assert nodes[0] > 0, "no token goes on after ' \"'"
    kept = walker._branch_items(nodes, keys)
    assert walker._branch_items(ROOT, keys) == items  # from the root, every key
    next_bytes = {
        spelled[2]
        for spelled in smol_vocab.token_bytes
        if spelled and len(spelled) > 2 and spelled[:2] == b' "'
    }
    dropped = [item for item in items if item not in kept]
    assert dropped and kept, "every key, or none, starts with a byte read below ' \"'"
    for item in items:
        (key,) = parts.lexeme_strings(item[0], 2)  # the key's name, then its quote
        assert (item in kept) == (key[0] in next_bytes), key
    for head, rest in dropped:
        assert not any(len(block[0]) for block in walker._through_lexeme(nodes, head, rest))


MEETS = {
    "pattern, maxLength": {"type": "string", "pattern": "^[a-z]+-[0-9]+$", "maxLength": 7},
    "pattern, both bounds": {
        "type": "string",
        "pattern": "^[a-z0-9-]+$",
        "minLength": 3,
        "maxLength": 9,
    },
    "a pattern's own count": {"type": "string", "pattern": "^[a-z]{2,6}[0-9]?$", "maxLength": 5},
    "non-ascii pattern": {"type": "string", "pattern": "^[a-zé ]+$", "maxLength": 6},
    "a pattern ending in any text": {
        "type": "string",
        "pattern": "^(\\d+\\.\\d+\\.\\d+.*)$",
        "maxLength": 12,
    },
    "hostname": {"type": "string", "format": "hostname"},
    "hostname, minLength": {"type": "string", "format": "hostname", "minLength": 4},
}
MEET_VALUES = {
    "pattern, maxLength": ["ab-12", "abcde-1", "a-1"],
    "pattern, both bounds": ["abc", "my-host-1", "a-b"],
    "a pattern's own count": ["abcde", "ab1", "abcd5"],
    "non-ascii pattern": ["été a", "ééé", "abc"],
    "a pattern ending in any text": ["1.2.3", "10.20.3-rc.1", "1.2.34 x"],
    "hostname": ["www.example.com", "a.b.c.d.e.f.g.h", "x"],
    "hostname, minLength": ["a.bc", "api.service.io", "abcd"],
}


def rows_pair(schema: object, vocabulary: Vocabulary) -> tuple[TokenIndex, TokenIndex]:
    """A schema's rows (``compile_index``'s automaton) indexed with and without taking
    states apart."""
    indexes = []
    for share in (True, False):
        automaton, lock = vocabulary.schema_rows.compile(JsonSchema(schema))
        indexes.append(TokenIndex(automaton, vocabulary, share_lexemes=share, lock=lock))
    return indexes[0], indexes[1]


@pytest.mark.parametrize("name", sorted(MEETS))
def test_counts_met_with_a_pattern_walk_as_the_plain_walk(smol_tokenizer, smol_vocab, name):
    """A string whose length is counted beside a pattern or a format is walked as the
    meet of its members' walks (``_meet_walk``): the rows are the plain walk's along
    valid values (their states still taken apart as meets at every step inside the
    string) and on random walks, which run into the bounds and the patterns' ends."""
    schema = MEETS[name]
    if "pattern" in schema:  # its rows first: a pattern's ``[a-z]+`` counts to 1 too
        rows_pair({"type": "string", "pattern": schema["pattern"]}, smol_vocab)
    fast, plain = rows_pair(schema, smol_vocab)
    parts = fast._parts
    assert parts is not None
    for value in MEET_VALUES[name]:
        text = json.dumps(value, ensure_ascii=False)
        tokens = smol_tokenizer.encode(text, add_special_tokens=False)
        assert_same_along(fast, plain, tokens)  # each value read to acceptance
        state = fast.step_bytes(fast.initial_state, b'"')
        for character in value:
            split = parts.lexeme_split(state)
            members = parts.counted_meet(state if split is None else split[0])
            assert members is not None and parts.counting(members[0]) is not None
            state = fast.step_bytes(state, character.encode())
    assert_same_walks(fast, plain, seed=len(name), steps=12)


BOUNDED_VALUES = {
    "array of short strings": {"type": "array", "items": {"type": "string", "maxLength": 3}},
    "bounded values": {
        "type": "object",
        "properties": {
            "code": {"type": "string", "minLength": 2, "maxLength": 5},
            "note": {"type": "string", "maxLength": 12},
        },
        "required": ["code"],
    },
    "bounded string or number": {
        "anyOf": [{"type": "string", "minLength": 1, "maxLength": 4}, {"type": "number"}]
    },
}
BOUNDED_INSTANCES = {
    "array of short strings": ["a", "bc", "def", ""],
    "bounded values": {"code": "ab", "note": "hello world"},
    "bounded string or number": "abcd",
}


@pytest.mark.parametrize("name", sorted(BOUNDED_VALUES))
def test_bounded_strings_counted_below_their_quote_walk_as_plain_rows(
    smol_tokenizer, smol_vocab, name
):
    """A bounded string where a value starts is counted below its whitespace and quote
    (``StoreAutomaton.counted_after_prefix``, ``RowWalker._counted_walk`` below nodes):
    over SmolLM2's vocabulary, where tokens such as ``' "'`` and ``'",'`` cross the
    quotes, the rows taken apart allow what the plain rows allow at every step of
    random walks (which fill the strings to their bounds) and along an instance."""
    fast, plain = rows_pair(BOUNDED_VALUES[name], smol_vocab)
    assert_same_walks(fast, plain, seed=len(name), steps=40)
    text = json.dumps(BOUNDED_INSTANCES[name])
    fast, plain = rows_pair(BOUNDED_VALUES[name], smol_vocab)
    assert_same_along(fast, plain, smol_tokenizer.encode(text, add_special_tokens=False))


CROSSING_TOKENS = [
    *(bytes((byte,)) for byte in b'abcxyz-019."[],'),
    *(bytes((byte,)) for byte in "é".encode()),
    *(b"ab", b"abc", b"abcd", b"a-1", b"-12", b"x.y", b".c", b"\xc3\xa9t"),
    *(b'["', b'"]', b'","', b'a"', b'ab"', b'abc"', b'1"', b'12"', b'c.x"'),
    *(b'a",', b'ab",', b'123",', b'1"]', b'12"]', b'z"]', b'\xc3\xa9",'),
]


@pytest.mark.parametrize("name", sorted(MEETS))
def test_counts_met_with_a_pattern_end_where_both_end(name):
    """Tokens that close such a string and go on (``ab",``, ``12"]``) are read where
    the count and the pattern both end, and nowhere else: random walks through an
    array of them, over a vocabulary of such tokens at every length, read as the
    plain walk does."""
    vocabulary = Vocabulary.from_raw([*CROSSING_TOKENS, None], eos_ids=len(CROSSING_TOKENS))
    fast, plain = rows_pair({"type": "array", "items": MEETS[name]}, vocabulary)
    for seed in range(12):
        assert_same_walks(fast, plain, seed=seed, steps=24)
