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

from collections.abc import Hashable, Sequence

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
    class_bytes,
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

FREE = 1 << 62
"""Taint of a result that assumed nothing about thunks being evaluated."""


class _OutOfBudget(Exception):
    pass


def empty_because(term: Term, budget: int = VISIT_BUDGET) -> str | None:
    """Why ``term`` provably matches no text, or None when it may match some (or when
    more than ``budget`` term visits would be needed to tell)."""
    if term is EMPTY:
        return empty_reason([])
    return _Productive(budget).reason(term)


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


class ProductiveAnalysis:
    """One analysis: memoised verdicts, the stack of thunks being evaluated. The
    fixpoint over thunks is here; what a term is made of, a subclass tells
    (``is_thunk``, ``body``, ``thunk_key``, ``structure``), for object terms below and
    for a store's rows (``fsm.satisfiable_store``)."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self.known: dict[Hashable, bool] = {}
        self.depth_of: dict[Hashable, int] = {}  # thunks being evaluated -> stack depth
        self.visits = 0
        self.thunk_visits = 0
        self.leaf_derivatives = 0
        self.cycles: list[Hashable] = []  # thunks found unproductive on a cycle of thunks

    def reason(self, term: Hashable) -> str | None:
        """Why ``term`` provably matches no text, or None (``empty_because``)."""
        try:
            productive, _ = self.visit(term)
        except _OutOfBudget:
            return None
        if productive:
            return None
        return empty_reason([self.thunk_key(thunk) for thunk in self.cycles])

    def visit(self, term: Hashable) -> tuple[bool, int]:
        """``(productive, taint)``: taint is the shallowest stack depth of a thunk being
        evaluated that a "no" assumed unproductive (``FREE`` when none)."""
        known = self.known.get(term)
        if known is not None:
            return known, FREE
        self.visits += 1
        if self.visits > self.budget:
            raise _OutOfBudget
        if self.is_thunk(term):
            self.thunk_visits += 1
            if self.thunk_visits > THUNK_BUDGET:
                raise _OutOfBudget
            return self._thunk(term)
        result, taint = self.structure(term)
        if result or taint == FREE:
            self.known[term] = result
        return result, FREE if result else taint

    def _thunk(self, term: Hashable) -> tuple[bool, int]:
        depth = self.depth_of.get(term)
        if depth is not None:
            return False, depth
        depth = len(self.depth_of)
        self.depth_of[term] = depth
        try:
            result, taint = self.visit(self.body(term))
        finally:
            del self.depth_of[term]
        if not result and taint <= depth:
            self.cycles.append(term)
        if result or taint >= depth:
            self.known[term] = result
            return result, FREE
        return False, taint

    def leaf_empty(self, term: Hashable) -> bool:
        """Whether a breadth-first search of ``term``'s derivatives proves it empty
        within ``LEAF_BUDGET`` derivatives (and what is left of ``LEAVES_BUDGET``):
        for intersections and complements, which are not regular syntax."""
        seen = {term}
        frontier = [term]
        spent = 0
        while frontier:
            following = []
            for current in frontier:
                if self.nullable(current):
                    return False
                for byte in self.class_bytes(current):
                    spent += 1
                    self.leaf_derivatives += 1
                    if spent > LEAF_BUDGET or self.leaf_derivatives > LEAVES_BUDGET:
                        return False
                    target = self.derivative(current, byte)
                    if not self.is_empty(target) and target not in seen:
                        seen.add(target)
                        following.append(target)
            frontier = following
        return True

    def is_thunk(self, term: Hashable) -> bool:
        raise NotImplementedError

    def is_empty(self, term: Hashable) -> bool:
        raise NotImplementedError

    def nullable(self, term: Hashable) -> bool:
        raise NotImplementedError

    def class_bytes(self, term: Hashable) -> Sequence[int]:
        """One byte per class of the term's byte partition."""
        raise NotImplementedError

    def derivative(self, term: Hashable, byte: int) -> Hashable:
        raise NotImplementedError

    def body(self, term: Hashable) -> Hashable:
        """A thunk's body."""
        raise NotImplementedError

    def thunk_key(self, term: Hashable) -> Hashable:
        raise NotImplementedError

    def structure(self, term: Hashable) -> tuple[bool, int]:
        """A term that is no thunk: ``(productive, taint)`` from its parts."""
        raise NotImplementedError


class _Productive(ProductiveAnalysis):
    """The analysis of object terms."""

    def is_thunk(self, term: Hashable) -> bool:
        return isinstance(term, Thunk)

    def body(self, term: Hashable) -> Hashable:
        assert isinstance(term, Thunk)
        return term.body()

    def thunk_key(self, term: Hashable) -> Hashable:
        assert isinstance(term, Thunk)
        return term.key

    def structure(self, term: Hashable) -> tuple[bool, int]:
        assert isinstance(term, Term)
        return self._structure(term)

    def is_empty(self, term: Hashable) -> bool:
        return term is EMPTY

    def nullable(self, term: Hashable) -> bool:
        assert isinstance(term, Term)
        return nullable(term)

    def class_bytes(self, term: Hashable) -> Sequence[int]:
        assert isinstance(term, Term)
        return class_bytes(term)

    def derivative(self, term: Hashable, byte: int) -> Hashable:
        assert isinstance(term, Term)
        return derivative(term, byte)

    def _structure(self, term: Term) -> tuple[bool, int]:
        if term is EPS or isinstance(term, Bytes):
            return True, FREE
        if term is EMPTY:
            return False, FREE
        if isinstance(term, Cat):
            for item in sorted(term.items, key=_cost):
                result, taint = self.visit(item)
                if not result:
                    return False, taint
            return True, FREE
        if isinstance(term, Alt):
            shallowest = FREE
            for item in sorted(term.items, key=_cost):
                result, taint = self.visit(item)
                if result:
                    return True, FREE
                shallowest = min(shallowest, taint)
            return False, shallowest
        if isinstance(term, Repeat):
            return (True, FREE) if term.lo == 0 else self.visit(term.item)
        if isinstance(term, Lexeme):
            return self.visit(term.item)
        if isinstance(term, Checked):
            return True, FREE
        return not self.leaf_empty(term), FREE


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


def _pointer(key: Hashable) -> str | None:
    """The JSON pointer of a schema reference's thunk key (None for other thunks)."""
    if isinstance(key, tuple) and len(key) >= 3 and key[0] == "schema":
        return f"#{key[2]}"
    return None
