"""The operations a compiler builds terms with, over object terms or over a store.

A compiler (a regex's, a schema's) writes its terms through a ``TermBuilder``: the
same code then builds ``fsm.terms`` objects (``OBJECT_TERMS``: what a regex's position
automaton and a healed prefix before free text or a regex read, and the reference the
tests compare with) or integer rows of a ``fsm.term_store.TermStore`` (``StoredTerms``:
what ``fsm.compile_index`` builds a JSON schema as, healed prefix or not,
``fsm.schema_rows``), with no object made and none converted. This is the
seam of ``docs/design.md``'s path to terms as integers: once nothing reads objects,
they go and the seam stays.

The operations are ``fsm.terms``' builders and the few questions a compiler asks of
what it built (whether a term is empty, may be empty, which bytes it may start with,
what a byte leaves of it). They mean the same on both sides: a term built through
either accepts the same strings (``tests/fsm/test_term_builder.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

from fsm import terms as objects
from fsm.decompose import first_bytes_over
from fsm.satisfiable import empty_because
from fsm.satisfiable_store import empty_because_in
from fsm.term_store import EMPTY, EPS, KIND_ALT, StoredThunk, TermStore

T = TypeVar("T")


class TermBuilder(Generic[T]):
    """Builders and questions over terms of type ``T`` (``fsm.terms``' functions of
    the same names, with a byte set given by its 256-bit mask). A compiled base class,
    not a protocol: a call through it dispatches natively (a protocol's is a generic
    Python call, some 2.5x slower in a microbenchmark), and the compiler's code makes
    many."""

    @property
    def empty(self) -> T:
        """No string."""
        raise NotImplementedError

    @property
    def eps(self) -> T:
        """The empty string alone."""
        raise NotImplementedError

    def byte_set(self, mask: int) -> T:
        raise NotImplementedError

    def byte_range(self, lo: int, hi: int) -> T:
        raise NotImplementedError

    def literal(self, data: bytes) -> T:
        raise NotImplementedError

    def cat(self, *parts: T) -> T:
        raise NotImplementedError

    def alt(self, *parts: T) -> T:
        raise NotImplementedError

    def intersect(self, *parts: T) -> T:
        raise NotImplementedError

    def complement(self, term: T) -> T:
        raise NotImplementedError

    def repeat(self, term: T, lo: int, hi: int | None) -> T:
        raise NotImplementedError

    def star(self, term: T) -> T:
        raise NotImplementedError

    def plus(self, term: T) -> T:
        raise NotImplementedError

    def opt(self, term: T) -> T:
        raise NotImplementedError

    def lexeme(self, term: T, bound: T | None = None) -> T:
        raise NotImplementedError

    def known_lexeme(self, term: T) -> T:
        """``term`` declared a lexeme without asking whether it is empty or nullable
        (the caller knows it is neither): asking could build a thunk's body inside its
        own construction."""
        raise NotImplementedError

    def lexeme_except(self, item: Callable[[], T], within: T, apart: frozenset[bytes]) -> T:
        """The strings of the lexeme ``within`` but those in ``apart``, whose terms
        ``item()`` builds where the kind of term needs them (objects derive the item;
        a store derives ``within`` and takes the names out)."""
        raise NotImplementedError

    def thunk(
        self,
        key: Hashable,
        make: Callable[[], T],
        *,
        shortest: Callable[[], bytes] | None = None,
        search_order: int = 0,
    ) -> T:
        raise NotImplementedError

    def keyed_thunk(
        self,
        key: Hashable,
        make: Callable[[Hashable], T],
        *,
        search_order: int = 0,
        needs_liveness_check: bool = False,
    ) -> T:
        """``objects.keyed_thunk``: ``needs_liveness_check`` when the body may hold an
        intersection or a complement outside every thunk (its builder knows)."""
        raise NotImplementedError

    def checked(self, checker: objects.Checker, text: bytes = b"") -> T:
        raise NotImplementedError

    def is_empty(self, term: T) -> bool:
        raise NotImplementedError

    def nullable(self, term: T) -> bool:
        raise NotImplementedError

    def derivative(self, term: T, byte: int) -> T:
        raise NotImplementedError

    def matches(self, term: T, data: bytes) -> bool:
        raise NotImplementedError

    def first_bytes(self, term: T) -> int:
        raise NotImplementedError

    def first_bytes_over(self, term: T) -> int:
        """Every byte a string of ``term`` may start with, or more, read from its
        structure without a derivative (``fsm.decompose.first_bytes_over``)."""
        raise NotImplementedError

    def union_members(self, term: T) -> list[T] | None:
        """The members of a union (the normal form's), or None when ``term`` is none."""
        raise NotImplementedError

    def needs_liveness_check(self, term: T) -> bool:
        """Whether ``term`` may be empty though it is not ``empty``: it holds an
        intersection or a complement (a thunk's body is not looked into)."""
        raise NotImplementedError

    def empty_because(self, term: T) -> str | None:
        """Why ``term`` provably matches no text, or None (``fsm.satisfiable``)."""
        raise NotImplementedError


class ObjectTerms(TermBuilder[objects.Term]):
    """``TermBuilder`` over ``fsm.terms`` objects: its functions, as methods."""

    @property
    def empty(self) -> objects.Term:
        return objects.EMPTY

    @property
    def eps(self) -> objects.Term:
        return objects.EPS

    def byte_set(self, mask: int) -> objects.Term:
        return objects.Bytes(mask) if mask else objects.EMPTY

    def byte_range(self, lo: int, hi: int) -> objects.Term:
        return objects.byte_range(lo, hi)

    def literal(self, data: bytes) -> objects.Term:
        return objects.literal(data)

    def cat(self, *parts: objects.Term) -> objects.Term:
        return objects.cat_of(parts)

    def alt(self, *parts: objects.Term) -> objects.Term:
        return objects.alt_of(parts)

    def intersect(self, *parts: objects.Term) -> objects.Term:
        return objects.intersect_of(parts)

    def complement(self, term: objects.Term) -> objects.Term:
        return objects.complement(term)

    def repeat(self, term: objects.Term, lo: int, hi: int | None) -> objects.Term:
        return objects.repeat(term, lo, hi)

    def star(self, term: objects.Term) -> objects.Term:
        return objects.repeat(term, 0, None)

    def plus(self, term: objects.Term) -> objects.Term:
        return objects.repeat(term, 1, None)

    def opt(self, term: objects.Term) -> objects.Term:
        return objects.repeat(term, 0, 1)

    def lexeme(self, term: objects.Term, bound: objects.Term | None = None) -> objects.Term:
        return objects.lexeme(term, bound=bound)

    def known_lexeme(self, term: objects.Term) -> objects.Term:
        return objects.Lexeme(term)

    def lexeme_except(
        self, item: Callable[[], objects.Term], within: objects.Term, apart: frozenset[bytes]
    ) -> objects.Term:
        return objects.lexeme(item(), within, apart)

    def thunk(
        self,
        key: Hashable,
        make: Callable[[], objects.Term],
        *,
        shortest: Callable[[], bytes] | None = None,
        search_order: int = 0,
    ) -> objects.Term:
        return objects.thunk(key, make, shortest=shortest, search_order=search_order)

    def keyed_thunk(
        self,
        key: Hashable,
        make: Callable[[Hashable], objects.Term],
        *,
        search_order: int = 0,
        needs_liveness_check: bool = False,
    ) -> objects.Term:
        return objects.keyed_thunk(
            key, make, search_order=search_order, needs_liveness_check=needs_liveness_check
        )

    def checked(self, checker: objects.Checker, text: bytes = b"") -> objects.Term:
        return objects.checked(checker, text)

    def is_empty(self, term: objects.Term) -> bool:
        return term is objects.EMPTY

    def nullable(self, term: objects.Term) -> bool:
        return objects.nullable(term)

    def derivative(self, term: objects.Term, byte: int) -> objects.Term:
        return objects.derivative(term, byte)

    def matches(self, term: objects.Term, data: bytes) -> bool:
        return objects.matches(term, data)

    def first_bytes(self, term: objects.Term) -> int:
        return objects.first_bytes(term)

    def first_bytes_over(self, term: objects.Term) -> int:
        return first_bytes_over(term)

    def union_members(self, term: objects.Term) -> list[objects.Term] | None:
        return list(term.items) if isinstance(term, objects.Alt) else None

    def needs_liveness_check(self, term: objects.Term) -> bool:
        return term.needs_liveness_check

    def empty_because(self, term: objects.Term) -> str | None:
        return empty_because(term)


OBJECT_TERMS = ObjectTerms()
"""The object builder; it holds nothing, so one serves every compile."""


class StoredTerms(TermBuilder[int]):
    """``TermBuilder`` over the ids of ``store``: terms built as its rows, thunks whose
    bodies its builders write there (``fsm.term_store.StoredThunk``). A store is for
    one thread, and so is this."""

    def __init__(self, store: TermStore) -> None:
        self.store = store

    @property
    def empty(self) -> int:
        return EMPTY

    @property
    def eps(self) -> int:
        return EPS

    def byte_set(self, mask: int) -> int:
        return self.store.byte_set(mask)

    def byte_range(self, lo: int, hi: int) -> int:
        if lo > hi:
            return EMPTY
        return self.store.byte_set(objects.range_mask(lo, hi))

    def literal(self, data: bytes) -> int:
        return self.store.literal(data)

    def cat(self, *parts: int) -> int:
        """The parts in order, folded from the right into the store's pairs."""
        return self.store.cat_items(list(parts))

    def alt(self, *parts: int) -> int:
        return self.store.alt(list(parts))

    def intersect(self, *parts: int) -> int:
        return self.store.intersect(list(parts))

    def complement(self, term: int) -> int:
        return self.store.complement(term)

    def repeat(self, term: int, lo: int, hi: int | None) -> int:
        return self.store.repeat(term, lo, hi)

    def star(self, term: int) -> int:
        return self.store.repeat(term, 0, None)

    def plus(self, term: int) -> int:
        return self.store.repeat(term, 1, None)

    def opt(self, term: int) -> int:
        return self.store.repeat(term, 0, 1)

    def lexeme(self, term: int, bound: int | None = None) -> int:
        return self.store.lexeme(term, EMPTY if bound is None else bound)

    def known_lexeme(self, term: int) -> int:
        return self.store.known_lexeme(term)

    def lexeme_except(self, item: Callable[[], int], within: int, apart: frozenset[bytes]) -> int:
        return self.store.lexeme_except(within, apart)

    def thunk(
        self,
        key: Hashable,
        make: Callable[[], int],
        *,
        shortest: Callable[[], bytes] | None = None,
        search_order: int = 0,
    ) -> int:
        return self.store.thunk(
            StoredThunk(key, make, shortest=shortest, search_order=search_order)
        )

    def keyed_thunk(
        self,
        key: Hashable,
        make: Callable[[Hashable], int],
        *,
        search_order: int = 0,
        needs_liveness_check: bool = False,
    ) -> int:
        made = StoredThunk(
            key,
            make,
            keyed=True,
            search_order=search_order,
            needs_liveness_check=needs_liveness_check,
        )
        return self.store.thunk(made)

    def checked(self, checker: objects.Checker, text: bytes = b"") -> int:
        return self.store.checked(checker, text)

    def is_empty(self, term: int) -> bool:
        return term == EMPTY

    def nullable(self, term: int) -> bool:
        return self.store.nullable(term)

    def derivative(self, term: int, byte: int) -> int:
        return self.store.derivative(term, byte)

    def matches(self, term: int, data: bytes) -> bool:
        return self.store.matches(term, data)

    def first_bytes(self, term: int) -> int:
        return self.store.first_bytes(term)

    def first_bytes_over(self, term: int) -> int:
        return self.store.first_bytes_over(term)

    def union_members(self, term: int) -> list[int] | None:
        store = self.store
        return store.members(term) if store.kinds[term] == KIND_ALT else None

    def needs_liveness_check(self, term: int) -> bool:
        return self.store.needs_liveness_check(term)

    def empty_because(self, term: int) -> str | None:
        return empty_because_in(self.store, term)
