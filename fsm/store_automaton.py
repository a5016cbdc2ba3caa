"""A lazily explored DFA over a store's rows: the automaton the token index can walk
with no object term in it (``fsm.term_store``, issue 15).

``StoreAutomaton`` is ``fsm.derivative_automaton.DerivativeAutomaton`` on ids: its
states are rows, numbered as they are found; ``expand`` takes one derivative per byte
class of a state's row and keeps the successors that are live. Liveness is read off
the rows where their syntax tells (no intersection or complement outside a thunk),
taken apart where it can be (a concatenation is live when its parts are, a union when
one member is, a repetition when it may repeat zero times or its item is live), and
searched breadth first over derivatives where it cannot, up to a budget past which a
term counts as live (a search only prunes, as the objects' does).

States are taken apart for the row walker as the objects' are
(``fsm.decomposable.DecomposableBase``; the splits are ``fsm.store_decompose``'s):
a lexeme then a continuation, a lexeme inside a lexeme, a union's branches, counted
strings (``fsm.store_counted``), with joins, unions, a key's prefixes and counted
states numbered before their rows are built. A lexeme's key is the store's identity
and its row: the vocabulary's walks are shared by the automata over one store.
Liveness searches look for a witness as the objects' do (``fsm.store_witness``).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Hashable
from typing import cast

import numpy as np

from fsm.automaton import DEAD
from fsm.decomposable import DecomposableBase
from fsm.errors import ConstraintTooLarge
from fsm.limits import DEFAULT_MAX_STATES
from fsm.store_counted import (
    CountedRow,
    content_in,
    counted_form_in,
    counted_meet_in,
    met_in,
    plain_form_in,
    unit_automaton_in,
)
from fsm.store_decompose import StoreSplits, may_hold_lexemes_in
from fsm.store_witness import witness_in
from fsm.term_store import (
    EMPTY,
    EPS,
    KIND_ALT,
    KIND_AND,
    KIND_CAT,
    KIND_CHECKED,
    KIND_EXCEPT,
    KIND_LEXEME,
    KIND_REPEAT,
    KIND_THUNK,
    TermStore,
)

_NO_SUCCESSORS = np.full(256, DEAD, np.int32)
_NO_SUCCESSORS.flags.writeable = False  # copied by ``expand``, never written

_QUICK_SEARCH = 4
"""Rows a liveness search sees before it also looks for a witness."""
_MEMBER_SEARCH = 64
"""Rows a search for a string of a meet's member may meet (``_accepted_string``)."""

_NOT_MET = -3
_MET_LATER = -2
"""``StoreAutomaton._met_rows``: a live meet whose row waits (``_NOT_MET``: not asked)."""

_PENDING = -1
"""The row of a state numbered before it is built (a join, a union, a concatenation, a
key's prefix)."""


class StoreAutomaton(DecomposableBase):
    """``ByteAutomaton`` over the derivatives of the row ``root`` of ``store``, taken
    apart for the row walker unless ``decompose`` is false. A store is for one
    thread, and so is this. ``splits``: the store's ``StoreSplits``, shared by the
    automata over it (``SchemaRows``: what a row splits into is the same for every
    schema that reaches it); a fresh one when not given."""

    def __init__(
        self,
        store: TermStore,
        root: int,
        *,
        max_states: int = DEFAULT_MAX_STATES,
        liveness_budget: int = 400,
        decompose: bool = True,
        splits: StoreSplits | None = None,
    ) -> None:
        self.store = store
        self._rows: list[int] = []  # _PENDING until built (``_row``)
        self._ids: dict[int, int] = {}
        self._live: dict[int, bool] = {EMPTY: False}
        self._accepted: dict[int, bytes] = {}  # a string a row found live accepts
        self._witnesses: dict[int, list[bytes]] = {}  # fsm.store_witness's, between searches
        self._max_states = max_states
        self._liveness_budget = liveness_budget
        self.searches = 0
        self._splitter = StoreSplits(store) if splits is None else splits
        self._decompose_states = decompose
        self._has_lexemes: bool | None = None
        self._exit: int | None = None
        self._splits: dict[int, tuple[int, int] | None] = {}
        self._steps: dict[int, int] = {}  # (state << 8 | byte) -> state
        self._joins: dict[tuple[int, int], int] = {}
        self._pending_joins: dict[int, tuple[int, int]] = {}
        self._inside_pairs: dict[tuple[int, int], tuple[int, int]] = {}
        self._prefixed_counts: dict[tuple[int, int], tuple[int, int]] = {}
        self._branches: dict[int, tuple[int, ...] | None] = {}
        self._branch_parts: dict[int, tuple[int | tuple[int, int], ...] | None] = {}
        self._unions: dict[tuple[int | tuple[int, int], ...], int] = {}
        self._pending_unions: dict[int, tuple[int | tuple[int, int], ...]] = {}
        self._union_joins: dict[int, tuple[tuple[int, int], ...]] = {}
        self._prefixes: dict[tuple[int, bytes], int] = {}
        self._pending_prefixes: dict[int, tuple[int, bytes]] = {}
        self._literal_rests: dict[int, bytes] = {}
        # counted lexemes' states by unit and closing, then by the partial's index and
        # the bounds left (-1: no upper bound); pending ones: the form, partial, units
        self._counted: dict[tuple[int, int], dict[tuple[int, int, int], int]] = {}
        self._pending_counted: dict[int, tuple[CountedRow, int, int]] = {}
        # lexemes met with a count: their two members, the pairs met (``meet``), those
        # whose rows wait, and the rows ``_accepted_string`` found no string of
        self._counted_meets: dict[int, tuple[int, int] | None] = {}
        self._meets: dict[tuple[int, int], int | None] = {}
        self._pending_meets: dict[int, tuple[int, int]] = {}
        self._unaccepted: set[int] = set()
        # concatenations numbered before their rows are built (``_unbuilt_cat``)
        self._unbuilt_cats: dict[tuple[int, int], int] = {}
        self._cat_pairs: dict[int, tuple[int, int]] = {}
        self._initial = self._intern(root)

    @property
    def initial(self) -> int:
        return self._initial

    @property
    def num_states(self) -> int:
        return len(self._rows)

    @property
    def splits(self) -> StoreSplits:
        """What the rows this automaton reaches split into, shared with the other
        automata over its store when compiled by ``fsm.schema_rows``."""
        return self._splitter

    def row(self, state: int) -> int:
        """The row a state stands for (what remains to be matched)."""
        return self._row(state)

    def expand(self, state: int) -> tuple[np.ndarray, bool]:
        store = self.store
        row = self._row(state)
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
        """Whether the state's row is nullable; for a union of joins, a join or an
        unbuilt concatenation, read off their parts without building the row
        (``DerivativeAutomaton.accepts``)."""
        joins = self._union_joins.get(state)
        if joins is not None:
            return any(self.accepts(head) and self.accepts(rest) for head, rest in joins)
        if state in self._literal_rests:  # a proper prefix of a lexeme's one string
            return False
        pair = self._pending_joins.get(state)
        if pair is None:
            pair = self._pending_meets.get(state)
        if pair is not None:  # a join, or a meet: accepts when both its parts do
            return self.accepts(pair[0]) and self.accepts(pair[1])
        unbuilt = self._cat_pairs.get(state)
        if unbuilt is not None:  # its row may wait: read off its parts
            return self.store.nullable(unbuilt[0]) and self.store.nullable(unbuilt[1])
        return self.store.nullable(self._row(state))

    def _intern(self, row: int) -> int:
        state = self._ids.get(row)
        if state is None:
            state = self._ids[row] = self._number_state(row)
        return state

    def _number_state(self, row: int) -> int:
        """A new state for ``row`` (``_PENDING``: built on first use)."""
        if len(self._rows) >= self._max_states:
            raise ConstraintTooLarge(
                f"the constraint needs more than {self._max_states} automaton states"
            )
        self._rows.append(row)
        return len(self._rows) - 1

    def _row(self, state: int) -> int:
        """A state's row, building a pending join's, union's, unbuilt concatenation's,
        prefix's or counted state's on first use."""
        row = self._rows[state]
        if row != _PENDING:
            return row
        store = self.store
        pair = self._pending_joins.pop(state, None)
        items = self._pending_unions.pop(state, None)
        counted = self._pending_counted.pop(state, None)
        met = self._pending_meets.pop(state, None)
        if met is not None:
            found = met_in(store, self._row(met[0]), self._row(met[1]))
            assert found is not None  # both were taken apart when met (``meet``)
            row = found
        elif counted is not None:
            form, partial, units = counted
            row = form.after(store, partial, units)
        elif pair is not None:
            row = store.cat(self._row(pair[0]), self._row(pair[1]))
        elif items is not None:
            row = store.alt(
                [
                    self._row(item)
                    if isinstance(item, int)
                    else store.cat(self._row(item[0]), self._row(item[1]))
                    for item in items
                ]
            )
        elif state in self._cat_pairs:
            head, rest = self._cat_pairs[state]
            row = store.cat(head, rest)
        else:
            lexeme, read = self._pending_prefixes.pop(state)
            row = self._row(lexeme)
            for byte in read:
                row = store.derivative(row, byte)
        self._ids.setdefault(row, state)
        self._rows[state] = row
        return row

    # ------------------------------------------------------------------ parts

    @property
    def has_lexemes(self) -> bool:
        """Whether the root may hold a lexeme (``may_hold_lexemes_in``)."""
        if self._has_lexemes is None:
            self._has_lexemes = self._decompose_states and may_hold_lexemes_in(
                self.store, self._row(self._initial)
            )
        return self._has_lexemes

    @property
    def exit_state(self) -> int:
        if self._exit is None:
            self._exit = self._intern(EPS)
        return self._exit

    def lexeme_split(self, state: int) -> tuple[int, int] | None:
        if state in self._splits:
            return self._splits[state]
        pair = self._cat_pairs.get(state)
        if (
            pair is not None
            and self.store.kinds[pair[0]] == KIND_CAT
            and self._splitter.is_lexeme(self.store.first[pair[0]])
        ):
            unbuilt = self._unbuilt_split(*pair)  # split as its row would be, unbuilt
            self._splits[state] = unbuilt
            return unbuilt
        parts = self._splitter.split_lexeme(self._row(state))
        split = None
        if parts is not None:
            lexeme, after = parts
            split = self._intern(lexeme), (self.exit_state if after == EPS else self._intern(after))
        self._splits[state] = split
        return split

    def lexeme_strings(self, lexeme_state: int, limit: int) -> list[bytes] | None:
        # memoised by the store (``TermStore.finite_strings``), for every index over it
        row = self._row(lexeme_state)
        store = self.store
        return store.finite_strings(row, limit) if store.kinds[row] == KIND_LEXEME else None

    def step(self, state: int, byte: int) -> int:
        move = state << 8 | byte  # an int, not a pair: no object for the collector
        known = self._steps.get(move)
        if known is not None:
            return known
        store = self.store
        row = self._row(state)
        target = store.derivative(row, byte)
        leading, rest = self._handed_down(row)
        if leading is not None and store.representatives(row)[byte] == leading:
            self._known_live(target, rest)
        stepped = self._intern(target) if self.is_live(target) else DEAD
        self._steps[move] = stepped
        return stepped

    def after(self, lexeme_state: int, text: bytes, read: int) -> int:
        key = lexeme_state, text[:read]
        state = self._prefixes.get(key)
        if state is None:
            state = self._prefixes[key] = self._number_state(_PENDING)
            self._pending_prefixes[state] = key
            self._literal_rests[state] = text[read:]
        return state

    def literal_text(self, lexeme_state: int) -> bytes | None:
        return self._literal_rests.get(lexeme_state)

    def lexeme_within(self, lexeme_state: int) -> tuple[int, frozenset[bytes]] | None:
        store = self.store
        row = self._row(lexeme_state)
        if store.kinds[row] != KIND_EXCEPT:
            return None
        return self._intern(store.first[row]), frozenset(store.aparts[store.second[row]])

    def join(self, lexeme_state: int, continuation: int) -> int:
        key = lexeme_state, continuation
        state = self._joins.get(key)
        if state is None:
            state = self._joins[key] = self._number_state(_PENDING)
            self._pending_joins[state] = key
            self._splits[state] = key
        return state

    def inside(self, lexeme_state: int, continuation: int) -> tuple[int, int] | None:
        row = self._rows[lexeme_state]  # a pending state (a prefix, a count) is not nested
        found = None if row == _PENDING else self._splitter.nested_split(row)
        if found is None:
            return None
        key = lexeme_state, continuation
        pair = self._inside_pairs.get(key)
        if pair is None:
            after = self.store.cat(found[1], self._row(continuation))
            rest = self.exit_state if after == EPS else self._intern(after)
            pair = self._inside_pairs[key] = self._intern(found[0]), rest
        return pair

    def counted_after_prefix(self, lexeme_state: int, continuation: int) -> tuple[int, int] | None:
        """``DecomposableBase.counted_after_prefix`` (``store_counted.counted_after_prefix_in``):
        the prefix's state, then the join of the counted lexeme and ``continuation``."""
        row = self._rows[lexeme_state]  # a pending state (a prefix, a count) is none
        found = None if row == _PENDING else self._splitter.counted_after_prefix(row)
        if found is None:
            return None
        key = lexeme_state, continuation
        pair = self._prefixed_counts.get(key)
        if pair is None:
            counted = self.join(self._intern(found[1]), continuation)
            pair = self._prefixed_counts[key] = self._intern(found[0]), counted
        return pair

    def counting(self, lexeme_state: int) -> tuple[Hashable, int, int | None] | None:
        """``(plain, lo, hi)`` when the lexeme is ``unit{lo,hi} close``
        (``fsm.store_counted``): ``plain`` is the store's identity and the row of
        ``unit* close``, a key the vocabulary's counted walks are kept by."""
        counted = counted_form_in(self.store, self._row(lexeme_state))
        if counted is None:
            return None
        return self._plain_key(counted), counted.lo, counted.hi

    def _plain_key(self, form: CountedRow) -> Hashable:
        """The store's identity and the row of ``unit* close`` of ``form``: the key of
        its counted walks (``unit_automaton`` reads it back)."""
        return self.store.identity, form.plain(self.store)

    def unit_automaton(self, plain: Hashable) -> tuple[np.ndarray, tuple[Hashable, ...]] | None:
        assert isinstance(plain, tuple) and plain[0] is self.store.identity
        row: int = plain[1]
        counted = plain_form_in(self.store, row)
        return None if counted is None else unit_automaton_in(self.store, counted)

    def counted_states(
        self, lexeme_state: int, partials: tuple[Hashable, ...], ends: list[tuple[int, int]]
    ) -> list[int]:
        """``DerivativeAutomaton.counted_states`` on rows: numbered now, per unit and
        closing by the bounds left, their rows built on first use."""
        counted = counted_form_in(self.store, self._row(lexeme_state))
        assert counted is not None
        family_key = (counted.unit, counted.close)
        family = self._counted.get(family_key)
        if family is None:
            family = self._counted[family_key] = {}
        lo, hi = counted.lo, -1 if counted.hi is None else counted.hi
        found = []
        for kind, units in ends:
            key = (kind, max(lo - units, 0), -1 if hi < 0 else hi - units)
            state = family.get(key)
            if state is None:
                partial = partials[kind]
                assert isinstance(partial, int)
                state = family[key] = self._number_state(_PENDING)
                self._pending_counted[state] = counted, partial, units
            found.append(state)
        return found

    def plain_key(self, lexeme_state: int) -> Hashable | None:
        """``DerivativeAutomaton.plain_key`` on rows: the key ``counting`` gives."""
        plain = plain_form_in(self.store, self._row(lexeme_state))
        return None if plain is None else self._plain_key(plain)

    def plain_states(self, lexeme_state: int, partials: tuple[Hashable, ...]) -> list[int]:
        """``DerivativeAutomaton.plain_states`` on rows."""
        plain = plain_form_in(self.store, self._row(lexeme_state))
        assert plain is not None
        states = []
        for partial in partials:
            assert isinstance(partial, int)
            states.append(self._intern(plain.after(self.store, partial, 0)))
        return states

    def counted_meet(self, lexeme_state: int) -> tuple[int, int] | None:
        """``DecomposableAutomaton.counted_meet`` on rows (``counted_meet_in``); a
        state ``meet`` numbered is taken apart at the pair it was met from."""
        if lexeme_state in self._counted_meets:
            return self._counted_meets[lexeme_state]
        row = self._row(lexeme_state)
        known = self._splitter.counted_meets
        if row not in known:
            known[row] = counted_meet_in(self.store, row)
        rows = known[row]
        members = None if rows is None else (self._intern(rows[0]), self._intern(rows[1]))
        self._counted_meets[lexeme_state] = members
        return members

    def meet(self, first: int, second: int) -> int | None:
        """``DecomposableAutomaton.meet`` on rows (``met_in``): numbered only when some
        string of both is left, like a derivative's target. What two rows give is
        kept per store (``_met_rows``); a state whose row waits is numbered per
        automaton, like a join."""
        key = first, second
        if key in self._meets:
            return self._meets[key]
        rows = self._row(first), self._row(second)
        known = self._splitter.meets
        met = known.get(rows, _NOT_MET)
        if met == _NOT_MET:
            met = known[rows] = self._met_rows(rows[0], rows[1])
        state: int | None = met
        if met == _MET_LATER:
            state = self._number_state(_PENDING)
            self._pending_meets[state] = key
            if counted_form_in(self.store, rows[0]) is not None:  # else: from its row
                self._counted_meets[state] = key
        elif met is not None:
            state = DEAD if met == EMPTY else self._intern(met)
        self._meets[key] = state
        return state

    def _met_rows(self, first: int, second: int) -> int | None:
        """What meeting the lexeme rows ``first`` and ``second`` gives: None when
        ``met_in`` cannot, ``EMPTY`` when no string of both is left, ``_MET_LATER``
        when a string ``second`` accepts is one of ``first``'s too (a pattern's
        shortest completion within a count's bounds: its row can wait until used,
        as a row meets tens of pairs of which a step takes one), else the meet's row
        once a search (``is_live``) finds it live."""
        if not self._closing(first) == self._closing(second) != EMPTY:
            return None
        accepted = self._accepted_string(second)
        if accepted is not None and self.store.matches(first, accepted):
            return _MET_LATER
        row = met_in(self.store, first, second)
        assert row is not None
        return row if self.is_live(row) else EMPTY

    def _closing(self, row: int) -> int:
        """The closing byte set of the lexeme ``row`` when ``met_in`` takes it apart
        (``EMPTY`` otherwise), kept per store."""
        known = self._splitter.closings
        closing = known.get(row)
        if closing is None:
            content = content_in(self.store, row)
            closing = known[row] = EMPTY if content is None else content[1]
        return closing

    def _accepted_string(self, row: int) -> bytes | None:
        """A string ``row`` accepts: the one known, else the first a breadth-first
        search over ``_MEMBER_SEARCH`` rows meets (None if none; asked once a row)."""
        known = self._accepted.get(row)
        if known is not None or row in self._unaccepted:
            return known
        found = self._breadth_first({row: b""}, deque([row]), _MEMBER_SEARCH)
        if not isinstance(found, bytes):
            self._unaccepted.add(row)
            return None
        self._known_live(row, found)
        return found

    @property
    def meets_made(self) -> int:
        """How many pairs ``meet`` was asked for (``scripts/check_meet_walks.py``)."""
        return len(self._meets)

    def lexeme_key(self, lexeme_state: int) -> Hashable:
        """The store's identity and the lexeme's row: the vocabulary's walks are shared
        by the automata over one store, and kept apart from another store's."""
        return self.store.identity, self._row(lexeme_state)

    def lexeme_state(self, key: Hashable) -> int:
        assert isinstance(key, tuple) and key[0] is self.store.identity
        row: int = key[1]
        return self._intern(row)

    def head_split(self, state: int) -> tuple[int, int] | None:
        """``(first item, the rest)`` of a concatenation state, seen through a lexeme's
        item and a thunk's body (``DerivativeAutomaton.head_split``)."""
        store = self.store
        row = self._row(state)
        for _ in range(8):
            kind = store.kinds[row]
            if kind == KIND_LEXEME:
                row = store.first[row]
            elif kind == KIND_THUNK:
                row = store.body(row)
            else:
                break
        if store.kinds[row] != KIND_CAT:
            return None
        return self._intern(store.first[row]), self._intern(store.second[row])

    def alternatives(self, state: int) -> tuple[int, ...] | None:
        rows = self._splitter.branch_terms(self._row(state), require_lexeme=False)
        return None if rows is None else tuple(self._intern(row) for row in rows)

    def branches(self, state: int) -> tuple[int, ...] | None:
        """The branches of a union state (``StoreSplits.branches_unbuilt``): a branch
        headed by a lexeme is numbered with its row unbuilt (``_unbuilt_cat``)."""
        if state in self._branches:
            return self._branches[state]
        found = self._splitter.branches_unbuilt(self._row(state))
        states = None
        if found is not None:
            states = tuple(
                self._intern(branch) if isinstance(branch, int) else self._unbuilt_cat(*branch)
                for branch in found
            )
        self._branches[state] = states
        return states

    def branch_parts(self, state: int) -> tuple[int | tuple[int, int], ...] | None:
        """``branches(state)`` with each branch's split in its place where it splits:
        a branch headed by a lexeme is split as ``lexeme_split`` splits its unbuilt
        state, without numbering that state (``StoreSplits.branches_unbuilt``)."""
        if state in self._branch_parts:
            return self._branch_parts[state]
        found = self._splitter.branches_unbuilt(self._row(state))
        parts = None if found is None else tuple(self._branch_part(branch) for branch in found)
        self._branch_parts[state] = parts
        return parts

    def _branch_part(self, branch: int | tuple[int, int]) -> int | tuple[int, int]:
        if isinstance(branch, int):
            state = self._intern(branch)
        else:
            member, rest = branch
            if rest != EPS:  # ``lexeme_split`` of its unbuilt state
                return self._unbuilt_split(member, rest)
            state = self._intern(member)
        split = self.lexeme_split(state)
        return state if split is None else split

    def _unbuilt_split(self, head: int, rest: int) -> tuple[int, int]:
        """The split of ``cat(head, rest)`` for a concatenation ``head`` led by a
        lexeme: that lexeme, then the rest of ``head`` before ``rest``, unbuilt."""
        store = self.store
        return self._intern(store.first[head]), self._unbuilt_cat(store.second[head], rest)

    def branch_openings(self, state: int) -> tuple[int, ...] | None:
        # memoised by the store (``StoreSplits.openings_unbuilt``), for every index
        return self._splitter.openings_unbuilt(self._row(state))

    def _unbuilt_cat(self, head: int, rest: int) -> int:
        """The state of ``cat(head, rest)``, numbered now, its row built on first use
        (``_row``), for a ``head`` that is a concatenation: its items are not re-nested
        behind ``rest`` until some question needs the row. A ``head`` led by a lexeme
        splits with no row built, its rest unbuilt in turn (``lexeme_split``): the walk
        builds only the rows of the states it enters."""
        store = self.store
        if rest == EPS:
            return self._intern(head)
        if store.kinds[head] != KIND_CAT:
            return self._intern(store.cat(head, rest))
        key = head, rest
        state = self._unbuilt_cats.get(key)
        if state is None:
            state = self._unbuilt_cats[key] = self._number_state(_PENDING)
            self._cat_pairs[state] = key
        return state

    def union(self, items: tuple[int | tuple[int, int], ...]) -> int:
        state = self._unions.get(items)
        if state is None:
            state = self._unions[items] = self._number_state(_PENDING)
            self._pending_unions[state] = items
            if all(not isinstance(item, int) for item in items):
                self._union_joins[state] = cast(tuple[tuple[int, int], ...], items)
        return state

    def union_joins(self, state: int) -> tuple[tuple[int, int], ...] | None:
        return self._union_joins.get(state)

    def stated_completion(self, state: int) -> bytes | None:
        """The shortest completion a thunk states for itself."""
        store = self.store
        row = self._row(state)
        if store.kinds[row] != KIND_THUNK:
            return None
        shortest = store.thunk_of(row).shortest
        return None if shortest is None else shortest()

    # ------------------------------------------------------------------ liveness

    def is_live(self, row: int) -> bool:
        """Whether some byte string leads from ``row`` to acceptance
        (``DerivativeAutomaton.is_live``)."""
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
        """``DerivativeAutomaton._search_acceptance`` on rows: breadth first over
        derivatives; a search still open after ``_QUICK_SEARCH`` rows (at once for an
        intersection with a checked leaf) looks for a witness (``fsm.store_witness``),
        then goes on to the full budget, past which the row counts as live. The string
        found is kept for ``start`` and the rows on its way: the next state along the
        text it reads is live without a search of its own."""
        self.searches += 1
        paths = {start: b""}
        queue = deque([start])
        found = None
        if not self._checks_text(start):
            found = self._breadth_first(paths, queue, _QUICK_SEARCH)
        if found is None:
            text = witness_in(self.store, start, shared=self._witnesses)
            if text is not None:
                self._known_live(start, text)
                return True
            found = self._breadth_first(paths, queue, self._liveness_budget)
        if found is None:
            return True
        if not isinstance(found, bytes):
            return found
        for on_way, path in paths.items():  # the start too (path b"")
            if found.startswith(path):
                self._known_live(on_way, found[len(path) :])
        return True

    def _breadth_first(
        self, paths: dict[int, bytes], queue: deque[int], budget: int
    ) -> bytes | bool | None:
        """Goes on with a search over the rows met (``paths``: the bytes that lead to
        each): a string the start accepts, True (a live row met, no string known),
        False (none left), or None once more than ``budget`` rows are met."""
        store = self.store
        if len(paths) == 1:  # a new search: the start itself may be live
            found = self._met_live(queue[0], b"")
            if found is not None:
                return found
        while queue:
            if len(paths) > budget:
                return None
            row = queue.popleft()
            for byte in store.class_bytes(row):
                target = store.derivative(row, byte)
                if target == EMPTY or target in paths or self._live.get(target) is False:
                    continue
                path = paths[row] + bytes((byte,))
                found = self._met_live(target, path)
                if found is not None:
                    return found
                paths[target] = path
                queue.append(target)
        return False

    def _checks_text(self, row: int) -> bool:
        """Whether ``row`` is an intersection with a checked leaf (a witness starts
        from its checker's guesses, ``fsm.derivative_automaton._checks_text``)."""
        store = self.store
        if store.kinds[row] != KIND_AND:
            return False
        return any(store.kinds[member] == KIND_CHECKED for member in store.members(row))

    def _met_live(self, row: int, path: bytes) -> bytes | bool | None:
        """What a search returns on meeting ``row`` (after ``path``) when it is known to
        be live: a string, or True without one; None otherwise."""
        if self.store.nullable(row):
            return path
        if self._live.get(row):
            rest = self._accepted.get(row)
            return True if rest is None else path + rest
        return None
