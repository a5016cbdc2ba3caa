"""A token trie flattened into numpy arrays, laid out for a depth-first walk.

Nodes are stored in preorder (children in byte order), so a node's subtree is the
contiguous range ``[i, ends[i])``: the walk prunes a whole subtree by jumping to
``ends[i]``, and the automaton state at a node is kept in a stack indexed by depth.
No pointers, no Python objects: the arrays go straight into a numba kernel.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
from numba import njit

from fsm.kernel_types import READS_INT32, READS_UINT8

NEXT_BYTES_KEPT = 1 << 16
"""Sets of nodes whose next bytes a trie keeps (``TokenTrie.next_bytes``)."""


@dataclass(frozen=True, eq=False)
class TokenTrie:
    """Preorder trie of token byte strings; node 0 is the root (the empty string)."""

    labels: np.ndarray  # uint8 [nodes]: byte on the edge into the node (0 for the root)
    depths: np.ndarray  # int32 [nodes]: length of the node's byte string
    ends: np.ndarray  # int32 [nodes]: one past the last node of the node's subtree
    token_starts: np.ndarray  # int32 [nodes + 1]: CSR offsets into token_ids
    token_ids: np.ndarray  # int32 [tokens]: ids whose bytes end at each node, by node
    _next_bytes: dict[bytes, int] = field(default_factory=dict, init=False, repr=False)
    """``next_bytes`` answers by the nodes' bytes: each index meets the same few sets
    (dropped whole past ``NEXT_BYTES_KEPT``, so a service's new keys never grow it
    without bound)."""

    def __post_init__(self) -> None:
        # Walks hand out slices of these arrays as their tokens, uncopied: read-only,
        # so a write through one of them raises instead of changing the vocabulary.
        for array in (self.labels, self.depths, self.ends, self.token_starts, self.token_ids):
            array.flags.writeable = False

    @property
    def num_nodes(self) -> int:
        return int(self.labels.shape[0])

    @property
    def num_tokens(self) -> int:
        return int(self.token_ids.shape[0])

    @cached_property
    def max_depth(self) -> int:
        """The longest token's length (computed once: the walk kernels take it)."""
        return int(self.depths.max())

    @cached_property
    def token_nodes(self) -> np.ndarray:
        """int32 [max id + 1]: the node each token's bytes end at (-1: not in the trie)."""
        nodes = np.full(int(self.token_ids.max(initial=-1)) + 1, -1, np.int32)
        nodes[self.token_ids] = np.repeat(
            np.arange(self.num_nodes, dtype=np.int32), np.diff(self.token_starts)
        )
        return nodes

    @cached_property
    def token_ranks(self) -> np.ndarray:
        """int32 [max id + 1]: each token's position in ``token_ids``, its rank in trie
        order (-1: not in the trie)."""
        ranks = np.full(len(self.token_nodes), -1, np.int32)
        ranks[self.token_ids] = np.arange(len(self.token_ids), dtype=np.int32)
        return ranks

    def next_bytes(self, nodes: np.ndarray) -> int:
        """A mask of the bytes on the edges into the children of ``nodes`` (int32): the
        bytes a token reads next below them. Memoised: each index meets the same few
        sets (where a key's quote or a value's last bytes end inside tokens), and a
        loop here costs no kernel to load in a fresh process."""
        key = nodes.tobytes()
        found = self._next_bytes.get(key)
        if found is None:
            found = 0
            for node in nodes.tolist():
                child, stop = node + 1, int(self.ends[node])
                while child < stop:
                    found |= 1 << int(self.labels[child])
                    child = int(self.ends[child])
            if len(self._next_bytes) >= NEXT_BYTES_KEPT:
                self._next_bytes.clear()
            self._next_bytes[key] = found
        return found

    @cached_property
    def root_children(self) -> np.ndarray:
        """int32: the root's children, ascending (a node per first byte of a token); a
        root walk is the union of one walk per child, each depending only on the state
        the child is entered in (``fsm.row_walk``: walks cut by first byte)."""
        children, node, stop = [], 1, int(self.ends[0])
        while node < stop:
            children.append(node)
            node = int(self.ends[node])
        return np.asarray(children, np.int32)

    @classmethod
    def build(cls, token_bytes: Sequence[bytes | None], exclude: Collection[int] = ()) -> TokenTrie:
        """The trie of every non-empty token not in ``exclude`` (``None`` is skipped)."""
        ids = sorted(  # by bytes, then id (the sort is stable)
            (
                token_id
                for token_id, data in enumerate(token_bytes)
                if data and token_id not in exclude
            ),
            key=token_bytes.__getitem__,
        )
        strings = [token_bytes[token_id] or b"" for token_id in ids]
        lengths = np.fromiter(map(len, strings), np.int32, len(strings))
        starts = np.zeros(len(strings), np.int32)
        np.cumsum(lengths[:-1], out=starts[1:])
        joined = np.frombuffer(b"".join(strings), np.uint8)
        labels, depths, token_node, ends = preorder_layout(joined, starts, lengths)
        counts = np.bincount(token_node, minlength=len(labels))
        token_starts = np.zeros(len(labels) + 1, dtype=np.int32)
        np.cumsum(counts, out=token_starts[1:])
        # the strings are sorted, so token_node is non-decreasing: ids are grouped.
        return cls(
            labels=labels,
            depths=depths,
            ends=ends,
            token_starts=token_starts,
            token_ids=np.asarray(ids, dtype=np.int32),
        )


@njit((READS_UINT8, READS_INT32, READS_INT32), cache=True, nogil=True)
def preorder_layout(joined, starts, lengths):
    """The trie of strings given in ascending byte order (string ``i`` is
    ``joined[starts[i]:starts[i] + lengths[i]]``): node labels and depths in preorder,
    the node each string ends at, and each node's subtree end.

    Each string shares its longest common prefix with the previous one, and only its
    remaining bytes add nodes, the last of them its own; a node's subtree ends at the
    first later node that is not deeper (a stack of the open nodes finds it)."""
    count = lengths.shape[0]
    shared = np.zeros(count, np.int32)
    total = 1
    for i in range(count):
        if i > 0:
            before, here = starts[i - 1], starts[i]
            limit = min(lengths[i - 1], lengths[i])
            common = 0
            while common < limit and joined[before + common] == joined[here + common]:
                common += 1
            shared[i] = common
        total += lengths[i] - shared[i]
    labels = np.zeros(total, np.uint8)
    depths = np.zeros(total, np.int32)
    token_node = np.empty(count, np.int32)
    node = 0
    for i in range(count):
        for depth in range(shared[i], lengths[i]):
            node += 1
            labels[node] = joined[starts[i] + depth]
            depths[node] = depth + 1
        token_node[i] = node
    ends = np.full(total, total, np.int32)
    open_nodes = np.empty(total, np.int32)
    top = 0
    for node in range(total):
        while top > 0 and depths[open_nodes[top - 1]] >= depths[node]:
            top -= 1
            ends[open_nodes[top]] = node
        open_nodes[top] = node
        top += 1
    return labels, depths, token_node, ends


def preorder_layout_py(strings: Sequence[bytes]) -> tuple[np.ndarray, ...]:
    """Plain-Python twin of ``preorder_layout`` over ``strings`` (ascending)."""
    labels, depths, path, token_node = [0], [0], [0], []
    previous = b""
    for data in strings:
        if data != previous:
            common = 0
            while common < min(len(data), len(previous)) and data[common] == previous[common]:
                common += 1
            del path[common + 1 :]
            for depth in range(common, len(data)):
                labels.append(data[depth])
                depths.append(depth + 1)
                path.append(len(labels) - 1)
            previous = data
        token_node.append(path[len(data)])
    ends = [len(depths)] * len(depths)
    open_nodes: list[int] = []
    for node, depth in enumerate(depths):
        while open_nodes and depths[open_nodes[-1]] >= depth:
            ends[open_nodes.pop()] = node
        open_nodes.append(node)
    return (
        np.asarray(labels, np.uint8),
        np.asarray(depths, np.int32),
        np.asarray(token_node, np.int32),
        np.asarray(ends, np.int32),
    )
