"""A token trie flattened into numpy arrays, laid out for a depth-first walk.

Nodes are stored in preorder (children in byte order), so a node's subtree is the
contiguous range ``[i, ends[i])``: the walk prunes a whole subtree by jumping to
``ends[i]``, and the automaton state at a node is kept in a stack indexed by depth.
No pointers, no Python objects: the arrays go straight into a numba kernel.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np


@dataclass(frozen=True, eq=False)
class TokenTrie:
    """Preorder trie of token byte strings; node 0 is the root (the empty string)."""

    labels: np.ndarray  # uint8 [nodes]: byte on the edge into the node (0 for the root)
    depths: np.ndarray  # int32 [nodes]: length of the node's byte string
    ends: np.ndarray  # int32 [nodes]: one past the last node of the node's subtree
    token_starts: np.ndarray  # int32 [nodes + 1]: CSR offsets into token_ids
    token_ids: np.ndarray  # int32 [tokens]: ids whose bytes end at each node, by node

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

    @classmethod
    def build(cls, token_bytes: Sequence[bytes | None], exclude: Collection[int] = ()) -> TokenTrie:
        """The trie of every non-empty token not in ``exclude`` (``None`` is skipped)."""
        entries = sorted(
            (data, token_id)
            for token_id, data in enumerate(token_bytes)
            if data and token_id not in exclude
        )
        labels, depths, token_node = _preorder_nodes(entries)
        ends = _subtree_ends(depths)
        token_node_arr = np.asarray(token_node, dtype=np.int64)
        counts = np.bincount(token_node_arr, minlength=len(labels))
        token_starts = np.zeros(len(labels) + 1, dtype=np.int32)
        np.cumsum(counts, out=token_starts[1:])
        # entries are sorted by bytes, so token_node is non-decreasing: ids are grouped.
        token_ids = np.asarray([token_id for _, token_id in entries], dtype=np.int32)
        return cls(
            labels=np.asarray(labels, dtype=np.uint8),
            depths=depths,
            ends=ends,
            token_starts=token_starts,
            token_ids=token_ids,
        )


def _preorder_nodes(
    entries: Sequence[tuple[bytes, int]],
) -> tuple[list[int], np.ndarray, list[int]]:
    """Labels and depths of the trie nodes in preorder, and the node of each entry.

    ``entries`` are sorted by bytes, so each new string shares its longest common prefix
    with the previous one and only its remaining bytes create nodes."""
    labels = [0]
    depths = [0]
    path = [0]  # path[d]: node at depth d on the way to the previous string
    token_node: list[int] = []
    previous = b""
    for data, _ in entries:
        if data != previous:
            common = 0
            limit = min(len(data), len(previous))
            while common < limit and data[common] == previous[common]:
                common += 1
            del path[common + 1 :]
            for depth in range(common, len(data)):
                labels.append(data[depth])
                depths.append(depth + 1)
                path.append(len(labels) - 1)
            previous = data
        token_node.append(path[len(data)])
    return labels, np.asarray(depths, dtype=np.int32), token_node


def _subtree_ends(depths: np.ndarray) -> np.ndarray:
    """For each preorder node, the index of the first later node that is not below it."""
    count = len(depths)
    ends = np.full(count, count, dtype=np.int32)
    depth_of = depths.tolist()
    open_nodes: list[int] = []
    for node, depth in enumerate(depth_of):
        while open_nodes and depth_of[open_nodes[-1]] >= depth:
            ends[open_nodes.pop()] = node
        open_nodes.append(node)
    return ends
