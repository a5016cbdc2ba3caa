"""``TokenRow``: one state's token row as the blocks its walk found, resolved lazily.

A row walk (``fsm.row_walk``) finds a state's tokens as blocks: tokens and where each
leads. The branches of a union state read some tokens in common, and such a token
leads to the union of the branches' targets. Merging the blocks into one sorted row
takes passes over every token, while a decode step needs only the row's mask and the
target of the one token it takes: a JSON key's row reads ~48,800 of SmolLM2's tokens
through "any other key", and the text takes one of them. So a row keeps its blocks as
the walk found them, overlapping where branches share tokens, and:

* its mask is the blocks' masks or'ed together (a block that a cached lexeme walk hands
  out again brings its mask along; small blocks are packed together);
* the target of one token comes from the blocks that hold it (``items_of``: one
  state or join, or several that lead to their union);
* the merged row, every token ascending with its target, is built only when asked
  (``merged``: ``TokenIndex.next_states``, an eager build).

A block of tokens read inside a lexeme keeps the lexeme state each ends in and the
continuation ``rest`` (``Block.rest``): such a token leads to "that lexeme state, then
``rest``" (a *join*), or to ``rest`` where the lexeme is over. Joins are numbered only
when taken; a merged row stands for the joins it has not numbered by codes (-2, -3,
...) into its list of pairs, handed out when it is merged.
"""

from __future__ import annotations

import sys
from bisect import bisect_right
from collections.abc import Callable, Sequence
from itertools import repeat
from typing import NamedTuple

import numpy as np
from mypy_extensions import mypyc_attr

from fsm.trie_walk import (
    ABSENT,
    group_by_token,
    is_sparse,
    pack_bitmask,
    pack_onto,
    position_in_trie_order,
    read_by_several,
    read_row,
    scatter_plain,
    scatter_targets,
)

BIG_BLOCK = 1024
"""Blocks with at least this many tokens carry their own mask; smaller ones are packed
together, and a lookup scans them together."""

_NONE = np.zeros(0, np.int32)

_TOKEN_BYTES = np.dtype(np.int32).itemsize
"""Bytes of a token id in a block's ``tokens`` (int32, in ``_BYTE_ORDER``)."""
_BYTE_ORDER = sys.byteorder

PLAIN = -1
"""``Block.rest`` of a block whose targets are states."""

Pair = tuple[int, int]
"""A join: a lexeme state, then its continuation."""

Item = int | Pair
"""Where a token leads from one block: a state, or a join not numbered yet."""

UnionOf = Callable[[tuple[int, ...]], int]
"""The target of a token that several blocks of a merged row read, from their targets
(ascending; codes of joins included)."""


class Block(NamedTuple):
    """Tokens (int32, as the kernels take them) and where each leads: ``targets``
    aligned with ``tokens`` when ``inverse`` is None (a plain walk), else
    ``targets[inverse]`` (a lexeme walk: a few distinct targets). The targets are
    states when ``rest`` is ``PLAIN``, else the lexeme states the tokens end in, each
    then ``rest``. ``mask``: the tokens packed (``trie_walk.pack_bitmask``), when the
    walk that found them keeps it. A ``holed`` block reads only the tokens its mask
    holds: a big walk cut without a copy (``fsm.row_walk``: "any other key" is a JSON
    string's walk but a few paths).

    The tens of thousands of tokens a JSON string reads are neither copied nor scanned
    per row: numbering and discovering touch only the small ``targets``."""

    tokens: np.ndarray
    inverse: np.ndarray | None
    targets: np.ndarray
    mask: np.ndarray | None = None
    rest: int = PLAIN
    holed: bool = False

    def ends(self) -> np.ndarray:
        return self.targets if self.inverse is None else self.targets[self.inverse]


StoredBlock = tuple[np.ndarray, np.ndarray | None, np.ndarray, np.ndarray | None, int, bool]
"""A ``Block`` as a plain tuple, the way a row keeps it: the cyclic collector stops
tracking an exact tuple of arrays and ints, never a named tuple, and the rows a cold
walk builds live as long as the walk (each object they keep is scanned again by every
full collection until then)."""


def _end_and_rest(block: StoredBlock, position: int) -> tuple[int, int]:
    """The target of ``block``'s token at ``position``, and the block's ``rest``."""
    _, inverse, targets, _, rest, _ = block
    at = position if inverse is None else int(inverse.item(position))
    return int(targets.item(at)), rest


@mypyc_attr(acyclic=True)
class TokenRow:
    """A row as the blocks its walk found (they may share tokens; kept as
    ``StoredBlock``s) and its packed ``mask``;
    ``exit_state`` is where a lexeme is over (a token ending there leads to ``rest``)."""

    __slots__ = (
        "_big",
        "_blocks",
        "_small",
        "_small_bytes",
        "_small_starts",
        "_token_nodes",
        "exit_state",
        "mask",
        "vocab_size",
    )

    def __init__(
        self,
        blocks: Sequence[StoredBlock],
        exit_state: int,
        vocab_size: int,
        token_nodes: np.ndarray,
    ) -> None:
        """``blocks``: ``Block``s, or the same as plain tuples (a row walk's, which
        need no named tuple made per block); ``token_nodes``: the trie node of each
        token (``TokenTrie.token_nodes``), by which a big block's tokens, in trie
        order, are searched (``items_of``)."""
        self.exit_state = exit_state
        self.vocab_size = vocab_size
        self._token_nodes = token_nodes
        words = (vocab_size + 31) // 32
        # Big blocks carry their own mask. The small blocks' tokens lie side by side
        # as bytes, with where each block starts among them: a lookup finds a token's
        # positions there (``bytes.find``), then its blocks (``items_of``). Most rows are
        # a few blocks of a few tokens, for which numpy's concatenation and a kernel's
        # search each cost more than the bytes' join and find. A row keeps only
        # tuples of arrays, bytes and ints, which the cyclic collector stops tracking.
        stored: list[StoredBlock] = []
        small: list[StoredBlock] = []
        big: list[StoredBlock] = []
        big_masks: list[np.ndarray] = []
        starts: list[int] = []
        pieces: list[bytes] = []
        start = 0
        for block in blocks:  # a holed block is big: it is read through its mask
            tokens, block_mask = block[0], block[3]
            is_big = len(tokens) >= BIG_BLOCK
            if is_big and block_mask is None:
                block_mask = pack_bitmask(tokens, words)
            if block_mask is not block[3] or type(block) is not tuple:  # kept plain
                block = (tokens, block[1], block[2], block_mask, block[4], block[5])
            stored.append(block)
            if is_big:
                assert block_mask is not None
                big_masks.append(block_mask)
                big.append(block)
            else:
                small.append(block)
                starts.append(start)
                start += len(tokens)
                pieces.append(tokens.tobytes())
        self._blocks = tuple(stored)
        self._small = tuple(small)
        self._big = tuple(big)
        self._small_starts = tuple(starts)
        if len(small) == 1:  # most rows: the block's own tokens are packed
            self._small_bytes = pieces[0]
            small_tokens = small[0][0]
        else:
            self._small_bytes = b"".join(pieces)
            small_tokens = np.frombuffer(self._small_bytes, np.int32)
        if big_masks:
            mask = pack_onto(big_masks[0], small_tokens)
            for block_mask in big_masks[1:]:
                np.bitwise_or(mask, block_mask, out=mask)
        else:
            mask = pack_bitmask(small_tokens, words)
        self.mask = mask

    def items_of(self, token: int) -> list[Item]:
        """Where each block that reads ``token`` leads (empty when none does): several
        items lead to their union."""
        found: list[tuple[int, int]] = []
        data = self._small_bytes
        pattern = token.to_bytes(_TOKEN_BYTES, _BYTE_ORDER)
        at = data.find(pattern)
        while at >= 0:  # a match at an offset not a token's is inside two tokens
            if at % _TOKEN_BYTES:
                at = data.find(pattern, at + 1)
                continue
            position = at // _TOKEN_BYTES
            which = bisect_right(self._small_starts, position) - 1
            found.append(_end_and_rest(self._small[which], position - self._small_starts[which]))
            at = data.find(pattern, at + _TOKEN_BYTES)
        word, bit = token >> 5, token & 31
        for block in self._big:
            big_mask = block[3]  # never None for a big block (``__init__``)
            if big_mask is not None and (int(big_mask.item(word)) >> bit) & 1:
                position = position_in_trie_order(block[0], self._token_nodes, token)
                found.append(_end_and_rest(block, int(position)))
        return [self._item(end, rest) for end, rest in found]

    def _item(self, end: int, rest: int) -> Item:
        if rest == PLAIN:
            return end
        return rest if end == self.exit_state else (end, rest)

    def merged(
        self, union_of: Callable[[tuple[int, ...], list[Pair]], int]
    ) -> tuple[np.ndarray, np.ndarray, list[Pair]]:
        """Every token ascending, its target (a state, or the code of a join in the
        pairs returned), and those pairs; a token several blocks read leads to
        ``union_of`` of their targets and the pairs."""
        pairs: list[Pair] = []
        coded = [self._coded(_read(Block(*block)), pairs) for block in self._blocks]
        joined = disjoint(coded, self.vocab_size, lambda targets: union_of(targets, pairs))
        tokens, targets, _ = sorted_row(joined, self.vocab_size)
        return tokens, targets, pairs

    def _coded(self, block: Block, pairs: list[Pair]) -> Block:
        """``block`` with states or codes (-2, -3, ...) of ``pairs`` as targets: the
        joins of a lexeme block are handed a range of codes, in C loops (an object's
        keys hand out one per key prefix). A pair met twice in a row gets two codes
        and numbers one state (joins are memoised); the code of an end where the
        lexeme is over stays unused, so the codes stay a range."""
        if block.rest == PLAIN:
            return block
        ends = block.targets.tolist()
        first = -2 - len(pairs)
        pairs.extend(zip(ends, repeat(block.rest)))
        codes = list(range(first, first - len(ends), -1))
        if self.exit_state in ends:
            for position, end in enumerate(ends):
                if end == self.exit_state:
                    codes[position] = block.rest
        return Block(block.tokens, block.inverse, np.asarray(codes, np.int32), block.mask)


def _read(block: Block) -> Block:
    """``block`` with only the tokens it reads: a holed block's mask picks them."""
    if not block.holed:
        return block
    assert block.mask is not None
    bits = np.unpackbits(block.mask.view(np.uint8), bitorder="little")
    kept = bits[block.tokens].view(np.bool_)
    inverse = None if block.inverse is None else block.inverse[kept]
    return Block(block.tokens[kept], inverse, block.targets, None, block.rest)


def disjoint(blocks: list[Block], vocab_size: int, union_of: UnionOf) -> list[Block]:
    """``blocks`` rewritten so no two share a token: a token several read is taken out
    of each and leads to ``union_of`` of their targets (one union per distinct
    combination, in one more block)."""
    if len(blocks) <= 1:
        return blocks
    several = read_by_several(np.concatenate([block.tokens for block in blocks]), vocab_size)
    if not len(several):
        return blocks
    kept: list[Block] = []
    shared_tokens, shared_ends = [], []
    starts = np.cumsum([0] + [len(block.tokens) for block in blocks])
    cuts = np.searchsorted(several, starts).tolist()
    for block, offset, lo, hi in zip(blocks, starts.tolist(), cuts, cuts[1:]):
        if lo == hi:
            kept.append(block)
            continue
        shared = several[lo:hi] - offset
        shared_tokens.append(block.tokens[shared])
        shared_ends.append(
            block.targets[shared if block.inverse is None else block.inverse[shared]]
        )
        if len(shared) < len(block.tokens):
            kept.append(_without(block, shared))
    tokens, inverse, combinations = combine(
        np.concatenate(shared_tokens), np.concatenate(shared_ends), vocab_size
    )
    targets = np.asarray([union_of(combination) for combination in combinations], np.int32)
    kept.append(Block(tokens, inverse, targets))
    return kept


def sorted_row(blocks: list[Block], vocab_size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Disjoint blocks joined: their tokens ascending, their targets, and the packed
    mask. A row that reads a sixteenth of the vocabulary or more (a string's ~48,800
    tokens) is scattered into a vocabulary-sized array and read back in one pass, which
    also packs the mask; fewer tokens are sorted."""
    words = (vocab_size + 31) // 32
    count = sum(len(block.tokens) for block in blocks)
    if is_sparse(count, vocab_size):
        if not blocks:
            return _NONE, _NONE, np.zeros(words, np.int32)
        tokens = np.concatenate([block.tokens for block in blocks])
        targets = np.concatenate([block.ends() for block in blocks])
        order = np.argsort(tokens)
        tokens, targets = tokens[order], targets[order]
        return tokens, targets, pack_bitmask(tokens, words)
    target_of = np.full(words * 32, ABSENT, np.int32)
    for block in blocks:
        if block.inverse is None:
            scatter_plain(target_of, block.tokens, block.targets)
        else:
            scatter_targets(target_of, block.tokens, block.inverse, block.targets)
    return read_row(target_of, count)  # type: ignore[no-any-return]


def mask_tokens(mask: np.ndarray) -> np.ndarray:
    """The int32 tokens a packed mask holds, ascending."""
    bits = np.unpackbits(mask.view(np.uint8), bitorder="little")
    return np.flatnonzero(bits).astype(np.int32)


def combine(
    tokens: np.ndarray, ends: np.ndarray, vocab_size: int
) -> tuple[np.ndarray, np.ndarray, list[tuple[int, ...]]]:
    """Group ``(token, end)`` pairs by token: ``(distinct tokens, inverse, combinations)``
    where token ``i`` leads to the ends ``combinations[inverse[i]]`` (ascending, without
    repeats). Several string branches of a union share ~48,800 tokens each, so the
    grouping is a kernel (``trie_walk.group_by_token``), linear in the pairs."""
    distinct, inverse, offsets, values = group_by_token(tokens, ends, vocab_size)
    bounds, listed = offsets.tolist(), values.tolist()
    combinations = [tuple(listed[lo:hi]) for lo, hi in zip(bounds, bounds[1:])]
    return distinct, inverse, combinations


def _without(block: Block, dropped: np.ndarray) -> Block:
    """``block`` less the tokens at positions ``dropped``."""
    keep = np.ones(len(block.tokens), np.bool_)
    keep[dropped] = False
    if block.inverse is None:
        return Block(block.tokens[keep], None, block.targets[keep])
    return Block(block.tokens[keep], block.inverse[keep], block.targets)
