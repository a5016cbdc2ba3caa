"""JSON objects: named keys at most once each, in any order or in schema order.

An object body is a thunk keyed by what has been read so far (the named keys used, as
a bit mask over their positions in schema order, the position after the last named key
in schema order, the count of other keys when ``minProperties``/``maxProperties`` need
it, whether a member was read yet). The key holds only bytes, integers, strings and
booleans, and the shape builds every body from it (``keyed_thunk``): a body offers one
thunk per key still to come, and a set of names and a bound call per thunk would be
three more objects each for the cyclic collector, kept as long as the schema. The mask
goes into the key as bytes: Python hashes an integer modulo ``2**61 - 1``, so as an
integer the masks of a shape with more than 60 keys would collide (bit 61 hashes as
bit 0), and every lookup of a body among its colliding neighbours would compare them. It
expands to: close the object (when every required key is there), or read one more
member: an unused named key with its value schema, or any other key allowed by
``additionalProperties``/``patternProperties`` with the value schema that key gets.
The members come behind one separator (``, ws (m1 rest1 | m2 rest2 | ...)``, not one
comma per member): a row between two members then walks two branches, not one per key.
What follows a key in a member, its colon and value, is one thunk per named key
(``_AfterKeys``), the same in every body: a body of ``K`` keys offered nests ``K``
members of three items (the key, that thunk, the next body), not of every item of
every value. The thunk opens in place (``opens_in_place``): the splits of
``fsm.decompose`` read it as its body, so the text after a key splits as it did when
the member was spelled out.

A shape builds its terms with its ``pieces``' builder (``fsm.term_builder``): object
terms by default (``json_text.OBJECTS``), a store's rows for a store's compile.

With ``ordered`` shapes the named keys come in schema order: after a named key only
later ones may follow, and a required key cannot be skipped. That accepts fewer texts
(the instances whose named keys are in order) and lets generation force every key
once the previous value ends, as other structured-generation libraries do. Other keys
may come anywhere.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from fsm.json_schema.json_text import OBJECTS, JsonText
from fsm.json_schema.key_rules import KeyRule, completable, rule_keys

T = TypeVar("T")

_AFTER_KEY = "object-after-key"
"""The first field of the key of a thunk for what follows a key (``_AfterKeys``)."""


@dataclass(frozen=True)
class ObjectShape:
    """What an object may hold; ``key`` identifies the shape in thunk keys.

    ``named``: (key, value term) in schema order, value empty when the key is
    forbidden; ``other_member``: the term of one member ``"key": value`` whose
    key is none of the named ones (empty or None: no other key allowed); ``key_rules``:
    conditions on the named keys present (``fsm.json_schema.key_rules``), every key
    they name among ``named``. ``pieces``: what builds the terms, whose kind the terms
    given are (object terms by default).
    The term fields are typed ``Any``: mypyc compiles no generic dataclass (a
    ``Generic`` one fails at import).
    """

    key: Hashable
    named: tuple[tuple[str, Any], ...]
    required: frozenset[str] = frozenset()
    other_member: Any = None
    min_properties: int = 0
    max_properties: int | None = None
    dependent_required: tuple[tuple[str, frozenset[str]], ...] = ()
    key_rules: tuple[KeyRule, ...] = ()
    ws_max: int = 0
    ordered: bool = False
    pieces: JsonText[Any] = field(default=OBJECTS, repr=False, compare=False)
    other: Any = field(init=False, repr=False, compare=False)
    """``other_member``, the builder's empty term for None."""
    has_other: bool = field(init=False, repr=False, compare=False)
    """Whether a key other than the named ones may come."""
    allowed: tuple[bool, ...] = field(init=False, repr=False, compare=False)
    """Per named key, whether it may come (its value is not empty)."""
    rule_positions: tuple[tuple[int, str], ...] = field(init=False, repr=False, compare=False)
    """(position in ``named``, key) of the allowed keys the key rules name, found once:
    every key a body offers asks which of them may still be added."""
    positions: dict[str, int] = field(init=False, repr=False, compare=False)
    """Position in ``named`` of each key, found once: every key a body offers asks where
    the keys it requires stand (``_dependencies_addable``)."""
    quoted: bool = field(init=False, repr=False, compare=False)
    """Whether every member starts with its key's opening quote: a body then offers
    ``"`` once, then the union of the members after it (``_expand``). A named member
    always does (its key is a JSON string literal), so only ``other_member`` is asked."""
    other_tail: Any = field(init=False, repr=False, compare=False)
    """``other`` after the opening quote when ``quoted`` (``other`` itself otherwise):
    what a body offers for any other key."""
    after_keys: _AfterKeys = field(init=False, repr=False, compare=False)
    """What follows each named key, as thunks (``_member_head``)."""
    member_heads: list[Any] = field(init=False, repr=False, compare=False)
    """Per named key, its member as a body offers it before the next body: the key
    (after its opening quote when ``quoted``), then what follows it as one thunk; None
    until a body first offers it (``_member_head``: most of a schema's shapes are
    never walked, and a shape is built again by every compile)."""
    openings: tuple[int, int] = field(init=False, repr=False, compare=False)
    """Bytes a body may start with (more may be named): after a member, then before the
    first (``opening_bytes``)."""
    required_mask: int = field(init=False, repr=False, compare=False)
    """The required keys as bits of their positions in ``named`` (see ``_body``); a
    required key not named sets a bit no body's keys hold, so the object never closes."""

    def __post_init__(self) -> None:
        pieces, b = self.pieces, self.pieces.terms
        other = b.empty if self.other_member is None else self.other_member
        object.__setattr__(self, "other", other)
        object.__setattr__(self, "has_other", not b.is_empty(other))
        allowed = tuple(not b.is_empty(value) for _, value in self.named)
        object.__setattr__(self, "allowed", allowed)
        ruled = set(rule_keys(self.key_rules))
        positions = tuple(
            (position, name)
            for position, (name, _) in enumerate(self.named)
            if name in ruled and allowed[position]
        )
        object.__setattr__(self, "rule_positions", positions)
        named_positions = {name: position for position, (name, _) in enumerate(self.named)}
        object.__setattr__(self, "positions", named_positions)
        quoted, other_tail = _other_tail(pieces, other)
        object.__setattr__(self, "quoted", quoted)
        object.__setattr__(self, "other_tail", other_tail)
        object.__setattr__(self, "after_keys", _AfterKeys(pieces, self.named, self.ws_max))
        object.__setattr__(self, "member_heads", [None] * len(self.named))
        openings = _openings(pieces, any(allowed), other, quoted, self.ws_max)
        object.__setattr__(self, "openings", openings)
        required_mask = 0
        for name in self.required:
            required_mask |= 1 << named_positions.get(name, len(self.named))
        object.__setattr__(self, "required_mask", required_mask)

    def __call__(self, key: Hashable) -> Any:
        """The body its thunk key names (``_body``): the shape is the thunk's builder,
        so a thunk holds no callable of its own, and the shape holds no reference back
        (a callable kept on the shape, bound to it, made a cycle that kept a schema's
        terms alive until the cyclic collector's next full pass)."""
        assert isinstance(key, tuple)
        _, _, mask, after, extra, first = key
        return _expand(self, int.from_bytes(mask, "little"), after, extra, first)

    def opening_bytes(self, key: Hashable) -> int:
        """Every byte the body its thunk key names may start with, or more, without
        building it (``terms.keyed_thunk``: a body is never empty, it holds the close)."""
        assert isinstance(key, tuple)
        first = key[-1]  # the key ``_body`` builds ends with ``first``
        return self.openings[1] if first else self.openings[0]

    def names_in(self, used: int) -> frozenset[str]:
        """The named keys whose bits ``used`` holds."""
        return frozenset(name for at, (name, _) in enumerate(self.named) if used >> at & 1)

    def counts_members(self) -> bool:
        return self.min_properties > 0 or self.max_properties is not None


@dataclass(frozen=True, eq=False)
class _AfterKeys:
    """The builder of the thunks that stand for what follows each named key of a shape
    (``keyed_thunk``): the colon, then the value of ``named[position]``, which never
    matches the empty string and starts with one of the colon's first bytes, read in
    place (``fsm.decompose``). It holds the shape's named keys, not the shape, which
    holds the thunks: no cycle for the collector. Built with every shape (every
    compile builds its shapes), it computes nothing until a body offers a key."""

    pieces: JsonText[Any]
    named: tuple[tuple[str, Any], ...]
    ws_max: int

    def thunk(self, shape_key: Hashable, position: int) -> Any:
        """The thunk for what follows key ``position``: it may hold an intersection
        that the rows through it must be checked for, as the member spelled out would."""
        b = self.pieces.terms
        return b.keyed_thunk(
            (_AFTER_KEY, shape_key, position),
            self,
            needs_liveness_check=b.needs_liveness_check(self._after(position)),
        )

    def _after(self, position: int) -> Any:
        pieces = self.pieces
        return pieces.terms.cat(pieces.colon(self.ws_max), self.named[position][1])

    def __call__(self, key: Hashable) -> Any:
        assert isinstance(key, tuple)
        return self._after(key[-1])

    def opening_bytes(self, key: Hashable) -> int:
        pieces = self.pieces
        return pieces.terms.first_bytes_over(pieces.colon(self.ws_max))

    def opens_in_place(self, key: Hashable) -> bool:
        return True


def _member_head(shape: ObjectShape, position: int) -> Any:
    """``shape.member_heads[position]``, built on first use."""
    head = shape.member_heads[position]
    if head is None:
        pieces = shape.pieces
        b = pieces.terms
        key = pieces.string_literal(shape.named[position][0])
        if shape.quoted:
            key = b.derivative(key, ord('"'))
        head = b.cat(key, shape.after_keys.thunk(shape.key, position))
        shape.member_heads[position] = head
    return head


def _other_tail(pieces: JsonText[T], other: T) -> tuple[bool, T]:
    """``(quoted, other_tail)`` of a shape (``ObjectShape.quoted``): ``other`` derived by
    the opening quote when every string of it begins with one (``first_bytes_over``,
    which may only say more bytes), so ``quote tail`` is it, exactly. An empty
    ``other`` stays empty. The named members need no asking: each starts with its
    key, a JSON string."""
    b = pieces.terms
    quote = ord('"')
    if b.is_empty(other):
        return True, other
    if b.first_bytes_over(other) & ~(1 << quote):
        return False, other
    return True, b.derivative(other, quote)


def _openings(
    pieces: JsonText[T], any_named: bool, other: T, quoted: bool, ws_max: int
) -> tuple[int, int]:
    """``ObjectShape.openings``, from the parts ``_expand`` builds a body of: after a
    member, the close or a comma; before the first, ``}`` or a member (its quote when
    every member starts with one; else the quote of a named key, ``any_named``, or any
    first byte of ``other``)."""
    b = pieces.terms
    later = b.first_bytes_over(b.alt(pieces.closing(b"}", ws_max, False), pieces.comma(ws_max)))
    first = b.first_bytes_over(pieces.closing(b"}", ws_max, True))
    if quoted or any_named:
        first |= 1 << ord('"')
    return later, first if quoted else first | b.first_bytes_over(other)


def object_term(shape: ObjectShape) -> Any:
    """``{`` ws body; the body closes with ws ``}`` (just ``}`` before any member)."""
    pieces, b = shape.pieces, shape.pieces.terms
    if not _completable(shape, 0, 0):
        return b.empty
    opening = b.cat(b.literal(b"{"), pieces.whitespace(shape.ws_max), _body(shape, 0, 0, 0, True))
    return opening


def _body(
    shape: ObjectShape, used: int, after: int, extra: int, first: bool, order: int = 0
) -> Any:
    """``used``: the named keys read, bit ``i`` for ``shape.named[i]``. ``after``: index
    in ``shape.named`` where the next named key may start (always 0 for unordered
    shapes). ``order``: the search order of the member it follows
    (``Thunk.search_order``): the satisfiability analysis then adds keys in schema
    order, building the bodies a walk in that order builds, not others."""
    mask = used.to_bytes((len(shape.named) + 7) // 8, "little")  # see the module docstring
    key = ("object-body", shape.key, mask, after, extra, first)
    return shape.pieces.terms.keyed_thunk(key, shape, search_order=order)


def _closable(shape: ObjectShape, used: int, count: int) -> bool:
    if shape.required_mask & ~used or count < shape.min_properties:
        return False
    if not shape.dependent_required and not shape.key_rules:
        return True
    names = shape.names_in(used)
    if not all(deps <= names for name, deps in shape.dependent_required if name in names):
        return False
    return all(rule.holds(names) for rule in shape.key_rules)


def _completable(shape: ObjectShape, used: int, after: int) -> bool:
    """Whether the object can still close once keys from ``after`` on are added: the key
    rules can still hold, and the keys the used keys require may still come (a key that
    breaks ``oneOf`` or ``not`` for good, or that requires a key that can never come,
    must not be offered: the state after it could never close, and nothing else would
    tell)."""
    if not shape.dependent_required and not shape.key_rules:
        return True
    names = shape.names_in(used)
    if not _dependencies_addable(shape, names, after):
        return False
    if not shape.key_rules:
        return True
    addable = frozenset(name for position, name in shape.rule_positions if position >= after)
    return completable(shape.key_rules, names, shape.required, addable)


def _dependencies_addable(shape: ObjectShape, used: frozenset[str], after: int) -> bool:
    """Whether every key that the used and the required keys require, in turn
    (``dependent_required``), is used or may still be added: a named key allowed and,
    in schema order, not passed yet (from ``after`` on), or another key where other
    keys are allowed. Checked on their own, beside the key rules: a node with both
    keeps its dependent schemas as intersections (``key_rules.dependencies_as_required``)."""
    if not shape.dependent_required:
        return True
    requires = dict(shape.dependent_required)
    needed, todo = set(used | shape.required), list(used | shape.required)
    while todo:
        for dep in requires.get(todo.pop(), ()):
            if dep in needed:
                continue
            needed.add(dep)
            todo.append(dep)
            position = shape.positions.get(dep)
            if position is None:
                if not shape.has_other:
                    return False
            elif not shape.allowed[position] or (shape.ordered and position < after):
                return False
    return True


def _expand(shape: ObjectShape, used: int, after: int, extra: int, first: bool) -> Any:
    pieces, b = shape.pieces, shape.pieces.terms
    count = used.bit_count() + extra
    options = [pieces.closing(b"}", shape.ws_max, first)] if _closable(shape, used, count) else []
    if shape.max_properties is not None and count >= shape.max_properties:
        return b.alt(*options)
    separator = b.eps if first else pieces.comma(shape.ws_max)
    # after the quote every key is read on from its own state: a row after a value reads
    # the comma and the quote once, not once per key behind them
    quote = pieces.quote if shape.quoted else b.eps
    members: list[Any] = []
    for position in range(after, len(shape.named)):
        if used >> position & 1 or not shape.allowed[position]:
            continue
        following = position + 1 if shape.ordered else 0
        now_used = used | 1 << position
        if not _completable(shape, now_used, following):
            continue
        rest = _body(shape, now_used, following, extra, False, position)
        members.append(b.cat(_member_head(shape, position), rest))
        if shape.ordered and shape.named[position][0] in shape.required:
            break  # a required key cannot be skipped
    if shape.has_other:
        more = min(extra + 1, _extra_cap(shape)) if shape.counts_members() else 0
        rest = _body(shape, used, after, more, False, len(shape.named))
        members.append(b.cat(shape.other_tail, rest))
    if members:
        options.append(b.cat(separator, quote, b.alt(*members)))
    return b.alt(*options)


def _extra_cap(shape: ObjectShape) -> int:
    """Other-key counts at or above this behave alike."""
    cap = shape.min_properties
    if shape.max_properties is not None:
        cap = max(cap, shape.max_properties)
    return cap
