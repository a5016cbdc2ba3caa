"""Byte-level regular terms with intersection, complement, thunks and checked prefixes.

Every constraint compiles to a ``Term``. A term denotes a set of byte strings; its
Brzozowski derivative by a byte ``b`` denotes the suffixes of its strings that start
with ``b``. Exploring derivatives lazily gives a deterministic automaton whose states
are terms (``fsm.derivative_automaton``), so huge or recursive constraints cost only
the states that generation visits.

Terms are immutable and compared structurally (with cached hashes). The smart
constructors (``cat``, ``alt``, ...) normalise as they build (flattening,
associativity, commutativity and idempotence of ``alt``/``intersect``, absorbing
``EMPTY``), which keeps the derivatives of a regular term finitely many.

Two extensions go beyond regular expressions:

* ``thunk(key, make)``: a term built on first use and identified by ``key``. It makes
  recursion (JSON ``$ref`` cycles, arbitrary JSON values) and parameterised structures
  (an object body keyed by the set of keys already used) cheap to describe. Recursion
  must be guarded: a thunk must consume a byte before it reaches itself again.
* ``checked(checker, text)``: the strings ``s`` for which ``checker.accepts(text + s)``;
  used where a predicate is exact but not regular-friendly (numbers with bounds).
* ``lexeme(term)``: the same strings, declared prefix-free (no string of it extends
  another, as a JSON string ends at its closing quote). A state that begins with a
  lexeme reads a token inside it the same way whatever follows, so the token index
  walks a lexeme once and shares that walk between its continuations
  (``fsm.token_index``); derivatives of a lexeme stay lexemes and end in ``EPS``.

Threads: the memos on a term (hash, nullability, partition, derivatives) are written
once with a value any thread would compute alike, so a race only repeats work; when
equality hands a term's sub-terms to an equal one, the field changes to an equal value,
so a reader sees either. A thunk's recursion guards are kept per thread, so two threads
walking one thunk never mistake each other for unguarded recursion, and its body is
published once.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable, Iterable
from itertools import product
from typing import Final, Protocol

import numpy as np

from fsm.errors import InvalidSpec
from fsm.partition import first_members
from fsm.partition_ops import (
    TRIVIAL,
    alphabet_partition,
    class_representatives,
    first_byte_partition,
    mask_partition,
    refine_all,
)

ALL_BYTES = (1 << 256) - 1
_GUARD_LOCK = threading.Lock()
"""Serialises the creation of a thunk's recursion-guard sets (``Thunk._guard_set``)."""


_HASH_BITS: Final = (1 << 61) - 1
"""Terms' hashes are kept below 2**61: the compiled modules hold such ints unboxed, so
folding them (``_fold_hash``) allocates nothing."""
_LOW_30: Final = (1 << 30) - 1
_LOW_54: Final = (1 << 54) - 1


class Term:
    """Base of all terms; caches hash, nullability, byte partition and derivatives."""

    __slots__ = (
        "_hash",
        "_nullable",
        "_partition",
        "_representatives",
        "_derivatives",
        "needs_liveness_check",
    )

    def __init__(self, hash_value: int, needs_liveness_check: bool) -> None:
        self._hash = hash_value & _HASH_BITS  # a small int: unboxed in compiled code
        self._nullable: bool | None = None
        self._partition: np.ndarray | None = None
        self._representatives: bytes | None = None
        # Allocated by the first derivative: most terms are never derived (parts of a
        # derivative being built, states no walk expands), and every dict is one more
        # object for the cyclic collector to scan.
        self._derivatives: dict[int, Term] | None = None
        # Set when emptiness cannot be read off the syntax (intersection, complement).
        self.needs_liveness_check = needs_liveness_check

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        """Structural equality. Equal terms built apart (a derivative equal to a known
        state, made of new objects) are compared item by item, recursively; once found
        equal, ``other`` takes this term's sub-terms (equal values, so nothing it means
        changes), and comparing the two again stops at the first level, on identity. A
        liveness search over intersections met the same pairs millions of times."""
        if self is other:
            return True
        if not isinstance(other, Term) or type(self) is not type(other):
            return False
        return self._hash == other._hash and self._same(other)

    def _same(self, other: Term) -> bool:
        """Whether ``other``, a term of this type with this hash, is equal; when it
        is, it takes this term's sub-terms. Terms with sub-terms override it and compare
        their own fields (no key tuple built per comparison); the others compare their
        ``_key``."""
        return self._key() == other._key()

    def _key(self) -> tuple:
        """The fields that identify a term without sub-terms (see ``_same``)."""
        raise NotImplementedError


class _Empty(Term):
    __slots__ = ()

    def _key(self) -> tuple:
        return ()

    def __repr__(self) -> str:
        return "EMPTY"


class _Eps(Term):
    __slots__ = ()

    def _key(self) -> tuple:
        return ()

    def __repr__(self) -> str:
        return "EPS"


class _Itself(Term):
    """Stands in a term's derivative memo for the term itself (``derivative``)."""

    __slots__ = ()

    def _key(self) -> tuple:
        return ()

    def __repr__(self) -> str:
        return "ITSELF"


EMPTY: Term = _Empty(hash("EMPTY"), False)
EPS: Term = _Eps(hash("EPS"), False)
_ITSELF: Term = _Itself(hash("ITSELF"), False)
"""A loop (a string's body after a character) memoised as the term itself would make
the term and its memo a cycle, which only the cyclic collector frees: every term the
term reaches, a whole schema's, would then live on until the collector's next full
pass, and be scanned by each pass until then."""


class Bytes(Term):
    """One byte from a set, held as a 256-bit integer mask."""

    __slots__ = ("mask",)

    def __init__(self, mask: int) -> None:
        super().__init__(hash(("bytes", mask)), False)
        self.mask = mask

    def _key(self) -> tuple:
        return (self.mask,)

    def __repr__(self) -> str:
        members = [b for b in range(256) if self.mask >> b & 1]
        if len(members) == 1:
            return repr(bytes(members))
        return f"[{len(members)} bytes]"


class Cat(Term):
    """``items`` in sequence (at least two, none a ``Cat``), built by ``cat``, which
    flattens them and passes their hash and liveness flag.

    The hash folds the items' hashes from the right, so a concatenation that ends in
    another one's items (``derivative(head) + rest``, the shape of every derivative of
    a concatenation) is hashed from that one's hash and its own new head items, not
    from every item again."""

    __slots__ = ("items", "_rest")

    def __init__(
        self, items: tuple[Term, ...], hash_value: int, needs: bool, rest: Term | None = None
    ) -> None:
        """``rest``: the concatenation of ``items[1:]`` when the caller has it."""
        super().__init__(hash_value, needs)
        self.items = items
        self._rest = rest

    def _same(self, other: Term) -> bool:
        assert isinstance(other, Cat)
        if self.items != other.items:
            return False
        other.items = self.items
        return True

    def rest(self) -> Term:
        """The concatenation of every item but the first: the one ``cat`` put an item
        ahead of, when it was built so, else built here once. Its derivatives are
        memoised on it, so every derivative of this term reuses them."""
        rest = self._rest
        if rest is None:
            rest = self._rest = self.suffix(1)
        return rest

    def suffix(self, start: int) -> Term:
        """The concatenation of the items from ``start`` on (``EPS`` past the end),
        built without ``cat``'s flattening: they are flat already (neither ``EPS``,
        ``EMPTY`` nor a ``Cat``)."""
        items = self.items[start:]
        if len(items) <= 1:
            return items[0] if items else EPS
        needs = any(item.needs_liveness_check for item in items)
        return Cat(items, _fold_hash(items[:-1], items[-1]._hash), needs)

    def __repr__(self) -> str:
        return "(" + " ".join(map(repr, self.items)) + ")"


class Alt(Term):
    __slots__ = ("items",)

    def __init__(self, items: frozenset[Term], needs: bool) -> None:
        super().__init__(hash(("alt", items)), needs)
        self.items = items

    def _same(self, other: Term) -> bool:
        assert isinstance(other, Alt)
        if self.items != other.items:
            return False
        other.items = self.items
        return True

    def __repr__(self) -> str:
        return "(" + " | ".join(sorted(map(repr, self.items))) + ")"


class And(Term):
    __slots__ = ("items",)

    def __init__(self, items: frozenset[Term]) -> None:
        super().__init__(hash(("and", items)), True)
        self.items = items

    def _same(self, other: Term) -> bool:
        assert isinstance(other, And)
        if self.items != other.items:
            return False
        other.items = self.items
        return True

    def __repr__(self) -> str:
        return "(" + " & ".join(sorted(map(repr, self.items))) + ")"


class Not(Term):
    __slots__ = ("item",)

    def __init__(self, item: Term) -> None:
        super().__init__(hash(("not", item)), True)
        self.item = item

    def _same(self, other: Term) -> bool:
        assert isinstance(other, Not)
        if self.item != other.item:
            return False
        other.item = self.item
        return True

    def __repr__(self) -> str:
        return f"~{self.item!r}"


class Repeat(Term):
    """``item`` repeated between ``lo`` and ``hi`` times (``hi`` None: unbounded)."""

    __slots__ = ("item", "lo", "hi")

    def __init__(self, item: Term, lo: int, hi: int | None) -> None:
        # -1 for "unbounded", not None: before Python 3.12, hash(None) is the object's
        # address, so every term holding a star would hash differently in each run,
        # whatever PYTHONHASHSEED says, and with it every set's order of terms
        hash_value = hash(("rep", item, lo, -1 if hi is None else hi))
        super().__init__(hash_value, item.needs_liveness_check)
        self.item, self.lo, self.hi = item, lo, hi

    def _same(self, other: Term) -> bool:
        assert isinstance(other, Repeat)
        if self.lo != other.lo or self.hi != other.hi or self.item != other.item:
            return False
        other.item = self.item
        return True

    def __repr__(self) -> str:
        return f"{self.item!r}{{{self.lo},{'' if self.hi is None else self.hi}}}"


class Thunk(Term):
    """A term built on first use; identified by ``key`` alone. ``shortest``, when
    given, tells the shortest (then lowest) string of its language without building
    the body (shortest completions ask it instead of taking the body apart).
    ``search_order`` ranks it among a union's branches for searches that must build
    bodies (lower first; ``fsm.satisfiable``): an object's next keys in schema order,
    so the bodies a search builds are the ones a walk in that order needs."""

    __slots__ = (
        "key",
        "shortest",
        "search_order",
        "_make",
        "_keyed",
        "_in_place",
        "_body",
        "_expanding",
        "_visiting",
    )

    def __init__(
        self,
        key: Hashable,
        make: Callable[..., Term],
        needs_check: bool,
        shortest: Callable[[], bytes] | None = None,
        search_order: int = 0,
        keyed: bool = False,
        in_place: bool = False,
    ) -> None:
        """``keyed``: ``make`` takes the key (``keyed_thunk``), else nothing;
        ``in_place``: see ``opens_in_place``."""
        super().__init__(hash(("thunk", key)), needs_check)
        self.key = key
        self.shortest = shortest
        self.search_order = search_order
        self._make: Callable[..., Term] | None = make
        self._keyed = keyed
        self._in_place = in_place
        self._body: Term | None = None
        # Threads building the body / inside ``through_body``, allocated on first use:
        # most thunks (an object body per set of keys used) are never built, and every
        # set is one more object for the cyclic collector to scan.
        self._expanding: set[int] | None = None
        self._visiting: set[int] | None = None

    def through_body(self, compute: Callable[[Term], object]) -> object:
        """``compute(body)``, refusing to re-enter: reaching this thunk again (in the same
        thread) before a byte is consumed means the recursion is unguarded and would
        never end."""
        me = threading.get_ident()
        visiting = self._guard_set("_visiting")
        if me in visiting:
            raise InvalidSpec(f"unguarded recursion through {self.key!r}")
        visiting.add(me)
        try:
            return compute(self.body())
        finally:
            visiting.discard(me)

    def _guard_set(self, name: str) -> set[int]:
        """The set of threads in field ``name``, created on first use under a lock, so
        two threads arriving together register in the same set."""
        threads = getattr(self, name)
        if threads is not None:
            return threads  # type: ignore[no-any-return]
        with _GUARD_LOCK:
            threads = getattr(self, name)
            if threads is None:
                threads = set()
                setattr(self, name, threads)
            return threads  # type: ignore[no-any-return]

    def _key(self) -> tuple:
        return (self.key,)

    def opening_bytes(self) -> int | None:
        """A mask holding every byte a string of the body may start with, when the body
        is not built yet and its family's builder tells (``keyed_thunk``), else None.
        Asking whether a term may be empty or how it may start went through every
        object body behind a number or a key, and built it: in a row over an object's
        keys, the body after each key that takes a number, most never read."""
        make = self._make
        if not self._keyed or make is None:
            return None
        opening = getattr(make, "opening_bytes", None)
        return None if opening is None else int(opening(self.key))

    def opens_in_place(self) -> bool:
        """Whether ``fsm.decompose`` reads this thunk as its body where it heads a
        concatenation, as its family's builder says (``keyed_thunk``): what follows an
        object's key (``fsm.json_schema.objects``), kept unbuilt for each key a body
        offers, split as the member spelled out once the key is read."""
        return self._in_place

    def body(self) -> Term:
        """The expansion, built once; re-entry without consuming a byte is an error.
        Threads that build it at the same time all return the first body published."""
        if self._body is not None:
            return self._body
        make = self._make
        if make is None:  # another thread published the body meanwhile
            published = self._published()
            assert published is not None
            return published
        me = threading.get_ident()
        expanding = self._guard_set("_expanding")
        if me in expanding:
            raise InvalidSpec(f"unguarded recursion through {self.key!r}")
        expanding.add(me)
        try:
            body = make(self.key) if self._keyed else make()
        finally:
            expanding.discard(me)
        published = self._published()
        if published is None:
            self._body = published = body
        self._make = None  # after the body is published: see the check above
        return published

    def body_apart(self) -> Term:
        """The body as ``body`` builds it, but not kept here when it was not built
        yet: for a store that keeps its own (``fsm.term_store``), so this object does
        not hold a second copy of it alive."""
        if self._body is not None:
            return self._body
        make = self._make
        if make is None:
            return self.body()
        return make(self.key) if self._keyed else make()

    def _published(self) -> Term | None:
        """The body as another thread may have set it since this one last looked. Read
        through a call: once ``self._body is not None`` was false, a type checker takes
        the field to be None from then on, and mypyc checks that at run time."""
        return self._body

    def __repr__(self) -> str:
        return f"<{self.key!r}>"


class Lexeme(Term):
    """``item``, declared prefix-free: once it matches, nothing more can follow.

    ``within`` and ``apart``, when given, are the caller's promise that this lexeme
    reads ``within``'s strings but the byte strings ``apart`` (a JSON string other than
    these keys): a text that is a prefix of none of them leaves the two in the same
    state. A derivative takes ``within``'s derivative as it is once the byte leaves
    every ``apart`` string, so the states there are ``within``'s, and a token walk of
    this lexeme takes ``within``'s shared walk everywhere but down the ``apart``
    strings (``fsm.row_walk``).

    ``bound``, when given, is the caller's promise that every string of this lexeme is
    one of ``bound``'s (a JSON key or string value: one of all JSON strings). Lexemes
    with one bound are prefix-free together, which is what lets an intersection of
    concatenations behind them split where they end (``intersect``); a derivative's
    bound is the bound's derivative. ``within`` is a bound too. Neither is part of the
    term's value: equal items make equal lexemes, and the promises hold of the strings,
    so whichever equal lexeme a memo hands back keeps them true."""

    __slots__ = ("apart", "bound", "inner_split", "item", "within")

    def __init__(
        self,
        item: Term,
        within: Lexeme | None = None,
        apart: frozenset[bytes] = frozenset(),
        bound: Lexeme | None = None,
    ) -> None:
        super().__init__(hash(("lexeme", item)), item.needs_liveness_check)
        self.item = item
        self.within = within
        self.apart = apart
        self.bound = bound
        # ``fsm.decompose.nested_split``'s answer, kept with the term (a lexeme's states
        # are shared by indexes through the vocabulary): () when it has no lexeme inside
        self.inner_split: tuple[Term, ...] | None = None

    def _same(self, other: Term) -> bool:
        assert isinstance(other, Lexeme)
        if self.item != other.item:
            return False
        other.item = self.item
        return True

    def __repr__(self) -> str:
        return f"lexeme({self.item!r})"


class Checker(Hashable, Protocol):
    """An exact predicate over byte strings, for ``checked`` terms."""

    alphabet: bytes

    @property
    def alike(self) -> tuple[bytes, ...]:
        """Groups of ``alphabet``'s bytes that every text reads alike, each written as
        its first byte by ``canonical``: a derivative is taken once per group."""
        ...

    def viable(self, text: bytes) -> bool:
        """Whether some continuation of ``text`` can be accepted (may over-approximate)."""
        ...

    def accepts(self, text: bytes) -> bool:
        """Whether ``text`` itself is accepted (exact)."""
        ...

    def canonical(self, text: bytes) -> bytes:
        """A text with exactly the accepted continuations of ``text`` (``text`` itself
        when the checker knows no shorter description): prefixes with one future are
        then one term, so the automaton explores them as one state."""
        ...

    def completions(self, text: bytes) -> tuple[bytes, ...]:
        """Continuations of ``text`` worth trying before a blind search for one that
        is accepted (a guess: each is checked with ``accepts``; empty when none)."""
        ...

    def state_key(self, text: bytes) -> Hashable | None:
        """A key that texts with exactly the same accepted continuations share, where
        ``canonical`` cannot write them alike, or None: a store takes the texts of one
        key as one term (``fsm.term_store``)."""
        ...


class Checked(Term):
    __slots__ = ("checker", "text")

    def __init__(self, checker: Checker, text: bytes) -> None:
        super().__init__(hash(("checked", checker, text)), False)
        self.checker, self.text = checker, text

    def _key(self) -> tuple:
        return (self.checker, self.text)

    def __repr__(self) -> str:
        return f"check({self.checker!r}, {self.text!r})"


# --------------------------------------------------------------------------- builders


def byte_mask(members: bytes | Iterable[int]) -> int:
    """The 256-bit mask of the bytes in ``members`` (as ``Bytes.mask`` holds them)."""
    mask = 0
    for b in members:
        mask |= 1 << b
    return mask


def range_mask(lo: int, hi: int) -> int:
    """The 256-bit mask of the bytes ``lo..hi`` inclusive (``lo <= hi``)."""
    return ((1 << (hi - lo + 1)) - 1) << lo


def byte_set(members: bytes | Iterable[int]) -> Term:
    """One byte from ``members``."""
    return _bytes_from_mask(byte_mask(members))


def _bytes_from_mask(mask: int) -> Term:
    return Bytes(mask) if mask else EMPTY


_SINGLE_BYTES = tuple(Bytes(1 << b) for b in range(256))
"""The 256 one-byte terms, as constants like ``EPS``."""


def byte_range(lo: int, hi: int) -> Term:
    """One byte in ``lo..hi`` inclusive."""
    if lo > hi:
        return EMPTY
    return _bytes_from_mask(range_mask(lo, hi))


def literal(data: bytes) -> Term:
    """Exactly the byte string ``data`` (its bytes are shared terms: their partitions
    and derivatives are computed once per process, not once per literal)."""
    return cat(*(_SINGLE_BYTES[b] for b in data))


def finite_strings(term: Term, limit: int, budget: int = 128) -> list[bytes] | None:
    """Every string ``term`` accepts, when they are at most ``limit`` (an object key,
    whitespace then a key, a small enum); None when there are more, when the term
    holds what is not enumerated here (a thunk, an intersection, a complement, a
    checked leaf, an unbounded repetition), or when telling would visit more than
    ``budget`` sub-terms: a root walk asks it of every new lexeme, so a large one (a
    date format, an open object's other keys) must cost little to turn down."""
    if _plainly_unlisted(term, _UNLISTED_DEPTH):
        return None
    return _FiniteStrings(limit, budget).of(term)


_UNLISTED_DEPTH = 6
"""Levels ``_plainly_unlisted`` looks down: whitespace then a JSON string is a lexeme
of a concatenation holding the string's lexeme of a concatenation holding a repetition
(a pure twenty-fold cut on that lexeme)."""


def _plainly_unlisted(term: Term, depth: int) -> bool:
    """Whether ``term`` holds, down concatenations and lexemes ``depth`` levels deep,
    an item ``finite_strings`` turns down (an unbounded repetition, a thunk, a check,
    an intersection, a complement): looked at first, so that whitespace then a string
    is turned down before the whitespace's strings are listed."""
    if isinstance(term, Lexeme):
        return depth > 0 and _plainly_unlisted(term.item, depth - 1)
    if isinstance(term, Cat):
        return depth > 0 and any(_plainly_unlisted(item, depth - 1) for item in term.items)
    if isinstance(term, Repeat):
        return term.hi is None
    return isinstance(term, (Thunk, Checked, And, Not))


class _FiniteStrings:
    """One ``finite_strings`` enumeration, with its limit and what is left of its
    budget."""

    def __init__(self, limit: int, budget: int) -> None:
        self.limit, self.budget = limit, budget

    def of(self, term: Term) -> list[bytes] | None:
        self.budget -= 1
        if self.budget < 0:
            return None
        if term is EPS:
            return [b""]
        if term is EMPTY:
            return []
        if isinstance(term, Bytes):
            return self._members(term.mask)
        if isinstance(term, Lexeme):
            return self.of(term.item)
        if isinstance(term, Cat):
            return self._sequence(term.items)
        if isinstance(term, Alt):
            return self._union((item,) for item in term.items)
        if isinstance(term, Repeat) and term.hi is not None and term.hi <= self.limit:
            counts = range(term.lo, term.hi + 1)
            return self._union((term.item,) * count for count in counts)
        return None

    def _members(self, mask: int) -> list[bytes] | None:
        if mask.bit_count() > self.limit:
            return None
        members = []
        while mask:
            lowest = mask & -mask
            members.append(bytes((lowest.bit_length() - 1,)))
            mask ^= lowest
        return members

    def _sequence(self, items: tuple[Term, ...]) -> list[bytes] | None:
        """The strings of the concatenation of ``items`` (runs of single bytes, the
        letters of a key, appended at once)."""
        strings, run = [b""], bytearray()
        for item in items:
            if isinstance(item, Bytes) and item.mask.bit_count() == 1:
                run.append(item.mask.bit_length() - 1)
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

    def _union(self, sequences: Iterable[tuple[Term, ...]]) -> list[bytes] | None:
        """The strings of the union of the concatenations of ``sequences``."""
        found: dict[bytes, None] = {}
        for items in sequences:
            strings = self._sequence(items)
            if strings is None:
                return None
            found.update(dict.fromkeys(strings))
            if len(found) > self.limit:
                return None
        return list(found)


def cat(*terms: Term) -> Term:
    """Concatenation, flattened; ``EMPTY`` anywhere makes it ``EMPTY``."""
    return cat_of(terms)


def cat_of(terms: tuple[Term, ...]) -> Term:
    """``cat`` of the terms of a tuple: a builder's parts are one already, and
    passing them on as ``cat(*parts)`` would pack them again (``fsm.term_builder``)."""
    if len(terms) == 2 and isinstance(terms[1], Cat):
        return _prepend(terms[0], terms[1])
    items: list[Term] = []
    needs = False
    suffix: Cat | None = None  # the concatenation whose items end ``items``, if any
    for term in terms:
        if term is EMPTY:
            return EMPTY
        if term is EPS:
            continue
        needs = needs or term.needs_liveness_check
        if type(term) is Cat:
            items.extend(term.items)
            suffix = term
        else:
            items.append(term)
            suffix = None
    if not items:
        return EPS
    if len(items) == 1:
        return items[0]
    if suffix is None:
        return Cat(tuple(items), _fold_hash(items[:-1], items[-1]._hash), needs)
    ahead = len(items) - len(suffix.items)
    rest = suffix if ahead == 1 else None
    return Cat(tuple(items), _fold_hash(items[:ahead], suffix._hash), needs, rest)


def _prepend(head: Term, rest: Cat) -> Term:
    """``cat(head, rest)`` for a concatenation ``rest``, the shape of every derivative of
    a concatenation (``derivative(first item) + the others``), built without the
    general loop: the same items, hash and liveness flag. Behind a single ``head``,
    ``rest`` is the new term's ``rest()`` as it is: no suffix to copy and hash again,
    and the derivatives already memoised on ``rest`` are reused."""
    if head is EMPTY:
        return EMPTY
    if head is EPS:
        return rest
    needs = head.needs_liveness_check or rest.needs_liveness_check
    if isinstance(head, Cat):
        return Cat(head.items + rest.items, _fold_hash(head.items, rest._hash), needs)
    return Cat((head, *rest.items), _fold_one(head._hash, rest._hash), needs, rest)


def _fold_hash(items: list[Term] | tuple[Term, ...], tail: int) -> int:
    """``Cat``'s hash: ``tail`` (the last item's hash, or a suffix concatenation's)
    folded with the hashes of ``items`` from the right (by index: ``reversed`` looks up
    the sequence's ``__reversed__`` at every call; ``_fold_one``)."""
    for position in range(len(items) - 1, -1, -1):
        tail = _fold_one(items[position]._hash, tail)
    return tail


def _fold_one(head: int, tail: int) -> int:
    """One step of ``_fold_hash``: the hash so far rotated (order matters), the
    item's added by xor, mixed by a multiplication; every intermediate below 2**61 (no
    tuple, no big int)."""
    mixed = (((tail & _LOW_54) << 7) | (tail >> 54)) ^ head
    return ((mixed & _LOW_30) * 0x2F0A4C9B) ^ (mixed >> 30)


def alt(*terms: Term) -> Term:
    """Union, normalised: flattened, deduplicated, single-byte sets merged."""
    return alt_of(terms)


def alt_of(terms: tuple[Term, ...]) -> Term:
    """``alt`` of the terms of a tuple (``cat_of``)."""
    members: set[Term] = set()
    mask = 0
    needs = False
    for term in terms:
        parts = term.items if isinstance(term, Alt) else (term,)
        for part in parts:
            if part is EMPTY:
                continue
            if isinstance(part, Bytes):
                mask |= part.mask
            else:
                members.add(part)
                needs = needs or part.needs_liveness_check
    if mask:
        members.add(Bytes(mask))
    if not members:
        return EMPTY
    if len(members) == 1:
        return next(iter(members))
    return Alt(frozenset(members), needs)


def intersect(*terms: Term) -> Term:
    """Intersection, normalised; single-byte sets intersected directly, heads that are
    prefix-free together factored out (``_factored``)."""
    return _intersection(terms, True)


def intersect_of(terms: tuple[Term, ...]) -> Term:
    """``intersect`` of the terms of a tuple (``cat_of``)."""
    return _intersection(terms, True)


def _intersection(terms: Iterable[Term], factor: bool) -> Term:
    """``intersect``, factoring its heads when ``factor``: the rests behind factored
    heads are met without it, so two long literals with a common start cost one level
    here and one per byte their derivatives read, not a recursion per byte."""
    collected = _conjuncts(terms)
    if collected is None:
        return EMPTY
    members, mask = collected
    if mask is not None:
        if not mask:
            return EMPTY
        if not members:
            return Bytes(mask)
        if EPS in members:
            return EMPTY
        members.add(Bytes(mask))
    if not members:
        return Not(EMPTY)
    if len(members) == 1:
        return next(iter(members))
    if any(isinstance(part, Not) and part.item in members for part in members):
        return EMPTY  # a term and its complement
    if EPS in members:
        return EPS if all(nullable(m) for m in members) else EMPTY
    factored = _factored(members) if factor else None
    return And(frozenset(members)) if factored is None else factored


MAX_FACTORED = 64
"""Branches an intersection is distributed into, at most, to factor its heads."""


def _factored(members: set[Term]) -> Term | None:
    """The intersection of ``members`` with its heads factored out, or None.

    Where no string of the heads ``K1``, ``K2`` is a proper prefix of another,
    ``(K1 X1) & (K2 X2) = (K1 & K2) (X1 & X2)``: a string of both splits after the
    same head string, since one of two heads that begin it would begin the other. Heads
    that qualify are single-byte sets, and lexemes with one bound (JSON keys and string
    values: an object's named key against a pattern's, ``allOf`` of members). A union
    among the members is distributed first when every branch qualifies, up to
    ``MAX_FACTORED`` branches, and the branches behind one head met are joined
    (``K X | K Y = K (X | Y)``). The result is a union of concatenations behind one
    lexeme, which token walks share (``fsm.row_walk``), where the intersection was a
    state walked byte by byte; pairs of different keys fall away at once."""
    choices: list[list[tuple[Term, Term]]] = []
    combinations = 1
    for member in members:
        split = []
        for branch in member.items if isinstance(member, Alt) else (member,):
            parts = _head_and_rest(branch)
            if parts is None:
                return None
            split.append(parts)
        combinations *= len(split)
        if combinations > MAX_FACTORED:
            return None
        choices.append(split)
    heads = [head for split in choices for head, _ in split]
    if all(isinstance(head, Bytes) for head in heads):
        meet = _meet_bytes
    elif all(isinstance(head, Lexeme) for head in heads) and _one_bound(heads):
        meet = _meet_lexemes
    else:
        return None
    rests: dict[Term, list[Term]] = {}  # per head met, the rests met behind it
    for combination in product(*choices):
        head = meet([head for head, _ in combination])
        if head is not EMPTY:
            rests.setdefault(head, []).append(_intersection((r for _, r in combination), False))
    return alt(*(cat(head, alt(*behind)) for head, behind in rests.items()))


def _head_and_rest(term: Term) -> tuple[Term, Term] | None:
    """``term`` as a head that may factor (a lexeme or a single-byte set) and the rest."""
    if isinstance(term, (Lexeme, Bytes)):
        return term, EPS
    if isinstance(term, Cat) and isinstance(term.items[0], (Lexeme, Bytes)):
        return term.items[0], term.rest()
    return None


def _one_bound(heads: list[Term]) -> bool:
    bounds = [lexeme_bound(head) for head in heads if isinstance(head, Lexeme)]
    return all(bound is bounds[0] or bound == bounds[0] for bound in bounds)


def _meet_bytes(heads: list[Term]) -> Term:
    return intersect(*heads)


MAX_MET_STRINGS = 16
"""Strings of a finite lexeme (a key) checked one by one against the others it meets."""


def _meet_lexemes(heads: list[Term]) -> Term:
    """The intersection of lexemes with one bound, as a lexeme with that bound: a finite
    one's strings kept where the others accept them (a key against a pattern); a bound
    but some strings (an open object's other keys, ``Lexeme.within``) met with others
    as their meet but those strings, so its walk is theirs but down the names."""
    distinct: list[Lexeme] = [head for head in dict.fromkeys(heads) if isinstance(head, Lexeme)]
    if len(distinct) == 1:
        return distinct[0]
    bound = lexeme_bound(distinct[0])
    for head in distinct:
        strings = finite_strings(head, MAX_MET_STRINGS, budget=32)
        if strings is None:
            continue
        rivals = [other for other in distinct if other is not head]
        kept = [text for text in strings if all(matches(other, text) for other in rivals)]
        if len(kept) == len(strings):
            return head
        return lexeme(alt(*(literal(text) for text in kept)), bound=bound)
    item = intersect(*(head.item for head in distinct))
    but = [head for head in distinct if head.within is not None and head.within == bound]
    if len(but) == 1:  # (bound but names) & others: the others' meet but the names
        others = _meet_lexemes([head for head in distinct if head is not but[0]])
        if isinstance(others, Lexeme):
            return lexeme(item, others, but[0].apart, bound)
    return lexeme(item, bound=bound)


def _conjuncts(terms: Iterable[Term]) -> tuple[set[Term], int | None] | None:
    """The flattened conjuncts other than single-byte sets, and those sets' common
    mask (None if there were none); None when one conjunct is ``EMPTY``."""
    members: set[Term] = set()
    mask: int | None = None
    for term in terms:
        for part in term.items if isinstance(term, And) else (term,):
            if part is EMPTY:
                return None
            if isinstance(part, Bytes):
                mask = part.mask if mask is None else mask & part.mask
            elif not (isinstance(part, Not) and part.item is EMPTY):  # Not(EMPTY): all
                members.add(part)
    return members, mask


def complement(term: Term) -> Term:
    """All byte strings not in ``term``."""
    if isinstance(term, Not):
        return term.item
    return Not(term)


def repeat(term: Term, lo: int, hi: int | None) -> Term:
    """``term`` repeated ``lo..hi`` times (``hi=None``: unbounded)."""
    if lo < 0 or (hi is not None and hi < lo):
        raise InvalidSpec(f"bad repetition bounds {{{lo},{hi}}}")
    if hi == 0 or term is EPS:
        return EPS
    if term is EMPTY:
        return EPS if lo == 0 else EMPTY
    if lo == 1 and hi == 1:
        return term
    if isinstance(term, Repeat) and term.lo <= 1 and (hi is None or term.hi is None):
        # (x*){m,n} and (x{0,k})* are x*; (x+)* and (x+){m,} are x{m,}: one repetition,
        # so a pattern's (.+)* is the term .* is, and derives as it does
        if term.lo == 0:
            return Repeat(term.item, 0, None)
        if hi is None:
            return Repeat(term.item, lo, None)
    return Repeat(term, lo, hi)


def star(term: Term) -> Term:
    return repeat(term, 0, None)


def plus(term: Term) -> Term:
    return repeat(term, 1, None)


def opt(term: Term) -> Term:
    return repeat(term, 0, 1)


def thunk(
    key: Hashable,
    make: Callable[[], Term],
    *,
    needs_liveness_check: bool = False,
    shortest: Callable[[], bytes] | None = None,
    search_order: int = 0,
) -> Term:
    """A lazily built term identified by ``key`` (see the module docstring);
    ``shortest()``, if given, must be the shortest, then lowest, string ``make()``
    accepts (a large lazy union, such as the leap seconds of ``time``, is then completed
    without being built). ``search_order``: see ``Thunk``."""
    return Thunk(key, make, needs_liveness_check, shortest, search_order)


def keyed_thunk(
    key: Hashable,
    make: Callable[[Hashable], Term],
    *,
    search_order: int = 0,
    needs_liveness_check: bool = False,
) -> Term:
    """``thunk(key, lambda: make(key))`` without a callable per thunk: one ``make``
    serves every thunk of a family whose key says all the body depends on (an object's
    bodies, one per set of keys used), and a key of numbers and strings is no object
    for the cyclic collector to keep scanning once it has seen it. A ``make`` with a
    method ``opening_bytes(key)`` promises that the body is never empty and starts
    with one of the bytes of the mask it returns (more may be named, none left out):
    ``nullable`` and ``fsm.decompose.first_bytes_over`` then read it instead of
    building the body (``Thunk.opening_bytes``). A ``make`` with a method
    ``opens_in_place(key)`` that answers yes has its thunk read as its body where it
    heads a concatenation that ``fsm.decompose`` splits (``Thunk.opens_in_place``).
    ``needs_liveness_check``: the body may hold an intersection or a complement outside
    every thunk (``Term.needs_liveness_check``), which its builder knows."""
    opens = getattr(make, "opens_in_place", None)
    in_place = opens is not None and bool(opens(key))
    return Thunk(key, make, needs_liveness_check, None, search_order, keyed=True, in_place=in_place)


def lexeme(
    term: Term,
    within: Term | None = None,
    apart: frozenset[bytes] = frozenset(),
    bound: Term | None = None,
) -> Term:
    """``term`` marked prefix-free (the caller's promise: no string of ``term`` is a
    proper prefix of another). Nullable means "matched": it normalises to ``EPS``,
    which also drops what a derivative could only spell as dead alternatives.
    ``within`` and ``apart``, ``bound``: the ``Lexeme`` promises, kept when they are
    lexemes."""
    if term is EMPTY or term is EPS or isinstance(term, Lexeme):
        return term
    if nullable(term):
        return EPS
    kept = bound if isinstance(bound, Lexeme) else None
    if isinstance(within, Lexeme):
        return Lexeme(term, within, apart, kept)
    return Lexeme(term, bound=kept)


def lexeme_bound(term: Lexeme) -> Lexeme:
    """A prefix-free lexeme holding every string of ``term`` (``term`` itself when it
    was promised none): lexemes with one bound are prefix-free together. ``bound``
    before ``within``: a key met with a pattern reads the pattern's strings but the
    names, and is still one of all JSON strings."""
    if term.bound is not None:
        return term.bound
    if term.within is not None:
        return term.within
    return term


def checked(checker: Checker, text: bytes = b"") -> Term:
    """Strings ``s`` with ``checker.accepts(text + s)``; ``EMPTY`` if not viable."""
    return Checked(checker, checker.canonical(text)) if checker.viable(text) else EMPTY


ANY_STRING: Term = complement(EMPTY)
"""Every byte string."""


# ------------------------------------------------------------------------- semantics


def nullable(term: Term) -> bool:
    """Whether ``term`` accepts the empty string."""
    cached = term._nullable
    if cached is not None:
        return cached
    result = _nullable(term)
    term._nullable = result
    return result


def _nullable(term: Term) -> bool:
    if term is EPS:
        return True
    if term is EMPTY or isinstance(term, Bytes):
        return False
    if isinstance(term, Cat):
        return all(nullable(t) for t in term.items)
    if isinstance(term, Alt):
        return any(nullable(t) for t in term.items)
    if isinstance(term, And):
        return all(nullable(t) for t in term.items)
    if isinstance(term, Not):
        return not nullable(term.item)
    if isinstance(term, Repeat):
        return term.lo == 0 or nullable(term.item)
    if isinstance(term, Lexeme):
        return False  # a nullable lexeme is EPS
    if isinstance(term, Thunk):
        if term.opening_bytes() is not None:
            return False  # the builder's promise (``keyed_thunk``): no empty body
        return bool(term.through_body(nullable))
    if isinstance(term, Checked):
        return term.checker.accepts(term.text)
    raise TypeError(f"not a term: {term!r}")


def derivative(term: Term, byte: int) -> Term:
    """The suffixes of ``term``'s strings that begin with ``byte``.

    Memoised per byte, and computed once per class of the term's own byte partition:
    a parent's partition is finer than its items', so an item is asked about several
    bytes of one of its classes, which all share one derivative. A term whose partition
    was never computed (one a text walk meets once, as a witness check does) derives
    the byte directly: its partition would cost more than it saves."""
    if isinstance(term, Bytes):
        return EPS if term.mask >> byte & 1 else EMPTY
    if isinstance(term, Cat):
        head = term.items[0]
        if isinstance(head, Bytes):
            # a literal's step, or a branch the byte does not start: no memo to allocate
            return term.rest() if head.mask >> byte & 1 else EMPTY
    elif isinstance(term, Checked):
        # not memoised: a checked term's derivatives are its text's prefixes, new ones
        # for every number a service writes, which a shared term (``INTEGRAL_NUMBER``)
        # would keep alive for the life of the process
        return _derivative(term, byte)
    memo = term._derivatives
    if memo is None:
        memo = term._derivatives = {}
    cached = memo.get(byte)
    if cached is _ITSELF:
        return term
    if cached is None:
        firsts = term._representatives
        if firsts is None and term._partition is not None and type(term) in _PARTITIONED:
            firsts = representatives(term)
        if firsts is not None and firsts[byte] != byte:
            cached = derivative(term, firsts[byte])
        if cached is None:
            cached = _derivative(term, byte)
            if cached == term:  # a loop (a string's body after a character): no new copy
                cached = term
        memo[byte] = _ITSELF if cached is term else cached
    return cached


def matches(term: Term, data: bytes) -> bool:
    """Whether ``term`` accepts exactly ``data`` (derivatives, memoised on the terms;
    a checked leaf asks its checker once, which by ``Checker``'s contract answers as
    its derivatives would, without a ``viable`` and a ``canonical`` per byte)."""
    if isinstance(term, Checked):
        alphabet = term.checker.alphabet
        return all(byte in alphabet for byte in data) and term.checker.accepts(term.text + data)
    for byte in data:
        term = derivative(term, byte)
        if term is EMPTY:
            return False
    return nullable(term)


_PARTITIONED = frozenset((Cat, Alt, And, Not, Repeat, Lexeme))
"""Terms whose derivative is computed once per class of their byte partition (the
others derive in constant time)."""


def representatives(term: Term) -> bytes:
    """For each byte, the lowest byte in its class of ``byte_partition(term)``."""
    cached = term._representatives
    if cached is None:
        cached = term._representatives = first_members(byte_partition(term)).tobytes()
    return cached


def class_bytes(term: Term) -> bytes:
    """One byte per class of ``byte_partition(term)`` (its lowest), ascending
    (``class_representatives``)."""
    return class_representatives(representatives(term))


def _derivative(term: Term, byte: int) -> Term:
    if term is EPS or term is EMPTY:
        return EMPTY
    if isinstance(term, Bytes):
        return EPS if term.mask >> byte & 1 else EMPTY
    if isinstance(term, Cat):
        head, tail = term.items[0], term.rest()
        first = cat(derivative(head, byte), tail)
        return alt(first, derivative(tail, byte)) if nullable(head) else first
    if isinstance(term, Alt):
        return alt(*(derivative(t, byte) for t in term.items))
    if isinstance(term, And):
        return intersect(*(derivative(t, byte) for t in term.items))
    if isinstance(term, Not):
        return complement(derivative(term.item, byte))
    if isinstance(term, Repeat):
        hi = None if term.hi is None else term.hi - 1
        return cat(derivative(term.item, byte), repeat(term.item, max(term.lo - 1, 0), hi))
    if isinstance(term, Lexeme):
        return _lexeme_derivative(term, byte)
    if isinstance(term, Thunk):
        return term.through_body(lambda body: derivative(body, byte))  # type: ignore[return-value]
    if isinstance(term, Checked):
        if byte not in term.checker.alphabet:
            return EMPTY
        return checked(term.checker, term.text + bytes((byte,)))
    raise TypeError(f"not a term: {term!r}")


def _lexeme_derivative(term: Lexeme, byte: int) -> Term:
    """A lexeme's derivative, with its ``within`` promise carried along: ``within``'s
    own derivative once the byte leaves every ``apart`` string.

    Under the promise the derivative's strings are ``within``'s derivative's but the
    rest of the ``apart`` strings, so that pair describes it: its item (the item's
    derivative) is a thunk keyed by the pair and built only when something asks for
    it. A token walk down the ``apart`` strings (an object's other keys, past each
    named key's prefixes) then steps through ``within``'s memoised derivatives, not
    through the item's, which are new terms for every set of keys.

    A lexeme's strings lie within its bound's, so a derivative whose item holds the
    bound's derivative's item as a branch is that bound, exactly: an unanchored
    pattern's string (``.*@.*``) is the plain JSON string's state once the match is
    read, and its rows are the plain string's, which the vocabulary keeps."""
    if term.within is None:
        bound = _derived_bound(term, byte)
        item = derivative(term.item, byte)
        if bound is not None and _holds(item, bound.item):
            return bound
        return lexeme(item, bound=bound)
    within = derivative(term.within, byte)
    apart = frozenset(text[1:] for text in term.apart if text and text[0] == byte)
    if nullable(within) and apart <= {b""}:  # ``within``'s string ended here
        return EMPTY if apart else within
    apart = apart - {b""}  # a name ended where ``within`` goes on: nothing to take out
    if not apart:
        return within
    if not isinstance(within, Lexeme):  # outside the promise: derive the item itself
        return lexeme(derivative(term.item, byte))
    item = term.item
    rest = Thunk(
        ("lexeme-except", within, apart), _ItemDerivative(item, byte), item.needs_liveness_check
    )
    return Lexeme(rest, within, apart, _derived_bound(term, byte))


class _ItemDerivative:
    """``derivative(item, byte)`` when called: the body of a lexeme derivative's item
    under its ``within`` promise (``_lexeme_derivative``). One object where a closure is
    two (the function and its captured variables), for the cyclic collector to track:
    a walk down an object's key names makes one per step, and most are never called."""

    __slots__ = ("byte", "item")

    def __init__(self, item: Term, byte: int) -> None:
        self.item = item
        self.byte = byte

    def __call__(self) -> Term:
        return derivative(self.item, self.byte)


def _holds(item: Term, branch: Term) -> bool:
    """Whether ``item`` is ``branch``, a union with ``branch`` among its items, or a
    concatenation that holds ``branch``'s first item so and goes on as ``branch`` does
    (``(.*|x.*)"`` holds ``.*"``), or that starts with an item matching the empty
    string and then is ``branch`` (``[a-z]*.*"`` holds ``.*"``): a sufficient test, by
    structure."""
    if item == branch:
        return True
    if isinstance(item, Alt):
        return branch in item.items
    if not isinstance(item, Cat) or not isinstance(branch, Cat):
        return False
    items, rest = item.items, branch.items
    if len(items) == len(rest) + 1:
        return nullable(items[0]) and items[1:] == rest
    return len(items) == len(rest) and items[1:] == rest[1:] and _holds(items[0], rest[0])


def _derived_bound(term: Lexeme, byte: int) -> Lexeme | None:
    """The bound of ``term``'s derivative by ``byte``: its bound's derivative, when that
    is still a lexeme."""
    if term.bound is None:
        return None
    derived = derivative(term.bound, byte)
    return derived if isinstance(derived, Lexeme) else None


def byte_partition(term: Term) -> np.ndarray:
    """Class label per byte (uint16[256]): bytes with equal labels have equal derivatives.

    The partition may be finer than necessary, never coarser.
    """
    cached = term._partition
    if cached is None:
        cached = term._partition = _partition(term)  # shared between terms: never written
    return cached


def _partition(term: Term) -> np.ndarray:
    if term is EPS or term is EMPTY:
        return TRIVIAL
    if isinstance(term, Bytes):
        return mask_partition(term.mask)
    if isinstance(term, Cat):
        parts = []
        for item in term.items:
            parts.append(byte_partition(item))
            if not nullable(item):
                break
        return refine_all(parts)
    if isinstance(term, (Alt, And)):
        return refine_all([byte_partition(t) for t in term.items])
    if isinstance(term, Lexeme) and term.within is not None:
        # a derivative is ``within``'s, but where the byte begins an ``apart`` string
        # (``_lexeme_derivative``): each such byte is a class of its own
        return refine_all([byte_partition(term.within), first_byte_partition(term.apart)])
    if isinstance(term, (Not, Repeat, Lexeme)):
        return byte_partition(term.item)
    if isinstance(term, Thunk):
        return term.through_body(byte_partition)  # type: ignore[return-value]
    if isinstance(term, Checked):
        return alphabet_partition(term.checker.alphabet, term.checker.alike)
    raise TypeError(f"not a term: {term!r}")


def first_bytes(term: Term) -> int:
    """Mask of the bytes whose derivative is not syntactically ``EMPTY`` (one
    derivative per class of the term's partition: its bytes share it)."""
    firsts = np.frombuffer(representatives(term), np.uint8)
    live: np.ndarray = np.zeros(256, np.bool_)
    for representative in class_bytes(term):
        live[representative] = derivative(term, representative) is not EMPTY
    return int.from_bytes(np.packbits(live[firsts], bitorder="little").tobytes(), "little")
