"""Object shapes: the members every body offers are built once, and mean what the
general construction means."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from fsm.decompose import first_bytes_over, split_lexeme
from fsm.derivative_automaton import DerivativeAutomaton
from fsm.json_schema.json_text import (
    INTEGER_LITERAL,
    QUOTE,
    JsonText,
    encode_string,
    member,
    string_except,
)
from fsm.json_schema.objects import ObjectShape, _member_head, object_term
from fsm.regex import regex_term
from fsm.term_builder import StoredTerms
from fsm.term_store import TermStore
from fsm.terms import (
    EMPTY,
    Alt,
    Cat,
    Term,
    Thunk,
    alt,
    cat,
    derivative,
    first_bytes,
    lexeme,
    literal,
    matches,
    nullable,
)


def test_named_members_mean_the_general_construction() -> None:
    """Each named key's member, as a body offers it after the opening quote (the key's
    rest, then one thunk for its colon and value), reads what the member spelled out
    reads; a forbidden key is never offered."""
    number = regex_term("[0-9]+")
    shape = ObjectShape(key="test", named=(("a", number), ("gone", EMPTY), ("b", number)))
    assert shape.quoted
    for position, (name, value) in enumerate(shape.named):
        if value is EMPTY:
            continue
        offered = cat(QUOTE, _member_head(shape, position))
        spelled = member(lexeme(literal(encode_string(name))), value, 0)
        for text in (f'"{name}":12', f'"{name}":', f'"{name}"1', '"c":1', f"{name}:1"):
            assert matches(offered, text.encode()) == matches(spelled, text.encode()), text
    term = object_term(shape)
    assert matches(term, b'{"a":1,"b":2}') and matches(term, b'{"b":2,"a":1}')
    assert not matches(term, b'{"gone":1}') and not matches(term, b'{"a":1,"a":2}')


def test_a_shape_builds_nothing_per_key_until_a_body_offers_it() -> None:
    """Building a shape interns a few terms whatever the number of its keys: the
    members are built when a body first offers them (``_member_head``), and most of a
    schema's shapes are never walked, while every compile builds them all."""
    store = TermStore()
    pieces = JsonText(StoredTerms(store))

    def terms_added(count: int) -> int:
        before = len(store)
        ObjectShape(
            key=("lazy", count),
            named=tuple((f"key{count}-{i}", pieces.integer_literal) for i in range(count)),
            other_member=pieces.member(pieces.any_string, pieces.number, 1),
            ws_max=1,
            pieces=pieces,
        )
        return len(store) - before

    terms_added(1)  # the pieces every shape shares, interned once
    assert terms_added(40) <= terms_added(2) + 2


def _offered_members(term: Term, read: bytes) -> list[Cat]:
    """The members a body offers once ``read`` (ending at a key's opening quote) is read:
    the union's items, or the one member."""
    for byte in read:
        term = derivative(term, byte)
    items = term.items if isinstance(term, Alt) else (term,)
    assert all(isinstance(item, Cat) for item in items)
    return list(items)  # type: ignore[arg-type]


def test_what_follows_a_key_is_one_thunk_per_key_in_every_body() -> None:
    """A body offers each key as three items: the key, one thunk for its colon and
    value, the next body. The thunk is the same in every body that offers the key, so
    a body of ``K`` keys nests ``K`` short members, not every item of every value
    behind each next body. It opens in place, and the member means what the member
    spelled out means."""
    number = regex_term("[0-9]+")
    names = ("a", "b", "c")
    shape = ObjectShape(key="after", named=tuple((n, number) for n in names), ws_max=1)
    term = object_term(shape)
    first = _offered_members(term, b'{"')
    later = _offered_members(term, b'{"a": 1, "')
    for members in (first, later):
        assert all(len(offered.items) == 3 for offered in members)
        assert all(isinstance(offered.items[1], Thunk) for offered in members)
        assert all(offered.items[1].opens_in_place() for offered in members)
        assert all(isinstance(offered.items[2], Thunk) for offered in members)  # the next body
    by_key = {first_bytes(offered.items[0]): offered.items[1] for offered in first}
    assert len(by_key) == 3 and len(later) == 2
    for offered in later:  # "b" and "c" again, after "a"
        assert by_key[first_bytes(offered.items[0])] is offered.items[1]
    assert matches(term, b'{"a": 1, "c":22}') and not matches(term, b'{"a": 1, "a": 2}')
    assert not matches(term, b'{"a" : 1}') and not matches(term, b'{"a":}')


def test_the_text_after_a_key_splits_as_the_member_spelled_out() -> None:
    """The row after a key starts with the thunk for its colon and value; a split reads
    the thunk as its body, so the head is the colon and the value's string, and the
    rest the next body, as for the member spelled out (``fsm.decompose``)."""
    shape = ObjectShape(key="split-after", named=(("a", QUOTE), ("b", INTEGER_LITERAL)), ws_max=1)
    term = object_term(shape)
    state = term
    for byte in b'{"a"':
        state = derivative(state, byte)
    assert isinstance(state, Cat) and isinstance(state.items[0], Thunk)
    thunk = state.items[0]
    spelled = cat(thunk.body(), state.suffix(1))
    assert split_lexeme(state) == split_lexeme(spelled)
    split = split_lexeme(state)
    assert split is not None and matches(split[0], b': "') and matches(split[0], b':"')
    assert isinstance(split[1], Thunk) and not split[1].opens_in_place()  # the next body


def test_the_text_after_a_key_branches_as_the_member_spelled_out() -> None:
    """A value that is a union (a string or null) does not split after the colon: the
    row after its key is taken apart into branches, the union behind the colon
    (``branch_terms``), reading the thunk as its body. Before, the thunk at the head
    hid the union, and every such row was expanded byte by byte."""
    from fsm.decompose import branch_terms

    value = alt(lexeme(regex_term('"[a-z]*"')), literal(b"null"))
    shape = ObjectShape(key="branch-after", named=(("a", value), ("b", INTEGER_LITERAL)), ws_max=1)
    state = object_term(shape)
    for byte in b'{"a"':
        state = derivative(state, byte)
    assert isinstance(state, Cat) and isinstance(state.items[0], Thunk)
    spelled = cat(state.items[0].body(), state.suffix(1))
    branches = branch_terms(state)
    assert branches is not None and len(branches) == 2
    assert branches == branch_terms(spelled)


def test_what_follows_a_key_needs_a_liveness_check_when_its_value_does() -> None:
    """The thunk hides the value from the question whether a row may be empty though it
    is not ``EMPTY`` (an intersection inside): the shape says so for it, as the offered
    spelled out said."""
    from fsm.terms import intersect

    checked = intersect(regex_term("[0-9]+"), regex_term("1[0-9]*"))
    assert checked.needs_liveness_check
    shape = ObjectShape(key="live", named=(("a", checked), ("b", INTEGER_LITERAL)))
    after_keys = [offered.items[1] for offered in _offered_members(object_term(shape), b'{"')]
    assert {thunk.needs_liveness_check for thunk in after_keys} == {True, False}
    for thunk in after_keys:
        assert thunk.needs_liveness_check == thunk.body().needs_liveness_check


def test_literals_share_their_byte_terms() -> None:
    assert literal(b"a") is literal(b"a")
    assert literal(b"ab").items[1] is literal(b"b")


def _bodies_after_a_key(term: Term) -> list[Thunk]:
    """The bodies an object's first body offers after each key: its members' last items
    (the members may sit in a union behind the opening quote)."""
    assert isinstance(term, Cat) and isinstance(term.items[-1], Thunk)
    found: list[Thunk] = []
    todo = list(getattr(term.items[-1].body(), "items", ()))
    while todo:
        item = todo.pop()
        last = item.items[-1] if isinstance(item, Cat) else None
        if isinstance(last, Thunk):
            found.append(last)
        elif isinstance(last, Alt):
            todo.extend(last.items)
    return sorted(found, key=_used)


def _used(body: Thunk) -> int:
    """The mask of named keys a body's key says were used (bit ``i``: ``named[i]``)."""
    assert isinstance(body.key, tuple)
    return int.from_bytes(body.key[2], "little")


def test_every_body_holds_the_same_punctuation_terms() -> None:
    """The bodies of one shape (one per set of keys used) offer the same close and the
    same comma and whitespace: one term each, not an equal copy per body, which every
    memo keyed by terms would compare item by item."""
    number = regex_term("[0-9]")
    term = object_term(ObjectShape(key="ws", named=(("a", number), ("b", number)), ws_max=2))
    close, comma = literal(b"}"), literal(b",")
    bodies = [body.body().items for body in _bodies_after_a_key(term)]
    closes = [[i for i in items if isinstance(i, Cat) and i.items[-1] is close] for items in bodies]
    commas = [[i for i in items if isinstance(i, Cat) and i.items[0] is comma] for items in bodies]
    assert [len(found) for found in closes + commas] == [1, 1, 1, 1]
    assert closes[0][0] is closes[1][0]
    assert commas[0][0] is not commas[1][0]  # different keys follow
    assert commas[0][0].items[1] is commas[1][0].items[1]  # the whitespace after the comma
    assert matches(term, b'{"a":1, "b":2}') and matches(term, b'{"b":2,\n  "a":1\n}')
    assert not matches(term, b'{"a":1,   "b":2}')


def test_the_keys_after_a_value_are_one_branch_however_many_there_are() -> None:
    """After a member's value, an object with many optional keys offers the close or a
    comma then one of the keys: a row there walks two branches, not one per key (each
    reading the comma again), and the keys' union is met only once the comma is read.
    The language is the same either way."""
    number = regex_term("[0-9]")  # one digit: the value is over once it is read
    names = [f"k{i}" for i in range(40)]
    term = object_term(ObjectShape(key="many", named=tuple((n, number) for n in names)))
    automaton = DerivativeAutomaton(term)
    state = automaton.initial
    for byte in b'{"k7":1':
        state = automaton.step(state, byte)
    assert automaton.alternatives(state) is not None
    assert len(automaton.alternatives(state)) == 2
    assert matches(term, b'{"k7":1,"k3":2}') and matches(term, b"{}")
    assert not matches(term, b'{"k7":1,"k7":2}') and not matches(term, b'{"k7":1,}')


def test_after_a_value_the_comma_and_quote_are_read_once_for_every_key() -> None:
    """Every member starts with its key's opening quote, so a body offers the comma
    and the quote once, then the union of the members after it: the branch after a
    value splits into that one short lexeme and the keys, where a comma before each
    whole member did not split at all (and a row there walked every key below it).
    Named keys and any other key mean what they meant."""
    number = regex_term("[0-9]")
    names = [f"k{i}" for i in range(40)]
    shape = ObjectShape(
        key="tails",
        named=tuple((n, number) for n in names),
        other_member=member(string_except(names), number, 2),
        ws_max=2,
    )
    assert shape.quoted
    for position, name in enumerate(names):
        quoted = cat(QUOTE, _member_head(shape, position))
        assert matches(quoted, f'"{name}":1'.encode())
        assert not matches(quoted, b'"other":1') and not matches(quoted, f"{name}:1".encode())
    other = cat(QUOTE, shape.other_tail)
    assert matches(other, b'"other":1') and not matches(other, b'"k3":1')
    term = object_term(shape)
    automaton = DerivativeAutomaton(term)
    state = automaton.initial
    for byte in b'{"k7":1':
        state = automaton.step(state, byte)
    branches = automaton.alternatives(state)
    assert branches is not None
    splits = [automaton.lexeme_split(branch) for branch in branches]
    heads = sorted(
        sorted(automaton.lexeme_strings(split[0], 16) or []) for split in splits if split
    )
    commas = [b",", b", ", b",\n", b",\n ", b",\n  "]
    closes = [b"", b" ", b"\n", b"\n ", b"\n  "]
    expected = [sorted(c + b'"' for c in commas), sorted(c + b"}" for c in closes)]
    assert heads == sorted(expected)
    assert matches(term, b'{"k7":1, "k3":2}') and matches(term, b'{"k7": 1,\n "x":2}')
    assert not matches(term, b'{"k7":1,"k7":2}') and not matches(term, b'{"k7":1,k3:2}')


def test_members_that_may_not_start_with_a_quote_are_offered_whole() -> None:
    """A member term that may start with another byte is not derived by the quote: the
    body offers it as it is, and its language is kept."""
    number = regex_term("[0-9]")
    shape = ObjectShape(key="odd", named=(("a", number),), other_member=literal(b"x"))
    assert not shape.quoted and shape.other_tail is shape.other
    term = object_term(shape)
    assert matches(term, b'{"a":1,x}') and matches(term, b"{x}")
    assert not matches(term, b'{"a":1,"x"}')


def test_bodies_are_keyed_by_plain_values_and_built_by_their_shape() -> None:
    """Every body of a shape is built by the shape itself from its key, and the key
    holds only numbers, strings and booleans: no set of names and no bound call per
    body, which the cyclic collector would scan for as long as the schema lives."""
    number = regex_term("[0-9]")
    named = tuple((name, number) for name in ("a", "b", "c"))
    shape = ObjectShape(key=("schema", "/"), named=named)
    bodies = _bodies_after_a_key(object_term(shape))
    assert len(bodies) == 3
    assert all(body._make is shape for body in bodies)
    plain = (bytes, int, str, bool)
    for body in bodies:
        assert isinstance(body.key, tuple)
        flat = [
            part for item in body.key for part in (item if isinstance(item, tuple) else (item,))
        ]
        assert all(isinstance(part, plain) for part in flat), body.key
    assert sorted(shape.names_in(_used(body)) for body in bodies) == [{"a"}, {"b"}, {"c"}]


def test_a_required_key_that_is_not_named_keeps_the_object_open() -> None:
    """A required key outside ``named`` can never be read, so no body may close: the
    object has no complete text, however its named keys are filled."""
    number = regex_term("[0-9]")
    shape = ObjectShape(key="open", named=(("a", number),), required=frozenset({"a", "z"}))
    term = object_term(shape)
    assert not matches(term, b'{"a":1}') and not matches(term, b"{}")
    closable = ObjectShape(key="closes", named=(("a", number),), required=frozenset({"a"}))
    assert matches(object_term(closable), b'{"a":1}')


def test_the_bodies_of_a_shape_with_many_keys_hash_apart() -> None:
    """The bodies after one key each of a 131-key object have as many hashes: as an
    integer the mask of key 61 would hash as key 0's (Python hashes integers modulo
    ``2**61 - 1``), and each lookup among such neighbours would compare them."""
    number = regex_term("[0-9]")
    named = tuple((f"k{i}", number) for i in range(131))
    bodies = _bodies_after_a_key(object_term(ObjectShape(key="many", named=named)))
    assert len(bodies) == 131
    assert len({hash(body) for body in bodies}) == 131
    assert [_used(body) for body in bodies] == [1 << i for i in range(131)]


_VALUES = {
    "number": regex_term("-?[0-9]+(\\.[0-9]+)?"),
    "string": regex_term('"[a-z]*"'),
    "forbidden": EMPTY,
}


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.sampled_from(sorted(_VALUES)), min_size=1, max_size=4),
    st.sets(st.integers(0, 3)),
    st.sampled_from([EMPTY, literal(b"x"), member(QUOTE, literal(b"1"), 0)]),
    st.sampled_from([0, 2]),
    st.booleans(),
)
def test_a_body_tells_how_it_opens_before_it_is_built(
    kinds: list[str], required: set[int], other: Term, ws_max: int, ordered: bool
) -> None:
    """A body's ``opening_bytes`` (read by ``nullable`` and ``first_bytes_over`` while
    the body is not built) names every byte the built body may start with, and the
    built body is never empty; once built, the body answers for itself."""
    named = tuple((f"k{i}", _VALUES[kind]) for i, kind in enumerate(kinds))
    names = frozenset(f"k{i}" for i in required if i < len(kinds))
    shape = ObjectShape(
        key="open", named=named, required=names, other_member=other, ws_max=ws_max, ordered=ordered
    )
    term = object_term(shape)
    if term is EMPTY:  # a required key that is forbidden
        return
    assert isinstance(term, Cat) and isinstance(term.items[-1], Thunk)
    _assert_opens_as_built(term.items[-1])
    for body in _bodies_after_a_key(term) if shape.quoted else ():
        _assert_opens_as_built(body)


def _assert_opens_as_built(body: Thunk) -> None:
    """``body``'s opening, read before the body is built, against the built body."""
    opening = body.opening_bytes()
    assert opening is not None
    assert first_bytes_over(body) == opening and not nullable(body)
    assert body.opening_bytes() is not None  # neither question built it
    built = body.body()
    assert first_bytes(built) & ~opening == 0
    assert not nullable(built)
    assert body.opening_bytes() is None


def test_a_number_s_split_leaves_the_body_after_it_unbuilt() -> None:
    """Splitting "a number, then the object's body" asks whether the body may be empty
    and how it starts (``fsm.decompose``): the body's opening answers, and the body
    stays unbuilt until a walk reads into it. Before, every key row built the body
    after each key that takes a number, whether or not that key was read."""
    shape = ObjectShape(key="split", named=(("a", INTEGER_LITERAL), ("b", QUOTE)))
    state = object_term(shape)
    for byte in b'{"a":':
        state = derivative(state, byte)
    assert isinstance(state, Cat) and isinstance(state.items[-1], Thunk)
    body = state.items[-1]
    split = split_lexeme(state)
    assert split is not None and split[1] is body
    assert body.opening_bytes() is not None
    assert matches(state, b"12}") and matches(state, b'1,"b":"}')
