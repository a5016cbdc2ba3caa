"""``LexemeWalkCache``: lexeme walks shared by every token index over one vocabulary.

A lexeme's walk from the trie's root (which tokens it reads, the lexeme state each ends
in, where the lexeme ends inside the trie) depends only on the lexeme and the
vocabulary. JSON strings, formats and patterns recur across schemas, so a service that
sees a new schema per request walks ``{"type": "string"}`` once per vocabulary, not
once per schema. Entries are keyed by the lexeme's identity across automata
(``DecomposableAutomaton.lexeme_key``: a term for ``DerivativeAutomaton``, the store and
a row for ``StoreAutomaton``), and the
end states are kept as keys too, so an index numbers them its own way on a hit. A
bounded repetition's counted walk is kept the same way, and so are its selections by
bounds (``CountedSelection``): a string of ``maxLength: 60`` or a uuid's hex group
selects the same tokens in every schema that has it. The trie paths of byte strings
(key names: ``LiteralTokens``, ``TriePaths``) are kept too, keyed by the string and the
nodes below which they are followed.

Bounded by bytes (least recently used first out); one lock; owned by the
``Vocabulary`` (``vocabulary.lexeme_walks``), so it goes away with it.

The entries are plain classes with ``Final`` attributes, not frozen dataclasses: in a
compiled module (``fsm.native``) a dataclass's generated ``__init__`` still runs as
interpreted Python, about 600 ns a construction against 36 ns, and rows make them.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable
from typing import Final

import numpy as np
from mypy_extensions import mypyc_attr

DEFAULT_MAX_BYTES = 64 << 20
ARRAY_OBJECT_BYTES = 112
"""What a numpy array object holds besides its data (``sys.getsizeof`` of an empty
one): counted for the small entries (a key's trie paths), whose objects outweigh
their arrays' data, so that the bound holds for the memory they take."""


@mypyc_attr(acyclic=True)
class SharedLexemeWalk:
    """A root walk: ``tokens``, their end states ``end_keys[inverse]`` (as keys), the
    trie nodes with children where the lexeme ends, the tokens' packed mask when they
    are many (``fsm.token_row.BIG_BLOCK``), and their trie nodes when the tokens are
    kept in trie order (``fsm.row_walk``: a walk others take slices of)."""

    __slots__ = ("end_keys", "exits", "inverse", "mask", "nodes", "tokens")

    def __init__(
        self,
        tokens: np.ndarray,
        inverse: np.ndarray,
        end_keys: tuple[Hashable, ...],
        exits: np.ndarray,
        mask: np.ndarray | None = None,
        nodes: np.ndarray | None = None,
    ) -> None:
        self.tokens: Final = tokens
        self.inverse: Final = inverse
        self.end_keys: Final = end_keys
        self.exits: Final = exits
        self.mask: Final = mask
        self.nodes: Final = nodes

    @property
    def nbytes(self) -> int:
        optional = (array.nbytes for array in (self.mask, self.nodes) if array is not None)
        return int(self.tokens.nbytes + self.inverse.nbytes + self.exits.nbytes + sum(optional))


@mypyc_attr(acyclic=True)
class CountedWalk:
    """The walk of a plain repetition lexeme (``fsm.counted``), its tokens in trie
    order, each ending in a code of its state in the unit automaton and units
    completed (``inverse`` into the codes; every end of the lexeme one code, its kind
    ``len(partials)``): each code's kind and units begun (``code_kinds``,
    ``code_units``; a partial unit counts as begun). ``inside_up_to[u]`` packs the
    tokens ending inside the lexeme with at most ``u`` units begun,
    ``ending_up_to[u]`` those ending it after at most ``u``; ``exits``: the trie
    nodes with children where it ends, and the units there (``exit_counts``);
    ``most_units``: the most units a token begins or reads before the end (past it,
    a bound selects every token). A pair of bounds selects its tokens from two or
    three of the masks (``fsm.row_walk``). ``codes_by_token``: each token id's code
    (``-1``: not read), for a walk that meets this one with another, token by token
    (``fsm.row_walk.RowWalker._meet_walk``)."""

    __slots__ = (
        "code_kinds",
        "code_units",
        "codes_by_token",
        "ending_up_to",
        "exit_counts",
        "exits",
        "inside_up_to",
        "inverse",
        "most_units",
        "partials",
        "tokens",
    )

    def __init__(
        self,
        tokens: np.ndarray,
        inverse: np.ndarray,
        code_kinds: np.ndarray,
        code_units: np.ndarray,
        inside_up_to: np.ndarray,
        ending_up_to: np.ndarray,
        exits: np.ndarray,
        exit_counts: np.ndarray,
        partials: tuple[Hashable, ...],
        most_units: int,
        codes_by_token: np.ndarray,
    ) -> None:
        self.tokens: Final = tokens
        self.inverse: Final = inverse
        self.code_kinds: Final = code_kinds
        self.code_units: Final = code_units
        self.inside_up_to: Final = inside_up_to
        self.ending_up_to: Final = ending_up_to
        self.exits: Final = exits
        self.exit_counts: Final = exit_counts
        self.partials: Final = partials
        self.most_units: Final = most_units
        self.codes_by_token: Final = codes_by_token

    @property
    def nbytes(self) -> int:
        arrays = (
            self.tokens,
            self.inverse,
            self.codes_by_token,
            self.code_kinds,
            self.code_units,
            self.inside_up_to,
            self.ending_up_to,
            self.exits,
            self.exit_counts,
        )
        return int(sum(array.nbytes for array in arrays))


@mypyc_attr(acyclic=True)
class CountedSelection:
    """The tokens of a ``CountedWalk`` whose units fit a pair of bounds: their packed
    ``mask``, the trie nodes where the lexeme may end within the bounds (``exits``),
    the codes inside the lexeme they end in (``inside``) with ``(partial's index,
    units begun)`` each (``begun``), and the codes that end the lexeme
    (``exit_codes``). For a walk small enough that a row copies its block
    (``fsm.token_row.BIG_BLOCK``), the copy too (``held``): the tokens held, in the
    walk's order, the distinct codes they end in, and each token's among them, so an
    index only maps codes to its states.
    Depends on the walk and the bounds only: shared by the indexes over a vocabulary."""

    __slots__ = ("begun", "exit_codes", "exits", "held", "inside", "mask")

    def __init__(
        self,
        mask: np.ndarray,
        exits: np.ndarray,
        inside: np.ndarray,
        begun: list[tuple[int, int]],
        exit_codes: np.ndarray,
        held: tuple[np.ndarray, np.ndarray, np.ndarray] | None,
    ) -> None:
        self.mask: Final = mask
        self.exits: Final = exits
        self.inside: Final = inside
        self.begun: Final = begun
        self.exit_codes: Final = exit_codes
        self.held: Final = held

    @property
    def nbytes(self) -> int:
        arrays = (self.mask, self.exits, self.inside, self.exit_codes, *(self.held or ()))
        return int(sum(array.nbytes for array in arrays))


@mypyc_attr(acyclic=True)
class MeetSkeleton:
    """The tokens that a lexeme's walk and a plain repetition's counted walk both read
    (``fsm.row_walk.RowWalker._meet_walk``), in trie order, with their packed ``mask``:
    each token's pair (``inverse``) of the counted walk's code (``codes``) and the
    lexeme's end (``end_keys``, as keys); ``exits``: the lexeme's. It depends on the
    two walks only, not on the bounds or the units read so far, so every row of a
    string counted beside a pattern that is in one pattern state takes it, whatever
    the string's length."""

    __slots__ = ("codes", "end_keys", "exits", "inverse", "mask", "tokens")

    def __init__(
        self,
        tokens: np.ndarray,
        inverse: np.ndarray,
        codes: np.ndarray,
        end_keys: tuple[Hashable, ...],
        exits: np.ndarray,
        mask: np.ndarray,
    ) -> None:
        self.tokens: Final = tokens
        self.inverse: Final = inverse
        self.codes: Final = codes
        self.end_keys: Final = end_keys
        self.exits: Final = exits
        self.mask: Final = mask

    @property
    def nbytes(self) -> int:
        arrays = (self.tokens, self.inverse, self.codes, self.exits, self.mask)
        return int(sum(array.nbytes for array in arrays))


@mypyc_attr(acyclic=True)
class SharedCutWalk:
    """A walk within another lexeme's (``fsm.row_walk._CutWalk``): the tokens of
    ``base`` (the other's walk) that ``mask`` holds, then ``own``'s; ``exits``: the
    base's outside the node ranges ``[starts[k], stops[k])`` cut, then own's. Its size
    leaves the base's arrays out: they are the other lexeme's entry's."""

    __slots__ = ("base", "exits", "mask", "own", "starts", "stops")

    def __init__(
        self,
        base: SharedLexemeWalk,
        own: SharedLexemeWalk,
        starts: np.ndarray,
        stops: np.ndarray,
        mask: np.ndarray,
        exits: np.ndarray,
    ) -> None:
        self.base: Final = base
        self.own: Final = own
        self.starts: Final = starts
        self.stops: Final = stops
        self.mask: Final = mask
        self.exits: Final = exits

    @property
    def nbytes(self) -> int:
        arrays = (self.starts, self.stops, self.mask, self.exits)
        return self.own.nbytes + int(sum(array.nbytes for array in arrays))


@mypyc_attr(acyclic=True)
class LiteralTokens:
    """The tokens on the trie paths one byte string spells below some nodes
    (``fsm.trie_walk.literal_tokens``: each token's bytes read, as ``read[inverse]``,
    and the nodes with children where the whole string is read). Depends on the
    string, the nodes and the trie only: a key's name (``"id"``, ``"name"``), or the
    rest of one after a token read its start, is walked once per vocabulary, not once
    per index and lexeme state that spells it (``fsm.row_walk._literal_walk``)."""

    __slots__ = ("exits", "inverse", "read", "tokens")

    def __init__(
        self, tokens: np.ndarray, inverse: np.ndarray, read: np.ndarray, exits: np.ndarray
    ) -> None:
        self.tokens: Final = tokens
        self.inverse: Final = inverse
        self.read: Final = read
        self.exits: Final = exits

    @property
    def nbytes(self) -> int:
        # summed as written, no tuple: one is kept per key name a row meets
        arrays = self.tokens.nbytes + self.inverse.nbytes + self.read.nbytes + self.exits.nbytes
        return int(arrays) + 4 * ARRAY_OBJECT_BYTES


@mypyc_attr(acyclic=True)
class TriePaths:
    """The trie nodes spelling a byte string's prefixes below each of some nodes that
    hold its first byte (``fsm.row_walk._paths``): the walks down an object's key
    names ("any other key", a small enum) follow them in every index over the trie."""

    __slots__ = ("paths",)

    def __init__(self, paths: tuple[tuple[int, ...], ...]) -> None:
        self.paths: Final = paths

    @property
    def nbytes(self) -> int:
        """Tuples (40 bytes and 8 per item) of integers (28 bytes each)."""
        return 40 + sum(48 + 36 * len(path) for path in self.paths)


CachedWalk = (
    SharedLexemeWalk
    | CountedWalk
    | CountedSelection
    | MeetSkeleton
    | SharedCutWalk
    | LiteralTokens
    | TriePaths
)


class LexemeWalkCache:
    """Least-recently-used lexeme walks, at most ``max_bytes`` of arrays in all."""

    def __init__(self, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        self.max_bytes = max_bytes
        self._walks: OrderedDict[Hashable, CachedWalk] = OrderedDict()
        # each walk's ``nbytes``, read once when it is put; apart from the walk, not a
        # ``(walk, size)`` pair per entry: a pair holding a walk is one more object the
        # cyclic collector tracks, and a service keeps thousands of entries
        self._sizes: dict[Hashable, int] = {}
        self._bytes = 0
        self._lock = threading.Lock()

    # ``get`` and ``put`` run a few times a row: the lock is taken by ``acquire`` and
    # ``release``, cheaper compiled than a ``with`` block's ``__enter__`` and
    # ``__exit__`` (``docs/benchmarks.md``, "Seventy-fourth session")

    def get(self, key: Hashable) -> CachedWalk | None:
        lock = self._lock
        lock.acquire()
        try:
            walk = self._walks.get(key)
            if walk is not None:
                self._walks.move_to_end(key)
            return walk
        finally:
            lock.release()

    def put(self, key: Hashable, walk: CachedWalk) -> None:
        size = walk.nbytes
        if size > self.max_bytes:
            return
        lock = self._lock
        lock.acquire()
        try:
            self._bytes += size - self._sizes.get(key, 0)
            self._walks[key] = walk
            self._walks.move_to_end(key)
            self._sizes[key] = size
            while self._bytes > self.max_bytes:
                evicted, _ = self._walks.popitem(last=False)
                self._bytes -= self._sizes.pop(evicted)
        finally:
            lock.release()

    def clear(self) -> None:
        """Drop every walk (the next index walks its lexemes afresh)."""
        with self._lock:
            self._walks.clear()
            self._sizes.clear()
            self._bytes = 0

    @property
    def nbytes(self) -> int:
        """Bytes of arrays held."""
        return self._bytes

    def __len__(self) -> int:
        return len(self._walks)
