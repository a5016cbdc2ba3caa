"""Token index: kernels against their twins and a brute-force oracle, the TokenIndex
API on small hand-made automata, laziness, caps, and real rows on SmolLM2's vocabulary."""

from __future__ import annotations

from functools import cache
from itertools import product

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from fsm import (
    DEAD,
    ConstraintTooLarge,
    FsmError,
    TableAutomaton,
    TokenIndex,
    Vocabulary,
    index_core,
)
from fsm import trie as trie_module
from fsm.row_walk import NO_STOPS
from fsm.trie import TokenTrie
from fsm.trie_walk import (
    ABSENT,
    SCAN_CHUNK,
    cut_mask,
    cut_mask_py,
    cut_walk,
    cut_walk_py,
    follow_paths,
    follow_paths_py,
    group_by_token,
    group_by_token_py,
    in_trie_order,
    in_trie_order_py,
    literal_tokens,
    literal_tokens_of_texts,
    literal_tokens_of_texts_py,
    literal_tokens_py,
    masks_up_to,
    masks_up_to_py,
    pack_bitmask,
    pack_bitmask_py,
    pack_onto,
    pack_onto_py,
    paths_of_texts,
    paths_of_texts_py,
    position_in_trie_order,
    position_of,
    position_of_py,
    read_by_several,
    read_by_several_py,
    read_row,
    read_row_py,
    scatter_plain,
    scatter_plain_py,
    scatter_targets,
    scatter_targets_py,
    search_trie_order,
    walk_at_nodes,
    walk_at_nodes_py,
    walk_trie,
    walk_trie_py,
)

ALPHABET = b"abc"

# ------------------------------------------------------------------- helpers


def table_automaton(edges: dict[int, dict[bytes, int]], finals: set[int]) -> TableAutomaton:
    """A table automaton from ``{state: {bytes_of_same_target: target}}``."""
    count = 1 + max([*edges, *finals, *(t for row in edges.values() for t in row.values())])
    table = np.full((count, 256), DEAD, np.int32)
    for state, row in edges.items():
        for chars, target in row.items():
            table[state, list(chars)] = target
    return TableAutomaton(table, np.isin(np.arange(count), list(finals)))


DIGITS = b"0123456789"
# digits+ : 0 -digit-> 1 (final) -digit-> 1
DIGITS_AUTOMATON = table_automaton({0: {DIGITS: 1}, 1: {DIGITS: 1}}, {1})
# abc|abd
ABC_ABD = table_automaton({0: {b"a": 1}, 1: {b"b": 2}, 2: {b"cd": 3}}, {3})


def walk_bytes(table: np.ndarray, state: int, data: bytes) -> int:
    """Oracle: the state after ``data`` in a full table, DEAD if it dies."""
    for byte in data:
        state = int(table[state, byte])
        if state == DEAD:
            return DEAD
    return state


def oracle_row(automaton: TableAutomaton, vocab: Vocabulary, state: int):
    """Oracle: ``{token: next state}`` for ``state``, end ids included when final."""
    row = {}
    for token, data in enumerate(vocab.token_bytes):
        if token in vocab.eos_ids:
            if automaton.finals[state]:
                row[token] = state
        elif data:
            end = walk_bytes(automaton.table, state, data)
            if end != DEAD:
                row[token] = end
    return row


def from_root(state: int) -> tuple[np.ndarray, np.ndarray]:
    """``walk_trie``'s roots and root states for a walk of the whole trie from ``state``."""
    return np.zeros(1, np.int32), np.asarray([state], np.int32)


def trie_args(trie: TokenTrie, stops: np.ndarray = NO_STOPS):
    """``walk_trie``'s arguments after the roots: the trie, the stop flags, the depth."""
    return (
        trie.labels,
        trie.depths,
        trie.ends,
        trie.token_starts,
        trie.token_ids,
        stops,
        trie.max_depth,
    )


# ---------------------------------------------------------------- strategies


@st.composite
def automata(draw, max_states: int = 6) -> TableAutomaton:
    """Random table automata over ``ALPHABET`` (other bytes dead)."""
    count = draw(st.integers(1, max_states))
    table = np.full((count, 256), DEAD, np.int32)
    for state in range(count):
        for byte in ALPHABET:
            table[state, byte] = draw(st.integers(DEAD, count - 1))
    finals = np.asarray(draw(st.lists(st.booleans(), min_size=count, max_size=count)))
    return TableAutomaton(table, finals)


@st.composite
def vocabularies(draw) -> Vocabulary:
    """Small vocabularies over ``ALPHABET``, with holes, duplicates and extra width."""
    tokens = draw(
        st.lists(st.one_of(st.none(), st.binary(min_size=1, max_size=4)), min_size=1, max_size=25)
    )
    tokens = [None if t is None else bytes(ALPHABET[b % 3] for b in t) for t in tokens]
    eos = draw(st.sets(st.integers(0, len(tokens) - 1), min_size=1, max_size=2))
    extra = draw(st.integers(0, 40))
    return Vocabulary.from_raw(tokens, eos_ids=eos, size=len(tokens) + extra)


# ------------------------------------------------------------- kernels vs twins


def rows_of(expanded: np.ndarray) -> np.ndarray:
    """``row_of`` for a table with a row per state: a state's own row where expanded."""
    return np.where(expanded, np.arange(len(expanded)), -1).astype(np.int32)


def compacted(table: np.ndarray, expanded: np.ndarray, order: list[int]):
    """The rows of the expanded states only, in the order ``order`` ranks them (as a
    ``ByteTable`` keeps them: a row per expanded state, in order of expansion), and
    their ``row_of``."""
    states = sorted(np.flatnonzero(expanded).tolist(), key=lambda state: order[state])
    row_of = np.full(len(expanded), -1, np.int32)
    row_of[states] = np.arange(len(states), dtype=np.int32)
    rows = table[states] if states else np.zeros((0, 256), np.int32)
    return np.ascontiguousarray(rows), row_of


@settings(max_examples=200, deadline=None)
@given(automata(), vocabularies(), st.data())
def test_walk_trie_matches_twin_on_partial_tables(automaton, vocab, data):
    """Rows only for some states, kept in any order, a root state perhaps not expanded
    (then reported pending), states past the table: the kernel reads what its twin
    reads, and resuming below the pending nodes matches too."""
    count = automaton.num_states
    known = data.draw(st.integers(1, count))  # states past `known` have no row_of entry
    expanded = np.asarray(data.draw(st.lists(st.booleans(), min_size=known, max_size=known)))
    order = data.draw(st.permutations(range(known)))
    start = data.draw(st.integers(0, known - 1))
    # flags for some states (none past the drawn length), as a lexeme walk stops where
    # its lexeme may end
    stop = np.asarray(data.draw(st.lists(st.booleans(), max_size=count)), np.bool_)
    table, row_of = compacted(automaton.table[:known], expanded, order)
    args = (table, row_of, *from_root(start), *trie_args(vocab.trie, stop))
    for fast, slow in zip(walk_trie(*args), walk_trie_py(*args), strict=True):
        assert fast.dtype == slow.dtype == np.int32
        np.testing.assert_array_equal(fast, slow)
    # Resuming below the pending nodes, as the index does, matches the twin too.
    _, _, nodes, states = walk_trie(*args)
    in_table = states < known  # the index expands a pending state before resuming
    nodes, states = nodes[in_table], states[in_table]
    table, row_of = compacted(automaton.table[:known], np.ones(known, np.bool_), order)
    args = (table, row_of, nodes, states, *trie_args(vocab.trie, stop))
    for fast, slow in zip(walk_trie(*args), walk_trie_py(*args), strict=True):
        np.testing.assert_array_equal(fast, slow)


@pytest.mark.parametrize(
    ("tokens", "eos"),
    [
        ([b"ab", b"ab", b"a", b"ab", None, b"b"], [4]),  # a node ending three tokens
        ([b"a", b"b"], [0, 1]),  # a trie with no token at all (both are end of sequence)
    ],
)
def test_walk_trie_writes_every_token_of_a_node_and_none_of_an_empty_trie(tokens, eos):
    """The kernel writes a node's first token before it knows the node's count (the
    count then says whether it stays): a node ending several tokens gives each, and a
    trie without tokens reads none, as the twin does."""
    vocab = Vocabulary.from_raw(tokens, eos_ids=eos)
    loop = np.zeros((1, 256), np.int32)  # every byte leads back to state 0
    args = (loop, rows_of(np.ones(1, np.bool_)), *from_root(0), *trie_args(vocab.trie))
    fast, slow = walk_trie(*args), walk_trie_py(*args)
    for kernel, twin in zip(fast, slow, strict=True):
        np.testing.assert_array_equal(kernel, twin)
    readable = [i for i, t in enumerate(tokens) if t is not None and i not in eos]
    assert sorted(fast[0].tolist()) == readable


@cache
def every_short_string() -> Vocabulary:
    """Every string over ``ALPHABET`` of 1 to 8 bytes: 9,840 tokens."""
    tokens = [bytes(p) for n in range(1, 9) for p in product(ALPHABET, repeat=n)]
    return Vocabulary.from_raw([*tokens, None], eos_ids=[len(tokens)])


@pytest.mark.parametrize("expanded_below", [9, 7])
def test_walk_trie_outputs_of_big_walks_are_the_twins_and_their_own(expanded_below):
    """A walk that reads all 9,840 tokens, and one that stops at the 2,187 nodes of
    depth 7 (their state not expanded): the outputs, copied out of buffers sized for
    the whole trie, match the twin and share no memory with each other."""
    vocab = every_short_string()
    depth = np.full((9, 256), DEAD, np.int32)  # state k: k bytes read (8 or more: 8)
    for state in range(9):
        depth[state, list(ALPHABET)] = min(state + 1, 8)
    table, row_of = compacted(depth, np.arange(9) < expanded_below, list(range(9)))
    args = (table, row_of, *from_root(0), *trie_args(vocab.trie))
    fast, slow = walk_trie(*args), walk_trie_py(*args)
    for kernel, twin in zip(fast, slow, strict=True):
        np.testing.assert_array_equal(kernel, twin)
    big = len(fast[0]) if expanded_below == 9 else len(fast[2])
    assert big > 2_000
    for i, first in enumerate(fast):
        assert first.flags.c_contiguous
        assert not any(np.shares_memory(first, other) for other in fast[i + 1 :])


@settings(max_examples=200, deadline=None)
@given(automata(), vocabularies(), st.data())
def test_walk_trie_on_full_table_is_the_oracle(automaton, vocab, data):
    start = data.draw(st.integers(0, automaton.num_states - 1))
    expanded = np.ones(automaton.num_states, np.bool_)
    args = (automaton.table, rows_of(expanded), *from_root(start), *trie_args(vocab.trie))
    tokens, ends, pending, _ = walk_trie(*args)
    assert len(pending) == 0
    expected = {
        t: s for t, s in oracle_row(automaton, vocab, start).items() if t not in vocab.eos_ids
    }
    assert dict(zip(tokens.tolist(), ends.tolist(), strict=True)) == expected
    assert len(tokens) == len(expected)


@settings(max_examples=200, deadline=None)
@given(vocabularies(), st.data())
def test_in_trie_order_sorts_a_walk_by_rank_and_numbers_its_ends(vocab, data):
    """A walk's tokens (each once, in any order) come out in trie order with their
    ends, the distinct ends ascending: as sorting by node and ``np.unique`` give."""
    trie = vocab.trie
    top = max(trie.num_tokens - 1, 0)
    ranks = data.draw(st.lists(st.integers(0, top), unique=True, max_size=trie.num_tokens))
    order = data.draw(st.permutations(ranks))
    tokens = trie.token_ids[np.asarray(order, np.int64)].astype(np.int32)
    ends = np.asarray(
        data.draw(st.lists(st.integers(0, 40), min_size=len(tokens), max_size=len(tokens))),
        np.int32,
    )
    got = in_trie_order(tokens, ends, trie.token_ranks, trie.token_ids)
    twin = in_trie_order_py(tokens, ends, trie.token_ranks, trie.token_ids)
    for array, expected in zip(got, twin, strict=True):
        np.testing.assert_array_equal(array, expected)
    ordered, inverse, distinct = got
    assert sorted(zip(ordered.tolist(), distinct[inverse].tolist())) == sorted(
        zip(tokens.tolist(), ends.tolist())
    )
    nodes = trie.token_nodes[ordered]
    assert (np.diff(nodes) >= 0).all() and (np.diff(distinct) > 0).all()


def texts_below(trie: TokenTrie, raws: list[bytes], picks: list[int]) -> tuple:
    """Texts over ``ALPHABET`` from ``raws``, the root and nodes picked as starts, the
    texts' bounds and their bytes joined: a batched kernel's inputs."""
    texts = [bytes(ALPHABET[b % 3] for b in raw) for raw in raws]
    starts = np.asarray([0, *(pick % trie.num_nodes for pick in picks)], np.int32)
    bounds = np.asarray([0, *np.cumsum([len(text) for text in texts])], np.int32)
    return texts, starts, bounds, np.frombuffer(b"".join(texts), np.uint8)


TEXTS_BELOW = (
    vocabularies(),
    st.lists(st.binary(max_size=5), max_size=5),
    st.lists(st.integers(0, 60), max_size=3),
)


@settings(max_examples=100, deadline=None)
@given(*TEXTS_BELOW)
def test_literal_tokens_of_texts_are_each_text_s_in_turn(vocab, raws, picks):
    """One call over several texts gives each text's ``literal_tokens`` in turn, its
    arrays found by the bounds returned (batched == one call per text == the twin)."""
    trie = vocab.trie
    texts, starts, bounds, data = texts_below(trie, raws, picks)
    arrays = (trie.labels, trie.ends, trie.token_starts, trie.token_ids, starts)
    got = literal_tokens_of_texts(*arrays, data, bounds)
    for array, expected in zip(got, literal_tokens_of_texts_py(*arrays, data, bounds), strict=True):
        np.testing.assert_array_equal(array, expected)
    tokens, inverse, read, exits, at_token, at_read, at_exit = got
    for k, text in enumerate(texts):
        alone = literal_tokens(*arrays, np.frombuffer(text, np.uint8))
        parts = (
            tokens[at_token[k] : at_token[k + 1]],
            inverse[at_token[k] : at_token[k + 1]],
            read[at_read[k] : at_read[k + 1]],
            exits[at_exit[k] : at_exit[k + 1]],
        )
        for array, expected in zip(parts, alone, strict=True):
            np.testing.assert_array_equal(array, expected)


@settings(max_examples=100, deadline=None)
@given(*TEXTS_BELOW)
def test_paths_of_texts_are_each_text_s_paths_in_turn(vocab, raws, picks):
    """One call over several texts gives, per text and start, the nodes ``follow_paths``
    finds for that text below that start (batched == one call per text == the twin)."""
    trie = vocab.trie
    texts, starts, bounds, data = texts_below(trie, raws, picks)
    got = paths_of_texts(trie.labels, trie.ends, starts, data, bounds)
    for array, expected in zip(
        got, paths_of_texts_py(trie.labels, trie.ends, starts, data, bounds), strict=True
    ):
        np.testing.assert_array_equal(array, expected)
    nodes, path_bounds = got
    assert len(path_bounds) == len(texts) * len(starts) + 1
    for k, text in enumerate(texts):
        alone = follow_paths(trie.labels, trie.ends, starts, np.frombuffer(text, np.uint8))
        for r in range(len(starts)):
            p = k * len(starts) + r
            path = nodes[path_bounds[p] : path_bounds[p + 1]].tolist()
            assert path == [node for node in alone[r].tolist() if node >= 0]


DEAD_STATE, EXIT_STATE = -1, 0


@settings(max_examples=100, deadline=None)
@given(
    vocabularies(),
    st.lists(st.tuples(st.integers(0, 200), st.integers(DEAD_STATE, 3)), max_size=8),
)
def test_a_walk_at_nodes_is_each_live_node_s_own_tokens_in_turn(vocab, picks):
    """The tokens ending at each node whose state is not dead, node by node, each in
    its node's state, and the live nodes with children in the exit state: as the twin
    says, and as the tokens' nodes and the numpy reading of the same say."""
    trie = vocab.trie
    nodes = np.asarray([pick % trie.num_nodes for pick, _ in picks], np.int32)
    states = np.asarray([state for _, state in picks], np.int32)
    arrays = (trie.token_starts, trie.token_ids, trie.ends, nodes, states)
    got = walk_at_nodes(*arrays, DEAD_STATE, EXIT_STATE)
    for array, expected in zip(got, walk_at_nodes_py(*arrays, DEAD_STATE, EXIT_STATE), strict=True):
        np.testing.assert_array_equal(array, expected)
    tokens, ends_at, inverse, exits = got
    live = states != DEAD_STATE
    live_nodes, live_states = nodes[live], states[live]
    held = [
        k
        for k, n in enumerate(live_nodes.tolist())
        if trie.token_starts[n + 1] > trie.token_starts[n]
    ]
    np.testing.assert_array_equal(ends_at, live_states[held])
    assert (trie.token_nodes[tokens] == live_nodes[held][inverse]).all()
    counts = trie.token_starts[live_nodes + 1] - trie.token_starts[live_nodes]
    assert len(tokens) == int(counts.sum())
    over = (live_states == EXIT_STATE) & (trie.ends[live_nodes] > live_nodes + 1)
    np.testing.assert_array_equal(exits, live_nodes[over])


@settings(max_examples=200, deadline=None)
@given(vocabularies(), st.binary(max_size=6), st.lists(st.integers(0, 60), max_size=4))
def test_literal_tokens_are_the_tokens_on_the_path_a_literal_spells(vocab, raw, picks):
    """Below each start, the tokens ending on ``data``'s path (with how many of its
    bytes each read) and the nodes with children where all of it is read: as the twin
    says, and, from the root, as the tokens' own bytes say."""
    trie = vocab.trie
    data = np.frombuffer(bytes(ALPHABET[b % 3] for b in raw), np.uint8)
    starts = np.asarray([0, *(pick % trie.num_nodes for pick in picks)], np.int32)
    arrays = (trie.labels, trie.ends, trie.token_starts, trie.token_ids, starts, data)
    got = literal_tokens(*arrays)
    for array, expected in zip(got, literal_tokens_py(*arrays), strict=True):
        np.testing.assert_array_equal(array, expected)
    assert len(set(got[2].tolist())) == len(got[2])  # each count listed once
    tokens, inverse, read, exits = literal_tokens(*arrays[:4], starts[:1], data)
    reading = {
        (token, len(spelled))
        for token, spelled in enumerate(vocab.token_bytes)
        if spelled and token not in vocab.eos_ids and data.tobytes().startswith(spelled)
    }
    assert set(zip(tokens.tolist(), read[inverse].tolist())) == reading
    assert len(tokens) == len(reading)
    below = {
        spelled[: len(data)]
        for token, spelled in enumerate(vocab.token_bytes)
        if spelled and token not in vocab.eos_ids and len(spelled) > len(data)
    }
    assert len(exits) == (len(data) > 0 and data.tobytes() in below)
    for node in exits.tolist():
        assert trie.depths[node] == len(data)


@settings(max_examples=200, deadline=None)
@given(vocabularies(), st.binary(max_size=6), st.lists(st.integers(0, 60), max_size=4))
def test_follow_paths_spell_the_prefixes_below_each_start(vocab, raw, picks):
    trie = vocab.trie
    data = np.frombuffer(bytes(ALPHABET[b % 3] for b in raw), np.uint8)
    starts = np.asarray([0, *(pick % trie.num_nodes for pick in picks)], np.int32)
    paths = follow_paths(trie.labels, trie.ends, starts, data)
    np.testing.assert_array_equal(paths, follow_paths_py(trie.labels, trie.ends, starts, data))
    spelled = {
        data[:k]
        for token, data in enumerate(vocab.token_bytes)
        if data and token not in vocab.eos_ids
        for k in range(1, len(data) + 1)
    }
    for start, path in zip(starts.tolist(), paths.tolist(), strict=True):
        nodes = [node for node in path if node >= 0]
        assert path == nodes + [-1] * (len(path) - len(nodes))  # -1 only past the end
        # node i spells the start's bytes then data[: i + 1]; the path stops where the
        # trie has no longer prefix
        above = _spelled(trie, start)
        assert len(nodes) == max(
            k for k in range(len(data) + 1) if k == 0 or above + data[:k].tobytes() in spelled
        )
        for i, node in enumerate(nodes):
            assert trie.depths[node] == len(above) + i + 1 and trie.labels[node] == data[i]
            parent = start if i == 0 else nodes[i - 1]
            assert trie.ends[parent] > node > parent


def _spelled(trie, node: int) -> bytes:
    """The bytes a trie node spells: its ancestors' labels, found as the nodes before
    it whose subtrees hold it (preorder)."""
    ancestors = [n for n in range(1, node + 1) if n <= node < trie.ends[n]]
    return bytes(int(trie.labels[n]) for n in ancestors)


@settings(max_examples=100, deadline=None)
@given(vocabularies())
def test_children_and_token_nodes_spell_the_tokens(vocab):
    """A node's children (from ``node + 1``, each next one at the previous one's
    subtree end) are the nodes one byte deeper below it, with that byte; each token's
    node spells the token."""
    trie = vocab.trie
    spelling = {0: b""}
    for node in range(trie.num_nodes):
        nodes, child = [], node + 1
        while child < trie.ends[node]:
            nodes.append(child)
            child = int(trie.ends[child])
        for child, label in zip(nodes, trie.labels[nodes].tolist()):
            assert trie.depths[child] == trie.depths[node] + 1 and node < child < trie.ends[node]
            spelling[child] = spelling[node] + bytes((label,))
    assert len(spelling) == trie.num_nodes  # every node is some node's child
    for token, data in enumerate(vocab.token_bytes):
        node = int(trie.token_nodes[token]) if token < len(trie.token_nodes) else -1
        if not data or token in vocab.eos_ids:
            assert node == -1
        else:
            assert spelling[node] == data


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 300), st.data())
def test_read_by_several_matches_twin(size, data):
    tokens = np.asarray(data.draw(st.lists(st.integers(0, size - 1), max_size=600)), np.int32)
    np.testing.assert_array_equal(read_by_several(tokens, size), read_by_several_py(tokens, size))


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.integers(0, 40), max_size=60)
    | st.lists(st.integers(0, 3000), min_size=SCAN_CHUNK - 2, max_size=3 * SCAN_CHUNK + 5),
    st.integers(0, 40) | st.integers(0, 3000),
)
@example(list(range(2 * SCAN_CHUNK)), SCAN_CHUNK - 1)  # last of a chunk
@example(list(range(2 * SCAN_CHUNK)), SCAN_CHUNK)  # first of the next
@example([7] * (SCAN_CHUNK + 3), 7)  # every position, across a chunk's end
def test_position_of_matches_twin(listed, token):
    """The first position, short arrays and arrays over several scan chunks."""
    tokens = np.asarray(listed, np.int32)
    assert position_of(tokens, token) == position_of_py(tokens, token)


@settings(max_examples=200, deadline=None)
@given(
    st.sets(st.integers(0, 2999), max_size=3 * SCAN_CHUNK),
    st.integers(0, 2999),
    st.integers(1, 4),
    st.sampled_from(["trie order", "reversed", "shuffled"]),
    st.integers(0, 2**32 - 1),
)
def test_position_in_trie_order_matches_a_scan(ids, token, per_node, order, seed):
    """Distinct ids in trie order (nodes ascending, several ids to a node, as a walk
    hands them out) are found by the binary search alone; in any other order by the
    scan it falls back to; absent ids give -1."""
    rng = np.random.default_rng(seed)
    token_nodes = (rng.permutation(3000) // per_node).astype(np.int32)
    listed = sorted(ids, key=lambda i: token_nodes[i])
    if order == "reversed":
        listed.reverse()
    elif order == "shuffled":
        rng.shuffle(listed)
    tokens = np.asarray(listed, np.int32)
    expected = position_of_py(tokens, token)
    assert position_in_trie_order(tokens, token_nodes, token) == expected
    if order == "trie order":
        assert search_trie_order(tokens, token_nodes, token) == expected


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 300), st.data())
def test_group_by_token_matches_twin(size, data):
    """Both bucketings (a sort when the pairs are few against the vocabulary, a
    counting sort otherwise), repeated pairs, and ends of either sign."""
    pairs = data.draw(
        st.lists(
            st.tuples(
                st.integers(0, size - 1), st.integers(-(2**31), 2**31 - 1) | st.integers(-4, 4)
            ),
            max_size=400,
        )
    )
    tokens = np.asarray([token for token, _ in pairs], np.int32)
    ends = np.asarray([end for _, end in pairs], np.int32)
    for fast, slow in zip(
        group_by_token(tokens, ends, size), group_by_token_py(tokens, ends, size), strict=True
    ):
        np.testing.assert_array_equal(fast, slow)


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 3000), st.data())
def test_pack_and_row_kernels_match_twins(size, data):
    """Packing a mask, scattering a row's blocks (aligned targets, or targets through
    an inverse) and reading the row back in token order, against their twins; targets
    of either sign (deferred joins are negative)."""
    tokens = np.asarray(
        data.draw(st.lists(st.integers(0, size - 1), unique=True, max_size=size)), np.int32
    )
    words = (size + 31) // 32
    np.testing.assert_array_equal(pack_bitmask(tokens, words), pack_bitmask_py(tokens, words))
    evens, odds = np.ascontiguousarray(tokens[::2]), np.ascontiguousarray(tokens[1::2])
    base = pack_bitmask(evens, words)
    onto = pack_onto(base, odds)
    np.testing.assert_array_equal(onto, pack_onto_py(base, odds))
    np.testing.assert_array_equal(onto, pack_bitmask(tokens, words))
    np.testing.assert_array_equal(base, pack_bitmask(evens, words))  # not written
    targets = np.asarray(data.draw(st.lists(st.integers(-50, 99), min_size=1)), np.int32)
    inverse = np.asarray(
        data.draw(
            st.lists(st.integers(0, len(targets) - 1), min_size=len(tokens), max_size=len(tokens))
        ),
        np.int32,
    )
    split = data.draw(st.integers(0, len(tokens)))
    filled = []
    for scatter in ((scatter_plain, scatter_targets), (scatter_plain_py, scatter_targets_py)):
        target_of = np.full(words * 32, ABSENT, np.int32)
        scatter[0](target_of, tokens[:split], targets[inverse[:split]])
        scatter[1](target_of, tokens[split:], inverse[split:], targets)
        filled.append(target_of)
    np.testing.assert_array_equal(*filled)
    for fast, slow in zip(
        read_row(filled[0], len(tokens)), read_row_py(filled[0], len(tokens)), strict=True
    ):
        np.testing.assert_array_equal(fast, slow)


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 400), st.data())
def test_cut_walk_matches_its_twin(size, data):
    """Cutting ranges of trie nodes out of a walk in trie order (nested and overlapping
    ranges, exits inside and outside them, with and without a mask) and merging own
    tokens in, against the twin; the mask stays the packed tokens kept, and the tokens
    stay in trie order."""
    tokens = np.asarray(
        data.draw(st.lists(st.integers(0, size - 1), unique=True, max_size=size)), np.int32
    )
    nodes = np.sort(
        np.asarray(
            data.draw(st.lists(st.integers(0, 500), min_size=len(tokens), max_size=len(tokens))),
            np.int32,
        )
    )
    inverse = np.asarray(
        data.draw(st.lists(st.integers(0, 5), min_size=len(tokens), max_size=len(tokens))), np.int32
    )
    exits = np.asarray(data.draw(st.lists(st.integers(0, 500), max_size=20)), np.int32)
    ranges = data.draw(st.lists(st.tuples(st.integers(0, 500), st.integers(1, 60)), max_size=8))
    starts = np.asarray([start for start, _ in ranges], np.int32)
    stops = np.asarray([start + length for start, length in ranges], np.int32)
    cut = [
        t for t, n in zip(tokens.tolist(), nodes.tolist()) if any(a <= n < a + b for a, b in ranges)
    ]
    node_of = dict(zip(tokens.tolist(), nodes.tolist()))
    own_tokens = np.asarray(
        sorted(data.draw(st.lists(st.sampled_from(cut), unique=True)), key=node_of.__getitem__)
        if cut
        else [],
        np.int32,
    )
    own_inverse = np.zeros(len(own_tokens), np.int32)
    own_nodes = np.asarray([node_of[t] for t in own_tokens.tolist()], np.int32)
    words = (size + 31) // 32
    for mask in (pack_bitmask(tokens, words), np.zeros(0, np.int32)):
        args = (tokens, inverse, nodes, exits, mask, starts, stops, own_tokens, own_inverse)
        fast = cut_walk(*args, own_nodes, 6)
        for got, expected in zip(fast, cut_walk_py(*args, own_nodes, 6), strict=True):
            np.testing.assert_array_equal(got, expected)
        if len(mask):
            np.testing.assert_array_equal(fast[3], pack_bitmask(fast[0], words))
        # what is kept and what is added lie in trie order together
        kept_nodes = [node_of[t] for t in fast[0].tolist()]
        assert kept_nodes == sorted(kept_nodes)
        spans = list(zip(starts.tolist(), stops.tolist()))
        left = [t for t, n in node_of.items() if not any(a <= n < b for a, b in spans)]
        assert sorted(fast[0].tolist()) == sorted(left + own_tokens.tolist())
        if len(mask):  # the cut without the copy: the mask of what is kept, the same exits
            masked, kept_exits = cut_mask(tokens, nodes, exits, mask, starts, stops)
            twin = cut_mask_py(tokens, nodes, exits, mask, starts, stops)
            np.testing.assert_array_equal(masked, twin[0])
            np.testing.assert_array_equal(kept_exits, twin[1])
            np.testing.assert_array_equal(masked, pack_bitmask(np.asarray(left, np.int32), words))
            np.testing.assert_array_equal(kept_exits, fast[2])


def test_bitmask_bit_order():
    mask = pack_bitmask(np.asarray([0, 5, 31, 32, 63], np.int32), 2)
    assert mask.dtype == np.int32
    assert mask.view(np.uint32).tolist() == [1 | 1 << 5 | 1 << 31, 1 | 1 << 31]


# --------------------------------------------------------- TokenIndex vs oracle


def unpack(mask: np.ndarray, size: int) -> np.ndarray:
    bits = np.unpackbits(mask.astype("<i4").view(np.uint8), bitorder="little")
    return np.flatnonzero(bits[:size])


@settings(max_examples=150, deadline=None)
@given(automata(), vocabularies())
def test_token_index_matches_oracle(automaton, vocab):
    index = TokenIndex(automaton, vocab)
    index.build_all()
    for state in range(automaton.num_states):
        try:
            allowed = index.allowed_tokens(state)
        except ValueError:  # not reachable from the initial state
            continue
        expected = oracle_row(automaton, vocab, state)
        assert allowed.tolist() == sorted(expected)
        assert allowed.dtype == np.int32
        assert index.next_states(state).tolist() == [expected[t] for t in sorted(expected)]
        assert index.is_final(state) == bool(automaton.finals[state])
        mask = index.bitmask(state)
        assert mask.shape == ((vocab.size + 31) // 32,)
        assert unpack(mask, vocab.size).tolist() == sorted(expected)
        for token in range(-1, vocab.size + 1):
            assert index.next_state(state, token) == expected.get(token, DEAD)


@settings(max_examples=100, deadline=None)
@given(automata(), vocabularies())
def test_lazy_rows_equal_eager_rows(automaton, vocab):
    lazy = TokenIndex(automaton, vocab)
    eager = TokenIndex(automaton, vocab, eager=True)
    rows = eager.state_rows()
    table = eager.bitmask_table()
    assert table.shape == (eager.num_rows_built, (vocab.size + 31) // 32)
    # in build order, so the lazy index has met each state before it is asked about it
    for state in sorted(np.flatnonzero(rows >= 0).tolist(), key=lambda s: rows[s]):
        np.testing.assert_array_equal(lazy.allowed_tokens(state), eager.allowed_tokens(state))
        np.testing.assert_array_equal(lazy.bitmask(state), table[rows[state]])


@settings(max_examples=50, deadline=None)
@given(automata(), vocabularies(), st.data())
def test_row_lookups_and_table_slices_agree(automaton, vocab, data):
    """``rows_of`` equals ``state_rows`` at the states asked; ``bitmask_table(start)``
    is the full table from ``start`` on; a row's mask is read-only, handed out as is."""
    index = TokenIndex(automaton, vocab, eager=True)
    every = index.state_rows()
    asked = data.draw(st.lists(st.integers(0, len(every) - 1), max_size=8))
    assert index.rows_of(asked).tolist() == every[asked].tolist()
    table = index.bitmask_table()
    start = data.draw(st.integers(0, index.num_rows_built))
    np.testing.assert_array_equal(index.bitmask_table(start), table[start:])
    for state in np.flatnonzero(every >= 0).tolist():
        mask = index.bitmask(state)
        assert not mask.flags.writeable
        assert mask is index.bitmask(state)
        np.testing.assert_array_equal(mask, table[every[state]])


# ------------------------------------------------------------ hand-made cases

ABC_VOCAB = Vocabulary.from_raw(
    [b"a", b"b", b"ab", b"abc", b"abd", b"c", b"d", None, b"abcd"], eos_ids=[7], size=40
)


def test_abc_abd_rows():
    index = TokenIndex(ABC_ABD, ABC_VOCAB)
    assert index.initial_state == 0
    assert index.allowed_tokens(0).tolist() == [0, 2, 3, 4]
    assert index.next_states(0).tolist() == [1, 2, 3, 3]
    assert index.allowed_tokens(2).tolist() == [5, 6]
    assert index.allowed_tokens(3).tolist() == [7]  # final: only the end id
    assert index.next_state(3, 7) == 3
    assert index.next_state(0, 7) == DEAD
    assert index.next_state(0, 8) == DEAD  # "abcd" runs past the match
    assert index.next_state(0, 39) == DEAD and index.next_state(0, 40) == DEAD
    assert index.is_final(3) and not index.is_final(0)


def test_step_bytes_and_forced_bytes():
    index = TokenIndex(ABC_ABD, ABC_VOCAB)
    assert index.step_bytes(0, b"ab") == 2
    assert index.step_bytes(0, b"abd") == 3
    assert index.step_bytes(0, b"abx") == DEAD
    assert index.step_bytes(1, b"") == 1
    assert index.forced_bytes(0) == b"ab"
    assert index.forced_bytes(2) == b""  # two live bytes
    assert index.forced_bytes(3) == b""  # final
    assert TokenIndex(DIGITS_AUTOMATON, ABC_VOCAB).forced_bytes(0) == b""


def test_bitmask_is_read_only_and_memoised():
    index = TokenIndex(ABC_ABD, ABC_VOCAB)
    mask = index.bitmask(0)
    assert mask.tolist() == [1 | 1 << 2 | 1 << 3 | 1 << 4, 0]
    with pytest.raises(ValueError):
        mask[0] = 0
    with pytest.raises(ValueError):
        index.allowed_tokens(0)[0] = 1
    assert index.num_rows_built == 1
    index.bitmask(0)
    assert index.num_rows_built == 1


def test_many_rows_survive_table_growth():
    """Rows keep their content when the bitmask table is reallocated."""
    count = 100
    chain = {s: {b"a": s + 1} for s in range(count)}
    automaton = table_automaton(chain, {count})
    vocab = Vocabulary.from_raw([b"a", b"aa", None], eos_ids=2)
    index = TokenIndex(automaton, vocab)
    early = index.bitmask(0)
    index.build_all()
    assert index.num_rows_built == count + 1
    assert early.tolist() == index.bitmask(0).tolist() == [0b011]
    rows = index.state_rows()
    assert index.bitmask_table()[rows[count]].tolist() == [0b100]
    assert index.bitmask_table()[rows[count - 1]].tolist() == [0b001]


def test_unknown_states_are_rejected():
    index = TokenIndex(ABC_ABD, ABC_VOCAB)
    for state in (-1, 4, 10**9):
        with pytest.raises(ValueError):
            index.allowed_tokens(state)
    with pytest.raises(ValueError):
        index.is_final(-1)


@settings(max_examples=50, deadline=None)
@given(automata(), vocabularies())
def test_remembered_transitions_equal_the_rows(automaton, vocab):
    """``next_state`` answers from its memo (asked again, and after the memo filled up
    and was cleared) exactly as from the row. Tokens out of range by up to a
    vocabulary's size on either side are asked too: the memo's key, ``state * size +
    token``, would name a neighbouring state's pair for them."""
    index = TokenIndex(automaton, vocab, eager=True)
    states = np.flatnonzero(index.state_rows() >= 0).tolist()
    asked = [(s, t) for s in states for t in range(-vocab.size - 1, 2 * vocab.size + 1)]
    first = [index.next_state(s, t) for s, t in asked]
    assert [index.next_state(s, t) for s, t in asked] == first
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(index_core, "MAX_TAKEN", 3)
        capped = TokenIndex(automaton, vocab, eager=True)
        assert [capped.next_state(s, t) for s, t in asked] == first
        assert len(capped._taken) <= 3
    for (s, t), after in zip(asked, first):
        row = dict(zip(index.allowed_tokens(s).tolist(), index.next_states(s).tolist()))
        assert after == row.get(t, DEAD)
    for kind in (np.int32, np.int64):  # numpy's integers hit the same remembered answers
        assert [index.next_state(kind(s), kind(t)) for s, t in asked] == first


def test_next_state_checks_the_state_before_the_token():
    index = TokenIndex(ABC_ABD, ABC_VOCAB)
    assert index.next_state(index.initial_state, ABC_VOCAB.size) == DEAD
    for token in (-1, 0, ABC_VOCAB.size):
        with pytest.raises(ValueError):
            index.next_state(10**9, token)
    with pytest.raises(TypeError):
        index.next_state(index.initial_state, 1.0)


@settings(max_examples=30, deadline=None)
@given(automata(), vocabularies())
def test_fill_bitmask_writes_the_bitmask(automaton, vocab):
    """Into an int32 buffer, a row of a batch buffer, and a uint32 buffer (the
    assignment converts): the same bits as ``bitmask``."""
    index = TokenIndex(automaton, vocab)
    words = (vocab.size + 31) // 32
    state, seen = index.initial_state, set()
    while state != DEAD and state not in seen:
        seen.add(state)
        expected = index.bitmask(state).copy()
        flat = np.full(words, -1, np.int32)
        index.fill_bitmask(state, flat)
        batch = np.full((3, words), -1, np.int32)
        index.fill_bitmask(state, batch[1])
        unsigned = np.zeros(words, np.uint32)
        index.fill_bitmask(state, unsigned)
        assert flat.tolist() == expected.tolist()
        assert batch[1].tolist() == expected.tolist()
        assert (batch[[0, 2]] == -1).all()
        assert unsigned.view(np.int32).tolist() == expected.tolist()
        allowed = index.allowed_tokens(state)
        state = index.next_state(state, int(allowed[0])) if len(allowed) else DEAD


def test_fill_bitmask_refuses_a_buffer_of_another_size():
    index = TokenIndex(ABC_ABD, ABC_VOCAB)
    words = (ABC_VOCAB.size + 31) // 32
    with pytest.raises(ValueError):
        index.fill_bitmask(index.initial_state, np.zeros(words + 1, np.int32))
    with pytest.raises(ValueError):
        index.fill_bitmask(10**9, np.zeros(words, np.int32))


class CountingAutomaton:
    """``a{0,limit} b``, numbered as found: 0 is the start, 1 the accepting state after
    'b', ``k + 1`` the state after k >= 1 'a's. Counts ``expand`` calls."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.calls: list[int] = []
        self.initial = 0

    def expand(self, state: int) -> tuple[np.ndarray, bool]:
        self.calls.append(state)
        row = np.full(256, DEAD, np.int32)
        if state != 1:
            row[ord("b")] = 1
            a_count = 0 if state == 0 else state - 1
            if a_count < self.limit:
                row[ord("a")] = a_count + 2
        return row, state == 1


LAZY_VOCAB = Vocabulary.from_raw([b"a", b"aa", b"aaaa", b"b", b"ab", None], eos_ids=5)


def test_rows_are_built_lazily():
    automaton = CountingAutomaton(limit=1_000_000)
    index = TokenIndex(automaton, LAZY_VOCAB)
    assert automaton.calls == [] and index.num_rows_built == 0
    assert index.allowed_tokens(0).tolist() == [0, 1, 2, 3, 4]
    # only the states inside the longest token's reach (below "aaaa") were expanded
    assert automaton.calls == [0, 2, 3, 4]  # each expanded once, the 'b' state never
    assert index.next_state(0, 2) == 5
    assert index.next_state(0, 4) == 1
    assert index.num_rows_built == 1
    assert index.allowed_tokens(5).tolist() == [0, 1, 2, 3, 4]
    assert automaton.calls == [0, 2, 3, 4, 5, 6, 7, 8]


def test_state_cap_raises_instead_of_hanging():
    automaton = CountingAutomaton(limit=1_000_000)
    index = TokenIndex(automaton, LAZY_VOCAB, max_states=500)
    with pytest.raises(ConstraintTooLarge):
        index.build_all()
    with pytest.raises(ConstraintTooLarge):
        TokenIndex(CountingAutomaton(limit=10_000), LAZY_VOCAB, max_states=100, eager=True)
    small = TokenIndex(CountingAutomaton(limit=50), LAZY_VOCAB, eager=True)
    assert small.num_states == 52
    assert small.num_rows_built == 52


def test_one_row_is_bounded_by_max_row_states():
    """A row whose walk must expand more states than ``max_row_states`` (tokens of 64
    'a's over ``a{0,1000}b``) fails with a typed error; the bound is per row, so a
    smaller row on the same index still builds, and a larger bound lets it through."""
    vocabulary = Vocabulary.from_raw([b"a", b"a" * 64, b"b", None], eos_ids=3)
    index = TokenIndex(CountingAutomaton(limit=1_000), vocabulary, max_row_states=10)
    with pytest.raises(ConstraintTooLarge, match="max_row_states"):
        index.allowed_tokens(index.initial_state)
    assert index.allowed_tokens(1).tolist() == [3]  # the final state: only the end id
    roomy = TokenIndex(CountingAutomaton(limit=1_000), vocabulary, max_row_states=100)
    assert roomy.allowed_tokens(roomy.initial_state).tolist() == [0, 1, 2]


def test_broken_automata_give_typed_errors():
    class Short:
        initial = 0

        def expand(self, state):
            return np.zeros(10, np.int32), False

    with pytest.raises(FsmError):
        TokenIndex(Short(), ABC_VOCAB).allowed_tokens(0)

    cycle = table_automaton({0: {b"a": 1}, 1: {b"a": 0}}, set())  # not live: forced loop
    with pytest.raises(FsmError):
        TokenIndex(cycle, ABC_VOCAB).forced_bytes(0)


# ------------------------------------------------------------------- real vocab


@pytest.fixture(scope="module")
def smol_vocab(smol_tokenizer) -> Vocabulary:
    return Vocabulary.from_tokenizer(smol_tokenizer, size=49152 + 64)


def test_digits_on_smol(smol_vocab):
    index = TokenIndex(DIGITS_AUTOMATON, smol_vocab)
    expected0 = oracle_row(DIGITS_AUTOMATON, smol_vocab, 0)
    assert index.allowed_tokens(0).tolist() == sorted(expected0)
    assert all(smol_vocab.token_bytes[t].isdigit() for t in expected0)
    assert len(expected0) >= 10
    allowed1 = index.allowed_tokens(1)
    assert set(allowed1.tolist()) == set(expected0) | smol_vocab.eos_ids
    assert index.bitmask(1).shape == ((49152 + 64 + 31) // 32,)


def test_any_byte_on_smol_allows_every_text_token(smol_vocab):
    anything = TableAutomaton(np.zeros((1, 256), np.int32), np.asarray([True]))
    index = TokenIndex(anything, smol_vocab)
    text = [i for i, b in enumerate(smol_vocab.token_bytes) if b is not None]
    assert index.allowed_tokens(0).tolist() == sorted(set(text) | smol_vocab.eos_ids)
    assert unpack(index.bitmask(0), smol_vocab.size).tolist() == index.allowed_tokens(0).tolist()
    assert index.allowed_tokens(0)[-1] < 49152  # ids past the tokenizer never allowed


def test_multibyte_characters_split_across_tokens_on_smol(smol_vocab):
    """'é+' as bytes: tokens ending inside the two-byte character are allowed."""
    e_acute = "é".encode()
    automaton = table_automaton(
        {0: {e_acute[:1]: 1}, 1: {e_acute[1:]: 2}, 2: {e_acute[:1]: 1}}, {2}
    )
    index = TokenIndex(automaton, smol_vocab, eager=True)
    for state in (0, 1, 2):
        expected = oracle_row(automaton, smol_vocab, state)
        assert index.allowed_tokens(state).tolist() == sorted(expected)
    half = [t for t in index.allowed_tokens(0).tolist() if index.next_state(0, t) == 1]
    assert half and all(smol_vocab.token_bytes[t].endswith(e_acute[:1]) for t in half)


def test_kernel_matches_twin_on_smol(smol_vocab):
    table = np.ascontiguousarray(ABC_ABD.table)
    anything = np.zeros((1, 256), np.int32)
    for tbl, known in (
        (table, [True, True, False, False]),
        (table, [True] * 4),
        (anything, [True]),
    ):
        args = (tbl, rows_of(np.asarray(known)), *from_root(0), *trie_args(smol_vocab.trie))
        for fast, slow in zip(walk_trie(*args), walk_trie_py(*args), strict=True):
            np.testing.assert_array_equal(fast, slow)


@pytest.mark.parametrize(
    "pattern", [r"-?\d+(\.\d+)?", r"(true|false|null)", r"[a-zé]{2,5}", r'"[^"\\]{0,8}"']
)
def test_rows_of_compiled_regexes_on_smol(smol_vocab, pattern):
    """Rows of real (lazy, derivative-based) automata against a byte-by-byte walk."""
    from fsm import Regex
    from fsm.compiler import automaton_of

    index = TokenIndex(automaton_of(Regex(pattern)), smol_vocab)
    state = index.initial_state
    for _ in range(3):
        allowed = index.allowed_tokens(state)
        expected = {
            t: index.step_bytes(state, data)
            for t, data in enumerate(smol_vocab.token_bytes)
            if data is not None and t not in smol_vocab.eos_ids
        }
        expected = {t: s for t, s in expected.items() if s != DEAD}
        if index.is_final(state):
            expected.update(dict.fromkeys(smol_vocab.eos_ids, state))
        assert allowed.tolist() == sorted(expected)
        assert index.next_states(state).tolist() == [expected[t] for t in sorted(expected)]
        text = [t for t in allowed.tolist() if t not in smol_vocab.eos_ids]
        if not text:
            break
        state = index.next_state(state, text[len(text) // 2])


@settings(max_examples=30, deadline=None)
@given(automata(), vocabularies())
def test_build_all_reports_progress_up_to_every_row(automaton, vocab):
    seen: list[tuple[int, int]] = []
    index = TokenIndex(
        automaton, vocab, eager=True, progress=lambda done, known: seen.append((done, known))
    )
    assert seen, "at least the initial row is reported"
    assert all(0 < done <= known for done, known in seen)
    assert [done for done, _ in seen] == sorted(done for done, _ in seen)
    assert seen[-1][0] == seen[-1][1] == index.num_rows_built


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_masks_up_to_pack_the_tokens_of_each_level_and_below(data):
    """Cumulative masks by level, against the twin and against the tokens themselves:
    row ``l`` holds exactly the tokens of levels ``0..l``."""
    vocab_size = data.draw(st.integers(1, 300))
    words = (vocab_size + 31) // 32
    tokens = np.asarray(
        data.draw(st.lists(st.integers(0, vocab_size - 1), unique=True, max_size=80)), np.int32
    )
    levels = np.asarray(
        data.draw(st.lists(st.integers(-1, 9), min_size=len(tokens), max_size=len(tokens))),
        np.int32,
    )
    top = data.draw(st.integers(0, 8))
    fast = masks_up_to(tokens, levels, top, words)
    np.testing.assert_array_equal(fast, masks_up_to_py(tokens, levels, top, words))
    for level in range(top + 1):
        held = set(np.flatnonzero(np.unpackbits(fast[level].view(np.uint8), bitorder="little")))
        assert held == {t for t, at in zip(tokens.tolist(), levels.tolist()) if 0 <= at <= level}


@settings(max_examples=200, deadline=None)
@given(vocabularies(), st.lists(st.integers(0, 60), max_size=4))
def test_next_bytes_are_the_bytes_read_next_below_the_nodes(vocab, picks):
    trie = vocab.trie
    nodes = np.asarray(sorted({pick % trie.num_nodes for pick in picks}), np.int32)
    spelled = [
        data for token, data in enumerate(vocab.token_bytes) if data and token not in vocab.eos_ids
    ]
    expected = 0
    for node in nodes.tolist():
        depth = int(trie.depths[node])
        prefix = next(  # the node's bytes (none for the root of an empty trie)
            (
                data[:depth]
                for data in spelled
                if len(data) >= depth and _node_of(trie, data[:depth]) == node
            ),
            b"",
        )
        for data in spelled:
            if len(data) > depth and data[:depth] == prefix:
                expected |= 1 << data[depth]
    assert trie.next_bytes(nodes) == expected
    assert trie.next_bytes(nodes.copy()) == expected  # memoised by the nodes' bytes


def _node_of(trie, data: bytes) -> int:
    """The trie node spelling ``data`` (-1: none)."""
    if not data:
        return 0
    (path,) = follow_paths(
        trie.labels, trie.ends, np.zeros(1, np.int32), np.frombuffer(data, np.uint8)
    )
    return int(path[-1])


def test_next_bytes_keeps_a_bounded_memo(monkeypatch):
    """Past ``NEXT_BYTES_KEPT`` sets the memo is dropped whole, and answers stay right."""
    monkeypatch.setattr(trie_module, "NEXT_BYTES_KEPT", 2)
    trie = TokenTrie.build([b"ab", b"ac", b"b", b"bd"])
    answers = {node: trie.next_bytes(np.asarray([node], np.int32)) for node in range(4)}
    assert len(trie._next_bytes) <= 2
    for node, answer in answers.items():
        assert trie.next_bytes(np.asarray([node], np.int32)) == answer
    assert answers[0] == (1 << ord("a")) | (1 << ord("b"))
