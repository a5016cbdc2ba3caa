"""Is a constraint satisfiable at all, asked of a store's rows (``fsm.term_store``).

``empty_because_in(store, term)`` is ``fsm.satisfiable.empty_because`` for a term held
as an id: the same least-fixpoint "productive" analysis, with the same budgets, the
same treatment of thunks being evaluated (a "no" that assumed an enclosing thunk
unproductive is not kept), the same cheapest-first order and the same small searches
of derivatives for what is not regular syntax. What differs is only what the rows
make different:

* a concatenation's items are its chain of heads, ``(head, rest)`` after
  ``(head, rest)``, sorted by cost as the objects' item tuple is;
* members of equal cost are tried in id order, where the objects follow term hashes:
  only a term close to a budget may be decided here and unknown there, or the other
  way; a verdict of "empty" is proven either way;
* "any string of a lexeme but some names" (``lexeme_except``) has no item to visit:
  its derivatives are searched, as an intersection's are.
"""

from __future__ import annotations

from fsm.satisfiable import (
    LEAF_BUDGET,
    LEAVES_BUDGET,
    THUNK_BUDGET,
    VISIT_BUDGET,
    empty_reason,
)
from fsm.term_store import (
    EMPTY,
    KIND_ALT,
    KIND_BYTES,
    KIND_CAT,
    KIND_CHECKED,
    KIND_EMPTY,
    KIND_EPS,
    KIND_LEXEME,
    KIND_REPEAT,
    KIND_THUNK,
    TermStore,
)

_FREE = 1 << 62
"""Taint of a result that assumed nothing about thunks being evaluated."""


class _OutOfBudget(Exception):
    pass


def empty_because_in(store: TermStore, term: int, budget: int = VISIT_BUDGET) -> str | None:
    """Why the term ``term`` of ``store`` provably matches no text, or None when it may
    match some (or when more than ``budget`` term visits would be needed to tell)."""
    if term == EMPTY:
        return empty_reason([])
    analysis = _Productive(store, budget)
    try:
        productive, _ = analysis.visit(term)
    except _OutOfBudget:
        return None
    if productive:
        return None
    return empty_reason([store.thunk_of(thunk).key for thunk in analysis.cycles])


class _Productive:
    """One analysis: memoised verdicts, the stack of thunks being evaluated."""

    def __init__(self, store: TermStore, budget: int) -> None:
        self.store = store
        self.budget = budget
        self.known: dict[int, bool] = {}
        self.depth_of: dict[int, int] = {}  # thunks being evaluated -> stack depth
        self.visits = 0
        self.thunk_visits = 0
        self.leaf_derivatives = 0
        self.cycles: list[int] = []  # thunks found unproductive on a cycle of thunks

    def visit(self, term: int) -> tuple[bool, int]:
        """``(productive, taint)``: taint is the shallowest stack depth of a thunk being
        evaluated that a "no" assumed unproductive (``_FREE`` when none)."""
        known = self.known.get(term)
        if known is not None:
            return known, _FREE
        self.visits += 1
        if self.visits > self.budget:
            raise _OutOfBudget
        if self.store.kinds[term] == KIND_THUNK:
            self.thunk_visits += 1
            if self.thunk_visits > THUNK_BUDGET:
                raise _OutOfBudget
            return self._thunk(term)
        result, taint = self._structure(term)
        if result or taint == _FREE:
            self.known[term] = result
        return result, _FREE if result else taint

    def _thunk(self, term: int) -> tuple[bool, int]:
        depth = self.depth_of.get(term)
        if depth is not None:
            return False, depth
        depth = len(self.depth_of)
        self.depth_of[term] = depth
        try:
            result, taint = self.visit(self.store.body(term))
        finally:
            del self.depth_of[term]
        if not result and taint <= depth:
            self.cycles.append(term)
        if result or taint >= depth:
            self.known[term] = result
            return result, _FREE
        return False, taint

    def _structure(self, term: int) -> tuple[bool, int]:
        store = self.store
        kind = store.kinds[term]
        if kind == KIND_EPS or kind == KIND_BYTES or kind == KIND_CHECKED:
            return True, _FREE
        if kind == KIND_EMPTY:
            return False, _FREE
        if kind == KIND_CAT:
            for item in sorted(_chain(store, term), key=self._cost):
                result, taint = self.visit(item)
                if not result:
                    return False, taint
            return True, _FREE
        if kind == KIND_ALT:
            shallowest = _FREE
            for item in sorted(store.members(term), key=self._cost):
                result, taint = self.visit(item)
                if result:
                    return True, _FREE
                shallowest = min(shallowest, taint)
            return False, shallowest
        if kind == KIND_REPEAT:
            lo, _ = store.repeat_bounds(term)
            return (True, _FREE) if lo == 0 else self.visit(store.first[term])
        if kind == KIND_LEXEME:
            return self.visit(store.first[term])
        return not self._leaf_empty(term), _FREE

    def _cost(self, term: int) -> tuple[int, int]:
        """Cheap items first, then by the search order of the thunk a branch ends in
        (``fsm.satisfiable``'s order)."""
        store = self.store
        kind = store.kinds[term]
        if kind == KIND_EPS or kind == KIND_EMPTY or kind == KIND_BYTES:
            return 0, 0
        if kind == KIND_THUNK:
            return 3, store.thunk_of(term).search_order
        if kind == KIND_CAT:
            last = _chain(store, term)[-1]
            order = store.thunk_of(last).search_order if store.kinds[last] == KIND_THUNK else 0
            return 1, order
        if kind == KIND_ALT or kind == KIND_REPEAT or kind == KIND_LEXEME:
            return 1, 0
        return 2, 0

    def _leaf_empty(self, term: int) -> bool:
        """Whether a breadth-first search of ``term``'s derivatives proves it empty
        within ``LEAF_BUDGET`` derivatives (and what is left of ``LEAVES_BUDGET``)."""
        store = self.store
        seen = {term}
        frontier = [term]
        spent = 0
        while frontier:
            following = []
            for current in frontier:
                if store.nullable(current):
                    return False
                for byte in store.class_bytes(current):
                    spent += 1
                    self.leaf_derivatives += 1
                    if spent > LEAF_BUDGET or self.leaf_derivatives > LEAVES_BUDGET:
                        return False
                    target = store.derivative(current, byte)
                    if target != EMPTY and target not in seen:
                        seen.add(target)
                        following.append(target)
            frontier = following
        return True


def _chain(store: TermStore, term: int) -> list[int]:
    """A concatenation's items: its heads along the chain of rests, then the last."""
    items = []
    while store.kinds[term] == KIND_CAT:
        items.append(store.first[term])
        term = store.second[term]
    items.append(term)
    return items
