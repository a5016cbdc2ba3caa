"""A lazily explored DFA over a store's rows: the first automaton the token index can
walk with no object term in it (``fsm.term_store``, issue 15).

``StoreAutomaton`` is the plain part of ``fsm.derivative_automaton.DerivativeAutomaton``
on ids: its states are rows, numbered as they are found; ``expand`` takes one derivative
per byte class of a state's row and keeps the successors that are live. Liveness is
read off the rows where their syntax tells (no intersection or complement outside a
thunk), taken apart where it can be (a concatenation is live when its parts are, a
union when one member is, a repetition when it may repeat zero times or its item is
live), and searched breadth first over derivatives where it cannot, up to a budget
past which a term counts as live (a search only prunes, as the objects' does).

It takes no state apart for the walk: no lexeme or union is walked once and shared
(``has_lexemes`` is false), so the token index walks every state over the whole trie.
Decomposing on ids (``fsm.decompose``, ``fsm.counted``) and the witness search
(``fsm.witness``) are the next steps of the path ``docs/design.md`` names.
"""

from __future__ import annotations

from collections import deque

import numpy as np

from fsm.automaton import DEAD
from fsm.errors import ConstraintTooLarge
from fsm.limits import DEFAULT_MAX_STATES
from fsm.term_store import (
    EMPTY,
    KIND_ALT,
    KIND_CAT,
    KIND_LEXEME,
    KIND_REPEAT,
    TermStore,
)

_NO_SUCCESSORS = np.full(256, DEAD, np.int32)
_NO_SUCCESSORS.flags.writeable = False  # copied by ``expand``, never written


class StoreAutomaton:
    """``ByteAutomaton`` over the derivatives of the row ``root`` of ``store``. A store
    is for one thread, and so is this."""

    def __init__(
        self,
        store: TermStore,
        root: int,
        *,
        max_states: int = DEFAULT_MAX_STATES,
        liveness_budget: int = 400,
    ) -> None:
        self.store = store
        self._rows: list[int] = []
        self._ids: dict[int, int] = {}
        self._live: dict[int, bool] = {EMPTY: False}
        self._accepted: dict[int, bytes] = {}  # a string a row found live accepts
        self._max_states = max_states
        self._liveness_budget = liveness_budget
        self.searches = 0
        self._initial = self._intern(root)

    @property
    def initial(self) -> int:
        return self._initial

    @property
    def num_states(self) -> int:
        return len(self._rows)

    @property
    def has_lexemes(self) -> bool:
        return False

    def row(self, state: int) -> int:
        """The row a state stands for (what remains to be matched)."""
        return self._rows[state]

    def expand(self, state: int) -> tuple[np.ndarray, bool]:
        store = self.store
        row = self._rows[state]
        members = store.representatives(row)
        leading, rest = self._handed_down(row)
        of_class = _NO_SUCCESSORS.copy()  # indexed by representative byte
        for byte in store.class_bytes(row):
            target = store.derivative(row, byte)
            if byte == leading:
                self._known_live(target, rest)
            if self.is_live(target):
                of_class[byte] = self._intern(target)
        return of_class[np.frombuffer(members, np.uint8)], store.nullable(row)

    def accepts(self, state: int) -> bool:
        return self.store.nullable(self._rows[state])

    def _intern(self, row: int) -> int:
        state = self._ids.get(row)
        if state is None:
            if len(self._rows) >= self._max_states:
                raise ConstraintTooLarge(
                    f"the constraint needs more than {self._max_states} automaton states"
                )
            state = self._ids[row] = len(self._rows)
            self._rows.append(row)
        return state

    # ------------------------------------------------------------------ liveness

    def is_live(self, row: int) -> bool:
        """Whether some byte string leads from ``row`` to acceptance
        (``DerivativeAutomaton.is_live``, without its witness search)."""
        if row == EMPTY:
            return False
        if not self.store.needs_liveness_check(row):
            return True
        known = self._live.get(row)
        if known is None:
            known = self._decompose(row)
            self._live[row] = known
        return known

    def _decompose(self, row: int) -> bool:
        store = self.store
        kind = store.kinds[row]
        if kind == KIND_CAT:
            return self.is_live(store.first[row]) and self.is_live(store.second[row])
        if kind == KIND_ALT:
            return any(self.is_live(member) for member in store.members(row))
        if kind == KIND_REPEAT:
            return store.repeat_bounds(row)[0] == 0 or self.is_live(store.first[row])
        if kind == KIND_LEXEME:
            return self.is_live(store.first[row])
        return self._search_acceptance(row)

    def _handed_down(self, row: int) -> tuple[int | None, bytes]:
        """The class (its representative byte) of the first byte of the string ``row``
        keeps, and the rest of it; ``(None, b"")`` when it keeps no non-empty one."""
        accepted = self._accepted.get(row)
        if not accepted:
            return None, b""
        return self.store.representatives(row)[accepted[0]], accepted[1:]

    def _known_live(self, row: int, accepted: bytes) -> None:
        """Records that ``row`` accepts ``accepted`` (so it is live)."""
        if row not in self._accepted:
            self._accepted[row] = accepted
            if self.store.needs_liveness_check(row):
                self._live[row] = True

    def _search_acceptance(self, start: int) -> bool:
        """Breadth first over derivatives, up to the budget (then live). The string
        found is kept for ``start`` and the rows on its way: the next state along the
        text it reads is live without a search of its own."""
        self.searches += 1
        store = self.store
        paths = {start: b""}
        queue = deque([start])
        found = self._met_live(start, b"")
        while found is None and queue:
            if len(paths) > self._liveness_budget:
                return True
            row = queue.popleft()
            for byte in store.class_bytes(row):
                target = store.derivative(row, byte)
                if target == EMPTY or target in paths or self._live.get(target) is False:
                    continue
                path = paths[row] + bytes((byte,))
                found = self._met_live(target, path)
                if found is not None:
                    break
                paths[target] = path
                queue.append(target)
        if found is None:
            return False
        if isinstance(found, bytes):
            for on_way, path in paths.items():
                if found.startswith(path):
                    self._known_live(on_way, found[len(path) :])
        return True

    def _met_live(self, row: int, path: bytes) -> bytes | bool | None:
        """What a search returns on meeting ``row`` (after ``path``) when it is known to
        be live: a string, or True without one; None otherwise."""
        if self.store.nullable(row):
            return path
        if self._live.get(row):
            rest = self._accepted.get(row)
            return True if rest is None else path + rest
        return None
