"""Is a constraint satisfiable at all? Refusing the empty ones before any token is spent.

``empty_because(term)`` answers with a reason when ``term`` provably matches no text,
and None when it matches some or when its budget runs out (unknown is accepted: the
check only refuses what it proves). It is a least-fixpoint "productive" analysis over
the term structure, evaluated on demand:

* ``EPS`` and byte sets are productive, ``EMPTY`` is not; a concatenation is
  productive when all its items are, a union when one is (tried in order of cost, so
  the first witness found ends the search), a repetition when it may repeat zero
  times or its item is productive;
* a thunk is productive when its body is, where a thunk still being evaluated counts
  as unproductive. A "no" that relied on such an assumption about an enclosing thunk
  is not memoised (it may change once that thunk is decided); a "no" that relied only
  on the thunk itself is final. This is what proves ``{"properties": {"a": {"$ref":
  "#"}}, "required": ["a"]}`` empty, where a search of the automaton would walk
  ``{"a":{"a":...`` forever, and it never enumerates every thunk (an object body has
  one per set of keys used);
* a checked leaf (a number under bounds, a format's checker) is productive: ``checked``
  builds one only for a text its checker calls viable, and the automaton counts it
  live on the same promise (it needs no liveness check), so a search could only agree;
* intersections and complements are not regular syntax: a small breadth-first search
  of their derivatives decides them, or counts them productive when it runs out.

Term visits, thunk visits and leaf derivatives each have a budget, so the worst case
costs a bounded amount on the compile path. Union branches are tried cheapest first,
then by the search order of the thunk they end in (``Thunk.search_order``: an
object's next keys in schema order, so the bodies built here are the ones a walk in
that order needs), then in an order that follows term hashes (which vary between
processes): it changes how soon a witness is found, so only a term close to a budget
may be decided in one run and unknown in another; a verdict of "empty" is always
proven.
"""

from __future__ import annotations

from collections.abc import Hashable

from fsm.terms import (
    EMPTY,
    EPS,
    Alt,
    Bytes,
    Cat,
    Checked,
    Lexeme,
    Repeat,
    Term,
    Thunk,
    byte_partition,
    derivative,
    nullable,
)

VISIT_BUDGET = 5_000
"""Term visits the productive analysis may make before it answers unknown."""

THUNK_BUDGET = 40
"""Thunk visits it may make: each may build a body (an object body with many named
keys costs milliseconds), so they are counted apart."""

LEAF_BUDGET = 48
"""Derivatives the search of one intersection or complement may take."""

LEAVES_BUDGET = 400
"""Derivatives all leaf searches of one analysis may take; leaves met after that count
as productive unsearched (a derivative of a large intersection costs milliseconds)."""

_FREE = 1 << 62
"""Taint of a result that assumed nothing about thunks being evaluated."""


class _OutOfBudget(Exception):
    pass


def empty_because(term: Term, budget: int = VISIT_BUDGET) -> str | None:
    """Why ``term`` provably matches no text, or None when it may match some (or when
    more than ``budget`` term visits would be needed to tell)."""
    if term is EMPTY:
        return empty_reason([])
    analysis = _Productive(budget)
    try:
        productive, _ = analysis.visit(term)
    except _OutOfBudget:
        return None
    if productive:
        return None
    return empty_reason([thunk.key for thunk in analysis.cycles])


def empty_reason(cycle_keys: list[Hashable]) -> str:
    """Why a term found empty is: its constraints, or a recursion through the thunks
    with these keys, found unproductive on a cycle (named by the first schema
    reference among them)."""
    if not cycle_keys:
        return "its constraints contradict each other"
    names = [_pointer(key) for key in cycle_keys]
    named = [name for name in names if name is not None]
    where = f"through {named[0]!r} " if named else ""
    return f"a recursion {where}has no finite instance (no branch ends it)"


class _Productive:
    """One analysis: memoised verdicts, the stack of thunks being evaluated."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self.known: dict[Term, bool] = {}
        self.depth_of: dict[Thunk, int] = {}  # thunks being evaluated -> stack depth
        self.visits = 0
        self.thunk_visits = 0
        self.leaf_derivatives = 0
        self.cycles: list[Thunk] = []  # thunks found unproductive on a cycle of thunks

    def visit(self, term: Term) -> tuple[bool, int]:
        """``(productive, taint)``: taint is the shallowest stack depth of a thunk being
        evaluated that a "no" assumed unproductive (``_FREE`` when none)."""
        known = self.known.get(term)
        if known is not None:
            return known, _FREE
        self.visits += 1
        if self.visits > self.budget:
            raise _OutOfBudget
        if isinstance(term, Thunk):
            self.thunk_visits += 1
            if self.thunk_visits > THUNK_BUDGET:
                raise _OutOfBudget
            return self._thunk(term)
        result, taint = self._structure(term)
        if result or taint == _FREE:
            self.known[term] = result
        return result, _FREE if result else taint

    def _thunk(self, term: Thunk) -> tuple[bool, int]:
        depth = self.depth_of.get(term)
        if depth is not None:
            return False, depth
        depth = len(self.depth_of)
        self.depth_of[term] = depth
        try:
            result, taint = self.visit(term.body())
        finally:
            del self.depth_of[term]
        if not result and taint <= depth:
            self.cycles.append(term)
        if result or taint >= depth:
            self.known[term] = result
            return result, _FREE
        return False, taint

    def _structure(self, term: Term) -> tuple[bool, int]:
        if term is EPS or isinstance(term, Bytes):
            return True, _FREE
        if term is EMPTY:
            return False, _FREE
        if isinstance(term, Cat):
            for item in sorted(term.items, key=_cost):
                result, taint = self.visit(item)
                if not result:
                    return False, taint
            return True, _FREE
        if isinstance(term, Alt):
            shallowest = _FREE
            for item in sorted(term.items, key=_cost):
                result, taint = self.visit(item)
                if result:
                    return True, _FREE
                shallowest = min(shallowest, taint)
            return False, shallowest
        if isinstance(term, Repeat):
            return (True, _FREE) if term.lo == 0 else self.visit(term.item)
        if isinstance(term, Lexeme):
            return self.visit(term.item)
        if isinstance(term, Checked):
            return True, _FREE
        return not _leaf_empty(term, self), _FREE


def _cost(term: Term) -> tuple[int, int]:
    """Cheap items first: a union often has a finite branch that ends the search, and a
    concatenation an empty item. Among equals, by the search order of the thunk a
    branch ends in (``Thunk.search_order``: an object's next keys in schema order)."""
    if term is EPS or term is EMPTY or isinstance(term, Bytes):
        return 0, 0
    if isinstance(term, Thunk):
        return 3, term.search_order
    if isinstance(term, Cat):
        last = term.items[-1]
        return 1, last.search_order if isinstance(last, Thunk) else 0
    if isinstance(term, (Alt, Repeat, Lexeme)):
        return 1, 0
    return 2, 0


def _leaf_empty(term: Term, analysis: _Productive) -> bool:
    """Whether a breadth-first search of ``term``'s derivatives proves it empty within
    ``LEAF_BUDGET`` derivatives (and what is left of ``LEAVES_BUDGET``)."""
    seen = {term}
    frontier = [term]
    spent = 0
    while frontier:
        following = []
        for current in frontier:
            if nullable(current):
                return False
            labels = byte_partition(current).tolist()
            for label in dict.fromkeys(labels):
                spent += 1
                analysis.leaf_derivatives += 1
                if spent > LEAF_BUDGET or analysis.leaf_derivatives > LEAVES_BUDGET:
                    return False
                target = derivative(current, labels.index(label))
                if target is not EMPTY and target not in seen:
                    seen.add(target)
                    following.append(target)
        frontier = following
    return True


def _pointer(key: Hashable) -> str | None:
    """The JSON pointer of a schema reference's thunk key (None for other thunks)."""
    if isinstance(key, tuple) and len(key) >= 3 and key[0] == "schema":
        return f"#{key[2]}"
    return None
