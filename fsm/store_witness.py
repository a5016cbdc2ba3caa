"""Witnesses on a store's rows: ``fsm.witness`` on ids.

A few byte strings a row accepts, built from its structure, so that the liveness of
an intersection or a complement is proved without a breadth-first search that runs
out of budget far from acceptance (``fsm.witness``'s docstring says why and how). The
same rules, the same budgets, read from rows: a concatenation's items are its chain
of heads, a union's members come in id order (then cheapest first, as the objects'),
and a lexeme "but some names" (``KIND_EXCEPT``, which keeps no item) offers the
candidates of what it reads within that its row accepts.

Every candidate is a string of its row by construction or by a check, so a witness
proves liveness; finding none proves nothing.
"""

from __future__ import annotations

from fsm.term_store import (
    EMPTY,
    EPS,
    KIND_ALT,
    KIND_AND,
    KIND_BYTES,
    KIND_CAT,
    KIND_CHECKED,
    KIND_EXCEPT,
    KIND_LEXEME,
    KIND_NOT,
    KIND_REPEAT,
    KIND_THUNK,
    TermStore,
)
from fsm.witness import (
    CANDIDATES,
    CHECKED_BUDGET,
    MAX_DEPTH,
    ROUNDS,
    THUNK_COST,
    WITNESS_BUDGET,
)


class _OutOfBudget(Exception):
    pass


def witness_in(
    store: TermStore,
    row: int,
    budget: int = WITNESS_BUDGET,
    shared: dict[int, list[bytes]] | None = None,
) -> bytes | None:
    """A string ``row`` accepts, or None when none was found within ``budget`` (which
    does not mean there is none). ``shared`` keeps the candidates of rows between
    searches (``fsm.witness.witness``)."""
    finder = _RowFinder(store, budget, {} if shared is None else shared)
    try:
        found = finder.candidates(row, 0)
    except _OutOfBudget:
        return None
    return found[0] if found else None


class _RowFinder:
    """One search (``fsm.witness._Finder``): candidates per row, the thunks being
    visited, the budget left. Lists that depend on a thunk still open stay with this
    search; the others go to ``shared``."""

    def __init__(self, store: TermStore, budget: int, shared: dict[int, list[bytes]]) -> None:
        self.store = store
        self.budget = budget
        self.shared = shared
        self.known: dict[int, tuple[list[bytes], frozenset[int]]] = {}
        self.open_thunks: set[int] = set()
        self.provisional: dict[int, list[bytes]] = {}
        self.cuts: set[int] = set()

    def spend(self, amount: int = 1) -> None:
        self.budget -= amount
        if self.budget < 0:
            raise _OutOfBudget

    def candidates(self, row: int, depth: int) -> list[bytes]:
        """Up to ``CANDIDATES`` strings of ``row``, shortest first."""
        shared = self.shared.get(row)
        if shared is not None:
            return shared
        local = self.known.get(row)
        if local is not None:
            self.cuts |= local[1] & self.open_thunks
            return local[0]
        is_thunk = self.store.kinds[row] == KIND_THUNK
        if is_thunk and row in self.open_thunks:
            self.cuts.add(row)
            return self.provisional.get(row, [])
        if depth > MAX_DEPTH:
            raise _OutOfBudget
        self.spend()
        outer, self.cuts = self.cuts, set()
        if is_thunk:
            found = self._thunk(row, depth)
            self.cuts.discard(row)
        else:
            found = self._structure(row, depth)
        found = sorted(dict.fromkeys(found), key=len)[:CANDIDATES]
        if self.cuts:
            self.known[row] = (found, frozenset(self.cuts))
        else:
            self.shared[row] = found
        self.cuts |= outer
        return found

    def _thunk(self, row: int, depth: int) -> list[bytes]:
        """The body's candidates; a second pass when the body met the thunk again and
        the first found strings to build on."""
        self.spend(THUNK_COST)
        self.open_thunks.add(row)
        try:
            found = self._body(row, depth)
            if row in self.cuts and found and row not in self.provisional:
                self.provisional[row] = found
                self.known.clear()
                found = self._body(row, depth) + found
        finally:
            self.open_thunks.discard(row)
        return found

    def _body(self, row: int, depth: int) -> list[bytes]:
        shortest = self.store.thunk_of(row).shortest
        if shortest is not None:
            return [shortest()]
        return self.candidates(self.store.body(row), depth + 1)

    def _structure(self, row: int, depth: int) -> list[bytes]:
        store = self.store
        kind = store.kinds[row]
        if row == EPS:
            return [b""]
        if row == EMPTY:
            return []
        if kind == KIND_BYTES:
            mask = store.masks[store.first[row]]
            low, high = (mask & -mask).bit_length() - 1, mask.bit_length() - 1
            return [bytes((low,)), bytes((high,))]
        if kind == KIND_CAT:
            return self._cat(row, depth)
        if kind == KIND_ALT:
            return self._alt(store.members(row), depth)
        if kind == KIND_REPEAT:
            lo = store.repeat_bounds(row)[0]
            copies = self.candidates(store.first[row], depth + 1)
            return ([b""] if lo == 0 else []) + [copy * max(lo, 1) for copy in copies]
        if kind == KIND_LEXEME:
            return self.candidates(store.first[row], depth + 1)
        if kind == KIND_EXCEPT:
            within = self.candidates(store.first[row], depth + 1)
            return [text for text in within if self._accepts(row, text)]
        if kind == KIND_AND:
            wanted = 1 if depth == 0 else CANDIDATES
            return self._conjunction(store.members(row), depth, ROUNDS, wanted)
        if kind == KIND_NOT:
            return self._not(row)
        if kind == KIND_CHECKED:
            return self._search(row)
        raise TypeError(f"not a row: {row}")

    def _cat(self, row: int, depth: int) -> list[bytes]:
        """The first candidates of every item, then one item varied at a time."""
        lists = []
        for item in self.store.chain(row):
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

    def _alt(self, members: list[int], depth: int) -> list[bytes]:
        """Members cheapest first (finite ones end recursions), until enough."""
        result: list[bytes] = []
        for member in sorted(members, key=self._cost):
            result.extend(self.candidates(member, depth + 1))
            if len(result) >= CANDIDATES:
                break
        return result

    def _conjunction(self, items: list[int], depth: int, rounds: int, wanted: int) -> list[bytes]:
        """Up to ``wanted`` strings every item accepts (``fsm.witness``): each positive
        item's candidates that the others accept, else a candidate followed as far as
        every item reads it, and a witness of what is left there."""
        store = self.store
        positives = sorted((i for i in items if store.kinds[i] != KIND_NOT), key=self._cost)
        result: list[bytes] = []
        for source in positives:
            for candidate in self.candidates(source, depth + 1):
                if candidate not in result and all(
                    self._accepts(item, candidate) for item in items if item != source
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

    def _follow(self, items: list[int], text: bytes) -> tuple[bytes, list[int]]:
        """The longest prefix of ``text`` that no item refuses outright, and the items'
        derivatives after it."""
        for end, byte in enumerate(text):
            self.spend(len(items))
            following = [self.store.derivative(item, byte) for item in items]
            if EMPTY in following:
                return text[:end], items
            items = following
        return text, items

    def _not(self, row: int) -> list[bytes]:
        """The empty string or single bytes its item refuses."""
        item = self.store.first[row]
        tried = [b""] + [bytes((byte,)) for byte in self.store.class_bytes(item)]
        return [text for text in tried if not self._accepts(item, text)][:CANDIDATES]

    def _search(self, start: int) -> list[bytes]:
        """A string of a checked leaf: one of its checker's guesses when one is
        accepted, else the shortest, breadth first (``fsm.witness``)."""
        store = self.store
        if store.nullable(start):
            return [b""]
        checker = store.checkers[store.first[start]]
        text = store.texts[store.second[start]]
        for ending in checker.completions(text):
            self.spend()
            if checker.accepts(text + ending):
                return [ending]
        paths: dict[int, bytes] = {start: b""}
        frontier = [start]
        spent = 0
        while frontier:
            following: list[int] = []
            for current in frontier:
                for byte in store.class_bytes(current):
                    spent += 1
                    self.spend()
                    if spent > CHECKED_BUDGET:
                        return []
                    target = store.derivative(current, byte)
                    if target == EMPTY or target in paths:
                        continue
                    paths[target] = paths[current] + bytes((byte,))
                    if store.nullable(target):
                        return [paths[target]]
                    following.append(target)
            frontier = following
        return []

    def _accepts(self, row: int, text: bytes) -> bool:
        self.spend(len(text) + 1)
        store = self.store
        if store.kinds[row] == KIND_NOT:
            return not store.matches(store.first[row], text)
        return store.matches(row, text)

    def _cost(self, row: int) -> int:
        """Cheap members first: a finite one ends a recursion, a thunk may build a
        body (``fsm.witness._cost``)."""
        store = self.store
        kind = store.kinds[row]
        if row == EPS or kind == KIND_BYTES:
            return 0
        if kind == KIND_THUNK:
            return 3
        if kind == KIND_CAT:
            return 3 if any(store.kinds[item] == KIND_THUNK for item in store.chain(row)) else 1
        if kind in (KIND_ALT, KIND_REPEAT, KIND_LEXEME, KIND_EXCEPT):
            return 1
        return 2
