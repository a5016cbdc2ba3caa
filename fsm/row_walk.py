"""One token row: every token readable from a state, and where it leads.

The row of a state is a walk of the vocabulary trie (``fsm.trie_walk.walk_trie``) over
the automaton's byte table. Below a trie node whose state is not expanded yet the walk
stops; the state is expanded and the walk goes on below that node alone.

A ``DecomposableAutomaton`` (the walker takes it as ``fsm.decomposable.DecomposableBase``,
a compiled base class: compiled calls through a protocol are Python calls) makes most
of that work shareable:

* **Lexemes.** When a state is "lexeme ``L``, then ``K``", a token is read inside ``L``
  the same way whatever ``K`` is, so the walk goes over ``L``'s own states (the table
  holds them too) and stops at the nodes where ``L`` ends (``exit_state``), or may end
  (a number, whose next byte tells whether it goes on: ``fsm.decompose``). A token that
  ends inside ``L`` in lexeme state ``L'`` leads to "``L'``, then ``K``" (``join``);
  one that ends exactly where ``L`` does leads to ``K``; below the exit nodes the walk
  goes on from ``K``. The walk of a lexeme state from the trie's root is kept, so a
  JSON string's tokens are walked once per index, not once per place it appears, and
  the states inside strings are not expanded once per continuation.
* **Few strings.** A lexeme with at most ``FEW_STRINGS`` strings (an object key,
  whitespace then a key, a small enum) is walked down the trie paths its strings spell,
  one derivative per node, without expanding a state (``_finite_walk``); a lexeme of
  one string (a key) numbers its states along the path and derives them when a token
  takes one (``_literal_walk``).
* **Within another.** A lexeme declared as another but a few strings (an object's
  "any other key": a JSON string but the keys, ``terms.Lexeme``) is walked down those
  strings' trie paths, a derivative per node; everywhere else it is in the other's
  states, so the other's cached walk is taken there, in slices (``_within_walk``).
* **Inside another.** A lexeme whose item is a lexeme then more (a key's string inside
  an arbitrary JSON value, a map's key inside the lexeme of its members) is walked as
  that inner lexeme, then the rest below its exits (``DerivativeAutomaton.inside``):
  the string's walk is the one the vocabulary shares, not a walk of each outer state.
* **By first byte.** Below a child of the trie's root, a lexeme's walk depends only on
  the state the child is entered in. A lexeme whose walk is not shared otherwise is
  cut from an earlier big root walk of the index that enters most children alike
  (``_by_first_bytes``): an unanchored pattern's states, one per character read
  into a match, differ in where a few first bytes lead.
* **Unions.** A state that is a union of branches, some of them lexemes (an object's
  next key: each named key, or any other key), is walked branch by branch, and the
  branches' blocks are kept side by side: a token that several branches read leads to
  the union of where each leads, found when the token is taken (``fsm.token_row``).
  Such a union, when every branch ended inside a lexeme, is walked from its pairs
  (lexeme state, continuation) as it was found (``union_joins``), without building its
  term or numbering its joins.

Rows come out the same as a plain walk's, up to state numbering (the tests compare
them by walking both). Targets are numbered lazily: a walk hands out a ``TokenRow``
of blocks, and a token read inside a lexeme leads to a *join* ("lexeme state, then
``K``") numbered only when the token is taken (``target``), or when the whole row is
asked for (``merged``). A row over an object's keys or a string's tokens leads to tens
of joins and unions, of which the text takes one; a join that only feeds a union (an
object key that both a named key and "any other key" read) is never numbered, which
keeps the automaton from filling with states no row hands out.
"""

from __future__ import annotations

from collections.abc import Hashable

import numpy as np
from mypy_extensions import mypyc_attr

from fsm.automaton import DEAD
from fsm.byte_table import ByteTable, filled
from fsm.decomposable import DecomposableBase
from fsm.lexeme_cache import (
    CountedSelection,
    CountedWalk,
    LexemeWalkCache,
    LiteralTokens,
    MeetSkeleton,
    SharedCutWalk,
    SharedLexemeWalk,
    TriePaths,
)
from fsm.token_row import BIG_BLOCK, PLAIN, Item, Pair, StoredBlock, TokenRow
from fsm.trie import TokenTrie
from fsm.trie_walk import (
    counted_codes,
    cut_mask,
    cut_walk,
    follow_paths,
    in_trie_order,
    literal_tokens,
    literal_tokens_of_texts,
    masks_up_to,
    pack_bitmask,
    paths_of_texts,
    walk_at_nodes,
    walk_trie,
    walk_trie_counting,
)

NO_STOPS = np.zeros(0, np.bool_)
"""``walk_trie``'s ``stops`` when the walk stops at no state (only where unexpanded)."""
NO_STOPS.flags.writeable = False
FEW_STRINGS = 64
"""A lexeme with at most this many strings is walked string by string (``_finite_walk``)."""
ROOT = np.zeros(1, np.int32)
ROOT.flags.writeable = False
_ROOT_BYTES = ROOT.tobytes()  # ``_literal_key``'s nodes of a walk from the root
KEYS_WALKED_TOGETHER = 12
"""From this many new keys in one row their walks are found in one kernel call
(``_keys_walked_together``): below it the call's fixed cost was more than it saved
(``benchmarks/key_rows.py``: 3 keys 30-50 µs slower, 10 alike, 30-70 25-40% faster)."""
_NONE = np.zeros(0, np.int32)

TextPaths = tuple[tuple[int, ...], ...]
"""A string's paths down the trie, one per start that holds its first byte (every
start's path when there is one start)."""

FEW_STATES = 64
"""Up to this many, distinct states are found through a set: numpy's calls would cost
more than the work (``_distinct_states``, ``distinct_with_inverse``)."""
FIRST_BYTE_BASES = 4
"""Big root walks an index keeps for the walks cut from them by first byte
(``RowWalker._by_first_bytes``), the latest first."""

Found = list[StoredBlock]
"""Blocks as plain tuples (``token_row.StoredBlock``): a row keeps them so."""


@mypyc_attr(acyclic=True)
class _LexemeWalk:
    """Tokens read inside a lexeme: their lexeme end states are ``ends[inverse]``
    (``exit_state`` where the token ends with the lexeme); ``exits``: trie nodes with
    children where the lexeme ends (the continuation walks below them); ``nodes``: the
    tokens' trie nodes, ascending, when the tokens are in trie order (``_in_trie_order``)."""

    __slots__ = ("_mask", "ends", "exits", "inverse", "nodes", "tokens")

    def __init__(
        self,
        tokens: np.ndarray,
        inverse: np.ndarray,
        ends: np.ndarray,
        exits: np.ndarray,
        mask: np.ndarray | None = None,
        nodes: np.ndarray | None = None,
    ) -> None:
        self.tokens = tokens
        self.inverse = inverse
        self.ends = ends
        self.exits = exits
        self._mask = mask
        self.nodes = nodes

    def packed(self, words: int) -> np.ndarray | None:
        """The tokens' packed mask when they are many (``token_row.BIG_BLOCK``),
        computed once: every row that takes this walk ors it into its own."""
        if self._mask is None and len(self.tokens) >= BIG_BLOCK:
            self._mask = pack_bitmask(self.tokens, words)
        return self._mask


def _in_node_order(walked: _LexemeWalk, trie: TokenTrie, words: int) -> _LexemeWalk:
    """``walked`` with its tokens in trie order, ``nodes`` set: sorted stably by node
    (the kernel's sorted runs merge in one pass), their ends' ``inverse`` with them."""
    nodes = trie.token_nodes[walked.tokens]
    order = np.argsort(nodes, kind="stable")
    return _LexemeWalk(
        walked.tokens[order],
        walked.inverse[order],
        walked.ends,
        walked.exits,
        walked.packed(words),
        nodes[order],
    )


@mypyc_attr(acyclic=True)
class _CutWalk:
    """A lexeme walk within another's (``_within_walk``), or another lexeme's walk but
    the first bytes it enters otherwise (``_by_first_bytes``), not copied: the tokens
    of ``base`` (in trie order, with its packed mask) that ``mask`` holds, ending in
    ``base.ends[inverse]``, then ``own``'s tokens (down the strings apart, or below
    the first bytes entered otherwise; in trie order); ``exits``:
    the base's outside the node ranges ``[starts[k], stops[k])`` cut, then own's.
    A row takes the two as blocks, the base's read through the mask
    (``Block.holed``); ``materialized`` is the copy ``_without`` makes, for the few
    uses that need a walk's every token (a walk within this one)."""

    __slots__ = ("base", "exits", "mask", "own", "starts", "stops")

    def __init__(
        self,
        base: _LexemeWalk,
        own: _LexemeWalk,
        starts: np.ndarray,
        stops: np.ndarray,
        mask: np.ndarray,
        exits: np.ndarray,
    ) -> None:
        self.base = base
        self.own = own
        self.starts = starts
        self.stops = stops
        self.mask = mask
        self.exits = exits

    def blocks(self, rest: int) -> Found:
        """The walk's tokens as blocks, each then ``rest``."""
        base, own = self.base, self.own
        found: Found = [(base.tokens, base.inverse, base.ends, self.mask, rest, True)]
        if len(own.tokens):
            found.append((own.tokens, own.inverse, own.ends, None, rest, False))
        return found

    def materialized(self, trie: TokenTrie, words: int) -> _LexemeWalk:
        return _without(self.own, self.base, self.starts, self.stops, trie, words)


@mypyc_attr(acyclic=True)
class _HeldWalk:
    """A big walk's tokens that ``mask`` holds, read through the mask, not copied (a
    bounded string's tokens within its bounds: ``RowWalker._counted_walk``); its
    ``exits`` are the walk's. A row takes it as one block (``Block.holed``);
    ``materialized`` copies the tokens held, for the few uses that need them all."""

    __slots__ = ("exits", "mask", "walk")

    def __init__(self, walk: _LexemeWalk, mask: np.ndarray) -> None:
        self.walk = walk
        self.mask = mask
        self.exits = walk.exits

    def blocks(self, rest: int) -> Found:
        """The walk's tokens as a block, each then ``rest``."""
        walk = self.walk
        return [(walk.tokens, walk.inverse, walk.ends, self.mask, rest, True)]

    def materialized(self, trie: TokenTrie, words: int) -> _LexemeWalk:
        walk = self.walk
        held = _held(self.mask, walk.tokens)
        ends, inverse = distinct_with_inverse(walk.ends[walk.inverse[held]])
        return _LexemeWalk(walk.tokens[held], inverse, ends, self.exits)


def _held(mask: np.ndarray, tokens: np.ndarray) -> np.ndarray:
    """Whether each of ``tokens`` is set in the packed ``mask`` (booleans)."""
    bits = mask.view(np.uint32)[tokens >> 5] >> (tokens & 31).astype(np.uint32)
    return (bits & 1).astype(np.bool_)


RootWalk = _LexemeWalk | _CutWalk | _HeldWalk
"""A lexeme's walk as ``RowWalker._root_walk`` hands it out: whole, cut from another's,
or read through a mask."""


@mypyc_attr(acyclic=True)
class _FirstBytes:
    """A big root walk of ``lexeme`` kept for walks cut from it (``_by_first_bytes``):
    ``entered``, the state each child of the trie's root is entered in
    (``TokenTrie.root_children``), and the walk, its tokens in trie order."""

    __slots__ = ("entered", "lexeme", "walk")

    def __init__(self, lexeme: int, entered: np.ndarray, walk: _LexemeWalk) -> None:
        self.lexeme = lexeme
        self.entered = entered
        self.walk = walk


class RowWalker:
    """Builds the token walks of states over ``table`` and ``trie``, taking states
    apart through ``parts`` when given (see the module docstring)."""

    def __init__(
        self,
        table: ByteTable,
        trie: TokenTrie,
        vocab_size: int,
        parts: DecomposableBase | None,
        shared: LexemeWalkCache | None = None,
    ) -> None:
        self.table = table
        self.trie = trie
        self.vocab_size = vocab_size
        self.words = (vocab_size + 31) // 32
        self.parts = parts
        self.shared = shared
        # (lexeme, below which nodes: None for the root) -> its walk, for this index
        self._lexeme_walks: dict[tuple[int, bytes | None], RootWalk] = {}
        self._meet_skeletons: dict[tuple[Hashable, int], tuple[MeetSkeleton, list[int]]] = {}
        # plain repetitions' counted walks (None: not countable), for this index
        self._counted_bases: dict[Hashable, CountedWalk | None] = {}
        # lexemes' walks in trie order, that walks within them are cut from
        self._ordered: dict[int, _LexemeWalk] = {}
        # their tokens within bounds, for this index
        self._counted_selections: dict[
            tuple[Hashable, int, int, bytes | None], CountedSelection
        ] = {}
        # big root walks that others are cut from by first byte, the latest first
        self._first_bytes: list[_FirstBytes] = []
        # lexemes asked for their one string (``_one_string``): None where not one
        self._one_strings: dict[int, bytes | None] = {}
        # ``TokenTrie.next_bytes`` of the node sets met below a union's branches
        self._next_bytes: dict[bytes, int] = {}

    def walk(self, state: int, final_tokens: np.ndarray = _NONE) -> TokenRow:
        """Every token read from ``state``, as a ``TokenRow`` (its targets are found
        when taken: ``target``). ``final_tokens`` (the end-of-sequence ids, when
        ``state`` is final) lead to ``state`` itself."""
        found = self._below(ROOT, state)
        if len(final_tokens):
            found.append((final_tokens, None, filled(len(final_tokens), state), None, PLAIN, False))
        exit_state = DEAD if self.parts is None else self.parts.exit_state
        return TokenRow(found, exit_state, self.vocab_size, self.trie.token_nodes)

    def joined(self, pair: tuple[int, int]) -> int:
        """The state of a join (``target``, ``merged``), numbered and discovered."""
        assert self.parts is not None
        state = self.parts.join(*pair)
        self.table.discover_state(state)
        return state

    # ------------------------------------------------------------------ parts

    def _below(self, nodes: np.ndarray, state: int) -> Found:
        """Tokens strictly below ``nodes`` (disjoint subtrees), entered in ``state``."""
        taken = self._taken_apart(nodes, state)
        if taken is not None:
            return taken
        if not self.table.is_expanded(state):
            self.table.expand(state)
        return self._plain(nodes, filled(len(nodes), state))

    def _below_each(self, nodes: np.ndarray, states: np.ndarray) -> Found:
        """Tokens strictly below each ``nodes[i]`` entered in ``states[i]``: the states
        taken apart are walked as lexemes or branches, the others expanded and walked
        together in one kernel call (``_plain``)."""
        distinct = _distinct_states(states)
        if len(distinct) == 1:
            return self._below(nodes, distinct[0])
        if self.parts is None:  # nothing is taken apart: expanded, walked in one call
            for state in distinct:
                if not self.table.is_expanded(state):
                    self.table.expand(state)
            return self._plain(nodes, states)
        found: Found = []
        plain = np.ones(len(nodes), np.bool_)
        for state in distinct:
            entered = states == state
            taken = self._taken_apart(nodes[entered], state)
            if taken is not None:
                found.extend(taken)
                plain &= ~entered
            elif not self.table.is_expanded(state):
                self.table.expand(state)
        if plain.any():
            found.extend(self._plain(nodes[plain], states[plain]))
        return found

    def _plain(self, nodes: np.ndarray, states: np.ndarray) -> Found:
        """Tokens below ``nodes`` entered in expanded ``states``, by the kernel, then
        below where it stopped at states not expanded yet."""
        tokens, ends, stopped, stopped_states = self._walk(nodes, states, NO_STOPS)
        found: Found = [(tokens, None, ends, None, PLAIN, False)] if len(tokens) else []
        if len(stopped):
            found.extend(self._below_each(stopped, stopped_states))
        return found

    def _taken_apart(self, nodes: np.ndarray, state: int) -> Found | None:
        """The walk below ``nodes`` entered in ``state`` when ``state`` is a lexeme then
        a continuation, or a union (None otherwise)."""
        if self.parts is None:
            return None
        joins = self.parts.union_joins(state)
        if joins is not None:  # a token several branches read: walked as they were
            return [
                block for head, rest in joins for block in self._through_lexeme(nodes, head, rest)
            ]
        split = self.parts.lexeme_split(state)
        if split is not None:
            return self._through_lexeme(nodes, split[0], split[1])
        items = self._branch_items(nodes, state)
        if items is None:
            return None
        # side by side: a token several branches read leads to their union (TokenRow)
        found: Found = []
        for item in items:
            if isinstance(item, int):
                found.extend(self._below(nodes, item))
            else:
                found.extend(self._through_lexeme(nodes, item[0], item[1]))
        return found

    def _branch_items(self, nodes: np.ndarray, state: int) -> tuple[Item, ...] | None:
        """The branches of a union ``state`` to walk below ``nodes``, each as its split
        where it has one (``branch_parts``), or None when ``state`` has no branches.

        Below nodes other than the root, the branches whose strings start with none of
        the bytes a token reads next there are left out, unnumbered: they read no
        token there. Below a string value's closing ``", "`` a row reaches every key
        left of its object, and few keys start with a byte a token goes on with
        there."""
        parts = self.parts
        assert parts is not None
        if nodes is ROOT:
            items = parts.branch_parts(state)
            if items is not None:
                self._keys_walked_together(items)
            return items
        openings = parts.branch_openings(state)
        if openings is None:
            return None
        key = nodes.tobytes()
        below = self._next_bytes.get(key)
        if below is None:  # the trie's memo is interpreted code: a call into it per row
            below = self._next_bytes[key] = self.trie.next_bytes(nodes)
        if not any(opening & below for opening in openings):
            return ()
        items = parts.branch_parts(state)
        assert items is not None
        return tuple(item for item, opening in zip(items, openings, strict=True) if opening & below)

    def _keys_walked_together(self, items: tuple[Item, ...]) -> None:
        """Keeps in the vocabulary's cache, from one kernel call, the root walks of the
        keys among the branches' lexemes (``items``: ``_branch_items``) it does not
        hold yet (``_literal_tokens``): the named keys of an object a row meets, each a
        kernel call of its own otherwise, which cost more than the key's walk
        (``literal_tokens_of_texts``)."""
        shared = self.shared
        if shared is None or len(items) < KEYS_WALKED_TOGETHER:
            return
        texts: dict[bytes, None] = {}
        for item in items:
            if isinstance(item, int) or (item[0], None) in self._lexeme_walks:
                continue  # not a lexeme, or walked by this index already
            text = self._one_string(item[0])
            if text is not None and shared.get(_literal_key(text, _ROOT_BYTES)) is None:
                texts[text] = None
        if len(texts) < KEYS_WALKED_TOGETHER:
            return
        listed = list(texts)
        bounds = _text_bounds(listed)
        trie = self.trie
        tokens, inverse, read, exits, at_token, at_read, at_exit = literal_tokens_of_texts(
            trie.labels,
            trie.ends,
            trie.token_starts,
            trie.token_ids,
            ROOT,
            np.frombuffer(b"".join(listed), np.uint8),
            bounds,
        )
        token_at, read_at, exit_at = at_token.tolist(), at_read.tolist(), at_exit.tolist()
        for k, text in enumerate(listed):
            found = LiteralTokens(
                tokens[token_at[k] : token_at[k + 1]],
                inverse[token_at[k] : token_at[k + 1]],
                read[read_at[k] : read_at[k + 1]],
                exits[exit_at[k] : exit_at[k + 1]],
            )
            shared.put(_literal_key(text, _ROOT_BYTES), found)

    def _one_string(self, lexeme: int) -> bytes | None:
        """The one string of ``lexeme`` when its root walk reads it as a literal
        (``_root_walk``: a key read in part, or a lexeme of one string), else None;
        kept, so that ``_through_lexeme`` walks such a lexeme as its literal at once."""
        if lexeme in self._one_strings:
            return self._one_strings[lexeme]
        assert self.parts is not None
        parts = self.parts
        text = parts.literal_text(lexeme)
        if text is None and parts.lexeme_within(lexeme) is None:
            strings = parts.lexeme_strings(lexeme, FEW_STRINGS)
            text = strings[0] if strings is not None and len(strings) == 1 else None
        self._one_strings[lexeme] = text
        return text

    def _walk(
        self, nodes: np.ndarray, states: np.ndarray, stops: np.ndarray
    ) -> tuple[np.ndarray, ...]:
        trie = self.trie
        return walk_trie(  # type: ignore[no-any-return]
            self.table.table,
            self.table.row_of,
            nodes,
            states,
            trie.labels,
            trie.depths,
            trie.ends,
            trie.token_starts,
            trie.token_ids,
            stops,
            trie.max_depth,
        )

    def _through_lexeme(self, nodes: np.ndarray, lexeme: int, rest: int) -> Found:
        """Tokens below ``nodes`` from "``lexeme``, then ``rest``" (from the lexeme
        inside, when ``lexeme`` is headed by one: ``DerivativeAutomaton.inside``)."""
        assert self.parts is not None
        below = None if nodes is ROOT else nodes.tobytes()
        walked = self._lexeme_walks.get((lexeme, below))
        text = None if walked is not None or below is not None else self._one_strings.get(lexeme)
        if text is not None:  # a key among an object's branches: read as its literal
            walked = self._lexeme_walks[lexeme, below] = self._literal_walk(lexeme, text)
        if walked is None:  # none is kept for a lexeme headed by another: taken apart
            inside = self.parts.inside(lexeme, rest)
            if inside is not None:
                return self._through_lexeme(nodes, inside[0], inside[1])
            prefixed = self.parts.counted_after_prefix(lexeme, rest)
            if prefixed is not None:  # the count is walked below the prefix's ends
                return self._through_lexeme(nodes, prefixed[0], prefixed[1])
            if below is None:
                walked = self._root_walk(lexeme)
            else:
                counted = self._counted_walk(lexeme, nodes)
                walked = self._below_walk(nodes, lexeme) if counted is None else counted
            self._lexeme_walks[lexeme, below] = walked
        if isinstance(walked, (_CutWalk, _HeldWalk)):
            found = walked.blocks(rest)
        elif len(walked.tokens):
            found = [
                (walked.tokens, walked.inverse, walked.ends, walked.packed(self.words), rest, False)
            ]
        else:
            found = []
        if len(walked.exits):
            found.extend(self._below(walked.exits, rest))
        return found

    def _root_walk(self, lexeme: int) -> RootWalk:
        """A lexeme's walk from the root, from the vocabulary's cache when another index
        walked an equal lexeme (its end states renumbered for this automaton)."""
        parts = self.parts
        assert parts is not None
        text = parts.literal_text(lexeme)
        if text is not None:  # a key read in part: its rest, with no term to build
            return self._literal_walk(lexeme, text)
        met = self._meet_walk(lexeme)
        if met is not None:  # its ends are this index's meets, their rows not built
            return met
        key = None if self.shared is None else parts.lexeme_key(lexeme)
        known = None if key is None or self.shared is None else self.shared.get(key)
        if isinstance(known, SharedLexemeWalk):
            return self._renumbered(known)
        if isinstance(known, SharedCutWalk):
            base, own = self._renumbered(known.base), self._renumbered(known.own)
            return _CutWalk(base, own, known.starts, known.stops, known.mask, known.exits)
        within = parts.lexeme_within(lexeme)
        if within is not None:
            cut = self._within_walk(lexeme, within[0], within[1])
            if isinstance(cut, _CutWalk):
                self._share_cut(key, cut, within[0])
                return cut
            walked = cut
        elif (counted := self._counted_walk(lexeme)) is not None:
            return counted  # its tokens are kept by bounds, its ends belong to its count
        elif (plain := self._plain_walk(lexeme)) is not None:
            walked = plain
        else:
            strings = parts.lexeme_strings(lexeme, FEW_STRINGS)
            if strings is not None:
                walked = self._finite_walk(lexeme, strings)
                if len(strings) == 1:
                    return walked  # a key's own walk is cheaper than the entry it would keep
            else:
                whole, cut_from = self._by_first_bytes(lexeme)
                if isinstance(whole, _CutWalk):
                    assert cut_from is not None
                    self._share_cut(key, whole, cut_from)
                    return whole
                walked = whole
        self._share_walk(key, walked)
        return walked

    def _by_first_bytes(self, lexeme: int) -> tuple[_LexemeWalk | _CutWalk, int | None]:
        """``lexeme``'s walk from the root, cut from an earlier big root walk of this
        index that enters most children of the root in the same states, and the lexeme
        of that walk (None: walked whole, and kept for others when big).

        Below a child of the root a walk depends only on the state the child is
        entered in, so only the children entered otherwise are walked (``_children``).
        The states of an unanchored pattern (``[0-9]{3}-`` reads as ``.*[0-9]{3}-.*``)
        differ in where a few bytes lead: each character read into a match was a new
        state whose row walked the whole trie again."""
        table, trie = self.table, self.trie
        children = trie.root_children
        entered = table.row(lexeme)[trie.labels[children]]
        base = self._closest_first_bytes(children, entered)
        if base is None:
            walked = self._lexeme_walk(ROOT, lexeme)
            if len(walked.tokens) >= BIG_BLOCK:  # in trie order (``_lexeme_walk``)
                kept = self._first_bytes[: FIRST_BYTE_BASES - 1]
                self._first_bytes = [_FirstBytes(lexeme, entered, walked), *kept]
            return walked, None
        differ = entered != base.entered
        cut = children[differ]
        own = self._children(cut, entered[differ], bool(table.final[lexeme]))
        # the root's own range [0, 1) holds no token: cut, it drops the base's exit there
        starts = np.concatenate([ROOT, cut]).astype(np.int32)
        stops = np.concatenate([ROOT + 1, trie.ends[cut]]).astype(np.int32)
        walk = base.walk
        if walk.nodes is None:  # its tokens' nodes, in trie order: read when first cut
            walk.nodes = trie.token_nodes.take(walk.tokens)
        mask = walk.packed(self.words)
        assert mask is not None
        kept_mask, exits = cut_mask(walk.tokens, walk.nodes, walk.exits, mask, starts, stops)
        exits = np.concatenate([exits, own.exits]).astype(np.int32)
        return _CutWalk(walk, own, starts, stops, kept_mask, exits), base.lexeme

    def _closest_first_bytes(self, children: np.ndarray, entered: np.ndarray) -> _FirstBytes | None:
        """The kept root walk that leaves the fewest tokens to walk again when the
        children are entered as ``entered`` says: None when each leaves more than half
        of the tokens below the live children (a walk of its own is cheaper)."""
        if not self._first_bytes:
            return None
        ranks = self.trie.token_starts
        below = ranks[self.trie.ends[children]] - ranks[children]  # tokens per child
        live = entered != DEAD
        best, fewest = None, int(below[live].sum()) // 2
        for kept in self._first_bytes:
            again = int(below[live & (entered != kept.entered)].sum())
            if again <= fewest:
                best, fewest = kept, again
        return best

    def _children(self, children: np.ndarray, states: np.ndarray, final: bool) -> _LexemeWalk:
        """The walk at and below the root's ``children`` entered in ``states``, in trie
        order, and the root itself among the exits when the lexeme is ``final`` there:
        each child's own tokens end in its state; where that state is the lexeme's
        exit, the child is an exit (when it has children); else the lexeme goes on
        below it (``_lexeme_walk``, which counts it an exit when its state may end)."""
        assert self.parts is not None
        trie, exit_state = self.trie, self.parts.exit_state
        live = states != DEAD
        children, states = children[live], states[live]
        first, last = trie.token_starts[children], trie.token_starts[children + 1]
        counts = last - first
        positions = np.repeat(first - np.cumsum(counts) + counts, counts) + np.arange(
            int(counts.sum()), dtype=np.int32
        )
        inner = trie.ends[children] > children + 1
        over = inner & (states == exit_state)
        going = inner & ~over
        below = self._lexeme_walk_each(children[going], states[going])
        tokens = np.concatenate([trie.token_ids[positions], below.tokens]).astype(np.int32)
        ends = np.concatenate([np.repeat(states, counts), below.ends[below.inverse]])
        root = ROOT if final else _NONE
        exits = np.concatenate([root, children[over], below.exits]).astype(np.int32)
        if len(tokens) >= BIG_BLOCK:
            ordered, inverse, distinct = in_trie_order(
                tokens, ends.astype(np.int32), trie.token_ranks, trie.token_ids
            )
            return _LexemeWalk(ordered, inverse, distinct, exits)
        order = np.argsort(trie.token_ranks[tokens], kind="stable")
        distinct, inverse = distinct_with_inverse(ends[order].astype(np.int32))
        return _LexemeWalk(tokens[order], inverse, distinct, exits)

    def _below_walk(self, nodes: np.ndarray, lexeme: int) -> _LexemeWalk:
        """A lexeme's walk below ``nodes`` (where tokens go on after another lexeme: a
        string's closing quote, then ``, "age"``), from the vocabulary's cache when
        another index walked an equal lexeme below the same nodes: an object's next
        keys are walked below a string's exits once per schema, not once per row."""
        assert self.parts is not None
        parts = self.parts
        key = None if self.shared is None else (parts.lexeme_key(lexeme), nodes.tobytes())
        known = self._shared_walk(key)
        if known is not None:
            return known
        within = parts.lexeme_within(lexeme)
        if within is not None:
            walked = self._within_below(nodes, lexeme, within[0], within[1])
        elif (strings := parts.lexeme_strings(lexeme, FEW_STRINGS)) is not None:
            walked = self._finite_walk(lexeme, strings, nodes)
        else:
            walked = self._lexeme_walk(nodes, lexeme)
        self._share_walk(key, walked)
        return walked

    def _shared_walk(self, key: Hashable | None) -> _LexemeWalk | None:
        """The vocabulary's walk under ``key``, its end states renumbered for this
        automaton (None: not cached, or no cache)."""
        known = None if key is None or self.shared is None else self.shared.get(key)
        return self._renumbered(known) if isinstance(known, SharedLexemeWalk) else None

    def _renumbered(self, known: SharedLexemeWalk) -> _LexemeWalk:
        """A cached walk with its end states numbered in this automaton."""
        assert self.parts is not None
        ends = np.asarray([self.parts.lexeme_state(end) for end in known.end_keys], np.int32)
        return _LexemeWalk(known.tokens, known.inverse, ends, known.exits, known.mask, known.nodes)

    def _share_walk(self, key: Hashable | None, walked: _LexemeWalk) -> None:
        """Keeps ``walked`` in the vocabulary's cache under ``key`` (when there is one)."""
        if key is not None and self.shared is not None:
            self.shared.put(key, self._as_shared(walked))

    def _share_cut(self, key: Hashable | None, cut: _CutWalk, within: int) -> None:
        """Keeps ``cut`` in the vocabulary's cache under ``key``: its mask, exits and
        own tokens, and the walk of ``within`` it is cut from (that walk's entry when
        the cache still holds it with its nodes, else the same arrays, never a copy,
        kept again as that walk's entry)."""
        if key is None or self.shared is None:
            return
        assert self.parts is not None
        base_key = self.parts.lexeme_key(within)
        base = self.shared.get(base_key)
        if (
            not isinstance(base, SharedLexemeWalk)
            or base.tokens is not cut.base.tokens
            or base.nodes is None  # kept before a walk was first cut from it
        ):
            base = self._as_shared(cut.base)
            self.shared.put(base_key, base)
        own = self._as_shared(cut.own)
        self.shared.put(key, SharedCutWalk(base, own, cut.starts, cut.stops, cut.mask, cut.exits))

    def _as_shared(self, walked: _LexemeWalk) -> SharedLexemeWalk:
        """``walked`` with its end states as keys, for the vocabulary's cache."""
        assert self.parts is not None
        end_keys = tuple(self.parts.lexeme_key(end) for end in walked.ends.tolist())
        mask = walked.packed(self.words)
        return SharedLexemeWalk(
            walked.tokens, walked.inverse, end_keys, walked.exits, mask, walked.nodes
        )

    def _counted_walk(
        self, lexeme: int, nodes: np.ndarray = ROOT
    ) -> _LexemeWalk | _HeldWalk | None:
        """The walk of a lexeme that repeats a unit a bounded number of times, read off
        the plain repetition's counted walk (``fsm.counted``): a token is kept when the
        units it begins fit the bounds, and leads to the lexeme state of its count.
        None when the lexeme is not such a repetition, or its units cannot be counted.

        The tokens kept are the counted walk's read through a mask (``_HeldWalk``), and
        that mask is two of the walk's masks by units (``CountedWalk``) put together:
        a string of ``maxLength: 60`` is a new lexeme at each character, whose tokens
        were filtered out of the plain string's tens of thousands one by one. Bounds
        past the longest token's units select what they would at that length, so they
        are clamped there. Each row numbers the states its counts lead to, their terms
        built only for the one a step takes (``counted_states``).

        Below ``nodes`` (where a prefix ends: a bounded string's quote, the whitespace
        before it) the walk is the same with every count starting there, kept by the
        vocabulary per set of nodes. None as well when the nodes' subtrees nest (a
        token would be counted from two of them)."""
        counted = self._counted_parts(lexeme, nodes)
        if counted is None:
            return None
        _, base, selected, ends = counted
        if selected.held is not None:  # a row reads a small block whole: its copy
            tokens, codes, code_inverse = selected.held
            states, inverse = distinct_with_inverse(ends[codes])
            return _LexemeWalk(tokens, inverse[code_inverse], states, selected.exits)
        return _HeldWalk(
            _LexemeWalk(base.tokens, base.inverse, ends, selected.exits), selected.mask
        )

    def _plain_walk(self, lexeme: int) -> _LexemeWalk | None:
        """The walk of a plain repetition ``unit* close`` read off its counted walk, when
        one was made (``_counted_base``: the unit counted in a bounded string, or in
        ``unit+``, whose next row is this one), its counts dropped: each token ends in
        the state of the unit part it leaves, and the lexeme ends where the counted
        walk's do. None when the lexeme is no such repetition or its units were not
        counted: a walk of its own then, as a counted walk costs more than it."""
        parts = self.parts
        assert parts is not None
        plain = parts.plain_key(lexeme)
        if plain is None:
            return None
        base = self._kept_counted(_counted_key(plain, ROOT))
        if base is None:
            return None
        states = parts.plain_states(lexeme, base.partials)
        states.append(parts.exit_state)  # the code kind of the lexeme's end
        code_states = np.asarray(states, np.int32)[base.code_kinds]
        ends, inverse = distinct_with_inverse(code_states)
        return _LexemeWalk(base.tokens, inverse[base.inverse], ends, base.exits)

    def _counted_parts(
        self, lexeme: int, nodes: np.ndarray = ROOT
    ) -> tuple[Hashable, CountedWalk, CountedSelection, np.ndarray] | None:
        """For a lexeme that repeats a unit ``lo..hi`` times (``_counted_walk``): the
        plain repetition (as a key), its counted walk, the selection of its tokens
        within the bounds, and the lexeme state each of the walk's codes ends in
        (``DEAD`` where not selected). None when it is no such repetition or cannot
        be counted."""
        assert self.parts is not None
        counting = self.parts.counting(lexeme)
        if counting is None:
            return None
        plain, lo, hi = counting
        starts = nodes
        if nodes is not ROOT:
            starts = np.unique(nodes)
            if np.any(self.trie.ends[starts[:-1]] > starts[1:]):
                return None  # a subtree inside another's
        base = self._counted_base(plain, starts)
        if base is None:
            return None
        most = base.most_units
        top = most if hi is None else min(hi, most)
        selected = self._counted_selection(plain, base, min(lo, most + 1), top, starts)
        ends = filled(len(base.code_kinds), DEAD)  # a code not selected is never read
        ends[selected.exit_codes] = self.parts.exit_state
        ends[selected.inside] = self.parts.counted_states(lexeme, base.partials, selected.begun)
        return plain, base, selected, ends

    def _meet_walk(self, lexeme: int) -> _HeldWalk | _LexemeWalk | None:
        """The walk of a lexeme that reads a counted lexeme's strings and another's at
        once (``counted_meet``: a string with a pattern and ``maxLength``, a
        hostname's 253 characters), met from the two members' walks, with no state
        of the meet expanded. None when it is no such meet, or the members cannot be
        met.

        A state there is a pair (the other's state, characters read), so a value of
        a new length met new states at every token, each expanded to walk the trie
        below it. The tokens both members read, and the pair of ends each leads to,
        do not depend on the count (``MeetSkeleton``, kept by the vocabulary per
        state of the other member); the count selects its tokens through its mask
        (``CountedSelection``), and each pair leads to the meet of its two ends
        when some string of both is left (``meet``), its tokens held out of the mask
        otherwise. The lexeme ends at the trie nodes where both end."""
        parts = self.parts
        assert parts is not None
        members = parts.counted_meet(lexeme)
        if members is None:
            return None
        counted = self._counted_parts(members[0])
        if counted is None:
            return None
        plain, base, selected, counted_ends = counted
        skeleton, seconds = self._meet_skeleton(plain, base, members[1])
        firsts = counted_ends[skeleton.codes].tolist()
        exit_state = parts.exit_state
        targets = []
        cleared = False  # a pair the bounds keep leaves no string: its tokens go
        for first, second in zip(firsts, seconds, strict=True):
            if first == DEAD:  # a code the bounds leave out: out of the mask already
                targets.append(DEAD)
                continue
            if exit_state in (first, second):  # both close on the same byte
                target = exit_state if first == second else DEAD
            else:
                met = parts.meet(first, second)
                if met is None:
                    return None
                target = met
            cleared = cleared or target == DEAD
            targets.append(target)
        ends = np.asarray(targets, np.int32)
        mask = selected.mask & skeleton.mask
        if cleared:  # one pass over the tokens for every such pair
            ended = skeleton.tokens[ends[skeleton.inverse] == DEAD]
            mask = mask & ~pack_bitmask(ended, self.words)
        exits = np.intersect1d(selected.exits, skeleton.exits).astype(np.int32)
        held = _HeldWalk(_LexemeWalk(skeleton.tokens, skeleton.inverse, ends, exits), mask)
        if len(skeleton.tokens) < BIG_BLOCK:  # a row reads a small block whole: a copy
            return held.materialized(self.trie, self.words)
        return held

    def _meet_skeleton(
        self, plain: Hashable, base: CountedWalk, other: int
    ) -> tuple[MeetSkeleton, list[int]]:
        """The tokens the counted walk ``base`` and the lexeme ``other``'s walk both
        read (``MeetSkeleton``), from the vocabulary's cache when another index met
        them, and the ends of its pairs as this automaton's states."""
        known = self._meet_skeletons.get((plain, other))
        if known is not None:
            return known
        parts = self.parts
        assert parts is not None
        key = ("meet", plain, parts.lexeme_key(other))
        cached = None if self.shared is None else self.shared.get(key)
        skeleton = cached if isinstance(cached, MeetSkeleton) else None
        if skeleton is None:
            skeleton = self._skeleton_of(base, self._member_walk(other))
            if self.shared is not None:
                self.shared.put(key, skeleton)
        seconds = [parts.lexeme_state(end) for end in skeleton.end_keys]
        found = self._meet_skeletons[plain, other] = skeleton, seconds
        return found

    def _skeleton_of(self, base: CountedWalk, other: _LexemeWalk) -> MeetSkeleton:
        """The tokens of ``other`` that ``base`` reads too, in trie order, and their
        pairs of ends (``MeetSkeleton``)."""
        parts = self.parts
        assert parts is not None
        codes = base.codes_by_token[other.tokens]
        read = codes >= 0
        tokens = other.tokens[read]
        width = max(len(other.ends), 1)
        pairs, inverse = distinct_with_inverse(codes[read] * width + other.inverse[read])
        nodes = self.trie.token_nodes[tokens]
        if not (nodes[1:] > nodes[:-1]).all():  # a row searches a big block in trie order
            order = np.argsort(nodes, kind="stable")
            tokens, inverse = tokens[order], inverse[order]
        end_keys = tuple(parts.lexeme_key(end) for end in other.ends[pairs % width].tolist())
        codes_of_pairs = (pairs // width).astype(np.int32)
        mask = pack_bitmask(tokens, self.words)
        return MeetSkeleton(tokens, inverse, codes_of_pairs, end_keys, other.exits, mask)

    def _member_walk(self, lexeme: int) -> _LexemeWalk:
        """A meet's member's walk from the root with its every token (``_meet_walk``),
        kept by the index."""
        key = lexeme, None
        walked = self._lexeme_walks.get(key)
        if walked is None:
            walked = self._root_walk(lexeme)
        if not isinstance(walked, _LexemeWalk):
            walked = walked.materialized(self.trie, self.words)
        self._lexeme_walks[key] = walked
        return walked

    def _counted_selection(
        self, plain: Hashable, base: CountedWalk, lo: int, top: int, starts: np.ndarray
    ) -> CountedSelection:
        """The tokens of ``base`` (walked below ``starts``) whose units fit ``lo..top``:
        those ending inside the lexeme with at most ``top`` units begun, those ending it
        after ``lo..top`` (kept by the index, and by the vocabulary for the next index
        over it)."""
        key = (plain, lo, top, None if starts is ROOT else starts.tobytes())
        known = self._counted_selections.get(key)
        if known is not None:
            return known
        shared_key = ("counted selection", *key)
        cached = None if self.shared is None else self.shared.get(shared_key)
        if isinstance(cached, CountedSelection):
            self._counted_selections[key] = cached
            return cached
        ending = base.ending_up_to[top]
        if lo > 0:  # less the ends with fewer than ``lo`` units
            ending = ending & ~base.ending_up_to[lo - 1]
        inside = np.flatnonzero(
            (base.code_units <= top) & (base.code_kinds < len(base.partials))
        ).astype(np.int32)
        fits = (base.exit_counts >= lo) & (base.exit_counts <= top)
        mask = base.inside_up_to[top] | ending
        copy = None
        if len(base.tokens) < BIG_BLOCK:
            held = _held(mask, base.tokens)
            copy = (base.tokens[held], *distinct_with_inverse(base.inverse[held]))
        selected = CountedSelection(
            mask,
            base.exits[fits],
            inside,
            list(zip(base.code_kinds[inside].tolist(), base.code_units[inside].tolist())),
            np.flatnonzero(base.code_kinds == len(base.partials)),
            copy,
        )
        self._counted_selections[key] = selected
        if self.shared is not None:
            self.shared.put(shared_key, selected)
        return selected

    def _counted_base(self, plain: Hashable, starts: np.ndarray = ROOT) -> CountedWalk | None:
        """The walk of the plain repetition ``plain`` below ``starts`` (sorted, their
        subtrees apart) with each token's units, kept by the vocabulary (one kernel
        walk over its unit automaton times a count)."""
        assert self.parts is not None
        key = _counted_key(plain, starts)
        if key in self._counted_bases:
            return self._counted_bases[key]
        walked = self._kept_counted(key)
        units = None if walked is not None else self.parts.unit_automaton(plain)
        if units is not None:
            walked = self._counted_of(units[0], units[1], starts)
            if self.shared is not None:
                self.shared.put(key, walked)
        self._counted_bases[key] = walked
        return walked

    def _kept_counted(self, key: Hashable) -> CountedWalk | None:
        """The counted walk this index or the vocabulary keeps under ``key``, or None."""
        walked = self._counted_bases.get(key)
        if walked is None and self.shared is not None:
            known = self.shared.get(key)
            walked = known if isinstance(known, CountedWalk) else None
        return walked

    def _counted_of(
        self, table: np.ndarray, partials: tuple[Hashable, ...], starts: np.ndarray
    ) -> CountedWalk:
        """The counted walk over the unit automaton ``table`` (``fsm.counted``): one
        kernel walk of the unit automaton with a count, each token's end coded
        ``kind * width + count``, one kernel pass making them the walk's codes (every
        end of the lexeme alike) and levels, and the masks by units that selections
        are made of. The numpy passes these kernels replace cost more than the walk
        itself on a new string's unit."""
        trie, exit_kind = self.trie, len(partials)
        width = trie.max_depth + 1
        tokens, ends, exits, exit_states = walk_trie_counting(
            table,
            exit_kind,
            trie.max_depth,
            starts,
            trie.labels,
            trie.depths,
            trie.ends,
            trie.token_starts,
            trie.token_ids,
            trie.max_depth,
        )
        codes, inverse, codes_by_token, inside, ending, most = counted_codes(
            tokens, ends, width, exit_kind, self.vocab_size
        )
        exit_counts = exit_states % width
        most = max(most, int(exit_counts.max(initial=0)))
        code_kinds, code_counts = np.divmod(codes, width)
        code_units = _units_begun(code_kinds, code_counts, exit_kind)
        return CountedWalk(
            tokens,
            inverse,
            code_kinds.astype(np.int32),
            code_units.astype(np.int32),
            masks_up_to(tokens, inside, most, self.words),
            masks_up_to(tokens, ending, most, self.words),
            exits,
            exit_counts,
            partials,
            most,
            codes_by_token,
        )

    def _finite_walk(
        self, lexeme: int, strings: list[bytes], starts: np.ndarray = ROOT
    ) -> _LexemeWalk:
        """The walk below ``starts`` (the root, or where another lexeme ends: a key
        after a string's ``", "``) of a lexeme with few strings (an object key,
        whitespace then a key): only the trie nodes spelling their prefixes, each
        one's tokens ending in the lexeme state after that prefix (one ``step`` per
        prefix), with no state expanded and no kernel walk."""
        if len(strings) == 1:
            return self._literal_walk(lexeme, strings[0], starts)
        found, _ = self._down_strings(lexeme, strings, starts)
        return found

    def _literal_walk(self, lexeme: int, text: bytes, starts: np.ndarray = ROOT) -> _LexemeWalk:
        """The walk below ``starts`` of a lexeme of one string (an object key): the
        tokens along its trie paths end in the lexeme after their bytes, states
        numbered without a derivative (``after``), and where a path spells it whole,
        the lexeme is over. No prefix of a lexeme's only string is accepted or dead,
        so the paths alone say where it ends."""
        assert self.parts is not None
        parts = self.parts
        found = self._literal_tokens(text, starts)
        whole = len(text)
        ends = [
            parts.exit_state if count == whole else parts.after(lexeme, text, count)
            for count in found.read.tolist()
        ]
        return _LexemeWalk(found.tokens, found.inverse, np.asarray(ends, np.int32), found.exits)

    def _literal_tokens(self, text: bytes, starts: np.ndarray) -> LiteralTokens:
        """``literal_tokens`` of ``text`` below ``starts``, from the vocabulary's cache
        when an index walked the same string below the same nodes (a key's name recurs
        across schemas, and the rest of a key read in part across keys: ``"``, ``e"``)."""
        key = _literal_key(text, starts.tobytes())
        known = None if self.shared is None else self.shared.get(key)
        if isinstance(known, LiteralTokens):
            return known
        trie = self.trie
        found = LiteralTokens(
            *literal_tokens(
                trie.labels,
                trie.ends,
                trie.token_starts,
                trie.token_ids,
                starts,
                np.frombuffer(text, np.uint8),
            )
        )
        if self.shared is not None:
            self.shared.put(key, found)
        return found

    def _within_walk(
        self, lexeme: int, within: int, apart: frozenset[bytes]
    ) -> _LexemeWalk | _CutWalk:
        """The walk from the root of a lexeme that reads as ``within`` but the strings
        ``apart`` (``terms.Lexeme``): down each of them as far as the trie spells it,
        the tokens ending on the path end in the lexeme's own state there (as
        ``_finite_walk``); a token that leaves every path ends in ``within``'s state,
        read off ``within``'s walk; where the lexeme dies on a path (a whole key read),
        nothing at or below that node is kept. A big walk of ``within`` is cut through
        its mask, not copied (``_CutWalk``)."""
        own_walk, state_at = self._down_strings(lexeme, sorted(apart))
        starts, stops = self._cut_ranges(state_at)
        walked = self._in_trie_order(within)
        mask = walked.packed(self.words)
        if mask is None:  # a small walk: copied, cut
            return _without(own_walk, walked, starts, stops, self.trie, self.words)
        assert walked.nodes is not None
        kept, exits = cut_mask(walked.tokens, walked.nodes, walked.exits, mask, starts, stops)
        exits = np.concatenate([exits, own_walk.exits]).astype(np.int32)
        return _CutWalk(walked, own_walk, starts, stops, kept, exits)

    def _within_below(
        self, nodes: np.ndarray, lexeme: int, within: int, apart: frozenset[bytes]
    ) -> _LexemeWalk:
        """``_within_walk`` below ``nodes``: ``within``'s walk below them (kept by the
        vocabulary: "any other key" after a string's ``", "`` is the plain string's
        there), less the trie nodes on the paths that ``apart`` spells below them,
        plus those paths' own tokens. Small: copied (``_without``)."""
        own, state_at = self._down_strings(lexeme, sorted(apart), nodes)
        starts, stops = self._cut_ranges(state_at)
        base = self._below_walk(nodes, within)
        ordered = base if base.nodes is not None else _in_node_order(base, self.trie, self.words)
        return _without(own, ordered, starts, stops, self.trie, self.words)

    def _cut_ranges(self, state_at: dict[int, int]) -> tuple[np.ndarray, np.ndarray]:
        """The node ranges ``[starts[k], stops[k])`` that a walk within another
        lexeme's leaves out of the other's: the own tokens of each node on a path
        where the lexeme lives (its own walk holds them), and the whole subtree of
        each node where it dies."""
        ends = self.trie.ends
        starts, stops = [], []  # a few nodes: lists, not numpy calls on tiny arrays
        for node, state in state_at.items():
            starts.append(node)
            stops.append(node + 1 if state != DEAD else int(ends[node]))  # own tokens: [n, n + 1)
        return np.asarray(starts, np.int32), np.asarray(stops, np.int32)

    def _down_strings(
        self, lexeme: int, strings: list[bytes], starts: np.ndarray = ROOT
    ) -> tuple[_LexemeWalk, dict[int, int]]:
        """The tokens on the trie paths that ``strings`` spell below ``starts``
        (``follow_paths``), each ending in the lexeme state after its bytes (one
        ``step`` per prefix, shared by the strings and the starts through it), the
        nodes where the lexeme ends, and the state at each node met, in the order met;
        a path stops where the lexeme dies or ends."""
        assert self.parts is not None
        parts, exit_state = self.parts, self.parts.exit_state
        state_at: dict[int, int] = {}
        for text, paths in zip(strings, self._paths_of(starts, strings)):
            for path in paths:
                state = lexeme
                for depth, node in enumerate(path):
                    known = state_at.get(node)
                    if known is None:
                        known = state_at[node] = parts.step(state, text[depth])
                    state = known
                    if state == DEAD or state == exit_state:
                        break
        return self._walk_at(state_at), state_at

    def _paths_of(self, starts: np.ndarray, strings: list[bytes]) -> list[TextPaths]:
        """Each string's paths below ``starts`` (``_paths``), those not known found by
        one kernel call together (a call per string cost more than its path: a row over
        an enum of new strings made a hundred). A few strings are read from the
        vocabulary's cache and kept in it; many (an object's key names, which "any other
        key" walks down) are not kept: a cache entry per name cost more than the walk."""
        keep = self.shared if len(strings) < KEYS_WALKED_TOGETHER else None
        below = starts.tobytes()
        found: list[TextPaths] = [() for _ in strings]
        missing: dict[int, bytes] = {}  # position: the string, not known
        for position, text in enumerate(strings):
            known = None if keep is None else keep.get(("paths", text, below))
            if isinstance(known, TriePaths):
                found[position] = known.paths
            elif text:
                missing[position] = text
        if missing:
            together = _paths_together(self.trie, starts, list(missing.values()))
            for (position, text), paths in zip(missing.items(), together, strict=True):
                found[position] = paths
                if keep is not None:
                    keep.put(("paths", text, below), TriePaths(paths))
        return found

    def _walk_at(self, state_at: dict[int, int]) -> _LexemeWalk:
        """The walk of the tokens ending at the nodes of ``state_at`` (in its order),
        each in the lexeme state there: none where the lexeme died, and the nodes with
        children where it is over are its exits (``walk_at_nodes``)."""
        assert self.parts is not None
        trie = self.trie
        nodes = np.fromiter(state_at.keys(), np.int32, len(state_at))
        states = np.fromiter(state_at.values(), np.int32, len(state_at))
        tokens, ends, inverse, exits = walk_at_nodes(
            trie.token_starts, trie.token_ids, trie.ends, nodes, states, DEAD, self.parts.exit_state
        )
        return _LexemeWalk(tokens, inverse, ends, exits)

    def _in_trie_order(self, lexeme: int) -> _LexemeWalk:
        """``lexeme``'s root walk with its tokens in trie order (``nodes``): sorted once
        and kept so in the vocabulary's cache, since the walks of "any other key" are
        cut from a JSON string's (``_within_walk``); kept by the index too, as every
        key prefix's row takes it."""
        known = self._ordered.get(lexeme)
        if known is not None:
            return known
        found = self._root_walk(lexeme)
        walked = (
            found.materialized(self.trie, self.words)
            if isinstance(found, (_CutWalk, _HeldWalk))
            else found
        )
        if walked.nodes is None:
            walked = _in_node_order(walked, self.trie, self.words)
            assert self.parts is not None
            key = None if self.shared is None else self.parts.lexeme_key(lexeme)
            self._share_walk(key, walked)
        self._ordered[lexeme] = walked
        return walked

    def _lexeme_walk(self, nodes: np.ndarray, lexeme: int) -> _LexemeWalk:
        """Walk from ``lexeme`` below ``nodes`` until each token ends or the lexeme does.
        Where the walk stops at states not expanded yet, they are expanded and the walk
        goes on below every such node in one kernel call (a counted string stops at a
        new state per character count, and at several per level).

        The exits are the nodes where the lexeme may end: where it is over
        (``exit_state``), and where a lexeme that may end before its last byte (a
        number: ``1`` ends there or goes on as ``12``) is in an accepting state. The
        kernel stops at those too (``stops``: the table's finality flags), and the walk
        goes on below them in the lexeme as well; the continuation starts with no byte
        the lexeme reads next (``fsm.decompose``), so the two walks below such a node
        read different tokens."""
        return self._lexeme_walk_each(nodes, filled(len(nodes), lexeme))

    def _lexeme_walk_each(self, nodes: np.ndarray, states: np.ndarray) -> _LexemeWalk:
        """``_lexeme_walk`` below each ``nodes[i]`` entered in the lexeme state
        ``states[i]`` (the root's children, entered as their first bytes lead)."""
        assert self.parts is not None
        exit_state = self.parts.exit_state
        token_parts, end_parts, exit_parts = [_NONE], [_NONE], [_NONE]
        below = nodes
        while len(below):
            for state in _distinct_states(states):
                if not self.table.is_expanded(state):
                    self.table.expand(state)
            exit_parts.append(below[self.table.final[states]])  # entered where it may end
            tokens, ends, stopped, stopped_states = self._walk(below, states, self.table.final)
            token_parts.append(tokens)
            end_parts.append(ends)
            exiting = stopped_states == exit_state
            exit_parts.append(stopped[exiting])
            below, states = stopped[~exiting], stopped_states[~exiting]
        tokens, exits = np.concatenate(token_parts), np.concatenate(exit_parts)
        token_ends = np.concatenate(end_parts)
        if len(tokens) < BIG_BLOCK:
            ends, inverse = distinct_with_inverse(token_ends)
            return _LexemeWalk(tokens, inverse, ends, exits)
        # A big walk's tokens are looked up one at a time as steps take them
        # (``TokenRow.items_of``): in trie order, by a binary search instead of a scan.
        # The kernel hands out a sorted run per pass and per start node; they are put
        # in order by rank, once per walk the vocabulary keeps.
        trie = self.trie
        ordered, inverse, ends = in_trie_order(tokens, token_ends, trie.token_ranks, trie.token_ids)
        return _LexemeWalk(ordered, inverse, ends, exits)

    def target(self, row: TokenRow, token: int) -> int:
        """The state ``token`` leads to from ``row`` (``DEAD`` when no block reads it):
        a join or a union it leads to is numbered now that it is taken."""
        items = _canonical(row.items_of(token))
        if not items:
            return DEAD
        if len(items) > 1:
            return self._union_state(items)
        item = items[0]
        if isinstance(item, tuple):
            return self.joined(item)
        self.table.discover_state(item)
        return item

    def merged(self, row: TokenRow) -> tuple[np.ndarray, np.ndarray, list[Pair]]:
        """``row``'s tokens ascending, their targets (states, or codes of the joins
        in the pairs returned, numbered by ``joined`` when taken), and those pairs."""
        tokens, targets, pairs = row.merged(self._union_of_codes)
        states = targets[targets >= 0]
        if len(states):
            self.table.discover(states)
        return tokens, targets, pairs

    def _union_of_codes(self, targets: tuple[int, ...], pairs: list[Pair]) -> int:
        """The target of a token several blocks of a merged row read: their union,
        or one join's code when the codes stand for one pair."""
        items = _canonical([t if t >= 0 else pairs[-2 - t] for t in targets])
        if len(items) > 1:
            return self._union_state(items)
        return targets[0]  # one state, or one pair under two codes

    def _union_state(self, items: tuple[Item, ...]) -> int:
        """The union state of ``items``, numbered and discovered."""
        assert self.parts is not None
        state = self.parts.union(items)
        self.table.discover_state(state)
        return state


def _canonical(items: list[Item]) -> tuple[Item, ...]:
    """``items`` without repeats, states first, in one order whichever blocks found
    them: a token looked up alone and in a merged row leads to the same union."""
    if len(items) == 1:  # most tokens: one block reads them
        return (items[0],)
    return tuple(sorted(set(items), key=lambda item: (isinstance(item, tuple), item)))


def _without(
    own: _LexemeWalk,
    base: _LexemeWalk,
    starts: np.ndarray,
    stops: np.ndarray,
    trie: TokenTrie,
    words: int,
) -> _LexemeWalk:
    """``base``'s tokens (in trie order: ``base.nodes``) but those at nodes in the
    ranges ``[starts[k], stops[k])``, and ``own``'s (in trie order: found down sorted
    strings), merged by node; ``own``'s exits, then ``base``'s outside the ranges.

    A node's own tokens are one slice of ``base``, and its subtree's another (a
    subtree is a run of preorder positions), so what is kept is a few slices, copied
    by one kernel call (``trie_walk.cut_walk``). The mask is ``base``'s with the tokens
    left out cleared and ``own``'s set, not a pass over every token kept."""
    assert base.nodes is not None
    mask = base.packed(words)
    tokens, inverse, exits, cut = cut_walk(
        base.tokens,
        base.inverse,
        base.nodes,
        base.exits,
        _NONE if mask is None else mask,  # a small walk keeps no mask
        starts,
        stops,
        own.tokens,
        own.inverse,
        trie.token_nodes[own.tokens],
        len(base.ends),
    )
    return _LexemeWalk(
        tokens,
        inverse,
        np.concatenate([base.ends, own.ends]).astype(np.int32),
        np.concatenate([exits, own.exits]).astype(np.int32),
        None if mask is None else cut,
    )


def _counted_key(plain: Hashable, starts: np.ndarray) -> Hashable:
    """The key of the counted walk of the plain repetition ``plain`` below ``starts``
    (``_counted_base``), by which ``_plain_walk`` finds one already made."""
    return ("counted", plain) if starts is ROOT else ("counted", plain, starts.tobytes())


def _literal_key(text: bytes, starts: bytes) -> tuple[str, bytes, bytes]:
    """The vocabulary cache's key of ``text``'s ``LiteralTokens`` below the nodes
    ``starts`` (their bytes): one spelling for the walks found one by one and together."""
    return "literal", text, starts


def _paths(trie: TokenTrie, starts: np.ndarray, text: bytes) -> TextPaths:
    """The trie nodes spelling ``text``'s prefixes below each of ``starts``
    (``follow_paths``), for the starts below which the trie holds its first byte: one
    string at a time, the reference ``_paths_together`` is tested against."""
    if not text:
        return ()
    paths = follow_paths(trie.labels, trie.ends, starts, np.frombuffer(text, np.uint8))
    held = range(1) if len(starts) == 1 else np.flatnonzero(paths[:, 0] >= 0).tolist()
    return tuple(tuple(node for node in paths[r].tolist() if node >= 0) for r in held)


def _paths_together(trie: TokenTrie, starts: np.ndarray, texts: list[bytes]) -> list[TextPaths]:
    """``_paths`` of each of ``texts`` (none empty), by one ``paths_of_texts`` call."""
    bounds = _text_bounds(texts)
    data = np.frombuffer(b"".join(texts), np.uint8)
    nodes, path_bounds = paths_of_texts(trie.labels, trie.ends, starts, data, bounds)
    listed, at = nodes.tolist(), path_bounds.tolist()
    count = len(starts)
    every = count == 1  # one start keeps its path even when empty, as ``_paths``
    return [
        tuple(
            tuple(listed[at[p] : at[p + 1]])
            for p in range(k * count, (k + 1) * count)
            if every or at[p + 1] > at[p]
        )
        for k in range(len(texts))
    ]


def _text_bounds(texts: list[bytes]) -> np.ndarray:
    """Where each of ``texts`` starts and ends once they are joined: ``int32[len + 1]``,
    summed in Python (``np.cumsum`` of a list into an int32 slice cost 14 µs a call,
    more than the kernel walk it feeds)."""
    bounds = [0]
    total = 0
    for text in texts:
        total += len(text)
        bounds.append(total)
    return np.asarray(bounds, np.int32)


def _units_begun(kinds: np.ndarray, counts: np.ndarray, exit_kind: int) -> np.ndarray:
    """Units begun by ends in a counted walk (``fsm.counted``): the units completed, one
    more inside a partial unit (a kind between the unit's start, 0, and the exit)."""
    return counts + ((kinds > 0) & (kinds < exit_kind))


def _distinct_states(states: np.ndarray) -> list[int]:
    """The distinct ``states``, ascending (through a set when at most ``FEW_STATES``)."""
    if len(states) > FEW_STATES:
        return np.unique(states).tolist()
    return sorted(set(states.tolist()))


def distinct_with_inverse(states: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(distinct, inverse)`` with ``distinct[inverse] == states``, distinct ascending
    (``np.unique(states, return_inverse=True)``, as int32) for non-negative ``states``:
    a dense lookup over state numbers, linear where ``np.unique`` would sort a
    vocabulary-sized array."""
    if not len(states):
        return states, states
    if len(states) <= FEW_STATES:
        listed = states.tolist()
        ordered = sorted(set(listed))
        rank = {state: i for i, state in enumerate(ordered)}
        return np.asarray(ordered, np.int32), np.asarray([rank[s] for s in listed], np.int32)
    present = np.zeros(int(states.max()) + 1, np.bool_)
    present[states] = True
    distinct = np.flatnonzero(present).astype(np.int32)
    position = np.zeros(len(present), np.int32)
    position[distinct] = np.arange(len(distinct), dtype=np.int32)
    return distinct, position[states]
