"""Plan a batched forward so that shared work is done once.

Rows are `(base KV, new tokens)`. Rows whose base KV holds the same content and whose
new tokens start alike form a radix tree: each edge is computed once, and
rows with identical tokens end on the same edge, so they share its last logits and
its KV handle (llama.cpp #10295). Edges at the same depth run as one batch; depth
`d` starts from the handles made at depth `d - 1`.

A divergent common prefix becomes an edge of its own only when it is at least
`min_shared` tokens long and the tree is still shallower than `max_levels`: each level
costs one more forward call, which a short prefix does not pay back. Identical rows
are always merged. Pure Python + numpy; no torch.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class PlanEdge:
    """Tokens to run on top of the base KV of row `base_row` (`parent == -1`) or of
    the handle that edge `parent` produces."""

    parent: int
    base_row: int
    tokens: np.ndarray
    level: int


@dataclass(frozen=True)
class Plan:
    edges: list[PlanEdge]
    row_end: list[int]  # per row, the edge holding the row's last token

    def path(self, row: int) -> list[int]:
        """Edges from the row's base to its last token, in order."""
        chain = [self.row_end[row]]
        while self.edges[chain[-1]].parent >= 0:
            chain.append(self.edges[chain[-1]].parent)
        return chain[::-1]

    def levels(self) -> list[list[int]]:
        """Edge indices grouped by depth, shallowest first."""
        out: list[list[int]] = []
        for index, edge in enumerate(self.edges):
            while len(out) <= edge.level:
                out.append([])
            out[edge.level].append(index)
        return out


def plan_rows(
    base_keys: Sequence[Hashable],
    tokens: Sequence[np.ndarray],
    *,
    min_shared: int = 8,
    max_levels: int = 4,
) -> Plan:
    """Radix-plan rows whose base KV content is identified by `base_keys`.

    Every row must have at least one token."""
    builder = _Builder(tokens, min_shared, max_levels)
    groups: dict[tuple[Hashable, int], list[int]] = {}
    for row, (key, toks) in enumerate(zip(base_keys, tokens)):
        if len(toks) == 0:
            raise ValueError(f"row {row} has no new tokens")
        groups.setdefault((key, int(toks[0])), []).append(row)
    for rows in groups.values():
        builder.split(rows, 0, -1, 0)
    return Plan(builder.edges, builder.row_end)


class _Builder:
    def __init__(self, tokens: Sequence[np.ndarray], min_shared: int, max_levels: int) -> None:
        self.tokens = tokens
        self.min_shared = min_shared
        self.max_levels = max_levels
        self.edges: list[PlanEdge] = []
        self.row_end = [-1] * len(tokens)

    def emit(self, rows: list[int], start: int, stop: int | None, parent: int, level: int) -> int:
        first = rows[0]
        self.edges.append(PlanEdge(parent, first, self.tokens[first][start:stop], level))
        return len(self.edges) - 1

    def split(self, rows: list[int], start: int, parent: int, level: int) -> None:
        """Rows share the base and `tokens[:start]`, and each has tokens after `start`."""
        tails: dict[bytes, list[int]] = {}
        for row in rows:
            tails.setdefault(self.tokens[row][start:].tobytes(), []).append(row)
        if len(tails) == 1:
            self.finish(rows, self.emit(rows, start, None, parent, level))
            return
        common = self.common_length(rows, start)
        if common == 0:
            by_next: dict[int, list[int]] = {}
            for row in rows:
                by_next.setdefault(int(self.tokens[row][start]), []).append(row)
            for group in by_next.values():
                self.split(group, start, parent, level)
        elif common >= self.min_shared and level + 1 < self.max_levels:
            stop = start + common
            shared = self.emit(rows, start, stop, parent, level)
            self.finish([r for r in rows if len(self.tokens[r]) == stop], shared)
            rest = [r for r in rows if len(self.tokens[r]) > stop]
            self.split(rest, stop, shared, level + 1)
        else:
            for group in tails.values():
                self.finish(group, self.emit(group, start, None, parent, level))

    def finish(self, rows: list[int], edge: int) -> None:
        for row in rows:
            self.row_end[row] = edge

    def common_length(self, rows: list[int], start: int) -> int:
        span = min(len(self.tokens[r]) for r in rows) - start
        block = np.stack([self.tokens[r][start : start + span] for r in rows])
        same = (block == block[0]).all(axis=0)
        return span if same.all() else int(np.argmin(same))
