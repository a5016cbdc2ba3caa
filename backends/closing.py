"""Ending a constrained span within its token budget.

A model may never write the end of what its constraint needs: a greedy model repeats
list items or map keys until ``max_tokens``, and the span would end cut, its capture
unreadable. In the last ``CLOSING_WINDOW`` tokens of a budget the loop therefore bans
every token after which the constraint could no longer be completed in the tokens
left: the shortest completion of the state a token leads to
(``TokenIndex.shortest_completion``) must fit in what remains after it, counting one
token per byte (a bound: every byte is a token in byte-level vocabularies, and a
merged token only shortens the count). The model still chooses among the tokens that
fit, so a span that has room ends as the model writes it, and one that is running out
is steered to its end: ``]}`` rather than another list item. Where no token fits any
more (the budget was already too small), nothing is banned and the span ends with
``finish_reason="length"``, reading back as ``ss.TruncatedCapture``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from fsm import TokenIndex

CLOSING_WINDOW = 48
"""Budgets are checked only in their last tokens: completions cost a search that the
rest of a span does not pay. A constraint whose completion needs more bytes than this
is not steered (it may end truncated)."""


def over_budget_tokens(index: TokenIndex, state: int, remaining: int) -> np.ndarray:
    """Allowed tokens after which the constraint cannot be completed within the
    ``remaining - 1`` tokens left once one is written (empty when every allowed token
    fits, when the window is not reached yet, or when none fits any more)."""
    empty = np.zeros(0, np.int64)
    if remaining > CLOSING_WINDOW:
        return empty
    fits = index.completion_lengths_after(state) <= remaining - 1
    # An end id keeps a final state, whose completion is empty: it always fits.
    if fits.all() or not fits.any():
        return empty
    return index.allowed_tokens(state)[~fits].astype(np.int64)
