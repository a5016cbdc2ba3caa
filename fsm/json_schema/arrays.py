"""JSON arrays: positional items, item counts, ``contains`` counts, unique finite items.

An array body is a thunk keyed by the position reached (capped where later positions
behave alike), the number of items matching ``contains`` so far (capped likewise) and,
for ``uniqueItems`` over a finite set of values, the values already used. A shape builds
its terms with its ``pieces``' builder (``fsm.term_builder``; object terms by default).
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from fsm.json_schema.json_text import OBJECTS, JsonText


@dataclass(frozen=True)
class ArrayShape:
    """What an array may hold; ``key`` identifies the shape in thunk keys.

    ``prefix``: the terms of the first items; ``rest``: the term of every later item
    (empty or None: no more items). ``contains``: a term some items must match, between
    ``min_contains`` and ``max_contains`` of them. ``unique_values``: when set, the
    items are distinct members of this finite list of value terms. ``pieces``: what
    builds the terms, whose kind the terms given are (object terms by default).
    The term fields are typed ``Any``: mypyc compiles no generic dataclass (a
    ``Generic`` one fails at import).
    """

    key: Hashable
    prefix: tuple[Any, ...] = ()
    rest: Any = None
    min_items: int = 0
    max_items: int | None = None
    contains: Any = None
    min_contains: int = 1
    max_contains: int | None = None
    unique_values: tuple[Any, ...] | None = None
    ws_max: int = 0
    pieces: JsonText[Any] = field(default=OBJECTS, repr=False, compare=False)
    later: Any = field(init=False, repr=False, compare=False)
    """``rest``, the builder's empty term for None."""

    def __post_init__(self) -> None:
        later = self.pieces.terms.empty if self.rest is None else self.rest
        object.__setattr__(self, "later", later)


def array_term(shape: ArrayShape) -> Any:
    """``[`` ws body; the body closes with ws ``]`` (just ``]`` before any item)."""
    pieces, b = shape.pieces, shape.pieces.terms
    start: int | frozenset[int] = frozenset() if shape.unique_values is not None else 0
    return b.cat(b.literal(b"["), pieces.whitespace(shape.ws_max), _body(shape, start, 0, True))


def _body(shape: ArrayShape, position: int | frozenset[int], matched: int, first: bool) -> Any:
    return shape.pieces.terms.thunk(
        ("array-body", shape.key, position, matched, first),
        partial(_expand, shape, position, matched, first),  # fewer objects than a closure
    )


def _position_cap(shape: ArrayShape) -> int:
    if shape.max_items is not None:
        return shape.max_items
    return max(len(shape.prefix), shape.min_items)


def _contains_cap(shape: ArrayShape) -> int:
    if shape.max_contains is not None:
        return max(shape.min_contains, shape.max_contains + 1)
    return shape.min_contains


def _expand(shape: ArrayShape, position: int | frozenset[int], matched: int, first: bool) -> Any:
    pieces, b = shape.pieces, shape.pieces.terms
    count = len(position) if isinstance(position, frozenset) else position
    options = []
    if count >= shape.min_items and _contains_ok(shape, matched):
        options.append(pieces.closing(b"]", shape.ws_max, first))
    if shape.max_items is not None and count >= shape.max_items:
        return b.alt(*options)
    separator = b.eps if first else pieces.comma(shape.ws_max)
    for item, after in _next_items(shape, position):
        if b.is_empty(item):
            continue
        for term, now_matched in _split_contains(shape, item, matched):
            rest = _body(shape, after, now_matched, False)
            options.append(b.cat(separator, term, rest))
    return b.alt(*options)


def _contains_ok(shape: ArrayShape, matched: int) -> bool:
    if shape.contains is None:
        return True
    return matched >= shape.min_contains and (
        shape.max_contains is None or matched <= shape.max_contains
    )


def _next_items(
    shape: ArrayShape, position: int | frozenset[int]
) -> list[tuple[Any, int | frozenset[int]]]:
    """The terms the next item may match, each with the position it leads to."""
    b = shape.pieces.terms
    if isinstance(position, frozenset):
        assert shape.unique_values is not None
        return [
            (b.intersect(value, shape.later), position | {i})
            for i, value in enumerate(shape.unique_values)
            if i not in position
        ]
    item = shape.prefix[position] if position < len(shape.prefix) else shape.later
    return [(item, min(position + 1, _position_cap(shape)))]


def _split_contains(shape: ArrayShape, item: Any, matched: int) -> list[tuple[Any, int]]:
    if shape.contains is None:
        return [(item, 0)]
    b = shape.pieces.terms
    more = min(matched + 1, _contains_cap(shape))
    return [
        (b.intersect(item, shape.contains), more),
        (b.intersect(item, b.complement(shape.contains)), matched),
    ]
