"""Terms as integers: a hash-consed store of terms, beside ``fsm.terms``.

``fsm.terms`` holds a term as a Python object with its memos (derivatives, partition,
nullability) on it. A fresh schema's walk leaves thousands of such objects and their
dicts alive for as long as its index lives, and the cyclic collector scans every one of
them at each full pass (``docs/design.md``, issue 15). Here a term is an ``int``: an
index into columns of integers, interned so that equal terms built apart get one id,
with every memo in a dictionary from integers to integers. However many terms it
holds, the collector tracks only its containers and what it was given: the object
terms it converted, thunks and checkers.

The path ``docs/design.md`` names ("terms as integers"): terms and their derivatives
beside the object terms, converted from them (``TermStore.load``), checked against
them (``tests/fsm/test_term_store.py``) and timed against them
(``benchmarks/term_store.py``); since the sixty-eighth session ``fsm.compile_index``
builds JSON schemas as rows of a store per vocabulary (``fsm.schema_rows``). Every
kind of term is held: a thunk is a row whose body is built, from the object thunk,
when a derivative or a question first needs it (recursion: a JSON value, a ``$ref``
cycle), and a checked leaf (a number with bounds) a row of its checker and its text. A
store is for one thread at a time (``fsm.schema_rows`` gives it a lock).

Normal forms (what makes equal languages built alike share an id, and the derivatives
of a regular term finitely many):

* a concatenation is a pair ``(head, rest)`` whose head is no concatenation, so a
  derivative of ``a b c`` is one new pair ahead of the shared ``b c``;
* a union (an intersection) is a run of members in a shared pool of ids: distinct, in
  ascending id order, none a union (an intersection), its single-byte sets merged into
  one member;
* ``EMPTY`` is id 0 and ``EPS`` id 1.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from itertools import product
from typing import Final, TypeVar

import numpy as np

from fsm import terms as objects
from fsm.errors import ConstraintTooLarge, InvalidSpec, NotStorable
from fsm.partition import first_members
from fsm.partition_ops import (
    TRIVIAL,
    alphabet_partition,
    class_representatives,
    first_byte_partition,
    mask_partition,
    refine_all,
)

EMPTY: Final = 0
EPS: Final = 1

KIND_EMPTY: Final = 0
KIND_EPS: Final = 1
KIND_BYTES: Final = 2
KIND_CAT: Final = 3
KIND_ALT: Final = 4
KIND_AND: Final = 5
KIND_NOT: Final = 6
KIND_REPEAT: Final = 7
KIND_LEXEME: Final = 8
KIND_EXCEPT: Final = 9
KIND_THUNK: Final = 10
KIND_CHECKED: Final = 11

NO: Final = 0
YES: Final = 1
UNKNOWN: Final = 2
"""Values of ``TermStore.nullable_flags``: a term whose nullability depends on a thunk's
body not built yet is ``UNKNOWN`` until someone asks (``TermStore.nullable``)."""
_NO_BODY: Final = -1
Answer = TypeVar("Answer")

_ID_BITS: Final = 29
"""Bits of an id in an interning key: a key is two ids and a kind, ``2 * 29 + 4`` bits,
so it stays a small int (compiled code holds it unboxed, and it allocates nothing)."""
MAX_TERMS: Final = 1 << _ID_BITS
_COUNT_BITS: Final = 30
_UNBOUNDED: Final = (1 << _COUNT_BITS) - 1
"""The upper count of an unbounded repetition, as stored; counts stay below it."""
_ALL_BYTES: Final = (1 << 256) - 1
_RUN_HASH_MASK: Final = (1 << 57) - 1
"""The bits of a run's hash kept in its key: with the kind, still a small int."""


class TermStore:
    """Hash-consed terms as integers, with their derivatives, nullability and byte
    partitions memoised in integer-keyed tables.

    Columns: ``kinds[t]`` and the fields ``first[t]``, ``second[t]``:
    a concatenation's head and rest; a union's or an intersection's members,
    ``pool[first:second]``; a repetition's item and where its counts are in
    ``counts``; a byte set's mask, ``masks[first]``; a lexeme's item and bound; a
    lexeme but some strings, its ``within`` and those strings, ``aparts[second]``; a
    thunk, its object in ``thunks`` and its body once built; a checked leaf, its
    checker in ``checkers`` and its text in ``texts``. ``nullable_flags[t]`` is set
    when the term is interned, or ``UNKNOWN`` until asked when it depends on a thunk's
    body. A store only grows; it is dropped as a whole."""

    def __init__(self) -> None:
        self.kinds: list[int] = [KIND_EMPTY, KIND_EPS]
        self.first: list[int] = [0, 0]
        self.second: list[int] = [0, 0]
        self.nullable_flags: list[int] = [NO, YES]
        self.masks: list[int] = []
        self.pool: list[int] = []
        self.counts: list[int] = []
        self.aparts: list[tuple[bytes, ...]] = []
        self.thunks: list[objects.Thunk | StoredThunk] = []
        self.checkers: list[objects.Checker] = []
        self.texts: list[bytes] = []
        # names this store in keys kept beyond it (a row id means something in its
        # store alone): a token walk cache shared per vocabulary keys a lexeme by both
        self.identity: object = object()
        self._ids: dict[int, int] = {}
        self._runs: dict[int, int] = {}
        self._count_ids: dict[int, int] = {}
        self._apart_ids: dict[tuple[bytes, ...], int] = {}
        self._byte_sets: dict[int, int] = {}
        self._thunk_ids: dict[Hashable, int] = {}
        self._checker_ids: dict[objects.Checker, int] = {}
        self._text_ids: dict[bytes, int] = {}
        self._checked_keys: dict[tuple[int, Hashable], int] = {}  # ``_checked_at``
        self._literals: dict[bytes, int] = {}
        # each rest of a literal's chain: the literal and where that rest starts in it
        # (``_spelled``), set as ``literal`` builds the chain; an entry per byte of a
        # new literal, as many as the chain's own terms, and as long-lived
        self._spellings: dict[int, tuple[bytes, int]] = {}
        self._single_bytes: dict[int, int] = {}  # a byte set's row of one byte: that byte
        self._entered: set[int] = set()  # thunks inside their own body's question
        self._loader = _Loader(self)
        self._derivatives: dict[int, int] = {}
        self._partitions: dict[int, np.ndarray] = {}
        self._representatives: dict[int, bytes] = {}
        self._class_bytes: dict[int, bytes] = {}
        self._liveness: dict[int, bool] = {}
        # (term, limit, budget) -> its strings: the same lexemes (strings, keys, bounded
        # strings) are asked again by every index over the store
        self._finite: dict[tuple[int, int, int], list[bytes] | None] = {}

    def __len__(self) -> int:
        return len(self.kinds)

    # ------------------------------------------------------------------ interning

    def _intern(self, kind: int, first: int, second: int, nullable: int) -> int:
        """The id of the term with these fields (each below ``MAX_TERMS``), a new one if
        none was stored. A lexeme's bound is no part of its key (``lexeme``)."""
        key = (first << _ID_BITS | (0 if kind == KIND_LEXEME else second)) << 4 | kind
        known = self._ids.get(key)
        if known is not None:
            return known
        term = self._append(kind, first, second, nullable)
        self._ids[key] = term
        return term

    def _append(self, kind: int, first: int, second: int, nullable: int) -> int:
        """A new row; the store is full at ``MAX_TERMS`` (ids must fit their keys)."""
        term = len(self.kinds)
        if term >= MAX_TERMS:
            raise ConstraintTooLarge(f"the term store holds {MAX_TERMS} terms")
        self.kinds.append(kind)
        self.first.append(first)
        self.second.append(second)
        self.nullable_flags.append(nullable)
        return term

    def _intern_run(self, kind: int, ordered: list[int]) -> int:
        """The union or intersection (``kind``) of ``ordered`` (distinct, ascending, at
        least two), a new one if none was stored: found by the run's hash, then
        compared member by member (the next slot on a collision)."""
        key = (hash(tuple(ordered)) & _RUN_HASH_MASK) << 4 | kind
        while True:
            known = self._runs.get(key)
            if known is None:
                break
            if self.kinds[known] == kind and self.members(known) == ordered:
                return known
            key += 16
        flags = [self.nullable_flags[member] for member in ordered]
        if kind == KIND_ALT:
            nullable = YES if YES in flags else UNKNOWN if UNKNOWN in flags else NO
        else:
            nullable = NO if NO in flags else UNKNOWN if UNKNOWN in flags else YES
        start = len(self.pool)
        self.pool.extend(ordered)
        term = self._append(kind, start, len(self.pool), nullable)
        self._runs[key] = term
        return term

    def byte_set(self, mask: int) -> int:
        """One byte from the 256-bit set ``mask`` (``EMPTY`` for no byte)."""
        if mask == 0:
            return EMPTY
        known = self._byte_sets.get(mask)
        if known is not None:
            return known
        self.masks.append(mask)
        term = self._intern(KIND_BYTES, len(self.masks) - 1, 0, NO)
        self._byte_sets[mask] = term
        if mask & (mask - 1) == 0:
            self._single_bytes[term] = mask.bit_length() - 1
        return term

    def literal(self, data: bytes) -> int:
        """Exactly ``data`` (kept: a schema's names and pieces are spelled again by
        every compile into the store)."""
        term = self._literals.get(data)
        if term is None:
            term = EPS
            spellings = self._spellings
            for position in range(len(data) - 1, -1, -1):
                term = self.cat(self.byte_set(1 << data[position]), term)
                if term not in spellings:
                    spellings[term] = data, position
            self._literals[data] = term
        return term

    def cat(self, head: int, rest: int) -> int:
        """``head`` then ``rest``, kept right-nested: a concatenation at the head is
        taken apart (its rest concatenated with ``rest`` first)."""
        if head == EMPTY or rest == EMPTY:
            return EMPTY
        if head == EPS:
            return rest
        if rest == EPS:
            return head
        if self.kinds[head] == KIND_CAT:
            return self.cat(self.first[head], self.cat(self.second[head], rest))
        return self._intern(
            KIND_CAT, head, rest, _both(self.nullable_flags[head], self.nullable_flags[rest])
        )

    def alt(self, members: list[int]) -> int:
        """The union of ``members``: flattened, ``EMPTY`` dropped, byte sets merged,
        duplicates dropped, members in ascending id order."""
        mask = 0
        distinct: set[int] = set()
        for member in members:
            kind = self.kinds[member]
            if kind == KIND_ALT:
                for part in self.pool[self.first[member] : self.second[member]]:
                    if self.kinds[part] == KIND_BYTES:
                        mask |= self.masks[self.first[part]]
                    else:
                        distinct.add(part)
            elif kind == KIND_BYTES:
                mask |= self.masks[self.first[member]]
            elif kind != KIND_EMPTY:
                distinct.add(member)
        if mask:
            distinct.add(self.byte_set(mask))
        return self._run(KIND_ALT, distinct)

    def intersect(self, members: list[int], factor: bool = True) -> int:
        """The intersection of ``members``: flattened, every string (``~EMPTY``) dropped,
        byte sets met, a member and its complement found empty, ``EPS`` met as the
        members' common nullability; members in ascending id order. With ``factor``,
        heads that are prefix-free together are factored out (``_factored``)."""
        mask = -1
        distinct: set[int] = set()
        for member in members:
            parts = self.members(member) if self.kinds[member] == KIND_AND else [member]
            for part in parts:
                kind = self.kinds[part]
                if kind == KIND_EMPTY:
                    return EMPTY
                if kind == KIND_BYTES:
                    mask &= self.masks[self.first[part]]
                elif not (kind == KIND_NOT and self.first[part] == EMPTY):
                    distinct.add(part)
        if mask != -1:
            if mask == 0 or EPS in distinct:
                return EMPTY
            distinct.add(self.byte_set(mask))
        if not distinct:
            return self.complement(EMPTY)
        for part in distinct:
            if self.kinds[part] == KIND_NOT and self.first[part] in distinct:
                return EMPTY
        if EPS in distinct:
            return EPS if all(self.nullable(part) for part in distinct) else EMPTY
        factored = self._factored(distinct) if factor and len(distinct) > 1 else None
        return self._run(KIND_AND, distinct) if factored is None else factored

    # ------------------------------------------------------------------ factoring

    def _factored(self, members: set[int]) -> int | None:
        """The intersection of ``members`` with its heads factored out, or None
        (``fsm.terms._factored``, on rows): where no string of heads ``K1``, ``K2`` is
        a proper prefix of another, ``(K1 X1) & (K2 X2) = (K1 & K2) (X1 & X2)``. Heads
        that qualify are single-byte sets, or lexemes with one bound; a union among
        the members is distributed first when every branch qualifies, up to
        ``fsm.terms.MAX_FACTORED`` branches, and the rests behind one met head are
        joined. Rests are met without factoring, as the objects meet them."""
        choices: list[list[tuple[int, int]]] = []
        combinations = 1
        for member in sorted(members):
            branches = self.members(member) if self.kinds[member] == KIND_ALT else [member]
            split = []
            for branch in branches:
                parts = self._head_and_rest(branch)
                if parts is None:
                    return None
                split.append(parts)
            combinations *= len(split)
            if combinations > objects.MAX_FACTORED:
                return None
            choices.append(split)
        heads = [head for split in choices for head, _ in split]
        if all(self.kinds[head] == KIND_BYTES for head in heads):
            lexemes = False
        elif all(self.kinds[head] in (KIND_LEXEME, KIND_EXCEPT) for head in heads):
            bound = self._lexeme_bound(heads[0])
            if any(self._lexeme_bound(head) != bound for head in heads):
                return None
            lexemes = True
        else:
            return None
        rests: dict[int, list[int]] = {}  # per head met, the rests met behind it
        for combination in product(*choices):
            met = [head for head, _ in combination]
            head = self._meet_lexemes(met) if lexemes else self.intersect(met)
            if head != EMPTY:
                behind = self.intersect([rest for _, rest in combination], False)
                rests.setdefault(head, []).append(behind)
        return self.alt([self.cat(head, self.alt(behind)) for head, behind in rests.items()])

    def _head_and_rest(self, term: int) -> tuple[int, int] | None:
        """``term`` as a head that may factor (a lexeme or a single-byte set) and the
        rest, or None."""
        kind = self.kinds[term]
        if kind == KIND_BYTES or kind == KIND_LEXEME or kind == KIND_EXCEPT:
            return term, EPS
        if kind == KIND_CAT and self.kinds[self.first[term]] in _HEADS:
            return self.first[term], self.second[term]
        return None

    def _lexeme_bound(self, term: int) -> int:
        """A prefix-free lexeme holding every string of the lexeme ``term``
        (``fsm.terms.lexeme_bound``): its bound, the bound of what a lexeme but some
        names reads, or itself."""
        while self.kinds[term] == KIND_EXCEPT:
            term = self.first[term]
        bound = self.second[term]
        return term if bound == EMPTY else bound

    def _meet_lexemes(self, heads: list[int]) -> int:
        """The intersection of lexemes with one bound, as a lexeme with that bound
        (``fsm.terms._meet_lexemes``): a finite one's strings kept where the others
        accept them (a key against a pattern); a lexeme but some names met with the
        others as their meet but those names. The bound itself among them drops out:
        every string of the others is one of its strings (an open object's "any key"
        against a pattern is the pattern's key, walked in the pattern's states; the
        objects reach the same states through ``Lexeme.within``)."""
        distinct = list(dict.fromkeys(heads))
        bound = self._lexeme_bound(distinct[0])
        narrower = [head for head in distinct if head != bound]
        if narrower:
            distinct = narrower
        if len(distinct) == 1:
            return distinct[0]
        for head in distinct:
            strings = self.finite_strings(head, objects.MAX_MET_STRINGS, budget=32)
            if strings is None:
                continue
            rivals = [other for other in distinct if other != head]
            kept = [text for text in strings if all(self.matches(other, text) for other in rivals)]
            if len(kept) == len(strings):
                return head
            return self.lexeme(self.alt([self.literal(text) for text in kept]), bound)
        but = [head for head in distinct if self.kinds[head] == KIND_EXCEPT]
        if len(but) == 1 and self.first[but[0]] == bound:
            others = self._meet_lexemes([head for head in distinct if head != but[0]])
            if self.kinds[others] in (KIND_LEXEME, KIND_EXCEPT):
                return self.lexeme_except(others, self.aparts[self.second[but[0]]])
        items = [self._lexeme_item(head) for head in distinct]
        return self.lexeme(self.intersect(items), bound)

    def _lexeme_item(self, term: int) -> int:
        """What a lexeme reads, as a term: its item, or what a lexeme but some names
        reads less those names."""
        if self.kinds[term] == KIND_LEXEME:
            return self.first[term]
        names = self.alt([self.literal(text) for text in self.aparts[self.second[term]]])
        return self.intersect([self._lexeme_item(self.first[term]), self.complement(names)])

    def finite_strings(self, term: int, limit: int, budget: int = 128) -> list[bytes] | None:
        """Every string ``term`` accepts, when they are at most ``limit``; None when
        there are more, when the term holds what is not listed here (a thunk, an
        intersection, a complement, a checked leaf, a lexeme but some names, an
        unbounded repetition), or past ``budget`` rows visited
        (``fsm.terms.finite_strings``). Memoised: a listing may visit a hundred rows to
        say None, and each index over the store asks it again; the list returned is
        shared, not to be changed."""
        key = term, limit, budget
        if key in self._finite:
            return self._finite[key]
        item = self.first[term] if self.kinds[term] == KIND_LEXEME else term
        text = self._spelled(item) if limit > 0 and budget > 1 else None  # as listed
        found = [text] if text is not None else _FiniteStrings(self, limit, budget).of(term)
        self._finite[key] = found
        return found

    def _spelled(self, term: int) -> bytes | None:
        """The one string of a chain of single bytes (a key's name and its quote): known
        when ``literal`` built the chain, else read along it; None at the first item
        that is not one byte. Each name of an object a row meets is asked for its
        strings, and a fresh name's first row asks for each of them: a listing of its
        own cost more than the key's walk, and a read along the chain about 5 µs a
        name (``docs/design.md``, "Eighty-third session")."""
        if term == EPS:
            return b""
        known = self._spellings.get(term)
        if known is not None:
            data, position = known
            return data[position:]
        spelled = bytearray()
        for item in self.chain(term):
            byte = self._single_bytes.get(item)
            if byte is None:
                return None
            spelled.append(byte)
        return bytes(spelled)

    def _run(self, kind: int, distinct: set[int]) -> int:
        """The union or intersection (``kind``) of ``distinct``: ``EMPTY`` for none, the
        member itself for one."""
        if not distinct:
            return EMPTY
        if len(distinct) == 1:
            return next(iter(distinct))
        return self._intern_run(kind, sorted(distinct))

    def chain(self, term: int) -> list[int]:
        """A concatenation's items: its heads along the chain of rests, then the last
        (any other row is its own one item)."""
        items = []
        while self.kinds[term] == KIND_CAT:
            items.append(self.first[term])
            term = self.second[term]
        items.append(term)
        return items

    def cat_items(self, items: list[int]) -> int:
        """``items`` in order, folded from the right into pairs (``chain``'s inverse)."""
        rest = EPS
        for position in range(len(items) - 1, -1, -1):
            rest = self.cat(items[position], rest)
        return rest

    def members(self, term: int) -> list[int]:
        """The members of a union or an intersection, in ascending id order."""
        return self.pool[self.first[term] : self.second[term]]

    def complement(self, term: int) -> int:
        """Every byte string not in ``term``."""
        if self.kinds[term] == KIND_NOT:
            return self.first[term]
        flag = self.nullable_flags[term]
        return self._intern(KIND_NOT, term, 0, UNKNOWN if flag == UNKNOWN else YES - flag)

    def repeat(self, item: int, lo: int, hi: int | None) -> int:
        """``item`` repeated ``lo`` to ``hi`` times (``hi`` None: without bound), with
        ``fsm.terms.repeat``'s rewrites (``(x*){m,n}`` is ``x*``, ``(x+){m,}`` is
        ``x{m,}``)."""
        top = _UNBOUNDED if hi is None else hi
        if lo < 0 or top < lo or top > _UNBOUNDED or lo == _UNBOUNDED:
            raise InvalidSpec(f"repetition bounds out of range: {{{lo},{hi}}}")
        if top == 0 or item == EPS:
            return EPS
        if item == EMPTY:
            return EPS if lo == 0 else EMPTY
        if lo == 1 and top == 1:
            return item
        if self.kinds[item] == KIND_REPEAT and self.counts[self.second[item]] <= 1:
            inner_lo, inner_top = self._bounds(item)
            if top == _UNBOUNDED or inner_top == _UNBOUNDED:
                # again through ``repeat``: ``((a+)?)+`` is ``(a+)*``, which is ``a*``
                if inner_lo == 0:
                    return self.repeat(self.first[item], 0, None)
                if top == _UNBOUNDED:
                    return self.repeat(self.first[item], lo, None)
        return self._repetition(item, lo, top)

    def _repetition(self, item: int, lo: int, top: int) -> int:
        """The row of ``item{lo,top}``, its counts interned as a pair in ``counts``."""
        nullable = YES if lo == 0 else self.nullable_flags[item]
        key = lo << _COUNT_BITS | top
        counted = self._count_ids.get(key)
        if counted is None:
            counted = self._count_ids[key] = len(self.counts)
            self.counts.append(lo)
            self.counts.append(top)
        return self._intern(KIND_REPEAT, item, counted, nullable)

    def lexeme_except(self, within: int, apart: Iterable[bytes]) -> int:
        """The strings of the lexeme ``within`` but those in ``apart`` (an object's
        other keys: any JSON string but the names; ``fsm.terms.Lexeme``'s promise as
        a term of its own). Derived without an item: ``within``'s derivative, with the
        names read so far taken out, and ``within``'s derivative alone once the byte
        leaves every name."""
        return self._except_sorted(within, tuple(sorted(set(apart))))

    def _except_sorted(self, within: int, names: tuple[bytes, ...]) -> int:
        """``lexeme_except`` of names sorted and distinct, interned by the tuple itself
        (the rests of a sorted tuple's names after a byte are sorted too: a step down
        "any other key" does not sort them again, nor spell a key of its own)."""
        if not names or within == EMPTY:
            return within
        if self.kinds[within] not in (KIND_LEXEME, KIND_EXCEPT):
            if within == EPS:
                return EMPTY if b"" in names else EPS
            excluded = self.alt([self.literal(text) for text in names])
            return self.intersect([within, self.complement(excluded)])
        known = self._apart_ids.get(names)
        if known is None:
            known = self._apart_ids[names] = len(self.aparts)
            self.aparts.append(names)
        return self._intern(KIND_EXCEPT, within, known, NO)

    def _bounds(self, repetition: int) -> tuple[int, int]:
        """A repetition's lower and upper counts (``_UNBOUNDED`` for none)."""
        at = self.second[repetition]
        return self.counts[at], self.counts[at + 1]

    def repeat_bounds(self, repetition: int) -> tuple[int, int | None]:
        """A repetition's lower and upper counts (None: without bound)."""
        lo, top = self._bounds(repetition)
        return lo, None if top == _UNBOUNDED else top

    def lexeme(self, item: int, bound: int = EMPTY) -> int:
        """``item`` declared prefix-free (the caller's promise, ``fsm.terms.lexeme``):
        a nullable one is over, so it is ``EPS``. ``bound``, when a lexeme, is the
        caller's promise that every string of ``item`` is one of ``bound``'s. As in
        ``fsm.terms.Lexeme`` it is no part of the term's value: the first lexeme of an
        item keeps the bound it was interned with (any bound given holds of its
        strings)."""
        if item == EMPTY or item == EPS or self.kinds[item] in (KIND_LEXEME, KIND_EXCEPT):
            return item
        if self.nullable(item):
            return EPS
        return self.known_lexeme(item, bound)

    def known_lexeme(self, item: int, bound: int = EMPTY) -> int:
        """``lexeme(item, bound)`` for an item known to need no rewriting: no lexeme,
        and not matching the empty string (an object term's lexeme: asking again could
        build a thunk's body inside its own construction)."""
        if self.kinds[bound] != KIND_LEXEME:  # the bound's item is what a derivative holds
            bound = EMPTY
        return self._intern(KIND_LEXEME, item, bound, NO)

    def thunk(self, made: objects.Thunk | StoredThunk) -> int:
        """The row of the thunk ``made``, one per key (equal thunks are equal terms,
        whichever kind made them); its body is built when first needed (``body``). A
        thunk whose builder promises how its body opens (``opening_bytes``) is known
        not to match the empty string without building it."""
        known = self._thunk_ids.get(made.key)
        if known is not None:
            return known
        self.thunks.append(made)
        flag = UNKNOWN if made.opening_bytes() is None else NO
        term = self._append(KIND_THUNK, len(self.thunks) - 1, _NO_BODY, flag)
        self._thunk_ids[made.key] = term
        return term

    def body(self, term: int) -> int:
        """A thunk's body, built once: by its builder, in this store, or from its
        object (which does not keep it) and loaded; the thunks inside it become rows,
        their bodies not built. Asked only inside ``_through_body``, whose guard
        refuses a builder that needs its own thunk's body."""
        body = self.second[term]
        if body == _NO_BODY:
            made = self.thunks[self.first[term]]
            if isinstance(made, StoredThunk):
                body = made.build()
            else:
                body = self.load(made.body_apart())
            self.second[term] = body
        return body

    def thunk_of(self, term: int) -> objects.Thunk | StoredThunk:
        """What made the thunk ``term``: its key, builder and promises."""
        return self.thunks[self.first[term]]

    def checked(self, checker: objects.Checker, text: bytes = b"") -> int:
        """The strings ``s`` with ``checker.accepts(text + s)`` (``fsm.terms.checked``):
        ``EMPTY`` when none, else a row of the checker and its canonical text."""
        which = self._checker_ids.get(checker)
        if which is None:
            which = self._checker_ids[checker] = len(self.checkers)
            self.checkers.append(checker)
        return self._checked_at(which, text)

    def _checked_at(self, which: int, text: bytes) -> int:
        """``checked`` for the checker stored at ``which`` (a derivative reads it off its
        row, and so skips hashing the checker). Texts of one ``state_key`` are one
        term, the first one met's: a bounded number's digits then lead to a few terms
        per place, not one per number, and each is checked once."""
        checker = self.checkers[which]
        key = checker.state_key(text)
        if key is None:
            return self._checked_text(which, text)
        keyed = (which, key)
        found = self._checked_keys.get(keyed)
        if found is None:
            found = self._checked_keys[keyed] = self._checked_text(which, text)
        return found

    def _checked_text(self, which: int, text: bytes) -> int:
        """``EMPTY`` unless ``text`` is viable, else the term of its canonical text."""
        checker = self.checkers[which]
        if not checker.viable(text):
            return EMPTY
        text = checker.canonical(text)
        spelled = self._text_ids.get(text)
        if spelled is None:
            spelled = self._text_ids[text] = len(self.texts)
            self.texts.append(text)
        flag = YES if checker.accepts(text) else NO
        return self._intern(KIND_CHECKED, which, spelled, flag)

    # ------------------------------------------------------------------ semantics

    def nullable(self, term: int) -> bool:
        """Whether ``term`` accepts the empty string: its flag, or, where that waits on
        a thunk's body, worked out now (the bodies it needs built) and kept."""
        flag = self.nullable_flags[term]
        if flag != UNKNOWN:
            return flag == YES
        found = self._nullable_of(term)
        self.nullable_flags[term] = YES if found else NO
        return found

    def needs_liveness_check(self, term: int) -> bool:
        """Whether ``term`` holds an intersection or a complement outside every thunk's
        body, or a thunk whose builder says its body may: its emptiness then cannot be
        read off its row (``EMPTY``), and a search must tell
        (``fsm.terms.Term.needs_liveness_check``, asked of rows)."""
        known = self._liveness.get(term)
        if known is not None:
            return known
        kind = self.kinds[term]
        if kind == KIND_AND or kind == KIND_NOT:
            found = True
        elif kind == KIND_CAT:
            found = self.needs_liveness_check(self.first[term]) or self.needs_liveness_check(
                self.second[term]
            )
        elif kind == KIND_ALT:
            found = any(self.needs_liveness_check(member) for member in self.members(term))
        elif kind == KIND_REPEAT or kind == KIND_LEXEME or kind == KIND_EXCEPT:
            found = self.needs_liveness_check(self.first[term])
        elif kind == KIND_THUNK:  # its builder's word (``keyed_thunk``), the body unread
            found = self.thunks[self.first[term]].needs_liveness_check
        else:
            found = False
        self._liveness[term] = found
        return found

    def _nullable_of(self, term: int) -> bool:
        kind = self.kinds[term]
        first = self.first[term]
        if kind == KIND_CAT:
            return self.nullable(first) and self.nullable(self.second[term])
        if kind == KIND_ALT:
            return any(self.nullable(member) for member in self.members(term))
        if kind == KIND_AND:
            return all(self.nullable(member) for member in self.members(term))
        if kind == KIND_NOT:
            return not self.nullable(first)
        if kind == KIND_REPEAT:
            return self.nullable(first)
        assert kind == KIND_THUNK, kind  # the others' flags are known when interned
        return self._through_body(term, self.nullable)

    def _through_body(self, thunk: int, ask: Callable[[int], Answer]) -> Answer:
        """``ask(body)`` of a thunk, which is inside that question until it returns:
        reaching it again before a byte is read is recursion without a guard, which
        would never end (``fsm.terms.Thunk.through_body``)."""
        if thunk in self._entered:
            key = self.thunks[self.first[thunk]].key
            raise InvalidSpec(f"unguarded recursion through {key!r}")
        self._entered.add(thunk)
        try:
            return ask(self.body(thunk))
        finally:
            self._entered.discard(thunk)

    def derivative(self, term: int, byte: int) -> int:
        """The suffixes of ``term``'s strings that begin with ``byte``: memoised per
        term and byte, and computed once per class of the term's byte partition when
        that partition was asked for (``class_bytes``)."""
        kind = self.kinds[term]
        if kind == KIND_BYTES:  # constant time: no memo to keep
            return EPS if self.masks[self.first[term]] >> byte & 1 else EMPTY
        if kind == KIND_CAT:
            head = self.first[term]
            if self.kinds[head] == KIND_BYTES:  # a literal's step
                return self.second[term] if self.masks[self.first[head]] >> byte & 1 else EMPTY
        elif kind == KIND_CHECKED:
            # not memoised, as in ``fsm.terms``: a memo per number read would only grow;
            # the rows of the texts still do (the store's lifetime: docs/design.md)
            which = self.first[term]
            if byte not in self.checkers[which].alphabet:
                return EMPTY
            return self._checked_at(which, self.texts[self.second[term]] + bytes((byte,)))
        key = term << 8 | byte
        known = self._derivatives.get(key)
        if known is not None:
            return known
        firsts = self._representatives.get(term)
        if firsts is not None and firsts[byte] != byte:
            found = self.derivative(term, firsts[byte])
        else:
            found = self._derive(term, byte)
        self._derivatives[key] = found
        return found

    def _derive(self, term: int, byte: int) -> int:
        """``derivative`` computed (byte sets and checked leaves never get here)."""
        kind = self.kinds[term]
        if kind == KIND_EMPTY or kind == KIND_EPS:
            return EMPTY
        first, second = self.first[term], self.second[term]
        if kind == KIND_CAT:
            ahead = self.cat(self.derivative(first, byte), second)
            if self.nullable(first):
                return self.alt([ahead, self.derivative(second, byte)])
            return ahead
        if kind == KIND_ALT:
            return self.alt([self.derivative(m, byte) for m in self.members(term)])
        if kind == KIND_AND:
            return self.intersect([self.derivative(m, byte) for m in self.members(term)])
        if kind == KIND_NOT:
            return self.complement(self.derivative(first, byte))
        if kind == KIND_REPEAT:
            lo, top = self._bounds(term)
            rest = self.repeat(first, max(lo - 1, 0), None if top == _UNBOUNDED else top - 1)
            return self.cat(self.derivative(first, byte), rest)
        if kind == KIND_EXCEPT:
            return self._except_derivative(first, self.aparts[second], byte)
        if kind == KIND_THUNK:
            return self._through_body(term, lambda body: self.derivative(body, byte))
        return self._lexeme_derivative(first, second, byte)  # KIND_LEXEME

    def _except_derivative(self, within: int, names: tuple[bytes, ...], byte: int) -> int:
        """``within``'s derivative but the rests of the names that start with ``byte``:
        none where a name ends with ``within``'s string, ``within``'s derivative as it
        is where no name goes on."""
        derived = self.derivative(within, byte)
        rests = [text[1:] for text in names if text and text[0] == byte]  # sorted, distinct
        if rests and not rests[0]:  # a name that ends here sorts first
            if self.nullable(derived):
                derived = self._except_sorted(derived, (b"",))  # that string, taken out
            del rests[0]
        return self._except_sorted(derived, tuple(rests))

    def _lexeme_derivative(self, item: int, bound: int, byte: int) -> int:
        """A lexeme's derivative, its bound's derivative as its bound. Its strings lie
        within that bound's, so a derivative whose item holds the bound's item
        (``_holds``) is that bound, exactly: an unanchored pattern's string is the
        plain JSON string's state once the match is read (``fsm.terms``, the same
        rule)."""
        derived = self.derivative(item, byte)
        if bound == EMPTY:
            return self.lexeme(derived)
        derived_bound = self.derivative(bound, byte)
        if self.kinds[derived_bound] != KIND_LEXEME:
            return self.lexeme(derived)
        if self._holds(derived, self.first[derived_bound]):
            return derived_bound
        return self.lexeme(derived, derived_bound)

    def _holds(self, term: int, branch: int) -> bool:
        """Whether ``term`` holds every string of ``branch``, by structure (a sufficient
        test): it is ``branch``, a union with ``branch`` among its members, a head
        matching the empty string then ``branch``, or a head holding ``branch``'s
        head then ``branch``'s rest."""
        if term == branch:
            return True
        kind = self.kinds[term]
        if kind == KIND_ALT:
            return branch in self.members(term)
        if kind != KIND_CAT:
            return False
        head, rest = self.first[term], self.second[term]
        if rest == branch and self.nullable(head):
            return True
        if self.kinds[branch] != KIND_CAT or rest != self.second[branch]:
            return False
        return self._holds(head, self.first[branch])

    def first_bytes(self, term: int) -> int:
        """Mask of the bytes whose derivative is not ``EMPTY`` (by id: interning makes
        that the objects' syntactic test), one derivative per class of the term's
        partition (``fsm.terms.first_bytes``)."""
        firsts = self.representatives(term)
        live = 0
        for byte in self.class_bytes(term):
            if self.derivative(term, byte) != EMPTY:
                live |= 1 << byte
        mask = 0
        for byte in range(256):
            if live >> firsts[byte] & 1:
                mask |= 1 << byte
        return mask

    def first_bytes_over(self, term: int, budget: int = 256) -> int:
        """A mask holding every byte a string of ``term`` may start with, read from its
        rows without a derivative (``fsm.decompose.first_bytes_over``): a
        concatenation's heads up to the first not nullable, a union's members, the
        bytes every member of an intersection may start with, a thunk's promised
        opening or its body, a checked leaf's alphabet; every byte for a complement, a
        thunk inside its own body, or past ``budget`` rows (for the whole term, as the
        objects answer: the same answer in any order)."""
        left = [budget]
        found = self._first_over(term, set(), left)
        return _ALL_BYTES if left[0] < 0 else found

    def _first_over(self, term: int, thunks: set[int], left: list[int]) -> int:
        left[0] -= 1
        if left[0] < 0:
            return _ALL_BYTES
        kind = self.kinds[term]
        first = self.first[term]
        if kind == KIND_EMPTY or kind == KIND_EPS:
            return 0
        if kind == KIND_BYTES:
            return self.masks[first]
        if kind == KIND_CAT:  # the chain is one concatenation: one visit, as the objects'
            mask = self._first_over(first, thunks, left)
            while self.nullable(first):
                term = self.second[term]
                if self.kinds[term] != KIND_CAT:
                    return mask | self._first_over(term, thunks, left)
                first = self.first[term]
                mask |= self._first_over(first, thunks, left)
            return mask
        if kind == KIND_ALT or kind == KIND_AND:
            return self._first_of_members(term, thunks, left)
        if kind == KIND_EXCEPT:
            return self._first_of_except(term, self._first_over(first, thunks, left))
        if kind == KIND_REPEAT or kind == KIND_LEXEME:
            return self._first_over(first, thunks, left)
        if kind == KIND_THUNK:
            return self._first_of_thunk(term, thunks, left)
        if kind == KIND_CHECKED:
            return objects.byte_mask(self.checkers[first].alphabet)
        return _ALL_BYTES  # a complement

    def _first_of_except(self, term: int, within: int) -> int:
        """``within``'s first bytes less those only names start with: a byte a name
        begins with stays when the derivative by it is not empty (the objects read the
        trie of the names, which leaves out ``"`` when the empty key is a name)."""
        found = within
        for name in self.aparts[self.second[term]]:
            if name and found >> name[0] & 1 and self.derivative(term, name[0]) == EMPTY:
                found &= ~(1 << name[0])
        return found

    def _first_of_members(self, term: int, thunks: set[int], left: list[int]) -> int:
        """A union's members' first bytes, or those every intersection member shares."""
        if self.kinds[term] == KIND_ALT:
            found = 0
            for member in self.members(term):
                found |= self._first_over(member, thunks, left)
            return found
        found = _ALL_BYTES
        for member in self.members(term):
            found &= self._first_over(member, thunks, left)
        return found

    def _first_of_thunk(self, term: int, thunks: set[int], left: list[int]) -> int:
        """A thunk's promised opening, else its body's first bytes (built for it);
        every byte when met again along the way."""
        opening = self.thunks[self.first[term]].opening_bytes()
        if opening is not None:
            return opening
        if term in thunks:
            return _ALL_BYTES
        thunks.add(term)
        found = self._first_over(self._through_body(term, lambda body: body), thunks, left)
        thunks.discard(term)
        return found

    def matches(self, term: int, data: bytes) -> bool:
        """Whether ``term`` accepts exactly ``data``."""
        for byte in data:
            term = self.derivative(term, byte)
            if term == EMPTY:
                return False
        return self.nullable(term)

    def byte_partition(self, term: int) -> np.ndarray:
        """A class label per byte (``uint16[256]``): bytes with one label have one
        derivative. Finer than necessary at times, never coarser."""
        known = self._partitions.get(term)
        if known is not None:
            return known
        kind = self.kinds[term]
        first = self.first[term]
        if kind == KIND_EMPTY or kind == KIND_EPS:
            found = TRIVIAL
        elif kind == KIND_BYTES:
            found = mask_partition(self.masks[first])
        elif kind == KIND_CAT:  # the heads up to the first that is not nullable
            parts = [self.byte_partition(first)]
            rest = self.second[term]
            while self.nullable(first):
                if self.kinds[rest] != KIND_CAT:
                    parts.append(self.byte_partition(rest))
                    break
                first, rest = self.first[rest], self.second[rest]
                parts.append(self.byte_partition(first))
            found = refine_all(parts)
        elif kind == KIND_ALT or kind == KIND_AND:
            found = refine_all([self.byte_partition(member) for member in self.members(term)])
        elif kind == KIND_THUNK:
            found = self._through_body(term, self.byte_partition)
        elif kind == KIND_CHECKED:
            checker = self.checkers[self.first[term]]
            found = alphabet_partition(checker.alphabet, checker.alike)
        elif kind == KIND_EXCEPT:  # each name's first byte in a class of its own
            found = refine_all(
                [self.byte_partition(first), first_byte_partition(self.aparts[self.second[term]])]
            )
        else:  # complement, repetition, lexeme: their item's
            found = self.byte_partition(first)
        self._partitions[term] = found
        return found

    def class_bytes(self, term: int) -> bytes:
        """One byte per class of ``byte_partition(term)`` (its lowest), ascending; from
        here on ``derivative`` computes one derivative per class. Kept per term, as
        bytes (no object for the cyclic collector): every expansion and search of the
        term asks again, in every index over the store."""
        known = self._class_bytes.get(term)
        if known is None:
            known = self._class_bytes[term] = class_representatives(self.representatives(term))
        return known

    def representatives(self, term: int) -> bytes:
        """For each byte, the lowest byte of its class of ``byte_partition(term)``."""
        known = self._representatives.get(term)
        if known is not None:
            return known
        found: bytes = first_members(self.byte_partition(term)).tobytes()
        self._representatives[term] = found
        return found

    # ------------------------------------------------------------------ objects

    def load(self, term: objects.Term) -> int:
        """The id of the object term ``term``: its thunks become rows whose bodies are
        built when needed; a lexeme keeps its bound, and one promised to read
        ``within``'s strings but ``apart`` is stored as that promise
        (``lexeme_except``), its item left unbuilt. Anything else raises
        ``NotStorable``. The store keeps each object it converted, so the terms that
        every schema shares (a JSON string, whitespace, numbers) are converted once
        per store, not once per schema: until the compiler builds rows itself."""
        return self._loader.load(term)


class StoredThunk:
    """A thunk built in the store (``fsm.term_builder.StoredTerms``), as
    ``fsm.terms.Thunk`` is for objects: identified by ``key`` alone, its body
    ``make(key)`` when ``keyed`` (one builder for a family of thunks) else ``make()``,
    an id of the store the builder writes to. ``shortest`` and ``search_order`` are
    ``fsm.terms.Thunk``'s promises, kept for the questions that read them."""

    __slots__ = ("key", "make", "keyed", "shortest", "search_order", "needs_liveness_check")

    def __init__(
        self,
        key: Hashable,
        make: Callable[..., int],
        *,
        keyed: bool = False,
        shortest: Callable[[], bytes] | None = None,
        search_order: int = 0,
        needs_liveness_check: bool = False,
    ) -> None:
        self.key = key
        self.make = make
        self.keyed = keyed
        self.shortest = shortest
        self.search_order = search_order
        self.needs_liveness_check = needs_liveness_check

    def build(self) -> int:
        """The body's id (the store keeps it; this record does not)."""
        return self.make(self.key) if self.keyed else self.make()

    def opening_bytes(self) -> int | None:
        """The mask a keyed family's builder promises its bodies start within
        (``fsm.terms.keyed_thunk``), else None."""
        opening = getattr(self.make, "opening_bytes", None) if self.keyed else None
        return None if opening is None else int(opening(self.key))

    def opens_in_place(self) -> bool:
        """``fsm.terms.Thunk.opens_in_place``: as the keyed family's builder says."""
        opens = getattr(self.make, "opens_in_place", None) if self.keyed else None
        return opens is not None and bool(opens(self.key))

    def __repr__(self) -> str:
        return f"<{self.key!r}>"


class _Loader:
    """A store's conversions: object terms met, by identity, to their ids (a term
    shared by several parents, or by several schemas, is converted once)."""

    def __init__(self, store: TermStore) -> None:
        self.store = store
        self.done: dict[int, int] = {}
        self.held: list[objects.Term] = []  # keeps the ids in ``done`` meaningful

    def load(self, term: objects.Term) -> int:
        known = self.done.get(id(term))
        if known is not None:
            return known
        found = self._convert(term)
        self.done[id(term)] = found
        self.held.append(term)
        return found

    def _convert(self, term: objects.Term) -> int:
        store = self.store
        if term is objects.EMPTY:
            return EMPTY
        if term is objects.EPS:
            return EPS
        if isinstance(term, objects.Bytes):
            return store.byte_set(term.mask)
        if isinstance(term, objects.Thunk):
            return store.thunk(term)
        if isinstance(term, objects.Checked):
            return store.checked(term.checker, term.text)
        if isinstance(term, objects.Lexeme):
            return self._lexeme(term)
        return self._compound(term)

    def _compound(self, term: objects.Term) -> int:
        """A concatenation, union, intersection, complement or repetition."""
        store = self.store
        if isinstance(term, objects.Cat):
            rest = EPS
            for item in reversed(term.items):
                rest = store.cat(self.load(item), rest)
            return rest
        if isinstance(term, objects.Alt):
            return store.alt([self.load(item) for item in term.items])
        if isinstance(term, objects.And):
            # as the objects left it: factored where they factored, whole where not
            return store.intersect([self.load(item) for item in term.items], False)
        if isinstance(term, objects.Not):
            return store.complement(self.load(term.item))
        if isinstance(term, objects.Repeat):
            return store.repeat(self.load(term.item), term.lo, term.hi)
        raise NotStorable(f"not a term the store knows: {type(term).__name__} {term!r}")

    def _lexeme(self, term: objects.Lexeme) -> int:
        """A lexeme with its bound, or as its promise to read ``within`` but ``apart``."""
        if term.within is not None:
            return self.store.lexeme_except(self.load(term.within), term.apart)
        bound = EMPTY if term.bound is None else self.load(term.bound)
        return self.store.known_lexeme(self.load(term.item), bound)


_HEADS: Final = (KIND_BYTES, KIND_LEXEME, KIND_EXCEPT)
"""Kinds of a concatenation's head that an intersection may factor out."""


class _FiniteStrings:
    """One ``TermStore.finite_strings`` listing, with its limit and what is left of its
    budget."""

    def __init__(self, store: TermStore, limit: int, budget: int) -> None:
        self.store = store
        self.limit = limit
        self.budget = budget

    def of(self, term: int) -> list[bytes] | None:
        self.budget -= 1
        if self.budget < 0:
            return None
        store = self.store
        kind = store.kinds[term]
        if kind == KIND_EPS:
            return [b""]
        if kind == KIND_EMPTY:
            return []
        if kind == KIND_BYTES:
            return self._members(store.masks[store.first[term]])
        if kind == KIND_LEXEME:
            return self.of(store.first[term])
        if kind == KIND_CAT:
            return self._sequence(term)
        if kind == KIND_ALT:
            return self._union([[member] for member in store.members(term)])
        if kind == KIND_REPEAT:
            lo, top = store._bounds(term)
            if top > self.limit:
                return None
            item = store.first[term]
            return self._union([[item] * count for count in range(lo, top + 1)])
        return None

    def _sequence(self, term: int) -> list[bytes] | None:
        """The strings of a concatenation: its chain of heads, then the last, read in
        order."""
        return self._joined(self.store.chain(term))

    def _joined(self, items: list[int]) -> list[bytes] | None:
        """The strings of ``items`` in order (runs of single bytes, the letters of a
        key, appended at once): ``fsm.terms._FiniteStrings._sequence`` on rows, so the
        two spend their budgets alike. Written again rather than shared through a base
        class: a call per item through one made the objects' listing 8% slower."""
        store = self.store
        strings, run = [b""], bytearray()
        for item in items:
            if store.kinds[item] == KIND_BYTES:
                mask = store.masks[store.first[item]]
                if mask.bit_count() == 1:
                    run.append(mask.bit_length() - 1)
                    continue
            tails = self.of(item)
            if tails is None or len(strings) * len(tails) > self.limit:
                return None
            head = bytes(run)
            run.clear()
            strings = list(dict.fromkeys(s + head + tail for s in strings for tail in tails))
        if run:
            strings = [s + run for s in strings]
        return strings

    def _union(self, sequences: list[list[int]]) -> list[bytes] | None:
        """The strings of the union of the concatenations of ``sequences``."""
        found: dict[bytes, None] = {}
        for items in sequences:
            strings = self._joined(items)
            if strings is None:
                return None
            found.update(dict.fromkeys(strings))
            if len(found) > self.limit:
                return None
        return list(found)

    def _members(self, mask: int) -> list[bytes] | None:
        if mask.bit_count() > self.limit:
            return None
        members = []
        while mask:
            lowest = mask & -mask
            members.append(bytes((lowest.bit_length() - 1,)))
            mask ^= lowest
        return members


def _both(first: int, second: int) -> int:
    """The nullability flag of a concatenation of terms with these flags."""
    if first == NO or second == NO:
        return NO
    return YES if first == YES and second == YES else UNKNOWN
