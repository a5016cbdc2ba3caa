"""Lark grammars as byte automata: agreement with lark's LALR parser, liveness, errors."""

from __future__ import annotations

import json
from collections import deque

import lark
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fsm
from fsm.automaton import DEAD

ARITHMETIC = r"""
?start: sum
?sum: sum "+" product | sum "-" product | product
?product: product "*" atom | product "/" atom | atom
?atom: NUMBER | "-" atom | "(" sum ")"
NUMBER: /[0-9]+(\.[0-9]+)?/
%ignore " "
"""

JSON_LIKE = r"""
?start: value
?value: object | array | STRING | NUMBER | "true" | "false" | "null"
array: "[" [value ("," value)*] "]"
object: "{" [pair ("," pair)*] "}"
pair: STRING ":" value
STRING: /"([^"\\]|\\.)*"/
NUMBER: /-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/
%ignore /[ \t\n]+/
"""

SQL = r"""
start: "select" columns "from" NAME [where]
columns: "*" | NAME ("," NAME)*
where: "where" cond
?cond: cond "or" conj | conj
?conj: conj "and" cmp | cmp
cmp: NAME OP value | "(" cond ")"
OP: "<=" | ">=" | "!=" | "=" | "<" | ">"
?value: NAME | NUMBER | STRING
NAME: /[a-z_][a-z0-9_]*/
NUMBER: /[0-9]+/
STRING: /'[^']*'/
%ignore /[ ]+/
"""

ESCAPED = r"""
start: "[" [ESCAPED_STRING ("," ESCAPED_STRING)*] "]"
%import common.ESCAPED_STRING
%ignore " "
"""

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


class Pair:
    """A grammar's automaton next to lark's own parser."""

    def __init__(self, text: str) -> None:
        self.automaton = fsm.Grammar(text).automaton()
        self.lark = lark.Lark(text, parser="lalr")

    def lark_accepts(self, text: str) -> bool:
        try:
            self.lark.parse(text)
        except lark.exceptions.LarkError:
            return False
        return True

    def accepts(self, text: str) -> bool:
        state = walk(self.automaton, text.encode())
        return state != DEAD and self.automaton.expand(state)[1]


def walk(automaton: fsm.ByteAutomaton, data: bytes) -> int:
    """The state after ``data`` (``DEAD`` as soon as a byte is rejected)."""
    state = automaton.initial
    for byte in data:
        state = int(automaton.expand(state)[0][byte])
        if state == DEAD:
            return DEAD
    return state


def reaches_final(automaton: fsm.ByteAutomaton, state: int, budget: int = 3000) -> bool:
    """Breadth-first search for a final state (one byte per successor state)."""
    seen, queue = {state}, deque([state])
    while queue and len(seen) < budget:
        current = queue.popleft()
        successors, final = automaton.expand(current)
        if final:
            return True
        for successor in np.unique(successors[successors != DEAD]).tolist():
            if successor not in seen:
                seen.add(successor)
                queue.append(successor)
    return False


@pytest.fixture(scope="module")
def arithmetic() -> Pair:
    return Pair(ARITHMETIC)


@pytest.fixture(scope="module")
def json_like() -> Pair:
    return Pair(JSON_LIKE)


@pytest.fixture(scope="module")
def sql() -> Pair:
    return Pair(SQL)


@pytest.fixture(scope="module")
def escaped() -> Pair:
    return Pair(ESCAPED)


# ------------------------------------------------------------------ strategies

spaces = st.sampled_from(["", "", " ", "  "])
numbers = st.from_regex(r"[0-9]{1,3}(\.[0-9]{1,2})?", fullmatch=True)


def _binary(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.builds(
        lambda a, s1, op, s2, b: f"{a}{s1}{op}{s2}{b}",
        children,
        spaces,
        st.sampled_from("+-*/"),
        spaces,
        children,
    )


arithmetic_texts = st.recursive(
    numbers,
    lambda children: st.one_of(
        _binary(children),
        children.map(lambda e: f"({e})"),
        children.map(lambda e: f"-{e}"),
    ),
    max_leaves=12,
).flatmap(lambda e: st.builds(lambda a, b: f"{a}{e}{b}", spaces, spaces))

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(10**6), 10**6)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=6),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=4), children, max_size=3)
    ),
    max_leaves=8,
)
json_texts = st.builds(
    lambda value, indent, ascii_only: json.dumps(value, indent=indent, ensure_ascii=ascii_only),
    json_values,
    st.sampled_from([None, 1]),
    st.booleans(),
)

_sql_names = st.sampled_from(["a", "b1", "t", "select_", "x_y"])
_sql_values = _sql_names | st.sampled_from(["0", "42", "'hi'", "'a b'", "''"])
_sql_cmps = st.builds(
    lambda n, op, v, s: f"{n}{s}{op}{s}{v}",
    _sql_names,
    st.sampled_from(["<=", ">=", "!=", "=", "<", ">"]),
    _sql_values,
    spaces,
)
_sql_conds = st.recursive(
    _sql_cmps,
    lambda children: (
        st.builds(
            lambda a, op, b: f"{a} {op} {b}", children, st.sampled_from(["and", "or"]), children
        )
        | children.map(lambda c: f"({c})")
    ),
    max_leaves=5,
)
sql_texts = st.builds(
    lambda cols, table, cond: f"select {cols} from {table}" + (f" where {cond}" if cond else ""),
    st.just("*") | st.lists(_sql_names, min_size=1, max_size=3).map(",".join),
    _sql_names,
    st.none() | _sql_conds,
)


def fragments(pieces: list[str], separator: str = "") -> st.SearchStrategy[str]:
    return st.lists(st.sampled_from(pieces), max_size=14).map(separator.join)


ARITHMETIC_PIECES = ["1", "23", "4.5", "0", ".", "+", "-", "*", "/", "(", ")", " ", "x"]
JSON_PIECES = ['{', '}', '[', ']', ',', ':', '"a"', '"b\\"c"', '"', "\\", "1", "-2.5", "0",
               "e3", "true", "null", "tru", " ", "\n", "é"]  # fmt: skip
SQL_PIECES = ["select", "from", "where", "and", "or", "*", ",", "(", ")", "=", "<=", "<",
              "a", "b1", "t", "42", "'hi'", "'a b'", "selectx"]  # fmt: skip
ESCAPED_PIECES = ['"', "\\", "a", "\n", " ", ",", "[", "]", "é"]


# ---------------------------------------------------------------- agreement


@SETTINGS
@given(fragments(ARITHMETIC_PIECES))
def test_arithmetic_agrees_with_lark(arithmetic: Pair, text: str) -> None:
    assert arithmetic.accepts(text) == arithmetic.lark_accepts(text)


@SETTINGS
@given(fragments(JSON_PIECES))
def test_json_like_agrees_with_lark(json_like: Pair, text: str) -> None:
    assert json_like.accepts(text) == json_like.lark_accepts(text)


@SETTINGS
@given(fragments(SQL_PIECES, separator=" "))
def test_sql_agrees_with_lark_when_words_are_separated(sql: Pair, text: str) -> None:
    assert sql.accepts(text) == sql.lark_accepts(text)


@SETTINGS
@given(fragments(SQL_PIECES))
def test_sql_accepts_whatever_lark_accepts(sql: Pair, text: str) -> None:
    if sql.lark_accepts(text):
        assert sql.accepts(text)


@SETTINGS
@given(fragments(ESCAPED_PIECES))
def test_lark_escaped_string_agrees_with_lark(escaped: Pair, text: str) -> None:
    assert escaped.accepts(text) == escaped.lark_accepts(text)


def test_glued_terminals_are_the_documented_superset(sql: Pair) -> None:
    # ``band`` is one NAME to lark's greedy lexer, ``b and`` to the automaton.
    text = "select a from t where x=band y=1"
    assert not sql.lark_accepts(text)
    assert sql.accepts(text)


@pytest.mark.parametrize(
    ("pair", "valid"),
    [
        ("arithmetic", ["1", " (1 + 2) * -3.25 / 4 ", "--1", "((((7))))"]),
        ("json_like", ['{"a": [1, -2.5e3, true, null], "b": {}}', "[]", '"x"']),
        ("sql", ["select * from t", "select a,b from t where a<=1 and (b='x' or c!=d)"]),
    ],
)
def test_examples(request: pytest.FixtureRequest, pair: str, valid: list[str]) -> None:
    grammar: Pair = request.getfixturevalue(pair)
    for text in valid:
        assert grammar.lark_accepts(text)
        assert grammar.accepts(text)
        assert not grammar.accepts(text + ")")


# ------------------------------------------------------------- prefix liveness


def _assert_prefixes_live(pair: Pair, text: str) -> None:
    assert pair.lark_accepts(text), text
    data = text.encode()
    state = pair.automaton.initial
    for i, byte in enumerate(data):
        state = int(pair.automaton.expand(state)[0][byte])
        assert state != DEAD, (text, data[: i + 1])
    assert pair.automaton.expand(state)[1]


@SETTINGS
@given(arithmetic_texts)
def test_arithmetic_prefixes_stay_live(arithmetic: Pair, text: str) -> None:
    _assert_prefixes_live(arithmetic, text)


@SETTINGS
@given(json_texts)
def test_json_prefixes_stay_live(json_like: Pair, text: str) -> None:
    _assert_prefixes_live(json_like, text)


@SETTINGS
@given(sql_texts)
def test_sql_prefixes_stay_live(sql: Pair, text: str) -> None:
    _assert_prefixes_live(sql, text)


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(["arithmetic", "json_like", "sql"]), st.binary(max_size=12))
def test_every_successor_is_live(request: pytest.FixtureRequest, name: str, noise: bytes) -> None:
    """From states reached by random bytes (walked as far as they stay alive), a final
    state is always reachable."""
    automaton = request.getfixturevalue(name).automaton
    state = automaton.initial
    for byte in noise:
        successors, _ = automaton.expand(state)
        alive = np.flatnonzero(successors != DEAD)
        if len(alive) == 0:
            break
        state = int(successors[byte if successors[byte] != DEAD else alive[byte % len(alive)]])
        assert reaches_final(automaton, state)


def test_states_are_shared_between_equal_configurations(arithmetic: Pair) -> None:
    a, b = walk(arithmetic.automaton, b"1+2*"), walk(arithmetic.automaton, b" 3 + 45.6 *")
    assert a == b


# ---------------------------------------------------------------------- specs


def test_fingerprint_is_content_based() -> None:
    assert fsm.Grammar(ARITHMETIC).fingerprint == fsm.Grammar(ARITHMETIC).fingerprint
    assert fsm.Grammar(ARITHMETIC).fingerprint != fsm.Grammar(ARITHMETIC, "sum").fingerprint
    assert fsm.Grammar(ARITHMETIC) == fsm.Grammar(ARITHMETIC)
    assert len({fsm.Grammar(ARITHMETIC), fsm.Grammar(ARITHMETIC)}) == 1


def test_other_start_rule() -> None:
    automaton = fsm.Grammar(SQL, start="cond").automaton()
    assert automaton.expand(walk(automaton, b"a = 1 or b = c"))[1]
    assert walk(automaton, b"select *") == DEAD


def test_terminal_flags_are_kept() -> None:
    automaton = fsm.Grammar('start: "select"i NAME\nNAME: /(?i:[a-z]+)/\n%ignore " "').automaton()
    assert automaton.expand(walk(automaton, b"SeLeCt Xy"))[1]


def test_unicode_terminals() -> None:
    automaton = fsm.Grammar('start: "é" WORD\nWORD: /[à-ÿ]+/').automaton()
    assert automaton.expand(walk(automaton, "éàÿ".encode()))[1]
    assert walk(automaton, "éa".encode()) == DEAD


def test_compile_gives_a_token_index_over_a_vocabulary() -> None:
    vocabulary = fsm.Vocabulary.from_raw([b"(", b")", b"1", b"+", b" ", b"1+", None], eos_ids=6)
    index = fsm.compile_index(fsm.Grammar(ARITHMETIC), vocabulary)
    state = index.initial_state
    assert sorted(index.allowed_tokens(state).tolist()) == [0, 2, 4, 5]
    for token in [0, 5, 2, 1]:  # "(" "1+" "1" ")"
        state = index.next_state(state, token)
        assert state != DEAD
    assert index.is_final(state)
    assert 6 in index.allowed_tokens(state).tolist()


# ---------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    ("text", "start", "message"),
    [
        ("start: (", "start", "invalid lark grammar"),
        ('start: "a"', "nope", "invalid lark grammar"),
        ('start: a | b\na: "x"\nb: "x"', "start", r"not LALR\(1\)"),
        ('start: "y" | a\na: "x" a', "start", "never derive"),
        ("start: A\n%declare A", "start", "without a pattern"),
    ],
)
def test_bad_grammars_raise_invalid_spec(text: str, start: str, message: str) -> None:
    with pytest.raises(fsm.InvalidSpec, match=message):
        fsm.Grammar(text, start).automaton()


def test_bad_spec_types() -> None:
    with pytest.raises(fsm.InvalidSpec):
        fsm.Grammar(b"start: 'a'")  # type: ignore[arg-type]


def test_unsupported_terminal_regex_names_the_terminal() -> None:
    with pytest.raises(fsm.UnsupportedRegex, match="WORD"):
        fsm.Grammar("start: WORD\nWORD: /a(?=b)/").automaton()


def test_state_cap() -> None:
    automaton = fsm.Grammar(ARITHMETIC).automaton(max_states=20)
    with pytest.raises(fsm.ConstraintTooLarge):
        walk(automaton, b"(" * 30)


# ------------------------------------------------------------ real tokenizer


def test_smollm2_tokens_of_valid_json_are_allowed(smol_tokenizer) -> None:
    vocabulary = fsm.Vocabulary.from_tokenizer(smol_tokenizer)
    index = fsm.compile_index(fsm.Grammar(JSON_LIKE), vocabulary)
    text = '{"name": "Ada", "tags": ["x", "y"], "n": [1, 2.5e-3, true, null]}'
    state = index.initial_state
    for token in smol_tokenizer.encode(text, add_special_tokens=False):
        assert token in index.allowed_tokens(state).tolist()
        state = index.next_state(state, token)
    assert index.is_final(state)
    assert smol_tokenizer.eos_token_id in index.allowed_tokens(state).tolist()


def test_lexeme_boundaries_are_kept_open() -> None:
    """``abc`` may be one NAME or several: the state holds a configuration for each
    parser stack, and the pending lexeme names its terminal."""
    automaton = fsm.Grammar('start: NAME+\nNAME: /[a-z]+/\n%ignore " "').automaton()
    assert automaton.terminal_names == ("NAME", "__IGNORE_0")
    configurations = automaton.configurations(walk(automaton, b"abc"))
    assert len({stack for stack, _ in configurations}) > 1
    assert {name for _, lexeme in configurations for name, _ in lexeme} == {0}
