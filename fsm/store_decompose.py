"""Taking a store's rows apart for shared token walks: ``fsm.decompose`` on ids.

The same rewrites as ``fsm.decompose``, with the same bounds and the same answers on
the rows that object terms convert to (``tests/fsm/test_store_decompose.py`` checks
them on the states the walks of schemas and regexes reach): ``split_lexeme_in`` finds a
row ``cat(head, rest)`` whose ``head`` is a lexeme (or separators then one, or a head
that may end: a number), ``nested_split_in`` the lexeme inside a lexeme,
``branch_terms_in`` a union state's branches, ``may_hold_lexemes_in`` whether a row may
hold a lexeme at all. ``fsm.decompose``'s docstring says why each rewrite is exact.

What differs is only what rows make different: a concatenation's items are its chain
of heads (``(head, rest)`` after ``(head, rest)``, then the last), a lexeme promised
to read ``within`` but some names is its own kind of row, and a union's members come
in id order (``branch_terms_in`` gives the same branches as the objects, in another
order). This is the first part of the decomposable automaton over rows that the walk
will read (``docs/design.md``, sixty-sixth session).
"""

from __future__ import annotations

from typing import cast

from fsm.decompose import (
    HEAD_BUDGET,
    MAX_NESTING,
    MAX_SEPARATORS,
    SEPARATOR_BUDGET,
    SEPARATOR_WHITESPACE,
)
from fsm.store_counted import counted_after_prefix_in
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
from fsm.terms import ALL_BYTES, byte_mask

Branch = int | tuple[int, int]
"""A union state's branch: a row, or a pair ``(member, rest)`` standing for the row
``cat(member, rest)``, not built (``StoreSplits.branches_unbuilt``)."""


class StoreSplits:
    """``split_lexeme_in`` and its kin over one store, with what they find kept
    (``fsm.decompose.SplitMemo``): the same separators and heads begin many states.
    Every answer is a function of the store's rows alone, so one is kept per store,
    shared by the automata over it (``fsm.schema_rows``) for as long as the store
    lives: made per automaton, it took apart again, in each index, the rows that
    other indexes over the store had taken apart already (issue 15)."""

    def __init__(self, store: TermStore) -> None:
        self.store = store
        self.splits: dict[int, tuple[int, int] | None] = {}
        self.alphabets: dict[int, int | None] = {}
        self.firsts: dict[int, int] = {}
        self.ends: dict[int, int | None] = {}
        self.nested: dict[int, tuple[int, int] | None] = {}
        self.unbuilt: dict[int, tuple[Branch, ...] | None] = {}
        self.openings: dict[int, tuple[int, ...] | None] = {}
        # lexemes met with a count (``fsm.store_counted.counted_meet_in``), closings,
        # and what meeting two lexeme rows gives (``StoreAutomaton.meet``)
        self.counted_meets: dict[int, tuple[int, int] | None] = {}
        self.closings: dict[int, int] = {}
        self.meets: dict[tuple[int, int], int | None] = {}
        self.counted_prefixes: dict[int, tuple[int, int] | None] = {}

    # ------------------------------------------------------------------ items

    def suffix(self, row: int, position: int) -> int:
        """A concatenation without its first ``position`` items (``EPS`` past them all)."""
        store = self.store
        for _ in range(position):
            if store.kinds[row] != KIND_CAT:
                return EPS
            row = store.second[row]
        return row

    def is_lexeme(self, row: int) -> bool:
        kind = self.store.kinds[row]
        return kind == KIND_LEXEME or kind == KIND_EXCEPT

    def alphabet(self, item: int) -> int | None:
        """``fsm.decompose._alphabet`` of a separator item, memoised."""
        if item not in self.alphabets:
            self.alphabets[item] = self._alphabet(item, [SEPARATOR_BUDGET])
        return self.alphabets[item]

    def first(self, row: int) -> int:
        """The bytes a string of ``row`` may start with, or more."""
        if row not in self.firsts:
            self.firsts[row] = self.store.first_bytes_over(row)
        return self.firsts[row]

    def may_end(self, item: int) -> int | None:
        """``fsm.decompose._may_end``, memoised."""
        if item not in self.ends:
            self.ends[item] = self._may_end(item)
        return self.ends[item]

    # ------------------------------------------------------------------ splits

    def split_lexeme(self, row: int) -> tuple[int, int] | None:
        """``(head, rest)`` with ``row == cat(head, rest)`` and ``head`` a lexeme or a
        head that may end, a thunk that opens in place at the head, or a thunk alone or
        at the head whose body is a concatenation, read as its body
        (``fsm.decompose.split_lexeme``), or None."""
        store = self.store
        if self.is_lexeme(row):
            return row, EPS
        if store.kinds[row] == KIND_THUNK:  # a thunk is its body
            body = store.body(row)
            return self.split_lexeme(body) if store.kinds[body] == KIND_CAT else None
        if store.kinds[row] != KIND_CAT:
            return None
        if self.is_lexeme(store.first[row]):
            return store.first[row], store.second[row]
        if row in self.splits:
            return self.splits[row]
        opened = self.opened_in_place(row)
        if opened == row:
            opened = self._head_body_spelled(row)
        split = self._split_after_separators(row) if opened == row else self.split_lexeme(opened)
        self.splits[row] = split
        return split

    def _head_body_spelled(self, row: int) -> int:
        """``fsm.decompose._head_body_spelled``: ``row`` with the thunk at its head read
        as its body (built if need be) when that body is a concatenation."""
        store = self.store
        head = store.first[row]
        if store.kinds[head] != KIND_THUNK:
            return row
        body = store.body(head)
        return store.cat(body, store.second[row]) if store.kinds[body] == KIND_CAT else row

    def opened_in_place(self, row: int) -> int:
        """``row`` with the thunk at its head read as its body when that thunk opens in
        place (``fsm.decompose.opened_in_place``), else ``row``."""
        store = self.store
        if store.kinds[row] != KIND_CAT:
            return row
        head = store.first[row]
        if store.kinds[head] != KIND_THUNK or not store.thunk_of(head).opens_in_place():
            return row
        return store.cat(store.body(head), store.second[row])

    def _split_after_separators(self, row: int) -> tuple[int, int] | None:
        store = self.store
        items = self.store.chain(row)
        used, optional = 0, False
        for position, item in enumerate(items[: MAX_SEPARATORS + 1]):
            kind = store.kinds[item]
            if position > 0 and optional and kind == KIND_THUNK:
                opened = self._opened(row, items, position)
                return None if opened is None else self.split_lexeme(opened)
            if position > 0 and (self.is_lexeme(item) or (kind == KIND_BYTES and optional)):
                starts = store.masks[store.first[item]] if kind == KIND_BYTES else self.first(item)
                if used & starts:
                    return None
                head = store.lexeme(self.store.cat_items(items[: position + 1]))
                return head, self.suffix(row, position + 1)
            reads = self.may_end(item)
            if reads is not None:
                return self._may_end_split(row, items, position, reads)
            alphabet = self.alphabet(item)
            if alphabet is None:
                return None
            used |= alphabet
            optional = optional or (
                store.nullable(item) and (alphabet & ~SEPARATOR_WHITESPACE) == 0
            )
        return None

    def _opened(self, row: int, items: list[int], position: int) -> int | None:
        """``fsm.decompose._opened``: the thunk at ``position`` replaced by its body
        when that body starts with a byte or a lexeme."""
        store = self.store
        built = store.body(items[position])
        if store.kinds[built] != KIND_CAT:
            return None
        head = store.first[built]
        if not (store.kinds[head] == KIND_BYTES or self.is_lexeme(head)):
            return None
        opened = self.store.cat_items([*items[:position], built, self.suffix(row, position + 1)])
        return opened if store.kinds[opened] == KIND_CAT else None

    def _may_end_split(
        self, row: int, items: list[int], position: int, reads: int
    ) -> tuple[int, int] | None:
        """``fsm.decompose._may_end_split``."""
        store = self.store
        end = position + 1
        while end < len(items) and store.nullable(items[end]):
            more = self.alphabet(items[end])
            if more is None or not more & ~SEPARATOR_WHITESPACE:
                break
            reads |= more
            end += 1
        rest = self.suffix(row, end)
        if self.first(rest) & reads:
            return None
        head = items[0] if end == 1 else self.store.cat_items(items[:end])
        return head, rest

    def _may_end(self, item: int) -> int | None:
        store = self.store
        kind = store.kinds[item]
        if kind == KIND_CHECKED:
            return byte_mask(store.checkers[store.first[item]].alphabet)
        if kind != KIND_ALT or store.nullable(item) or not self._unbounded(item, [HEAD_BUDGET]):
            return None
        return self._alphabet(item, [HEAD_BUDGET])

    def _unbounded(self, row: int, budget: list[int]) -> bool:
        budget[0] -= 1
        if budget[0] < 0:
            return False
        store = self.store
        kind = store.kinds[row]
        if kind == KIND_REPEAT:
            return store.repeat_bounds(row)[1] is None or self._unbounded(store.first[row], budget)
        if kind == KIND_CAT:
            return any(self._unbounded(item, budget) for item in self.store.chain(row))
        if kind == KIND_ALT:
            return any(self._unbounded(member, budget) for member in store.members(row))
        return False

    def _alphabet(self, row: int, budget: list[int]) -> int | None:
        budget[0] -= 1
        if budget[0] < 0:
            return None
        store = self.store
        kind = store.kinds[row]
        if row == EPS or row == EMPTY:
            return 0
        if kind == KIND_BYTES:
            return store.masks[store.first[row]]
        if kind == KIND_REPEAT:
            return self._alphabet(store.first[row], budget)
        if kind == KIND_CAT or kind == KIND_ALT:
            parts = self.store.chain(row) if kind == KIND_CAT else store.members(row)
            mask = 0
            for item in parts:
                part = self._alphabet(item, budget)
                if part is None:
                    return None
                mask |= part
            return mask
        return None

    def counted_after_prefix(self, row: int) -> tuple[int, int] | None:
        """``store_counted.counted_after_prefix_in`` of the lexeme ``row``, memoised."""
        if row not in self.counted_prefixes:
            self.counted_prefixes[row] = counted_after_prefix_in(self.store, row, self.alphabet)
        return self.counted_prefixes[row]

    def nested_split(self, head: int) -> tuple[int, int] | None:
        """``(inner, after)`` when ``head`` is a plain lexeme whose item is a lexeme
        after separators maybe, then ``after`` (``fsm.decompose.nested_split``)."""
        if head not in self.nested:
            self.nested[head] = self._nested_split(head)
        return self.nested[head]

    def _nested_split(self, head: int) -> tuple[int, int] | None:
        store = self.store
        if store.kinds[head] != KIND_LEXEME:
            return None
        item = store.first[head]
        if store.kinds[item] != KIND_CAT:
            return None
        items = self.store.chain(item)
        if not any(self.is_lexeme(part) for part in items[: MAX_SEPARATORS + 1]):
            return None
        inner = self.split_lexeme(item)
        if inner is None or not self.is_lexeme(inner[0]) or inner[0] == head:
            return None
        return inner

    # ------------------------------------------------------------------ branches

    def branch_terms(self, row: int, require_lexeme: bool = True) -> tuple[int, ...] | None:
        """The branches of a union state when one of them splits (any union when not
        ``require_lexeme``), or None (``fsm.decompose.branch_terms``)."""
        row = self.opened_in_place(row)
        found = self._items_of_union(row)
        if not require_lexeme:
            return found
        branches = self._lexeme_branches(row, found, MAX_NESTING)
        if branches is None:
            return None
        return cast(tuple[int, ...], self._shared_heads_joined(branches))  # rows in, rows out

    def branches_unbuilt(self, row: int) -> tuple[Branch, ...] | None:
        """``branch_terms(row)``, where a union heads ``row`` and some of its members
        start with a lexeme: each such branch ``cat(member, rest)`` is the pair
        ``(member, rest)``, not built. Its split is ``member``'s lexeme, then the rest
        of ``member`` before ``rest``, exactly (``split_lexeme`` reads a lexeme head
        first), so the automaton splits it with no row built (``StoreAutomaton``):
        building each branch re-nested every item of every member behind ``rest``,
        and an object's key members are several items each, behind the text after
        the object, at every key read (issue 15). Memoised by row."""
        if row in self.unbuilt:
            return self.unbuilt[row]
        found = self._branches_unbuilt(row)
        self.unbuilt[row] = found
        return found

    def openings_unbuilt(self, row: int) -> tuple[int, ...] | None:
        """Per branch of ``branches_unbuilt(row)``, the bytes its strings may start
        with, or more: a branch headed by a lexeme, the lexeme's (``first``, memoised
        once for every body that offers the key; with the rest of the member, and the
        rest after it, where the lexeme may be empty); every byte for any other branch,
        whose first bytes would be read anew in each new row (a row below nodes then
        walks it as before). Memoised by row: the rows below a value's last bytes
        (``", "``) ask which keys of the body a token may go on into."""
        if row in self.openings:
            return self.openings[row]
        branches = self.branches_unbuilt(row)
        found = None if branches is None else tuple(self._opening(b) for b in branches)
        self.openings[row] = found
        return found

    def _opening(self, branch: Branch) -> int:
        if isinstance(branch, int):
            return ALL_BYTES
        member, rest = branch
        store = self.store
        lexeme = store.first[member]  # a pair's member is headed by a lexeme
        if not store.nullable(lexeme):  # a key: its bytes
            return self.first(lexeme)
        opening = self.first(member)
        return opening | self.first(rest) if store.nullable(member) else opening

    def _branches_unbuilt(self, row: int) -> tuple[Branch, ...] | None:
        store = self.store
        row = self.opened_in_place(row)
        if store.kinds[row] == KIND_CAT:
            union = self._union_of(store.first[row])
            if union is not None:
                members = store.members(union)
                headed = [self._lexeme_headed(member) for member in members]
                if any(headed):
                    rest = store.second[row]
                    return self._shared_heads_joined(
                        tuple(
                            (member, rest) if lexeme_first else store.cat(member, rest)
                            for member, lexeme_first in zip(members, headed)
                        )
                    )
        return self.branch_terms(row)

    def _lexeme_headed(self, row: int) -> bool:
        """Whether ``row`` is a concatenation whose first item is a lexeme."""
        store = self.store
        return store.kinds[row] == KIND_CAT and self.is_lexeme(store.first[row])

    def _shared_heads_joined(self, branches: tuple[Branch, ...]) -> tuple[Branch, ...]:
        """The branches, those that are concatenations with one head and no split
        joined into one (their rests a union); an unbuilt pair splits, and stays."""
        store = self.store
        groups: dict[int, list[int]] = {}
        for branch in branches:
            if (
                isinstance(branch, int)
                and store.kinds[branch] == KIND_CAT
                and self.split_lexeme(branch) is None
            ):
                groups.setdefault(store.first[branch], []).append(branch)
        if all(len(group) == 1 for group in groups.values()):
            return branches
        joined: dict[Branch, None] = {}
        for branch in branches:
            if not isinstance(branch, int) or store.kinds[branch] != KIND_CAT:
                joined[branch] = None
                continue
            group = groups.get(store.first[branch])
            if group is None or len(group) == 1 or branch not in group:
                joined[branch] = None
            elif branch == group[0]:
                rests = store.alt([store.second[other] for other in group])
                joined[store.cat(store.first[branch], rests)] = None
        return tuple(joined)

    def _items_of_union(self, row: int) -> tuple[int, ...] | None:
        store = self.store
        kind = store.kinds[row]
        if kind == KIND_ALT:
            return tuple(store.members(row))
        if kind == KIND_CAT:
            head = self._union_of(store.first[row])
            if head is None:
                return None
            rest = store.second[row]
            return tuple(store.cat(member, rest) for member in store.members(head))
        head = self._union_of(row)
        return None if head is None else tuple(store.members(head))

    def _lexeme_branches(
        self, row: int, found: tuple[int, ...] | None, depth: int
    ) -> tuple[int, ...] | None:
        store = self.store
        if found is not None and self._some_split(found):
            return found
        is_cat = store.kinds[row] == KIND_CAT
        behind = self._behind_separator(row) if is_cat else None
        if behind is not None and self._some_split(behind):
            return behind
        if found is None or depth == 0 or (is_cat and store.nullable(store.first[row])):
            return None
        flat: list[int] = []
        nested = False
        for branch in found:
            inner = self._lexeme_branches(branch, self._items_of_union(branch), depth - 1)
            nested = nested or inner is not None
            flat.extend((branch,) if inner is None else inner)
        return tuple(dict.fromkeys(flat)) if nested else None

    def _some_split(self, branches: tuple[int, ...]) -> bool:
        return any(self.split_lexeme(branch) is not None for branch in branches)

    def _behind_separator(self, row: int) -> tuple[int, ...] | None:
        items = self.store.chain(row)
        for position in range(1, min(len(items), MAX_SEPARATORS + 1)):
            if self.alphabet(items[position - 1]) is None:
                return None
            union = self._union_of(items[position])
            if union is not None:
                before, after = items[:position], self.suffix(row, position + 1)
                return tuple(
                    self.store.cat_items([*before, member, after])
                    for member in self.store.members(union)
                )
        return None

    def _union_of(self, row: int) -> int | None:
        """``row`` as a union: itself, or a thunk's body (built if need be)."""
        store = self.store
        if store.kinds[row] == KIND_THUNK:
            row = store.body(row)
        return row if store.kinds[row] == KIND_ALT else None


def may_hold_lexemes_in(store: TermStore, row: int, budget: int = 10_000) -> bool:
    """Whether ``row`` may contain a lexeme (``fsm.decompose.may_hold_lexemes``): a thunk
    (not built here) or a row too large to scan within ``budget`` counts as yes."""
    seen: set[int] = set()
    todo = [row]
    while todo:
        current = todo.pop()
        if current in seen:
            continue
        seen.add(current)
        kind = store.kinds[current]
        if kind in (KIND_LEXEME, KIND_EXCEPT, KIND_THUNK) or len(seen) > budget:
            return True
        if kind == KIND_CAT:
            todo.append(store.first[current])
            todo.append(store.second[current])
        elif kind == KIND_ALT or kind == KIND_AND:
            todo.extend(store.members(current))
        elif kind == KIND_REPEAT or kind == KIND_NOT:
            todo.append(store.first[current])
    return False
