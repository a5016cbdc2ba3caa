"""A lazily explored DFA whose states are the derivatives of a term.

States are numbered as they are found; ``expand`` computes one state's successors by
taking one derivative per byte class of its term. Only the states that the token index
(and so generation) visits are ever built, which makes recursive and very large
constraints affordable.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Hashable
from typing import cast

import numpy as np

from fsm.automaton import DEAD
from fsm.counted import Counted, counted_form, plain_form, unit_automaton
from fsm.decomposable import DecomposableBase
from fsm.decompose import SplitMemo, branch_terms, may_hold_lexemes, nested_split, split_lexeme
from fsm.errors import ConstraintTooLarge
from fsm.limits import DEFAULT_MAX_STATES
from fsm.terms import (
    EMPTY,
    EPS,
    Alt,
    And,
    Cat,
    Checked,
    Lexeme,
    Repeat,
    Term,
    Thunk,
    alt,
    cat,
    class_bytes,
    derivative,
    finite_strings,
    nullable,
    representatives,
)
from fsm.witness import witness

_NO_SUCCESSORS = np.full(256, DEAD, np.int32)
_NO_SUCCESSORS.flags.writeable = False  # copied by ``expand``, never written

_QUICK_SEARCH = 4
"""Terms a liveness search sees before it also looks for a witness."""


class DerivativeAutomaton(DecomposableBase):
    """``ByteAutomaton`` over the derivatives of ``term``."""

    def __init__(
        self, term: Term, *, max_states: int = DEFAULT_MAX_STATES, liveness_budget: int = 400
    ) -> None:
        self._terms: list[Term | None] = []  # None: pending (``union``, ``after``)
        self._ids: dict[Term, int] = {}
        self._live: dict[Term, bool] = {EMPTY: False}
        self._accepted: dict[Term, bytes] = {}  # a string a term found live accepts
        self._witnesses: dict[Term, list[bytes]] = {}  # fsm.witness's, between searches
        self._max_states = max_states
        self._liveness_budget = liveness_budget
        self._initial = self._intern(term)
        self._splits: dict[int, tuple[int, int] | None] = {}
        self._steps: dict[tuple[int, int], int] = {}  # ``step``'s, by state and byte
        self._split_memo = SplitMemo()
        self._joins: dict[tuple[int, int], int] = {}
        self._inside_pairs: dict[tuple[int, int], tuple[int, int]] = {}  # ``inside``'s
        self._branches: dict[int, tuple[int, ...] | None] = {}
        self._unions: dict[tuple[int | tuple[int, int], ...], int] = {}
        self._pending_unions: dict[int, tuple[int | tuple[int, int], ...]] = {}
        self._pending_joins: dict[int, tuple[int, int]] = {}  # ``join``'s, until built
        self._union_joins: dict[int, tuple[tuple[int, int], ...]] = {}  # ``union_joins``
        self._prefixes: dict[tuple[int, bytes], int] = {}
        self._pending_prefixes: dict[int, tuple[int, bytes]] = {}
        self._literal_rests: dict[int, bytes] = {}  # ``after``'s states: the string left
        self._strings: dict[tuple[int, int], list[bytes] | None] = {}  # ``lexeme_strings``'
        self._exit: int | None = None
        # counted lexemes' states by unit and closing (``counted_states``), then by the
        # partial's index among the unit automaton's (which the two determine) and
        # the bounds left (-1: no upper bound)
        self._counted: dict[tuple[Term, Term], dict[tuple[int, int, int], int]] = {}
        # ``counted_states``' states until built: the lexeme's form, partial and units
        self._pending_counted: dict[int, tuple[Counted, Term, int]] = {}
        self._plains: dict[tuple[Term, Term], Term] = {}  # ``counting``'s, by unit and closing
        self._has_lexemes: bool | None = None
        self.searches = 0  # liveness searches run (``_search_acceptance``): a diagnostic

    @property
    def initial(self) -> int:
        return self._initial

    @property
    def num_states(self) -> int:
        return len(self._terms)

    def term(self, state: int) -> Term:
        """The term a state stands for (what remains to be matched)."""
        return self._term(state)

    def expand(self, state: int) -> tuple[np.ndarray, bool]:
        term = self._term(state)
        members = representatives(term)
        leading, rest = self._handed_down(term)
        of_class = _NO_SUCCESSORS.copy()  # indexed by representative byte
        for byte in class_bytes(term):
            target = derivative(term, byte)
            if byte == leading:
                self._known_live(target, rest)
            if self.is_live(target):
                of_class[byte] = self._intern(target)
        return of_class[np.frombuffer(members, np.uint8)], nullable(term)

    @property
    def has_lexemes(self) -> bool:
        """Whether the term may hold a lexeme (``fsm.decompose.may_hold_lexemes``)."""
        if self._has_lexemes is None:
            self._has_lexemes = may_hold_lexemes(self._term(self._initial))
        return self._has_lexemes

    @property
    def exit_state(self) -> int:
        """``EPS``: where a lexeme ends (``LexemeAutomaton``); numbered on first use."""
        if self._exit is None:
            self._exit = self._intern(EPS)
        return self._exit

    def lexeme_split(self, state: int) -> tuple[int, int] | None:
        """``(lexeme, rest)`` when the state's term is a lexeme then the rest
        (``fsm.decompose.split_lexeme``)."""
        if state in self._splits:
            return self._splits[state]
        parts = split_lexeme(self._term(state), self._split_memo)
        split = None
        if parts is not None:
            head, rest = parts
            split = self._intern(head), (self.exit_state if rest is EPS else self._intern(rest))
        self._splits[state] = split
        return split

    def lexeme_strings(self, lexeme_state: int, limit: int) -> list[bytes] | None:
        """Every string a lexeme state accepts when they are at most ``limit``
        (``terms.finite_strings``); memoised: a row asks it of an object's keys before
        walking them together (``fsm.row_walk``), then again as it walks each."""
        key = lexeme_state, limit
        if key in self._strings:
            return self._strings[key]
        term = self._term(lexeme_state)
        found = finite_strings(term, limit) if isinstance(term, Lexeme) else None
        self._strings[key] = found
        return found

    def step(self, state: int, byte: int) -> int:
        """One derivative, numbered when live; memoised: the walks down an object's
        key names (``fsm.row_walk``, "any other key") step from the states the walk
        before them numbered, by the same bytes (the key left after ``"dep`` steps on
        from where the walk of every key stepped past ``dep``)."""
        move = state, byte
        known = self._steps.get(move)
        if known is not None:
            return known
        term = self._term(state)
        target = derivative(term, byte)
        leading, rest = self._handed_down(term)
        if leading is not None and representatives(term)[byte] == leading:
            self._known_live(target, rest)
        stepped = self._intern(target) if self.is_live(target) else DEAD
        self._steps[move] = stepped
        return stepped

    def after(self, lexeme_state: int, text: bytes, read: int) -> int:
        """The state of a lexeme whose one string is ``text`` after ``text[:read]``.

        Numbered now and derived on first use, like a union: a key's row hands out a
        state per prefix its tokens spell (``"de``, ``"desc``, ``"description``), and
        the text takes one of them; deriving each was a fifth of a key row's time. A
        state derived so may repeat one ``step`` numbered; both read the same. The
        string left is kept (``literal_text``): the row of the state the text takes
        walks it, and accepts nothing yet (``accepts``), with no term built."""
        key = lexeme_state, text[:read]
        state = self._prefixes.get(key)
        if state is None:
            state = self._prefixes[key] = self._number_state(None)
            self._pending_prefixes[state] = key
            self._literal_rests[state] = text[read:]
        return state

    def literal_text(self, lexeme_state: int) -> bytes | None:
        return self._literal_rests.get(lexeme_state)

    def lexeme_within(self, lexeme_state: int) -> tuple[int, frozenset[bytes]] | None:
        """The state of the lexeme's ``within`` and its ``apart`` strings (``Lexeme``)."""
        term = self._term(lexeme_state)
        if not isinstance(term, Lexeme) or term.within is None:
            return None
        return self._intern(term.within), term.apart

    def join(self, lexeme_state: int, continuation: int) -> int:
        """The state of ``cat(lexeme, continuation)``, numbered now and its term built
        on first use, like a union's: its row is taken apart at the pair (``lexeme_split``)
        and whether it accepts is read off the two (``accepts``), so the term of the
        state a step takes was built for nothing (3-4% of a cold walk's time). A
        join equal to a state numbered otherwise gets a state of its own; both read
        the same language."""
        key = lexeme_state, continuation
        state = self._joins.get(key)
        if state is None:
            state = self._joins[key] = self._number_state(None)
            self._pending_joins[state] = key
            # What ``split_lexeme`` finds at a head lexeme; a head that may end (a
            # number) is read on as one too, though ``cat`` flattens it into its rest.
            self._splits[state] = key
        return state

    def inside(self, lexeme_state: int, continuation: int) -> tuple[int, int] | None:
        """A lexeme then ``continuation``, taken apart at the lexeme inside (when the lexeme
        is headed by one, ``fsm.decompose.nested_split``): the inner lexeme's
        state, then a state for the rest of the outer one followed by ``continuation``;
        None for every other lexeme (a key's prefix or a count, numbered without its
        term, is never nested). The row walker then takes the inner lexeme's walk, which
        the vocabulary shares, where it walked each state of the outer one whole: a new
        state for each string in each context of an arbitrary value."""
        found = nested_split(self._terms[lexeme_state], self._split_memo)
        if found is None:
            return None
        key = lexeme_state, continuation
        pair = self._inside_pairs.get(key)
        if pair is None:
            after = cat(found[1], self._term(continuation))
            rest = self.exit_state if after is EPS else self._intern(after)
            pair = self._inside_pairs[key] = self._intern(found[0]), rest
        return pair

    def counting(self, lexeme_state: int) -> tuple[Hashable, int, int | None] | None:
        """``(plain, lo, hi)`` when the lexeme is ``unit{lo,hi} close`` (``fsm.counted``):
        ``plain`` is ``unit* close``, as a key."""
        counted = counted_form(self._term(lexeme_state))
        if counted is None:
            return None
        return self._plain_key(counted), counted.lo, counted.hi

    def _plain_key(self, form: Counted) -> Term:
        """``unit* close`` of ``form``, the key of its counted walks: built once per unit
        and closing, as every row of a bounded string asks."""
        plain = self._plains.get((form.unit, form.close))
        if plain is None:
            plain = self._plains[form.unit, form.close] = form.plain
        return plain

    def counted_after_prefix(self, lexeme_state: int, continuation: int) -> tuple[int, int] | None:
        """None: over object terms a bounded string behind a prefix is walked whole
        (``compile_index`` builds JSON schemas, where such strings come from, as rows:
        ``StoreAutomaton.counted_after_prefix``)."""
        return None

    def counted_meet(self, lexeme_state: int) -> tuple[int, int] | None:
        """None: over object terms a count met with a pattern is walked state by state
        (``compile_index`` builds JSON schemas, where such strings come from, as rows:
        ``StoreAutomaton.counted_meet``)."""
        return None

    def meet(self, first: int, second: int) -> int | None:
        """None: no lexeme is taken apart as a meet here (``counted_meet``)."""
        return None

    def unit_automaton(self, plain: Hashable) -> tuple[np.ndarray, tuple[Hashable, ...]] | None:
        """The automaton of a plain repetition from ``counting`` with its partial units
        (``fsm.counted.unit_automaton``), or None when its units cannot be counted."""
        counted = plain_form(plain) if isinstance(plain, Term) else None
        units = None if counted is None else unit_automaton(counted)
        return None if units is None else (units.table, units.partials)

    def counted_states(
        self, lexeme_state: int, partials: tuple[Hashable, ...], ends: list[tuple[int, int]]
    ) -> list[int]:
        """The states of the counted lexeme ``lexeme_state`` after each ``(kind,
        units)``: ``units`` units begun, the last one still ``partials[kind]``
        (``EPS``: complete). Memoised per unit and closing by the bounds left, keyed
        by integers: a string's next rows end in the same states, one count further,
        and a row asks for tens of them. Numbered without their terms, like joins: a
        step takes one of them; building the others' was most of a bounded string's
        first rows. A state so numbered may repeat one a byte walk numbered; both
        read the same."""
        counted = counted_form(self._term(lexeme_state))
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
            if state is None:  # numbered now, its term built on first use
                partial = partials[kind]
                assert isinstance(partial, Term)
                state = family[key] = self._number_state(None)
                self._pending_counted[state] = counted, partial, units
            found.append(state)
        return found

    def plain_key(self, lexeme_state: int) -> Hashable | None:
        """``unit* close`` as ``counting`` keys it, when the lexeme is that term."""
        plain = plain_form(self._term(lexeme_state))
        return None if plain is None else self._plain_key(plain)

    def plain_states(self, lexeme_state: int, partials: tuple[Hashable, ...]) -> list[int]:
        """Each partial unit's state of the plain lexeme (``Counted.after`` with no
        unit counted: ``partial unit* close``)."""
        plain = plain_form(self._term(lexeme_state))
        assert plain is not None
        states = []
        for partial in partials:
            assert isinstance(partial, Term)
            states.append(self._intern(plain.after(partial, 0)))
        return states

    def lexeme_key(self, lexeme_state: int) -> Hashable:
        """The lexeme's term (terms compare by structure, across automata)."""
        return self._term(lexeme_state)

    def lexeme_state(self, key: Hashable) -> int:
        """The state of a term that ``lexeme_key`` gave."""
        assert isinstance(key, Term)
        return self._intern(key)

    def head_split(self, state: int) -> tuple[int, int] | None:
        """``(first item, the rest)`` of a concatenation state (seen through a lexeme,
        which accepts what its item does, and a thunk's body)."""
        term = self._term(state)
        for _ in range(8):  # a lexeme's item, a thunk's body, not deeper
            if isinstance(term, Lexeme):
                term = term.item
            elif isinstance(term, Thunk):
                term = term.body()
            else:
                break
        if not isinstance(term, Cat):
            return None
        return self._intern(term.items[0]), self._intern(term.rest())

    def alternatives(self, state: int) -> tuple[int, ...] | None:
        """The items of a union state (a thunk's union body too)."""
        terms = branch_terms(self._term(state), require_lexeme=False)
        return None if terms is None else tuple(self._intern(term) for term in terms)

    def branches(self, state: int) -> tuple[int, ...] | None:
        """The branches of a union state when one starts with a lexeme
        (``fsm.decompose.branch_terms``)."""
        if state in self._branches:
            return self._branches[state]
        terms = branch_terms(self._term(state), memo=self._split_memo)
        found = None if terms is None else tuple(self._intern(term) for term in terms)
        self._branches[state] = found
        return found

    def branch_parts(self, state: int) -> tuple[int | tuple[int, int], ...] | None:
        branches = self.branches(state)
        if branches is None:
            return None
        splits = [self.lexeme_split(branch) for branch in branches]
        return tuple(
            branch if split is None else split
            for branch, split in zip(branches, splits, strict=True)
        )

    def branch_openings(self, state: int) -> tuple[int, ...] | None:
        branches = self.branches(state)
        if branches is None:
            return None
        return tuple(self._split_memo.first(self._term(branch)) for branch in branches)

    def union(self, items: tuple[int | tuple[int, int], ...]) -> int:
        """The state of ``alt`` over the items (a state, or a lexeme and its
        continuation, concatenated here without numbering the concatenation).

        The state is numbered now and its term built on first use: a row over an
        object's keys hands out one union per key prefix its tokens spell, and the
        text takes one of them (in a profile of MaskBench schemas, 10% of the union
        states were ever asked for a row). Two item tuples whose unions are equal
        terms may get two states; both read the same language."""
        state = self._unions.get(items)
        if state is None:
            state = self._unions[items] = self._number_state(None)
            self._pending_unions[state] = items
            if all(not isinstance(item, int) for item in items):
                self._union_joins[state] = cast(tuple[tuple[int, int], ...], items)
        return state

    def union_joins(self, state: int) -> tuple[tuple[int, int], ...] | None:
        """The pairs of a ``union`` of joins only (None for any other state). Kept after
        the term is built: a state is taken apart the same way whenever its row is
        walked."""
        return self._union_joins.get(state)

    def _term(self, state: int) -> Term:
        """A state's term, building a pending union's, join's, prefix's or counted
        state's on first use."""
        term = self._terms[state]
        if term is not None:
            return term
        items = self._pending_unions.get(state)  # a pending state is in one of the four
        pair = self._pending_joins.get(state)
        prefix = self._pending_prefixes.get(state)
        counted = self._pending_counted.get(state)
        if pair is not None:
            term = cat(self._term(pair[0]), self._term(pair[1]))
        elif items is not None:
            term = alt(
                *(
                    self._term(item)
                    if isinstance(item, int)
                    else cat(self._term(item[0]), self._term(item[1]))
                    for item in items
                )
            )
        elif prefix is not None:
            term = self._term(prefix[0])
            for byte in prefix[1]:
                term = derivative(term, byte)
        elif counted is not None:
            form, partial, units = counted
            term = form.after(partial, units)
        else:  # another thread built it meanwhile
            return self._terms[state]  # type: ignore[return-value]
        self._ids.setdefault(term, state)
        self._terms[state] = term
        self._pending_unions.pop(state, None)
        self._pending_joins.pop(state, None)
        self._pending_prefixes.pop(state, None)
        self._pending_counted.pop(state, None)
        return term

    def stated_completion(self, state: int) -> bytes | None:
        """The shortest completion a thunk states for itself (``thunk(shortest=...)``)."""
        term = self._term(state)
        if isinstance(term, Thunk) and term.shortest is not None:
            return term.shortest()
        return None

    def accepts(self, state: int) -> bool:
        """Whether the state's term is nullable; for a union of joins, whether one of
        them is (its lexeme state and its continuation both are), without building the
        union's term."""
        joins = self._union_joins.get(state)
        if joins is not None:
            return any(self.accepts(head) and self.accepts(rest) for head, rest in joins)
        if state in self._literal_rests:  # a proper prefix of a lexeme's one string
            return False
        pair = self._pending_joins.get(state)
        if pair is not None:
            return self.accepts(pair[0]) and self.accepts(pair[1])
        return nullable(self._term(state))

    def _intern(self, term: Term) -> int:
        state = self._ids.get(term)
        if state is None:
            state = self._ids[term] = self._number_state(term)
        return state

    def _number_state(self, term: Term | None) -> int:
        """A new state for ``term`` (None: a pending union's, see ``union``)."""
        if len(self._terms) >= self._max_states:
            raise ConstraintTooLarge(
                f"the constraint needs more than {self._max_states} automaton states"
            )
        self._terms.append(term)
        return len(self._terms) - 1

    def is_live(self, term: Term) -> bool:
        """Whether some byte string leads from ``term`` to acceptance.

        Syntax answers for plain regular terms. Otherwise the term is taken apart
        (a concatenation is live when every part is, a union when one part is, a
        repetition when it may repeat zero times or its item is live) and only the
        intersections and complements left are searched: a bounded breadth-first
        search over their derivatives, where an exhausted budget counts as live (the
        search only prunes, it never rejects what it could not disprove). A term the
        search found live keeps the string it accepts (``_accepted``): the derivative
        by that string's first byte is live without a search (``expand``, ``step``),
        which covers the next state along the text being read.
        """
        if term is EMPTY:
            return False
        if not term.needs_liveness_check:
            return True
        known = self._live.get(term)
        if known is None:
            known = self._decompose(term)
            self._live[term] = known
        return known

    def _handed_down(self, term: Term) -> tuple[int | None, bytes]:
        """The class (its representative byte) of the first byte of the string ``term``
        keeps, and the rest of it: the derivative by that class accepts the rest.
        ``(None, b"")`` when ``term`` keeps no non-empty string."""
        accepted = self._accepted.get(term)
        if not accepted:
            return None, b""
        return representatives(term)[accepted[0]], accepted[1:]

    def _known_live(self, term: Term, accepted: bytes) -> None:
        """Records that ``term`` accepts ``accepted`` (so it is live). Kept for terms
        that need no check too: a thunk's derivatives may (an object body's)."""
        if term not in self._accepted:
            self._accepted[term] = accepted
            if term.needs_liveness_check:
                self._live[term] = True

    def _decompose(self, term: Term) -> bool:
        if isinstance(term, Cat):
            return all(self.is_live(item) for item in term.items)
        if isinstance(term, Alt):
            return any(self.is_live(item) for item in term.items)
        if isinstance(term, Repeat):
            return term.lo == 0 or self.is_live(term.item)
        if isinstance(term, Lexeme):
            return self.is_live(term.item)
        return self._search_acceptance(term)

    def _search_acceptance(self, start: Term) -> bool:
        """Breadth-first over derivatives; a search still open after ``_QUICK_SEARCH``
        terms (at once for an intersection with a checked leaf, ``_checks_text``) looks
        for a witness (``fsm.witness``: far from acceptance, as an object
        that must still be closed, breadth-first search would spend its whole budget
        and prove nothing), then goes on to the full budget. The string found is
        kept in ``_accepted`` for ``start`` and the terms on its way."""
        self.searches += 1
        paths = {start: b""}
        queue = deque([start])
        found = None if _checks_text(start) else self._breadth_first(paths, queue, _QUICK_SEARCH)
        if found is None:
            text = witness(start, shared=self._witnesses)
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
        self, paths: dict[Term, bytes], queue: deque[Term], budget: int
    ) -> bytes | bool | None:
        """Goes on with a search over the terms met (``paths``: the bytes that lead to
        each): a string the start accepts, True (a live term met, no string known),
        False (none left), or None once more than ``budget`` terms are met. A term
        is looked at when met, so the search stops at the first live one without
        deriving its siblings."""
        if len(paths) == 1:  # a new search: the start itself may be live
            found = self._met_live(queue[0], b"")
            if found is not None:
                return found
        while queue:
            if len(paths) > budget:
                return None
            term = queue.popleft()
            for byte in class_bytes(term):
                target = derivative(term, byte)
                if target is EMPTY or target in paths or self._live.get(target) is False:
                    continue
                path = paths[term] + bytes((byte,))
                found = self._met_live(target, path)
                if found is not None:
                    return found
                paths[target] = path
                queue.append(target)
        return False

    def _met_live(self, term: Term, path: bytes) -> bytes | bool | None:
        """What a search returns on meeting ``term`` (after ``path``) when it is
        known to be live: a string, or True without one; None otherwise."""
        if nullable(term):
            return path
        if self._live.get(term):
            rest = self._accepted.get(term)
            return True if rest is None else path + rest
        return None


def _checks_text(term: Term) -> bool:
    """Whether ``term`` is an intersection with a checked leaf (``format: regex``'s
    encoded text and its pattern check, a bounded number beside another condition):
    a witness starts from its checker's guessed endings, one check each, where each
    derivative of a breadth-first search checks a prefix and the search meets a few
    hundred."""
    return isinstance(term, And) and any(isinstance(item, Checked) for item in term.items)
