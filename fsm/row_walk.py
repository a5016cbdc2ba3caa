"""One token row: every token readable from a state, and where it leads.

The row of a state is a walk of the vocabulary trie (``fsm.trie_walk.walk_trie``) over
the automaton's byte table. Below a trie node whose state is not expanded yet the walk
stops; the state is expanded and the walk goes on below that node alone.

A ``DecomposableAutomaton`` makes most of that work shareable:

* **Lexemes.** When a state is "lexeme ``L``, then ``K``", a token is read inside ``L``
  the same way whatever ``K`` is, so the walk goes over ``L``'s own states (the table
  holds them too) and stops at the nodes where ``L`` ends (``exit_state``). A token that
  ends inside ``L`` in lexeme state ``L'`` leads to "``L'``, then ``K``" (``join``);
  one that ends exactly where ``L`` does leads to ``K``; below the exit nodes the walk
  goes on from ``K``. The walk of a lexeme state from the trie's root is kept, so a
  JSON string's tokens are walked once per index, not once per place it appears, and
  the states inside strings are not expanded once per continuation.
* **Unions.** A state that is a union of branches, some of them lexemes (an object's
  next key: each named key, or any other key), is walked branch by branch; a token
  that several branches read leads to the union of where each leads (``union``).

Rows come out the same as a plain walk's, up to state numbering (the tests compare
them by walking both). Targets are numbered lazily: during a walk a token inside a
lexeme leads to a *deferred* join (a negative code standing for "lexeme state, then
``K``"), and only the targets a row keeps are numbered at its end. A join that only
feeds a union (an object key that both a named key and "any other key" read) is never
numbered, which keeps the automaton from filling with states no row hands out.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fsm.automaton import DecomposableAutomaton
from fsm.byte_table import ByteTable
from fsm.lexeme_cache import LexemeWalkCache, SharedLexemeWalk
from fsm.trie import TokenTrie
from fsm.trie_walk import walk_trie

NO_STOP = -1
ROOT = np.zeros(1, np.int32)
ROOT.flags.writeable = False
_NONE = np.zeros(0, np.int32)

Found = tuple[np.ndarray, np.ndarray]
"""Tokens and the target each leads to, aligned: a state, or a deferred join's code."""


@dataclass(frozen=True)
class _LexemeWalk:
    """Tokens read inside a lexeme: their lexeme end states are ``ends[inverse]``
    (``exit_state`` where the token ends with the lexeme); ``exits``: trie nodes with
    children where the lexeme ends (the continuation walks below them)."""

    tokens: np.ndarray
    inverse: np.ndarray
    ends: np.ndarray
    exits: np.ndarray


class RowWalker:
    """Builds the token walks of states over ``table`` and ``trie``, taking states
    apart through ``parts`` when given (see the module docstring)."""

    def __init__(
        self,
        table: ByteTable,
        trie: TokenTrie,
        vocab_size: int,
        parts: DecomposableAutomaton | None,
        shared: LexemeWalkCache | None = None,
    ) -> None:
        self.table = table
        self.trie = trie
        self.vocab_size = vocab_size
        self.parts = parts
        self.shared = shared
        self._lexeme_roots: dict[int, _LexemeWalk] = {}
        self._deferred: dict[tuple[int, int], int] = {}  # of the walk under way
        self._pairs: list[tuple[int, int]] = []  # the same, by code

    def walk(self, state: int) -> Found:
        """Every non-end token read from ``state`` and the state it leads to (the
        states discovered in ``table``)."""
        self._deferred, self._pairs = {}, []
        tokens, targets = self._below(ROOT, state)
        if self.parts is None:  # every end is a successor of an expanded state: known
            return tokens, targets
        ends = self._number(targets)
        self.table.discover(ends)
        return tokens, ends

    # ------------------------------------------------------------------ parts

    def _below(self, nodes: np.ndarray, state: int) -> Found:
        """Tokens strictly below ``nodes`` (disjoint subtrees), entered in ``state``."""
        return self._below_each(nodes, np.full(len(nodes), state, np.int32))

    def _below_each(self, nodes: np.ndarray, states: np.ndarray) -> Found:
        """Tokens strictly below each ``nodes[i]`` entered in ``states[i]``: the states
        taken apart are walked as lexemes or branches, the others expanded and walked
        together in one kernel call (then again below where that call stopped)."""
        found: list[Found] = []
        plain = np.ones(len(nodes), np.bool_)
        for state in np.unique(states).tolist():
            taken = self._taken_apart(nodes, states, state)
            if taken is not None:
                found.append(taken)
                plain &= states != state
            elif not self.table.is_expanded(state):
                self.table.expand(state)
        if plain.any():
            tokens, ends, stopped, stopped_states = self._walk(nodes[plain], states[plain], NO_STOP)
            found.append((tokens, ends))
            if len(stopped):
                found.append(self._below_each(stopped, stopped_states))
        return _concat(found) if found else (_NONE, _NONE)

    def _taken_apart(self, nodes: np.ndarray, states: np.ndarray, state: int) -> Found | None:
        """The walk below the nodes entered in ``state`` when ``state`` is a lexeme then
        a continuation, or a union (None otherwise)."""
        if self.parts is None:
            return None
        split = self.parts.lexeme_split(state)
        branches = None if split is not None else self.parts.branches(state)
        if split is None and branches is None:
            return None
        entered = states == state
        below = nodes if entered.all() else nodes[entered]  # ROOT stays ROOT (cached walks)
        if split is not None:
            return self._through_lexeme(below, *split)
        return self._union([self._below(below, branch) for branch in branches])

    def _walk(self, nodes: np.ndarray, states: np.ndarray, stop: int) -> tuple[np.ndarray, ...]:
        trie = self.trie
        return walk_trie(  # type: ignore[no-any-return]
            self.table.table,
            self.table.expanded,
            nodes,
            states,
            trie.labels,
            trie.depths,
            trie.ends,
            trie.token_starts,
            trie.token_ids,
            stop,
            trie.max_depth,
        )

    def _through_lexeme(self, nodes: np.ndarray, lexeme: int, rest: int) -> Found:
        """Tokens below ``nodes`` from "``lexeme``, then ``rest``"."""
        assert self.parts is not None
        if nodes is ROOT:
            walked = self._lexeme_roots.get(lexeme)
            if walked is None:
                walked = self._lexeme_roots[lexeme] = self._root_walk(lexeme)
        else:
            walked = self._lexeme_walk(nodes, lexeme)
        exit_state = self.parts.exit_state
        targets = np.asarray(
            [rest if end == exit_state else self._defer(end, rest) for end in walked.ends.tolist()],
            np.int32,
        )
        found = [(walked.tokens, targets[walked.inverse])]
        if len(walked.exits):
            found.append(self._below(walked.exits, rest))
        return _concat(found)

    def _root_walk(self, lexeme: int) -> _LexemeWalk:
        """A lexeme's walk from the root, from the vocabulary's cache when another index
        walked an equal lexeme (its end states renumbered for this automaton)."""
        parts, shared = self.parts, self.shared
        assert parts is not None
        if shared is None:
            return self._lexeme_walk(ROOT, lexeme)
        key = parts.lexeme_key(lexeme)
        known = shared.get(key)
        if known is not None:
            ends = np.asarray([parts.lexeme_state(end) for end in known.end_keys], np.int32)
            return _LexemeWalk(known.tokens, known.inverse, ends, known.exits)
        walked = self._lexeme_walk(ROOT, lexeme)
        end_keys = tuple(parts.lexeme_key(end) for end in walked.ends.tolist())
        shared.put(key, SharedLexemeWalk(walked.tokens, walked.inverse, end_keys, walked.exits))
        return walked

    def _lexeme_walk(self, nodes: np.ndarray, lexeme: int) -> _LexemeWalk:
        """Walk from ``lexeme`` below ``nodes`` until each token ends or the lexeme does."""
        assert self.parts is not None
        exit_state = self.parts.exit_state
        token_parts, end_parts, exit_parts = [], [], []
        todo = [(nodes, lexeme)]
        while todo:
            below, state = todo.pop()
            if not self.table.is_expanded(state):
                self.table.expand(state)
            tokens, ends, stopped, stopped_states = self._walk(
                below, np.full(len(below), state, np.int32), exit_state
            )
            token_parts.append(tokens)
            end_parts.append(ends)
            exiting = stopped_states == exit_state
            exit_parts.append(stopped[exiting])
            stopped, stopped_states = stopped[~exiting], stopped_states[~exiting]
            if len(stopped):
                waiting, which = np.unique(stopped_states, return_inverse=True)
                todo.extend(
                    (stopped[which == position], waiting_state)
                    for position, waiting_state in enumerate(waiting.tolist())
                )
        ends, inverse = _distinct(np.concatenate(end_parts))
        return _LexemeWalk(np.concatenate(token_parts), inverse, ends, np.concatenate(exit_parts))

    def _union(self, found: list[Found]) -> Found:
        """Branch walks merged: a token read by several branches leads to the union of
        their targets (one union state per distinct combination)."""
        found = [part for part in found if len(part[0])]
        if len(found) <= 1:
            return found[0] if found else (_NONE, _NONE)
        tokens, ends = _concat(found)
        shared = np.bincount(tokens, minlength=self.vocab_size)[tokens] > 1
        if not shared.any():
            return tokens, ends
        by_token = np.lexsort((ends[shared], tokens[shared]))
        shared_tokens, shared_ends = tokens[shared][by_token], ends[shared][by_token]
        starts = np.flatnonzero(np.r_[True, shared_tokens[1:] != shared_tokens[:-1]])
        groups = np.split(shared_ends, starts[1:])
        combined: dict[tuple[int, ...], int] = {}
        targets = np.empty(len(groups), np.int32)
        for i, group in enumerate(groups):
            key = tuple(dict.fromkeys(group.tolist()))
            target = combined.get(key)
            if target is None:
                target = combined[key] = self._union_of(key)
            targets[i] = target
        return (
            np.concatenate([tokens[~shared], shared_tokens[starts]]),
            np.concatenate([ends[~shared], targets]),
        )


    def _defer(self, lexeme_end: int, rest: int) -> int:
        """The code of "``lexeme_end``, then ``rest``" for this walk (-2, -3, ...)."""
        key = lexeme_end, rest
        code = self._deferred.get(key)
        if code is None:
            code = self._deferred[key] = -2 - len(self._pairs)
            self._pairs.append(key)
        return code

    def _union_of(self, targets: tuple[int, ...]) -> int:
        """One target for a token several branches read (itself when they agree)."""
        if len(targets) == 1:
            return targets[0]
        assert self.parts is not None
        pairs = self._pairs
        items = tuple(t if t >= 0 else pairs[-2 - t] for t in targets)
        return self.parts.union(items)

    def _number(self, targets: np.ndarray) -> np.ndarray:
        """Targets with every deferred join numbered (``join``), once per pair."""
        deferred = targets < 0
        if not deferred.any():
            return targets
        assert self.parts is not None
        codes, inverse = _distinct(-2 - targets[deferred])
        pairs = self._pairs
        states = np.asarray([self.parts.join(*pairs[c]) for c in codes.tolist()], np.int32)
        numbered = targets.copy()
        numbered[deferred] = states[inverse]
        return numbered


def _concat(found: list[Found]) -> Found:
    if len(found) == 1:
        return found[0]
    return np.concatenate([t for t, _ in found]), np.concatenate([e for _, e in found])


def _distinct(states: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(distinct, inverse)`` with ``distinct[inverse] == states``: a dense lookup over
    state numbers, linear where ``np.unique`` would sort a vocabulary-sized array."""
    if not len(states):
        return states, states
    present = np.zeros(int(states.max()) + 1, np.bool_)
    present[states] = True
    distinct = np.flatnonzero(present).astype(np.int32)
    position = np.zeros(len(present), np.int32)
    position[distinct] = np.arange(len(distinct), dtype=np.int32)
    return distinct, position[states]
