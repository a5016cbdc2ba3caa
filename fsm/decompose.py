"""Taking a term apart for shared token walks: a lexeme then the rest, or branches.

``split_lexeme(term)`` finds ``term = cat(head, rest)`` where a token read inside
``head`` does not depend on ``rest`` (``fsm.row_walk``). Either ``head`` is prefix-free:
a declared ``Lexeme``, or a single byte (``}``, ``]``) after optional whitespace, found
after at most a few separator items (whitespace, ``,``) that never use a byte the head
may start with. (Plain literals are left alone: splitting ``true`` into lexemes saves
nothing and would number its states apart from a byte walk's.) Such a
concatenation is prefix-free: in any of its strings, the separators end just before
the first byte that can start the head, so two strings of it, one a prefix of the
other, have equal separators and then heads one a prefix of the other, which a
prefix-free head forbids. Or ``head`` is a checked term (a number with bounds) whose
strings use only its checker's alphabet, and no string of ``rest`` starts with a byte
of that alphabet: wherever the number may end, the next byte tells whether it goes on
(``12``) or ``rest`` begins (``1,``), so the token walk reads the number's own states
and goes on in ``rest`` below the nodes where it accepts.

``branch_terms(term)`` gives the branches of a union state, with concatenation
distributed over a union (or a thunk whose body is one) at its head, or behind a
nullable separator, or inside branches that are such unions in turn, when some branch
splits. All are exact rewrites: the language of the term is unchanged.
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
    byte_mask,
    cat,
    first_bytes,
    lexeme,
    nullable,
)

MAX_SEPARATORS = 4
"""Separator items looked at before a head (whitespace, a comma, a colon)."""

MAX_NESTING = 4
"""Levels of unions inside a union's branches taken apart (``branch_terms``)."""

_WHITESPACE = byte_mask(b" \t\n\r")
r"""A single byte heads a lexeme only after optional whitespace (JSON's ``ws }``): in a
regex, splitting ``(,[0-9]{3})*\.`` saves nothing."""

_SEPARATOR_BUDGET = 24
"""Sub-terms a separator may have: separators are small, anything larger is content."""


class SplitMemo:
    """What ``split_lexeme`` finds about single items, kept per automaton: the same
    separators and heads begin many of its states (``, "key"`` every state that goes on
    with that key). Kept no longer than the automaton, whose terms it holds."""

    __slots__ = ("alphabets", "checked_heads", "firsts", "heads")

    def __init__(self) -> None:
        self.alphabets: dict[Term, int | None] = {}
        self.firsts: dict[Term, int] = {}
        self.heads: dict[tuple[Term, ...], Term] = {}
        self.checked_heads: dict[tuple[Term, ...], Term] = {}

    def alphabet(self, item: Term) -> int | None:
        """``_alphabet`` of a separator item within its budget."""
        if item not in self.alphabets:
            self.alphabets[item] = _alphabet(item, [_SEPARATOR_BUDGET])
        return self.alphabets[item]

    def first(self, head: Term) -> int:
        """``first_bytes`` of a head lexeme (or of what follows a checked head)."""
        if head not in self.firsts:
            self.firsts[head] = first_bytes(head)
        return self.firsts[head]

    def head(self, items: tuple[Term, ...]) -> Term:
        """The lexeme of separators then a head."""
        if items not in self.heads:
            self.heads[items] = lexeme(cat(*items))
        return self.heads[items]

    def separated(self, items: tuple[Term, ...]) -> Term:
        """Separators then a checked head, concatenated (not prefix-free: no lexeme)."""
        if items not in self.checked_heads:
            self.checked_heads[items] = cat(*items)
        return self.checked_heads[items]


def split_lexeme(term: Term, memo: SplitMemo | None = None) -> tuple[Term, Term] | None:
    """``(head, rest)`` with ``term == cat(head, rest)`` and ``head`` a lexeme, or None."""
    if isinstance(term, Lexeme):
        return term, EPS
    if not isinstance(term, Cat):
        return None
    items = term.items
    if isinstance(items[0], Lexeme):
        return items[0], term.rest()
    memo = SplitMemo() if memo is None else memo
    if isinstance(items[0], Checked):
        rest = term.rest()
        if memo.first(rest) & byte_mask(items[0].checker.alphabet):
            return None
        return items[0], rest
    used, optional = 0, False
    for position, item in enumerate(items[: MAX_SEPARATORS + 1]):
        if position > 0 and (isinstance(item, Lexeme) or (isinstance(item, Bytes) and optional)):
            starts = item.mask if isinstance(item, Bytes) else memo.first(item)
            if used & starts:
                return None
            return memo.head(items[: position + 1]), term.suffix(position + 1)
        if position > 0 and isinstance(item, Checked):
            return _checked_behind(items, position, used, term, memo)
        alphabet = memo.alphabet(item)
        if alphabet is None:
            return None
        used |= alphabet
        optional = optional or (nullable(item) and (alphabet & ~_WHITESPACE) == 0)
    return None


def _checked_behind(
    items: tuple[Term, ...], position: int, used: int, term: Cat, memo: SplitMemo
) -> tuple[Term, Term] | None:
    """``(separators then the checked item at position, the rest)`` when neither the
    separators nor the first byte of the rest is in the checker's alphabet: the head is
    then read as a checked one is (``split_lexeme``), the separators ending where the
    checked item's first byte comes. ``: 12`` and `` 12`` are walked once per
    vocabulary and bounds, not once per key and continuation."""
    checked_item = items[position]
    assert isinstance(checked_item, Checked)
    alphabet = byte_mask(checked_item.checker.alphabet)
    rest = term.suffix(position + 1)
    if used & alphabet or memo.first(rest) & alphabet:
        return None
    return memo.separated(items[: position + 1]), rest


def branch_terms(
    term: Term, require_lexeme: bool = True, memo: SplitMemo | None = None
) -> tuple[Term, ...] | None:
    """The branches of a union state when one of them splits into a lexeme (any union
    when not ``require_lexeme``), or None.

    A union's items; a concatenation whose head is a union (or a thunk whose body is
    one): ``cat(alt(a, b), k) == alt(cat(a, k), cat(b, k))``. When those branches do
    not split, and a lexeme is required, a union behind a nullable separator
    (``_behind_separator``), else the items with those that are such unions in turn
    taken apart (``_lexeme_branches``)."""
    found = _items(term)
    if not require_lexeme:
        return found
    return _lexeme_branches(term, found, memo, MAX_NESTING)


def _items(term: Term) -> tuple[Term, ...] | None:
    """The items of a union, a concatenation distributed over the union at its head."""
    if isinstance(term, Alt):
        return tuple(term.items)
    if isinstance(term, Cat):
        head = _union_of(term.items[0])
        return None if head is None else tuple(cat(item, term.rest()) for item in head.items)
    head = _union_of(term)
    return None if head is None else tuple(head.items)


def _lexeme_branches(
    term: Term, found: tuple[Term, ...] | None, memo: SplitMemo | None, depth: int
) -> tuple[Term, ...] | None:
    """Branches of ``term`` (its items ``found``) of which some split, or None: the
    items themselves, else the branches behind a nullable separator, else the items
    with each one that is itself such a union replaced by its branches, up to
    ``depth`` levels. The last is the state a token leads to when several
    alternatives read it (``oneOf`` objects in an array after ``", "``: each one's
    keys, then its rest), which otherwise is expanded whole, every key's derivatives
    at once. A union of whitespace forms at the head is not distributed so: its
    branches are walked plainly either way, and the object's members behind them cost
    more as sub-walks below the whitespace than inside one plain walk (measured,
    ``docs/design.md``)."""
    if found is not None and _some_split(found, memo):
        return found
    behind = _behind_separator(term) if isinstance(term, Cat) else None
    if behind is not None and _some_split(behind, memo):
        return behind
    if found is None or depth == 0 or (isinstance(term, Cat) and nullable(term.items[0])):
        return None
    flat: list[Term] = []
    nested = False
    for branch in found:
        inner = _lexeme_branches(branch, _items(branch), memo, depth - 1)
        nested = nested or inner is not None
        flat.extend((branch,) if inner is None else inner)
    return tuple(dict.fromkeys(flat)) if nested else None


def _some_split(branches: tuple[Term, ...], memo: SplitMemo | None) -> bool:
    return any(split_lexeme(branch, memo) is not None for branch in branches)


def may_hold_lexemes(term: Term, budget: int = 10_000) -> bool:
    """Whether ``term`` may contain a lexeme: a thunk (not built here) or a term too
    large to scan within ``budget`` counts as yes. A plain regex says no, and its index
    walks every state plainly."""
    seen: set[int] = set()
    todo = [term]
    while todo:
        current = todo.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, Lexeme | Thunk) or len(seen) > budget:
            return True
        if isinstance(current, Cat | Alt | And):
            todo.extend(current.items)
        elif isinstance(current, Repeat | Not):
            todo.append(current.item)
    return False


def _behind_separator(term: Cat) -> tuple[Term, ...] | None:
    """``s (a | b) k`` as ``s a k``, ``s b k`` when ``s`` is nullable: an optional space
    or whitespace before a value that is a string or null. The branches may then split
    as "separators, then a lexeme" where the union as a whole does not. Only a union
    written out: a thunk's body behind whitespace (an array's items, an object's
    members) was measured slower taken apart so (``docs/design.md``)."""
    first, second = term.items[0], term.items[1]
    if isinstance(first, Thunk) or not isinstance(second, Alt) or not nullable(first):
        return None
    after = term.suffix(2)
    return tuple(cat(first, item, after) for item in second.items)


def _union_of(term: Term) -> Alt | None:
    """``term`` as a union: itself, or the body of a thunk (built if need be)."""
    if isinstance(term, Thunk):
        term = term.body()
    return term if isinstance(term, Alt) else None


def _alphabet(term: Term, budget: list[int]) -> int | None:
    """Mask of every byte a string of a small separator term may hold; None when the
    term is not a plain small regular term (a thunk, a check, a complement...)."""
    budget[0] -= 1
    if budget[0] < 0:
        return None
    if term is EPS or term is EMPTY:
        return 0
    if isinstance(term, Bytes):
        return term.mask
    if isinstance(term, Repeat):
        return _alphabet(term.item, budget)
    if isinstance(term, Cat | Alt):
        mask = 0
        for item in term.items:
            part = _alphabet(item, budget)
            if part is None:
                return None
            mask |= part
        return mask
    return None
