"""Shortest completions: the fewest bytes that lead from an automaton state to a final
state, found breadth-first.

Generation uses them to end a span cleanly when its token budget runs out (see
``TokenIndex.shortest_completion``), and ``fsm.compile_index`` to prove that a constraint
given as an automaton accepts nothing (no final state reachable at all).

Bytes are tried lowest first, so among equally short completions the search returns
the lexicographically smallest one, and since it is shortest it never holds optional
whitespace. Final states lie on character boundaries, so a completion never ends in
the middle of a UTF-8 character.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from fsm.automaton import DEAD

Expand = Callable[[int], tuple[np.ndarray, bool]]
"""``state -> (int32[256] successors with DEAD for rejected bytes, final)``."""


class OutOfBudget(Exception):
    """The search met more states than its budget before it found a final one."""


def shortest_completion(
    expand: Expand, start: int, budget: int, accepts: Callable[[int], bool] | None = None
) -> bytes | None:
    """The shortest (then lowest) byte string from ``start`` to a final state, or None
    when no final state is reachable. Raises ``OutOfBudget`` once more than ``budget``
    states have been met without an answer.

    ``accepts`` (finality without expanding, where the automaton can tell) ends the
    search at the first final state met rather than at the first one expanded: states
    are met in the order they would be expanded, so the answer is the same, and
    neither that state nor the rest of its level is expanded (``start`` itself, when
    final, is not expanded at all)."""
    if accepts is not None and accepts(start):
        return b""
    parents: dict[int, tuple[int, int]] = {start: (start, -1)}
    frontier = [start]
    while frontier:
        following: list[int] = []
        for state in frontier:
            successors, final = expand(state)
            if final:
                return _path(parents, start, state)
            for byte in np.flatnonzero(successors != DEAD).tolist():
                target = int(successors[byte])
                if target not in parents:
                    parents[target] = (state, byte)
                    if accepts is not None and accepts(target):
                        return _path(parents, start, target)
                    following.append(target)
            if len(parents) > budget:
                raise OutOfBudget
        frontier = following
    return None


def _path(parents: dict[int, tuple[int, int]], start: int, state: int) -> bytes:
    path = bytearray()
    while state != start:
        state, byte = parents[state]
        path.append(byte)
    path.reverse()
    return bytes(path)
