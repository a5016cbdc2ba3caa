"""Witnesses: a few byte strings a term accepts, built from its structure.

Liveness of an intersection or a complement cannot be read off the syntax. A
breadth-first search of derivatives decides it, but it explores every byte class at
every depth, and a JSON object that must still be closed is dozens of bytes away from
acceptance: the search runs out of budget before it gets there, and an exhausted search
proves nothing. A witness heads straight for acceptance instead: a concatenation is
witnessed by a witness of each item, a union by one of its branches, a repetition by
its minimum count of copies, and an intersection by a witness of one of its positive
items that the whole intersection accepts (checked by derivatives). Each term keeps a
few candidates, so an intersection of overlapping ``oneOf`` branches can try another
when the first is also accepted by a branch it excludes.

Every candidate is a string of its term by construction (intersections and
complements are checked, checked leaves are searched), so a witness proves liveness.
Failing to find one proves nothing: the caller falls back to its search. The work is
bounded by a budget of term visits and derivatives.
"""

from __future__ import annotations

from fsm.terms import (
    EMPTY,
    EPS,
    Alt,
    And,
    Bytes,
    Cat,
    Checked,
    Lexeme,
    Not,
    Repeat,
    Term,
    Thunk,
    class_bytes,
    derivative,
    matches,
    nullable,
)

CANDIDATES = 4
"""Candidates kept per term: enough for an intersection to try another branch's."""

WITNESS_BUDGET = 6_000
"""Term visits and derivatives one search may spend before it gives up."""

CHECKED_BUDGET = 256
"""Derivatives the breadth-first search of one checked leaf may take."""

ROUNDS = 16
"""Times a conjunction may follow a candidate and start again from what is left."""

THUNK_COST = 20
"""Budget a thunk visit spends: it may build a body (an object body with many keys
costs milliseconds)."""

MAX_DEPTH = 150
"""Nesting depth of the structural recursion (deeper: give up, never overflow)."""


class _OutOfBudget(Exception):
    pass


def witness(
    term: Term, budget: int = WITNESS_BUDGET, shared: dict[Term, list[bytes]] | None = None
) -> bytes | None:
    """A string ``term`` accepts, or None when none was found within ``budget``
    (which does not mean there is none). ``shared`` keeps the candidates of sub-terms
    between searches (an automaton's searches meet the same object bodies again)."""
    finder = _Finder(budget, {} if shared is None else shared)
    try:
        found = finder.candidates(term, 0)
    except _OutOfBudget:
        return None
    return found[0] if found else None


class _Finder:
    """One search: candidates per term, the thunks being visited, the budget left.

    A thunk met again inside its own body offers only what its first pass found
    (nothing, the first time): its other branches must end the recursion, and a second
    pass builds on the strings the first one found. A list computed under a thunk still
    open may miss strings, so it is kept for this search only; lists that depend on no
    open thunk go to ``shared``."""

    def __init__(self, budget: int, shared: dict[Term, list[bytes]]) -> None:
        self.budget = budget
        self.shared = shared
        self.known: dict[Term, tuple[list[bytes], frozenset[Thunk]]] = {}
        self.open_thunks: set[Thunk] = set()
        self.provisional: dict[Thunk, list[bytes]] = {}
        self.cuts: set[Thunk] = set()  # open thunks the current list depends on

    def spend(self, amount: int = 1) -> None:
        self.budget -= amount
        if self.budget < 0:
            raise _OutOfBudget

    def candidates(self, term: Term, depth: int) -> list[bytes]:
        """Up to ``CANDIDATES`` strings of ``term``, shortest first."""
        shared = self.shared.get(term)
        if shared is not None:
            return shared
        local = self.known.get(term)
        if local is not None:
            self.cuts |= local[1] & self.open_thunks  # those closed since are done
            return local[0]
        if isinstance(term, Thunk) and term in self.open_thunks:
            self.cuts.add(term)
            return self.provisional.get(term, [])
        if depth > MAX_DEPTH:
            raise _OutOfBudget
        self.spend()
        outer, self.cuts = self.cuts, set()
        if isinstance(term, Thunk):
            found = self._thunk(term, depth)
            self.cuts.discard(term)
        else:
            found = self._structure(term, depth)
        found = sorted(dict.fromkeys(found), key=len)[:CANDIDATES]
        if self.cuts:
            self.known[term] = (found, frozenset(self.cuts))
        else:
            self.shared[term] = found
        self.cuts |= outer
        return found

    def _thunk(self, term: Thunk, depth: int) -> list[bytes]:
        """The body's candidates; a second pass when the body met the thunk again and the
        first found strings to build on."""
        self.spend(THUNK_COST)
        self.open_thunks.add(term)
        try:
            found = self._body(term, depth)
            if term in self.cuts and found and term not in self.provisional:
                self.provisional[term] = found
                self.known.clear()  # lists built without the strings found since
                found = self._body(term, depth) + found
        finally:
            self.open_thunks.discard(term)
        return found

    def _body(self, term: Thunk, depth: int) -> list[bytes]:
        if term.shortest is not None:
            return [term.shortest()]
        return self.candidates(term.body(), depth + 1)

    def _structure(self, term: Term, depth: int) -> list[bytes]:
        if term is EPS:
            return [b""]
        if term is EMPTY:
            return []
        if isinstance(term, Bytes):
            mask = term.mask
            low, high = (mask & -mask).bit_length() - 1, mask.bit_length() - 1
            return [bytes((low,)), bytes((high,))]
        if isinstance(term, Cat):
            return self._cat(term.items, depth)
        if isinstance(term, Alt):
            return self._alt(term.items, depth)
        if isinstance(term, Repeat):
            copies = self.candidates(term.item, depth + 1)
            return ([b""] if term.lo == 0 else []) + [c * max(term.lo, 1) for c in copies]
        if isinstance(term, Lexeme):
            return self.candidates(term.item, depth + 1)
        if isinstance(term, And):
            return self._and(term, depth)
        if isinstance(term, Not):
            return self._not(term)
        if isinstance(term, Checked):
            return self._search(term)
        raise TypeError(f"not a term: {term!r}")

    def _cat(self, items: tuple[Term, ...], depth: int) -> list[bytes]:
        """The first candidates of every item, then one item varied at a time."""
        lists = []
        for item in items:
            found = self.candidates(item, depth + 1)
            if not found:
                return []
            lists.append(found)
        firsts = [found[0] for found in lists]
        result = [b"".join(firsts)]
        for i, found in enumerate(lists):
            for other in found[1:]:
                if len(result) >= CANDIDATES:
                    return result
                result.append(b"".join(firsts[:i] + [other] + firsts[i + 1 :]))
        return result

    def _alt(self, items: frozenset[Term], depth: int) -> list[bytes]:
        """Branches cheapest first (finite ones end recursions), until enough."""
        result: list[bytes] = []
        for item in sorted(items, key=_cost):
            result.extend(self.candidates(item, depth + 1))
            if len(result) >= CANDIDATES:
                break
        return result

    def _and(self, term: And, depth: int) -> list[bytes]:
        wanted = 1 if depth == 0 else CANDIDATES
        return self._conjunction(list(term.items), depth, ROUNDS, wanted)

    def _conjunction(self, items: list[Term], depth: int, rounds: int, wanted: int) -> list[bytes]:
        """Up to ``wanted`` strings every item accepts. First the candidates of each
        positive item that the others accept (checked item by item, cheaper than
        deriving the intersection). When none fits (two objects, each requiring its
        own keys), follow a candidate as far as every item reads it and look for one
        witness of what is left there, up to ``rounds`` times."""
        positives = sorted((item for item in items if not isinstance(item, Not)), key=_cost)
        result: list[bytes] = []
        for source in positives:
            for candidate in self.candidates(source, depth + 1):
                if candidate not in result and all(
                    self._accepts(item, candidate) for item in items if item is not source
                ):
                    result.append(candidate)
                    if len(result) >= wanted:
                        return result
        if result or rounds == 0:
            return result
        for source in positives:
            for candidate in self.candidates(source, depth + 1)[:1]:
                prefix, rest = self._follow(items, candidate)
                if prefix:
                    tails = self._conjunction(rest, depth + 1, rounds - 1, 1)
                    result.extend(prefix + tail for tail in tails)
            if len(result) >= wanted:
                break
        return result

    def _follow(self, items: list[Term], text: bytes) -> tuple[bytes, list[Term]]:
        """The longest prefix of ``text`` that no item refuses outright, and the items'
        derivatives after it."""
        for end, byte in enumerate(text):
            self.spend(len(items))
            following = [derivative(item, byte) for item in items]
            if any(item is EMPTY for item in following):
                return text[:end], items
            items = following
        return text, items

    def _not(self, term: Not) -> list[bytes]:
        """The empty string or single bytes its item refuses (a complement on its own
        is rare: intersections hold them, and witness their positive side)."""
        tried = [b""] + [bytes((byte,)) for byte in class_bytes(term.item)]
        return [text for text in tried if not self._accepts(term.item, text)][:CANDIDATES]

    def _search(self, start: Checked) -> list[bytes]:
        """A string of a small leaf: one of its checker's guesses when one is accepted
        (a pattern needs its groups closed: one ``re`` compile instead of hundreds),
        else the shortest, breadth-first (a string is taken as soon as it is met: a
        number that must still become an integer, ``8.1``, is two bytes from ``8.1e1``
        past a hundred and more prefixes)."""
        if nullable(start):
            return [b""]
        for ending in start.checker.completions(start.text):
            self.spend()
            if start.checker.accepts(start.text + ending):
                return [ending]
        paths: dict[Term, bytes] = {start: b""}
        frontier: list[Term] = [start]
        spent = 0
        while frontier:
            following: list[Term] = []
            for current in frontier:
                for byte in class_bytes(current):
                    spent += 1
                    self.spend()
                    if spent > CHECKED_BUDGET:
                        return []
                    target = derivative(current, byte)
                    if target is EMPTY or target in paths:
                        continue
                    paths[target] = paths[current] + bytes((byte,))
                    if nullable(target):
                        return [paths[target]]
                    following.append(target)
            frontier = following
        return []

    def _accepts(self, term: Term, text: bytes) -> bool:
        self.spend(len(text) + 1)
        if isinstance(term, Not):
            return not matches(term.item, text)
        return matches(term, text)


def _cost(term: Term) -> int:
    """Cheap items first: a finite branch ends a recursion, a thunk may build a body
    (an object's "one more key" branch ends in one)."""
    if term is EPS or isinstance(term, Bytes):
        return 0
    if isinstance(term, Thunk) or (
        isinstance(term, Cat) and any(isinstance(item, Thunk) for item in term.items)
    ):
        return 3
    if isinstance(term, (Cat, Alt, Repeat, Lexeme)):
        return 1
    return 2
