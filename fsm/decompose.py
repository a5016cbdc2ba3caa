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
prefix-free head forbids. Or ``head`` *may end* before its last byte: a checked term
(a number with bounds), or a plain union that is not nullable and may go on without
bound (a number's integer part, with the fraction and exponent after it), after the
same few separators (``: ``), and no string of ``rest`` starts with a byte the head
may read once it has begun: wherever the number may end, the next byte tells whether
it goes on (``12``) or ``rest`` begins (``1,``), so the token walk reads the head's
own states and goes on in ``rest`` below the nodes where it accepts. The separators
need no condition here: the head accepts only once the number has begun.

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
    alt,
    byte_mask,
    cat,
    derivative,
    lexeme,
    nullable,
)

MAX_SEPARATORS = 4
"""Separator items looked at before a head (whitespace, a comma, a colon)."""

MAX_NESTING = 4
"""Levels of unions inside a union's branches taken apart (``branch_terms``)."""

SEPARATOR_WHITESPACE = byte_mask(b" \t\n\r")
r"""A single byte heads a lexeme only after optional whitespace (JSON's ``ws }``): in a
regex, splitting ``(,[0-9]{3})*\.`` saves nothing."""

SEPARATOR_BUDGET = 24
"""Sub-terms a separator may have: separators are small, anything larger is content."""

HEAD_BUDGET = 64
"""Sub-terms a plain head that may end is scanned through (a number has about 30)."""


class SplitMemo:
    """What ``split_lexeme`` finds about single items, kept per automaton: the same
    separators and heads begin many of its states (``, "key"`` every state that goes on
    with that key). Kept no longer than the automaton, whose terms it holds."""

    __slots__ = ("alphabets", "ends", "firsts", "heads", "may_end_heads", "splits")

    def __init__(self) -> None:
        self.splits: dict[Cat, tuple[Term, Term] | None] = {}
        """``split_lexeme``'s answers for concatenations not headed by a lexeme: a union
        state's branches are split when ``branch_terms`` looks for one that splits,
        then again when each is walked as a state of its own."""
        self.alphabets: dict[Term, int | None] = {}
        self.firsts: dict[Term, int] = {}
        self.heads: dict[tuple[Term, ...], Term] = {}
        self.ends: dict[Term, int | None] = {}
        self.may_end_heads: dict[tuple[Term, ...], Term] = {}

    def alphabet(self, item: Term) -> int | None:
        """``_alphabet`` of a separator item within its budget."""
        if item not in self.alphabets:
            self.alphabets[item] = _alphabet(item, [SEPARATOR_BUDGET])
        return self.alphabets[item]

    def first(self, term: Term) -> int:
        """The bytes a string of ``term`` may start with, or more (``first_bytes_over``):
        of a head lexeme, or of what follows a head that may end. A larger set only
        refuses a split, which is always exact."""
        if term not in self.firsts:
            self.firsts[term] = first_bytes_over(term)
        return self.firsts[term]

    def head(self, items: tuple[Term, ...]) -> Term:
        """The lexeme of separators then a head."""
        if items not in self.heads:
            self.heads[items] = lexeme(cat(*items))
        return self.heads[items]

    def may_end(self, item: Term) -> int | None:
        """``_may_end`` of an item, memoised."""
        if item not in self.ends:
            self.ends[item] = _may_end(item)
        return self.ends[item]

    def separated(self, items: tuple[Term, ...]) -> Term:
        """Separators (maybe none) then a head that may end, concatenated: not
        prefix-free, so not a lexeme."""
        if len(items) == 1:
            return items[0]
        if items not in self.may_end_heads:
            self.may_end_heads[items] = cat(*items)
        return self.may_end_heads[items]


def split_lexeme(term: Term, memo: SplitMemo | None = None) -> tuple[Term, Term] | None:
    """``(head, rest)`` with ``term == cat(head, rest)`` and ``head`` a lexeme or a head
    that may end (see the module docstring), or None. A thunk that opens in place at
    the head is read as its body (``opened_in_place``), and so is a thunk alone or at
    the head whose body is a concatenation (``_head_body_spelled``)."""
    if isinstance(term, Lexeme):
        return term, EPS
    if isinstance(term, Thunk):  # a thunk is its body
        body = term.body()
        return split_lexeme(body, memo) if isinstance(body, Cat) else None
    if not isinstance(term, Cat):
        return None
    items = term.items
    if isinstance(items[0], Lexeme):
        return items[0], term.rest()
    memo = SplitMemo() if memo is None else memo
    if term in memo.splits:
        return memo.splits[term]
    opened = opened_in_place(term)
    if opened is term:
        opened = _head_body_spelled(term)
    split = _split_after_separators(term, memo) if opened is term else split_lexeme(opened, memo)
    memo.splits[term] = split
    return split


def _head_body_spelled(term: Cat) -> Term:
    """``term`` with the thunk at its head replaced by its body when that body is a
    concatenation, else ``term`` itself: an object's body after a value (``, ws "``
    then the keys left, or ``ws }``) heading the text after the object splits as that
    text spelled out, where the thunk unsplit was expanded whole. The same language: a
    thunk is its body."""
    head = term.items[0]
    if not isinstance(head, Thunk):
        return term
    body = head.body()
    return cat(body, term.rest()) if isinstance(body, Cat) else term


def opened_in_place(term: Term) -> Term:
    """``term`` with the thunk at its head read as its body when that thunk opens in
    place (``Thunk.opens_in_place``: what follows an object's key), else ``term``
    itself: the splits and the branches of the row after a key are those of the
    member spelled out."""
    if not isinstance(term, Cat):
        return term
    head = term.items[0]
    if not isinstance(head, Thunk) or not head.opens_in_place():
        return term
    return cat(head.body(), term.rest())


def nested_split(head: Term | None, memo: SplitMemo | None = None) -> tuple[Term, Term] | None:
    """``(inner, after)`` when ``head`` is a plain lexeme (no ``within`` promise) whose
    item is a lexeme ``inner``, after separators maybe, then ``after`` (a key's string
    inside an arbitrary JSON value, a map's key inside the lexeme of its members), else
    None: ``cat(head, rest) == cat(inner, after, rest)``, with ``inner`` prefix-free.
    Kept on the lexeme (``Lexeme.inner_split``): the row walker asks it of every lexeme
    it has no walk for yet, in every index, and most have no lexeme inside.

    A state inside such a lexeme is walked whole otherwise: a new lexeme state for each
    string in each context, each a walk of the ~48,800 tokens a JSON string reads,
    where the inner lexeme's own walk is one the vocabulary shares (``fsm.row_walk``)."""
    if not isinstance(head, Lexeme):
        return None
    known = head.inner_split
    if known is None:
        found = _nested_split(head, memo)
        known = head.inner_split = () if found is None else found
    return None if not known else (known[0], known[1])


def _nested_split(head: Lexeme, memo: SplitMemo | None) -> tuple[Term, Term] | None:
    item = head.item
    if head.within is not None or not isinstance(item, Cat):
        return None
    for position in range(min(len(item.items), MAX_SEPARATORS + 1)):
        if isinstance(item.items[position], Lexeme):
            break
    else:
        return None  # most lexemes: a string's characters, a number, a key's rest
    inner = split_lexeme(item, memo)
    if inner is None or not isinstance(inner[0], Lexeme) or inner[0] == head:
        return None  # no lexeme inside, a head that may end, or ``head`` itself
    return inner


def _split_after_separators(term: Cat, memo: SplitMemo) -> tuple[Term, Term] | None:
    """``split_lexeme`` of a concatenation whose first item is not a lexeme: a head
    found after at most ``MAX_SEPARATORS`` separator items, or None."""
    items = term.items
    used, optional = 0, False
    for position, item in enumerate(items[: MAX_SEPARATORS + 1]):
        if position > 0 and optional and isinstance(item, Thunk):
            opened = _opened(term, position)
            return None if opened is None else split_lexeme(opened, memo)
        if position > 0 and (isinstance(item, Lexeme) or (isinstance(item, Bytes) and optional)):
            starts = item.mask if isinstance(item, Bytes) else memo.first(item)
            if used & starts:
                return None
            return memo.head(items[: position + 1]), term.suffix(position + 1)
        reads = memo.may_end(item)
        if reads is not None:
            return _may_end_split(term, position, reads, memo)
        alphabet = memo.alphabet(item)
        if alphabet is None:
            return None
        used |= alphabet
        optional = optional or (nullable(item) and (alphabet & ~SEPARATOR_WHITESPACE) == 0)
    return None


def _opened(term: Cat, position: int) -> Cat | None:
    """``term`` with the thunk at ``position`` replaced by its body when that body is a
    concatenation starting with a byte or a lexeme (an object's members after its
    opening whitespace: ``"`` then the keys), so "whitespace, then that head" splits
    off; None otherwise. The same language: a thunk is its body."""
    body = term.items[position]
    assert isinstance(body, Thunk)
    built = body.body()
    if not isinstance(built, Cat) or not isinstance(built.items[0], (Bytes, Lexeme)):
        return None
    opened = cat(*term.items[:position], built, term.suffix(position + 1))
    return opened if isinstance(opened, Cat) else None


def branch_terms(
    term: Term, require_lexeme: bool = True, memo: SplitMemo | None = None
) -> tuple[Term, ...] | None:
    """The branches of a union state when one of them splits into a lexeme (any union
    when not ``require_lexeme``), or None.

    A union's items; a concatenation whose head is a union (or a thunk whose body is
    one): ``cat(alt(a, b), k) == alt(cat(a, k), cat(b, k))``. When those branches do
    not split, and a lexeme is required, a union behind a nullable separator
    (``_behind_separator``), else the items with those that are such unions in turn
    taken apart (``_lexeme_branches``). A thunk that opens in place at the head is
    read as its body (``opened_in_place``)."""
    term = opened_in_place(term)
    found = _items(term)
    if not require_lexeme:
        return found
    branches = _lexeme_branches(term, found, memo, MAX_NESTING)
    return None if branches is None else _shared_heads_joined(branches, memo)


def _shared_heads_joined(branches: tuple[Term, ...], memo: SplitMemo | None) -> tuple[Term, ...]:
    """``branches`` with the concatenations that do not split and start with one head
    joined: ``h r1 | h r2`` as ``h (r1 | r2)``, an exact rewrite. Each such branch is
    walked plainly, whole; alternatives of a ``oneOf`` keyed by which key is present
    (``fsm.json_schema.conditions``) hold the same refused value then different rests,
    and were walked once per alternative."""
    groups: dict[Term, list[Cat]] = {}
    for branch in branches:
        if isinstance(branch, Cat) and split_lexeme(branch, memo) is None:
            groups.setdefault(branch.items[0], []).append(branch)
    if all(len(group) == 1 for group in groups.values()):
        return branches
    joined: dict[Term, None] = {}
    for branch in branches:
        group = groups.get(branch.items[0]) if isinstance(branch, Cat) else None
        if group is None or len(group) == 1 or branch not in group:
            joined[branch] = None
        elif branch is group[0]:
            joined[cat(branch.items[0], alt(*(other.rest() for other in group)))] = None
    return tuple(joined)


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
    behind = _behind_separator(term, memo) if isinstance(term, Cat) else None
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
        if isinstance(current, (Lexeme, Thunk)) or len(seen) > budget:
            return True
        if isinstance(current, (Cat, Alt, And)):
            todo.extend(current.items)
        elif isinstance(current, (Repeat, Not)):
            todo.append(current.item)
    return False


def _behind_separator(term: Cat, memo: SplitMemo | None) -> tuple[Term, ...] | None:
    """``s (a | b) k`` as ``s a k``, ``s b k`` when ``s`` is at most ``MAX_SEPARATORS``
    separator items: whitespace before a value that is a string or null, ``: `` before
    any value (a lexeme or a number: ``json_text.any_value``), whitespace before an
    array's first item or ``]``, or before an object's ``}`` or ``"`` and its keys (a
    thunk whose body is a union). The branches may then split as "separators, then a
    lexeme" where the union as a whole does not. (Thunks were left out while an
    object's body offered each key as a branch of its own; since its keys share one
    opening quote, taking them apart is faster: ``docs/design.md``.)"""
    items = term.items
    memo = SplitMemo() if memo is None else memo
    for position in range(1, min(len(items), MAX_SEPARATORS + 1)):
        if memo.alphabet(items[position - 1]) is None:
            return None
        union = _union_of(items[position])
        if union is not None:
            before, after = items[:position], term.suffix(position + 1)
            return tuple(cat(*before, item, after) for item in union.items)
    return None


def _may_end_split(
    term: Cat, position: int, reads: int, memo: SplitMemo
) -> tuple[Term, Term] | None:
    """``(the items up to one that may end at ``position`` (reading ``reads``) and the
    plain optional items after it, the rest)`` when the rest cannot start with a byte
    the head may read where it accepts: the optional items are a number's fraction and
    exponent, which ``cat`` flattened into the document."""
    items = term.items
    end = position + 1
    while end < len(items) and nullable(items[end]):
        more = memo.alphabet(items[end])
        if more is None or not more & ~SEPARATOR_WHITESPACE:  # whitespace after it is the rest's
            break
        reads |= more
        end += 1
    rest = term.suffix(end)
    if memo.first(rest) & reads:
        return None
    return memo.separated(items[:end]), rest


def _may_end(item: Term) -> int | None:
    """The bytes ``item`` may read when it is a head that may end before its last byte
    (``7`` ends there or goes on as ``72``): a checked term (a number with bounds), or a
    plain union that is not nullable and may go on without bound (the integer part of a
    number without bounds, ``0|[1-9][0-9]*``). None for anything else: a literal or a
    bounded separator is left to the rules above."""
    if isinstance(item, Checked):
        return byte_mask(item.checker.alphabet)
    if not isinstance(item, Alt) or nullable(item) or not _unbounded(item, [HEAD_BUDGET]):
        return None
    return _alphabet(item, [HEAD_BUDGET])


def _unbounded(term: Term, budget: list[int]) -> bool:
    """Whether a plain term holds a repetition without an upper bound (within budget)."""
    budget[0] -= 1
    if budget[0] < 0:
        return False
    if isinstance(term, Repeat):
        return term.hi is None or _unbounded(term.item, budget)
    if isinstance(term, (Cat, Alt)):
        return any(_unbounded(item, budget) for item in term.items)
    return False


def _union_of(term: Term) -> Alt | None:
    """``term`` as a union: itself, or the body of a thunk (built if need be)."""
    if isinstance(term, Thunk):
        term = term.body()
    return term if isinstance(term, Alt) else None


_ALL_BYTES = (1 << 256) - 1

_FIRST_BUDGET = 256
"""Sub-terms ``first_bytes_over`` looks through before it answers every byte."""


def first_bytes_over(term: Term) -> int:
    """A mask holding every byte a string of ``term`` may start with, read from the
    term's structure without a derivative: a concatenation's items up to the first
    that is not nullable, a union's items, a thunk's body, a checked term's alphabet,
    every byte for a complement, a thunk inside its own body, or past the budget
    (``terms.first_bytes`` is exact but derives the term once per byte class, about
    what expanding it costs). The answer is the term's alone, whatever order a set
    of items is visited in: a thunk counts as met again only along one path, and a
    spent budget answers every byte for the whole term, not for the items visited
    last (they vary with hashes from run to run)."""
    budget = [_FIRST_BUDGET]
    found = _first_over(term, set(), budget)
    return _ALL_BYTES if budget[0] < 0 else found


def _first_over(term: Term, thunks: set[int], budget: list[int]) -> int:
    budget[0] -= 1
    if budget[0] < 0:
        return _ALL_BYTES
    if isinstance(term, (Cat, Alt, And)):
        return _first_of_items(term, thunks, budget)
    if isinstance(term, Thunk):
        opening = term.opening_bytes()  # without building the body, when its builder tells
        if opening is not None:
            return opening
    if isinstance(term, Thunk):
        if id(term) in thunks:
            return _ALL_BYTES
        thunks.add(id(term))
        found = _first_over(term.body(), thunks, budget)
        thunks.discard(id(term))
        return found
    if isinstance(term, Lexeme) and term.within is not None and term.apart:
        return _first_but_names(term, _first_over(term.within, thunks, budget))
    if isinstance(term, (Repeat, Lexeme)):
        return _first_over(_inner(term), thunks, budget)
    if isinstance(term, Bytes):
        return term.mask
    if isinstance(term, Checked):
        return byte_mask(term.checker.alphabet)
    return 0 if term is EPS or term is EMPTY else _ALL_BYTES  # a complement: every byte


def _first_of_items(term: Cat | Alt | And, thunks: set[int], budget: list[int]) -> int:
    """A concatenation's items up to the first not nullable, a union's items, the
    bytes every conjunct of an intersection may start with."""
    if isinstance(term, And):
        mask = _ALL_BYTES
        for item in term.items:
            mask &= _first_over(item, thunks, budget)
        return mask
    mask = 0
    for item in term.items:
        mask |= _first_over(item, thunks, budget)
        if isinstance(term, Cat) and not nullable(item):
            break
    return mask


def _first_but_names(term: Lexeme, within: int) -> int:
    """A lexeme but some names: ``within``'s first bytes, less each byte only names
    start with (the derivative by it is empty). Read from the promise, not the item:
    the item's structure depends on the order its parts met (``_meet_lexemes``), and
    this answer is exact where ``within``'s is."""
    found = within
    for name in term.apart:
        if name and found >> name[0] & 1 and derivative(term, name[0]) is EMPTY:
            found &= ~(1 << name[0])
    return found


def _inner(term: Repeat | Lexeme) -> Term:
    """What a repetition or a lexeme starts with."""
    if isinstance(term, Repeat):
        return EPS if term.hi == 0 else term.item
    return term.item


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
    if isinstance(term, (Cat, Alt)):
        mask = 0
        for item in term.items:
            part = _alphabet(item, budget)
            if part is None:
                return None
            mask |= part
        return mask
    return None
