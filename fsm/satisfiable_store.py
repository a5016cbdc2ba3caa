"""Is a constraint satisfiable at all, asked of a store's rows (``fsm.term_store``).

``empty_because_in(store, term)`` is ``fsm.satisfiable.empty_because`` for a term held
as an id: the same least-fixpoint "productive" analysis (``ProductiveAnalysis``, whose
fixpoint over thunks both share), with the same budgets, the same treatment of thunks
being evaluated (a "no" that assumed an enclosing thunk
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

from collections.abc import Hashable, Sequence

from fsm.satisfiable import (
    FREE,
    VISIT_BUDGET,
    ProductiveAnalysis,
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


def empty_because_in(store: TermStore, term: int, budget: int = VISIT_BUDGET) -> str | None:
    """Why the term ``term`` of ``store`` provably matches no text, or None when it may
    match some (or when more than ``budget`` term visits would be needed to tell)."""
    if term == EMPTY:
        return empty_reason([])
    return _Productive(store, budget).reason(term)


class _Productive(ProductiveAnalysis):
    """The analysis of a store's rows."""

    def __init__(self, store: TermStore, budget: int) -> None:
        super().__init__(budget)
        self.store = store

    def is_thunk(self, term: Hashable) -> bool:
        assert isinstance(term, int)
        return self.store.kinds[term] == KIND_THUNK

    def body(self, term: Hashable) -> Hashable:
        assert isinstance(term, int)
        return self.store.body(term)

    def thunk_key(self, term: Hashable) -> Hashable:
        assert isinstance(term, int)
        return self.store.thunk_of(term).key

    def structure(self, term: Hashable) -> tuple[bool, int]:
        assert isinstance(term, int)
        return self._structure(term)

    def _structure(self, term: int) -> tuple[bool, int]:
        store = self.store
        kind = store.kinds[term]
        if kind == KIND_EPS or kind == KIND_BYTES or kind == KIND_CHECKED:
            return True, FREE
        if kind == KIND_EMPTY:
            return False, FREE
        if kind == KIND_CAT:
            for item in sorted(store.chain(term), key=self._cost):
                result, taint = self.visit(item)
                if not result:
                    return False, taint
            return True, FREE
        if kind == KIND_ALT:
            shallowest = FREE
            for item in sorted(store.members(term), key=self._cost):
                result, taint = self.visit(item)
                if result:
                    return True, FREE
                shallowest = min(shallowest, taint)
            return False, shallowest
        if kind == KIND_REPEAT:
            lo, _ = store.repeat_bounds(term)
            return (True, FREE) if lo == 0 else self.visit(store.first[term])
        if kind == KIND_LEXEME:
            return self.visit(store.first[term])
        return not self.leaf_empty(term), FREE

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
            last = store.chain(term)[-1]
            order = store.thunk_of(last).search_order if store.kinds[last] == KIND_THUNK else 0
            return 1, order
        if kind == KIND_ALT or kind == KIND_REPEAT or kind == KIND_LEXEME:
            return 1, 0
        return 2, 0

    def is_empty(self, term: Hashable) -> bool:
        return term == EMPTY

    def nullable(self, term: Hashable) -> bool:
        assert isinstance(term, int)
        return self.store.nullable(term)

    def class_bytes(self, term: Hashable) -> Sequence[int]:
        assert isinstance(term, int)
        return self.store.class_bytes(term)

    def derivative(self, term: Hashable, byte: int) -> Hashable:
        assert isinstance(term, int)
        return self.store.derivative(term, byte)
