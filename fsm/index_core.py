"""The compiled body of ``fsm.TokenIndex``: which tokens each automaton state allows,
and where each one leads.

States are the automaton's own state numbers. The byte-level transition table is
copied out of the automaton lazily (``fsm.byte_table``: ``expand`` is called once per
state, the first time a walk needs it), and the token row of a state is built by a
trie walk (``fsm.row_walk``) the first time the state is asked about, then memoised:
its packed bitmask at once, the state after a token when that token is taken
(``fsm.token_row``), and the sorted ids with their successors when asked for
(``allowed_tokens``, ``next_states``). ``build_all`` does everything up front instead.

Bitmask layout: ``int32[ceil(size / 32)]``; token ``t`` is allowed iff bit ``t % 32``
(least significant first) of word ``t // 32`` is set. On a device, test it with
``(mask[t >> 5] >> (t & 31)) & 1``.

Device-side decoding: ``bitmask_table()`` is every built row stacked and
``rows_of(states)`` (or ``state_rows()`` for every state) gives each state's row (-1 if
not built), so a decode loop gathers ``table[rows]``. Rows are only appended, so a table
copied earlier stays valid for the rows it holds; states met later need their rows
built and ``bitmask_table(start)`` copies only the rows from ``start`` on.

A state is accepted once the index has met it: the initial state, or any state
returned by ``next_state``/``next_states``/``step_bytes``; other numbers raise
``ValueError``.

Threads: the index grows as it is queried, so everything that expands states or builds
rows (and the automaton, which only the index drives) runs under the index's lock.
Indexes whose automata share a term store (``fsm.schema_rows``) are given that store's
lock, so they never touch it at once. A row already built is read without it: rows are
published (``_row_of``) only once complete and never change, so the hot path of a
decode step takes no lock.
"""

from __future__ import annotations

import operator
import threading
from collections import deque
from collections.abc import Callable, Iterable
from typing import SupportsIndex

import numpy as np
from mypy_extensions import mypyc_attr

from fsm.automaton import DEAD, ByteAutomaton, as_decomposable
from fsm.byte_table import ByteTable
from fsm.completion import OutOfBudget, shortest_completion
from fsm.decomposable import DecomposableBase
from fsm.errors import FsmError
from fsm.limits import DEFAULT_MAX_ROW_STATES, DEFAULT_MAX_STATES
from fsm.row_walk import RowWalker, distinct_with_inverse
from fsm.token_row import TokenRow, mask_tokens
from fsm.vocabulary import Vocabulary

COMPLETION_BUDGET = 256
"""States a shortest-completion search may meet before it answers None."""

MAX_COMPLETION_DEPTH = 64
"""Nesting (lexeme then rest, union then branch) a completion by parts may follow
before the plain search takes over (a schema with hundreds of keys nests that deep)."""

MAX_TAKEN = 1 << 14
"""Transitions ``next_state`` remembers (then it forgets them all and starts again): a
warm decode step is a dict lookup, not a binary search over the row. Keyed by
``state * vocabulary size + token`` (one integer: a pair's tuple cost a tuple and two
boxed integers a lookup) and read only for Python ints (numpy's go through
``operator.index`` first) with the token in range, which makes the key name one pair;
only pairs of a known state are stored."""

_NOT_SEARCHED = object()  # memo sentinel


def _read_only(array: np.ndarray) -> np.ndarray:
    view = array.view()
    view.flags.writeable = False
    return view


@mypyc_attr(allow_interpreted_subclasses=True)
class IndexCore:
    """Everything ``fsm.TokenIndex`` does (its docstring is the API), compiled
    (``fsm.native``). ``TokenIndex`` is a Python class over it: a compiled class takes
    no weak references (device mirrors key on them, ``backends.masks``) and no patched
    methods. Allowing the subclass costs a little: a method making one call on ``self``
    took 383 ns through it, 291 ns on a compiled class that allows none, 574 ns
    interpreted (a scratch module, fifty-second session)."""

    def __init__(
        self,
        automaton: ByteAutomaton,
        vocabulary: Vocabulary,
        *,
        max_states: int = DEFAULT_MAX_STATES,
        eager: bool = False,
        progress: Callable[[int, int], None] | None = None,
        share_lexemes: bool = True,
        max_row_states: int = DEFAULT_MAX_ROW_STATES,
        lock: threading.RLock | None = None,
    ) -> None:
        self.automaton = automaton
        self.vocabulary = vocabulary
        self.max_states = int(max_states)
        self.max_row_states = int(max_row_states)
        self._eos = np.asarray(sorted(vocabulary.eos_ids), np.int32)
        self._no_eos = self._eos[:0]  # a row that is not final: made once, not per row
        self._words = (vocabulary.size + 31) // 32
        self._bytes = ByteTable(automaton, self.max_states)
        self._parts = as_decomposable(automaton) if share_lexemes else None
        # The walker calls its parts' methods tens of times a row: typed as a compiled
        # base class, compiled code calls them natively; through the protocol every call
        # was a Python call (2.5-5% of a cold walk, ``docs/design.md``).
        apart = self._parts if isinstance(self._parts, DecomposableBase) else None
        shared = vocabulary.lexeme_walks if apart is not None else None
        self._walker = RowWalker(self._bytes, vocabulary.trie, vocabulary.size, apart, shared)
        # Token rows, in build order; their sorted tokens and targets when asked.
        self._row_of: dict[int, int] = {}
        self._rows: list[TokenRow] = []
        self._allowed: dict[int, np.ndarray] = {}
        self._next: dict[int, np.ndarray] = {}  # read-only views of merged rows' targets
        self._targets: dict[int, np.ndarray] = {}  # the same, writable: joins numbered in place
        self._joins: dict[int, list[tuple[int, int]]] = {}  # row -> its deferred joins
        self._masks: list[np.ndarray] = []  # each row's packed mask, read-only
        self._taken: dict[int, int] = {}  # next_state's answers (``MAX_TAKEN``)
        self._size = vocabulary.size  # ``next_state``'s warm path reads it natively
        self._completions: dict[int, bytes | None] = {}
        self._lengths_after: dict[int, np.ndarray] = {}
        self._lock = threading.RLock() if lock is None else lock
        self.initial_state = int(automaton.initial)
        self._bytes.discover_state(self.initial_state)
        if eager:
            self.build_all(progress)

    # ----------------------------------------------------------------- queries

    @property
    def num_states(self) -> int:
        """States discovered so far (all reachable ones after ``build_all``)."""
        return self._bytes.num_states

    @property
    def num_rows_built(self) -> int:
        return len(self._rows)

    @property
    def num_states_expanded(self) -> int:
        """States whose successor on every byte was derived so far: the part of a cold
        walk's work that the vocabulary's shared lexeme walks do not save."""
        return self._bytes.num_rows

    def allowed_tokens(self, state: SupportsIndex) -> np.ndarray:
        """Sorted int32 ids allowed after ``state`` (end ids exactly when it is final)."""
        state = operator.index(state)
        row = self._row(state)
        allowed = self._allowed.get(row)
        if allowed is None:  # read off the mask: equal values, so a race only repeats it
            allowed = self._allowed.setdefault(row, _read_only(mask_tokens(self._masks[row])))
        return allowed

    def next_states(self, state: SupportsIndex) -> np.ndarray:
        """Successor state of each id of ``allowed_tokens(state)``, aligned with it."""
        state = operator.index(state)
        row = self._row(state)
        if row not in self._next or row in self._joins:
            with self._lock:
                if row not in self._next:
                    self._merge(row)
                self._number_joins(row)
        return self._next[row]

    def next_state(self, state: SupportsIndex, token: SupportsIndex) -> int:
        """State after ``token``, or -1 if it is not allowed (an end id keeps the state)."""
        size = self._size
        if type(state) is int and type(token) is int and 0 <= token < size:
            known = self._taken.get(state * size + token)  # a warm step: one dict lookup
            if known is not None:
                return known
        state, token = operator.index(state), operator.index(token)
        row = self._row(state)  # an unknown state raises, whatever the token
        if not 0 <= token < size:
            return DEAD
        targets = self._next.get(row)
        if targets is None:  # looked up in the row's blocks, its union or join numbered
            lock = self._lock  # taken as ``_row`` takes it
            lock.acquire()
            try:
                after = self._walker.target(self._rows[row], token)
            finally:
                lock.release()
        else:
            allowed = self._allowed[row]
            i = int(allowed.searchsorted(np.int32(token)))
            after = int(targets[i]) if i < len(allowed) and allowed[i] == token else DEAD
            if after < DEAD:  # a deferred join (fsm.row_walk): numbered now that it is taken
                with self._lock:
                    after = self._number_join(row, i)
        if len(self._taken) >= MAX_TAKEN:
            self._taken.clear()
        self._taken[state * size + token] = after
        return after

    def is_final(self, state: SupportsIndex) -> bool:
        """Whether the text read up to ``state`` is a complete match."""
        state = operator.index(state)
        with self._lock:
            self._check_state(state)
            return self._accepts(state)

    def bitmask(self, state: SupportsIndex) -> np.ndarray:
        """Read-only packed int32 mask of ``allowed_tokens(state)`` (layout: module doc)."""
        row = self._row_of.get(state) if type(state) is int else None
        if row is None:
            row = self._row(operator.index(state))
        return self._masks[row]

    def fill_bitmask(self, state: SupportsIndex, out: np.ndarray) -> None:
        """Writes ``bitmask(state)`` into ``out``, as other libraries' ``fill`` calls do
        (a decode loop's preallocated, pinned or batched buffer: a row of a batch, another
        integer dtype). Numpy's assignment: for a C-contiguous int32 buffer, a plain copy
        that costs about 0.4 µs on 1,536 words, where a memoryview of the buffer took
        about 1.1 µs (its buffer export and format checks) and ``np.copyto`` 0.6 µs."""
        # bitmask's hit inlined: the call costs ~80 ns of a ~1.8 µs warm step (measured)
        row = self._row_of.get(state) if type(state) is int else None
        out[...] = self._masks[row] if row is not None else self.bitmask(state)

    def step_bytes(self, state: SupportsIndex, data: bytes) -> int:
        """State after reading ``data`` byte by byte from ``state``, or -1 if it dies."""
        state = operator.index(state)
        with self._lock:
            self._check_state(state)
            for byte in data:
                state = int(self._bytes.row(state)[byte])
                if state == DEAD:
                    return DEAD
            return state

    def forced_bytes(self, state: SupportsIndex) -> bytes:
        """The longest byte string forced from ``state``: while the state is not final
        and exactly one byte keeps it alive, take that byte (for jump-forward)."""
        state = operator.index(state)
        with self._lock:
            self._check_state(state)
            forced = bytearray()
            seen = {state}
            while not self._bytes.is_final(state):
                live = np.flatnonzero(self._bytes.row(state) != DEAD)
                if len(live) != 1:
                    break
                forced.append(int(live[0]))
                state = self._bytes.successor(state, int(live[0]))
                if state in seen:
                    raise FsmError("automaton has a forced cycle with no final state")
                seen.add(state)
            return bytes(forced)

    def shortest_completion(self, state: SupportsIndex) -> bytes | None:
        """The shortest byte string from ``state`` to a final state (among equally
        short ones, the lowest), or None when none lies within ``COMPLETION_BUDGET``
        states of it (every state of a well-formed automaton can be completed, so None
        means "too far to know cheaply"). Memoised per state, with every state on the
        path found: a suffix of a shortest lowest completion is one too. Used to close
        a span cleanly when its token budget runs out.

        A decomposable automaton's state is completed by parts: a concatenation's head's
        completion then its rest's (exact: a shortest completion of ``A B`` is a
        shortest of ``A`` then a shortest of ``B``, and the lowest such is the lowest of
        each), or the best of a union's branches (exact when every branch's search
        succeeds; otherwise the best completion found, a valid one). Parts are memoised
        too, so the suffixes a document shares are searched once."""
        state = operator.index(state)
        with self._lock:
            self._check_state(state)
            return self._completion(state, 0)

    def _completion(self, state: int, depth: int) -> bytes | None:
        known = self._completions.get(state, _NOT_SEARCHED)
        if known is not _NOT_SEARCHED:
            return known  # type: ignore[return-value]
        path = self._completion_by_parts(state, depth)
        if path is _NOT_SEARCHED:
            path = self._search_completion(state)
        self._completions[state] = path  # type: ignore[assignment]
        return path  # type: ignore[return-value]

    def _completion_by_parts(self, state: int, depth: int) -> object:
        """``state``'s completion from its parts, or ``_NOT_SEARCHED`` when it has none
        (or nests past ``MAX_COMPLETION_DEPTH``: the plain search takes over)."""
        parts = self._parts
        if parts is None or depth > MAX_COMPLETION_DEPTH:
            return _NOT_SEARCHED
        stated = parts.stated_completion(state)
        if stated is not None:
            return stated
        split = parts.lexeme_split(state)
        if split is None or split[0] == state:  # a bare lexeme's own states lead to its end
            split = parts.head_split(state)
        if split is not None and split[0] != state:
            head = self._completion(split[0], depth + 1)
            tail = None if head is None else self._completion(split[1], depth + 1)
            return None if tail is None else head + tail  # type: ignore[operator]
        branches = parts.alternatives(state)
        if branches is None:
            return _NOT_SEARCHED
        found = [self._completion(branch, depth + 1) for branch in branches]
        options = [path for path in found if path is not None]
        return min(options, key=lambda path: (len(path), path)) if options else None

    def _search_completion(self, state: int) -> bytes | None:
        """Breadth-first search from ``state`` (memoising the states on the path)."""
        try:
            accepts = None if self._parts is None else self._parts.accepts
            path = shortest_completion(self._successors, state, COMPLETION_BUDGET, accepts)
        except OutOfBudget:
            return None
        if path is not None:
            at = state
            for position, byte in enumerate(path):
                at = self._bytes.successor(at, byte)
                self._completions.setdefault(at, path[position + 1 :])
        return path

    def completion_distance(self, state: SupportsIndex) -> int | None:
        """``len(shortest_completion(state))``: the fewest bytes that end the match
        from ``state`` (None as there: too far to know cheaply)."""
        completion = self.shortest_completion(state)
        return None if completion is None else len(completion)

    def completion_lengths_after(self, state: SupportsIndex) -> np.ndarray:
        """Read-only float64 array aligned with ``allowed_tokens(state)``: the length
        of the shortest completion from where each token leads (``inf`` where too far
        to know). Memoised per state, so a decode loop near the end of its budget pays
        the searches once per state, not once per step."""
        state = operator.index(state)
        known = self._lengths_after.get(state)
        if known is not None:
            return known
        targets, where = distinct_with_inverse(self.next_states(state))
        distances = [self.completion_distance(int(target)) for target in targets.tolist()]
        lengths = np.asarray([np.inf if d is None else d for d in distances], np.float64)
        result = _read_only(lengths[where])
        with self._lock:
            return self._lengths_after.setdefault(state, result)

    def bitmask_table(self, start: int = 0) -> np.ndarray:
        """int32 [num_rows_built - start, words]: the bitmasks of the rows built from
        row ``start`` on, stacked in a new array (a device mirror uploads the rows it
        does not hold yet: ``backends.masks``)."""
        with self._lock:
            rows = self._masks[start:]
        if not rows:
            return np.zeros((0, self._words), np.int32)
        return np.stack(rows)

    def rows_of(self, states: Iterable[SupportsIndex]) -> np.ndarray:
        """int32: the row of ``bitmask_table()`` of each of ``states``, -1 if unbuilt (a
        decode step's few states, without ``state_rows``' pass over every state)."""
        row_of = self._row_of
        return np.fromiter((row_of.get(operator.index(s), -1) for s in states), np.int32)

    def state_rows(self) -> np.ndarray:
        """int32 [num state slots]: row of ``bitmask_table()`` per state, -1 if unbuilt."""
        with self._lock:
            rows = np.full(len(self._bytes.discovered), -1, np.int32)
            for state, row in self._row_of.items():
                rows[state] = row
            return rows

    def build_all(self, progress: Callable[[int, int], None] | None = None) -> None:
        """Expand every reachable state, then build the row of every state reachable
        from the initial one through tokens. ``progress(rows built, rows known)`` is
        called as rows are built (the known count grows while states are found)."""
        with self._lock:
            self._build_all(progress)

    def _build_all(self, progress: Callable[[int, int], None] | None) -> None:
        todo = [self.initial_state]
        is_expanded = self._bytes.is_expanded
        while todo:
            state = todo.pop()
            if is_expanded(state):
                continue
            successors = np.unique(self._bytes.expand(state)).tolist()
            todo.extend(s for s in successors if s != DEAD and not is_expanded(s))
        queue = deque([self.initial_state])
        queued = {self.initial_state}
        while queue:
            state = queue.popleft()
            for successor in np.unique(self.next_states(state)).tolist():
                if successor not in queued:
                    queued.add(successor)
                    queue.append(successor)
            if progress is not None:
                progress(len(queued) - len(queue), len(queued))

    def __repr__(self) -> str:
        return (
            f"TokenIndex(states={self.num_states}, rows={self.num_rows_built}, "
            f"vocabulary={self.vocabulary!r})"
        )

    # ---------------------------------------------------------------- building

    def _check_state(self, state: int) -> None:
        if not self._bytes.is_known(state):
            raise ValueError(f"{state} is not a state of this automaton")

    def _row(self, state: int) -> int:
        """Row of ``state``, built on first use (under the lock; a built row is read
        without it)."""
        row = self._row_of.get(state)
        if row is None:
            lock = self._lock  # a cold step's: see ``LexemeWalkCache.get``
            lock.acquire()
            try:
                row = self._row_of.get(state)
                if row is None:
                    row = self._build_row(state)
            finally:
                lock.release()
        return row

    def _build_row(self, state: int) -> int:
        self._check_state(state)
        self._bytes.budget = self.max_row_states
        final_tokens = self._eos if self._accepts(state) else self._no_eos
        try:
            walked = self._walker.walk(state, final_tokens)
        finally:
            self._bytes.budget = None
        row = len(self._rows)
        walked.mask.setflags(write=False)  # the row's own array: handed out as is
        self._masks.append(walked.mask)
        self._rows.append(walked)
        self._row_of[state] = row
        return row

    def _merge(self, row: int) -> None:
        """Sorts ``row``'s tokens with their targets (deferred joins left as codes)."""
        tokens, targets, pairs = self._walker.merged(self._rows[row])
        self._allowed.setdefault(row, _read_only(tokens))
        self._targets[row] = targets
        if len(targets) and targets.min() < DEAD:
            self._joins[row] = pairs
        self._next[row] = _read_only(targets)

    def _number_join(self, row: int, i: int) -> int:
        """The state at position ``i`` of ``row``, numbering its deferred join."""
        targets = self._targets[row]
        code = int(targets[i])
        if code >= DEAD:  # numbered meanwhile
            return code
        state = self._walker.joined(self._joins[row][-2 - code])
        targets[i] = state
        return state

    def _number_joins(self, row: int) -> None:
        """Numbers every deferred join of ``row``, so its targets are final."""
        joins = self._joins.get(row)
        if joins is None:
            return
        targets = self._targets[row]
        deferred = np.flatnonzero(targets < DEAD)
        if not len(deferred):  # each was numbered as it was taken
            del self._joins[row]
            return
        codes = targets[deferred]
        lowest = int(codes.min())
        offsets, where = distinct_with_inverse(codes - lowest)
        states = [self._walker.joined(joins[-2 - lowest - offset]) for offset in offsets.tolist()]
        targets[deferred] = np.asarray(states, np.int32)[where]
        del self._joins[row]

    def _accepts(self, state: int) -> bool:
        """Whether ``state`` is final, asked without expanding it where the automaton
        can tell (a state that row walks take apart needs no byte row)."""
        if self._parts is not None:
            return self._parts.accepts(state)
        return self._bytes.is_final(state)

    def _successors(self, state: int) -> tuple[np.ndarray, bool]:
        """``state``'s byte row and finality, expanding it on first use."""
        return self._bytes.row(state), self._bytes.is_final(state)
