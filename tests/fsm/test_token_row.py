"""Token rows kept as the blocks a walk found: a token looked up alone leads where the
merged row says, and blocks merge into one sorted row."""

from __future__ import annotations

import ast
import gc

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from fsm import native
from fsm.token_row import BIG_BLOCK, PLAIN, Block, TokenRow, combine, mask_tokens, sorted_row

EXIT = 0
"""The exit state the rows below are told about (a lexeme token ending there leads to
its block's continuation)."""


def nodes_by_id(vocab_size: int, per_node: int = 1) -> np.ndarray:
    """A trie's ``token_nodes`` where ids ascend with their nodes, ``per_node`` ids
    sharing each: an ascending block is in trie order, a descending one is not."""
    return (np.arange(vocab_size) // per_node).astype(np.int32)


@st.composite
def overlapping_blocks(draw, vocab_size: int) -> list[Block]:
    """Blocks that may share tokens (each reads a token at most once): plain ones with
    aligned or shared targets, and lexeme ones whose ends include ``EXIT``."""
    blocks = []
    for _ in range(draw(st.integers(0, 5))):
        big = draw(st.booleans()) and vocab_size > BIG_BLOCK
        size = draw(st.integers(BIG_BLOCK, BIG_BLOCK + 40)) if big else draw(st.integers(1, 30))
        start = draw(st.integers(0, vocab_size - size))
        tokens = np.arange(start, start + size, dtype=np.int32)
        if draw(st.booleans()):
            tokens = tokens[::-1].copy()  # walks find tokens in trie order, not sorted
        rest = draw(st.sampled_from([PLAIN, 50, 51]))
        ends = draw(st.lists(st.integers(0, 6), min_size=1, max_size=4))
        inverse = np.asarray(
            [draw(st.integers(0, len(ends) - 1)) for _ in range(min(size, 8))], np.int32
        )
        inverse = np.resize(inverse, size)
        if rest == PLAIN and draw(st.booleans()):
            blocks.append(Block(tokens, None, np.asarray(ends, np.int32)[inverse]))
        else:
            blocks.append(Block(tokens, inverse, np.asarray(ends, np.int32), rest=rest))
    return blocks


@settings(max_examples=120, deadline=None)
@given(st.sampled_from([100, 3000]), st.data())
def test_a_token_looked_up_alone_leads_where_the_merged_row_says(vocab_size, data):
    """For every token: the items the row's blocks give it (one state, one join, or
    several for a union) are the ones the merged row's target stands for, the mask
    holds exactly the merged row's tokens, and ``mask_tokens`` reads them back."""
    blocks = data.draw(overlapping_blocks(vocab_size))
    row = TokenRow(blocks, EXIT, vocab_size, nodes_by_id(vocab_size, data.draw(st.integers(1, 3))))
    unions: dict[int, frozenset] = {}

    def union_of(targets, pairs):
        items = frozenset(t if t >= 0 else pairs[-2 - t] for t in targets)
        if len(items) == 1:
            return targets[0]
        state = 1000 + len(unions)
        unions[state] = items
        return state

    tokens, targets, pairs = row.merged(union_of)
    assert mask_tokens(row.mask).tolist() == tokens.tolist()
    merged = dict(zip(tokens.tolist(), targets.tolist()))
    for token in range(vocab_size):
        alone = frozenset(row.items_of(token))
        if token not in merged:
            assert alone == frozenset()
            continue
        target = merged[token]
        expected = unions.get(target) or frozenset([pairs[-2 - target] if target < -1 else target])
        assert alone == expected


def test_a_lexeme_token_ending_with_the_lexeme_leads_to_the_continuation():
    """A token that ends where its lexeme is over leads to the block's ``rest``; one
    that ends inside leads to the join of its lexeme state and ``rest``."""
    block = Block(
        np.asarray([4, 7], np.int32), np.asarray([0, 1], np.int32), np.asarray([EXIT, 3]), rest=9
    )
    row = TokenRow([block], EXIT, 16, nodes_by_id(16))
    assert row.items_of(4) == [9]
    assert row.items_of(7) == [(3, 9)]
    assert row.items_of(5) == []


def test_a_token_whose_bytes_span_two_tokens_is_not_read():
    """A row finds a token among its small blocks' tokens by its four bytes: the bytes
    of 3 lie across 773 and 256 (``05 03 00 00 | 00 01 00 00`` little-endian, at offset
    1), and the row does not read 3 there, while a row that holds 3 reads it once."""
    spans = [np.asarray([773], np.int32), np.asarray([256, 40], np.int32)]
    ends = np.asarray([1], np.int32)
    for blocks in (
        [Block(tokens, np.zeros(len(tokens), np.int32), ends) for tokens in spans],
        [Block(np.concatenate(spans), np.zeros(3, np.int32), ends)],
    ):
        row = TokenRow(blocks, EXIT, 1000, nodes_by_id(1000))
        assert row.items_of(3) == []
        assert mask_tokens(row.mask).tolist() == [40, 256, 773]
        assert row.items_of(773) == [1] and row.items_of(256) == [1]
    held = TokenRow(
        [Block(np.asarray([773, 3], np.int32), None, np.asarray([5, 6]))],
        EXIT,
        1000,
        nodes_by_id(1000),
    )
    assert held.items_of(3) == [6]


def _row_attributes() -> tuple[str, ...]:
    """``TokenRow.__slots__``, read from its source: the compiled class does not list
    them."""
    source = ast.parse(native.source_path("token_row").read_text())
    (row,) = (node for node in source.body if getattr(node, "name", None) == "TokenRow")
    (slots,) = (
        node.value
        for node in row.body
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", None) == "__slots__"
    )
    return tuple(ast.literal_eval(slots))


@settings(max_examples=30, deadline=None)
@given(st.data())
def test_a_row_holds_nothing_the_cyclic_collector_scans(data):
    """A cold walk keeps its rows alive to the end, and every full collection until
    then scans whatever they hold that the collector tracks: after a collection, a
    row's blocks (small, big, lexeme or plain) are tracked by nothing but the row.
    (A collection stops tracking a tuple whose items it has already stopped tracking,
    so tuples of tuples take a second.) Read through the row's attributes: compiled, a
    row has no collector header (``tests/fsm/test_native.py``), so the collector
    cannot list what it refers to."""
    blocks = data.draw(overlapping_blocks(3000))
    row = TokenRow(blocks, EXIT, 3000, nodes_by_id(3000))
    gc.collect()
    gc.collect()
    held = [getattr(row, name) for name in _row_attributes()]
    assert held
    assert not [value for value in held if gc.is_tracked(value)]
    assert not [block for block in row._blocks if gc.is_tracked(block)]


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 40), st.integers(-6, 8).filter(lambda end: end != -1)),
        min_size=1,
        max_size=120,
    ),
    st.sampled_from([41, 5000]),
)
def test_union_targets_grouped_by_token(pairs, vocab_size):
    """A union's shared tokens, grouped (by a sort for few pairs, by a counting sort
    over the vocabulary for many), each read the ascending distinct ends it leads to,
    and equal groups are one combination."""
    tokens = np.asarray([token for token, _ in pairs], np.int32)
    ends = np.asarray([end for _, end in pairs], np.int32)
    distinct, inverse, combinations = combine(tokens, ends, vocab_size)
    expected = {token: tuple(sorted({e for t, e in pairs if t == token})) for token, _ in pairs}
    assert distinct.tolist() == sorted(expected)
    assert [combinations[i] for i in inverse.tolist()] == [expected[t] for t in sorted(expected)]
    assert len(set(combinations)) == len(combinations)


@settings(max_examples=150, deadline=None)
@given(st.sampled_from([64, 4096]), st.data())
def test_row_joined_from_blocks(vocab_size, data):
    """A row's disjoint blocks (targets aligned, or through an inverse; negative codes
    included), joined by a sort when they are few against the vocabulary and by a
    scatter into a vocabulary-sized array otherwise, read every token ascending with
    its target and the mask of exactly those tokens."""
    tokens = data.draw(st.lists(st.integers(0, vocab_size - 1), unique=True, max_size=300))
    cuts = sorted(data.draw(st.lists(st.integers(0, len(tokens)), max_size=4)))
    expected: dict[int, int] = {}
    found = []
    for lo, hi in zip([0, *cuts], [*cuts, len(tokens)]):
        block = np.asarray(tokens[lo:hi], np.int32)
        targets = data.draw(st.lists(st.integers(-9, 40), min_size=1, max_size=5))
        if data.draw(st.booleans()):
            inverse = [data.draw(st.integers(0, len(targets) - 1)) for _ in block]
            found.append(Block(block, np.asarray(inverse, np.int32), np.asarray(targets, np.int32)))
            expected.update(zip(block.tolist(), [targets[i] for i in inverse]))
        else:
            aligned = [data.draw(st.integers(-9, 40)) for _ in block]
            found.append(Block(block, None, np.asarray(aligned, np.int32)))
            expected.update(zip(block.tolist(), aligned))
    row_tokens, row_targets, mask = sorted_row(found, vocab_size)
    assert row_tokens.tolist() == sorted(expected)
    assert row_targets.tolist() == [expected[token] for token in sorted(expected)]
    bits = np.unpackbits(mask.view(np.uint8), bitorder="little")
    assert np.flatnonzero(bits).tolist() == sorted(expected)
