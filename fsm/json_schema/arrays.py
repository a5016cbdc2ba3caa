"""JSON arrays: positional items, item counts, ``contains`` counts, unique finite items.

An array body is a thunk keyed by the position reached (capped where later positions
behave alike), the number of items matching ``contains`` so far (capped likewise) and,
for ``uniqueItems`` over a finite set of values, the values already used.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from functools import partial

from fsm.json_schema.json_text import closing, comma, whitespace
from fsm.terms import EMPTY, EPS, Term, alt, cat, complement, intersect, literal, thunk


@dataclass(frozen=True)
class ArrayShape:
    """What an array may hold; ``key`` identifies the shape in thunk keys.

    ``prefix``: the terms of the first items; ``rest``: the term of every later item
    (``EMPTY``: no more items). ``contains``: a term some items must match, between
    ``min_contains`` and ``max_contains`` of them. ``unique_values``: when set, the
    items are distinct members of this finite list of value terms.
    """

    key: Hashable
    prefix: tuple[Term, ...] = ()
    rest: Term = EMPTY
    min_items: int = 0
    max_items: int | None = None
    contains: Term | None = None
    min_contains: int = 1
    max_contains: int | None = None
    unique_values: tuple[Term, ...] | None = None
    ws_max: int = 0


def array_term(shape: ArrayShape) -> Term:
    """``[`` ws body; the body closes with ws ``]`` (just ``]`` before any item)."""
    start: int | frozenset[int] = frozenset() if shape.unique_values is not None else 0
    return cat(literal(b"["), whitespace(shape.ws_max), _body(shape, start, 0, True))


def _body(shape: ArrayShape, position: int | frozenset[int], matched: int, first: bool) -> Term:
    return thunk(
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


def _expand(shape: ArrayShape, position: int | frozenset[int], matched: int, first: bool) -> Term:
    count = len(position) if isinstance(position, frozenset) else position
    options = []
    if count >= shape.min_items and _contains_ok(shape, matched):
        options.append(closing(b"]", shape.ws_max, first))
    if shape.max_items is not None and count >= shape.max_items:
        return alt(*options)
    separator = EPS if first else comma(shape.ws_max)
    for item, after in _next_items(shape, position):
        if item is EMPTY:
            continue
        for term, now_matched in _split_contains(shape, item, matched):
            rest = _body(shape, after, now_matched, False)
            options.append(cat(separator, term, rest))
    return alt(*options)


def _contains_ok(shape: ArrayShape, matched: int) -> bool:
    if shape.contains is None:
        return True
    return matched >= shape.min_contains and (
        shape.max_contains is None or matched <= shape.max_contains
    )


def _next_items(
    shape: ArrayShape, position: int | frozenset[int]
) -> list[tuple[Term, int | frozenset[int]]]:
    """The terms the next item may match, each with the position it leads to."""
    if isinstance(position, frozenset):
        assert shape.unique_values is not None
        return [
            (intersect(value, shape.rest), position | {i})
            for i, value in enumerate(shape.unique_values)
            if i not in position
        ]
    item = shape.prefix[position] if position < len(shape.prefix) else shape.rest
    return [(item, min(position + 1, _position_cap(shape)))]


def _split_contains(shape: ArrayShape, item: Term, matched: int) -> list[tuple[Term, int]]:
    if shape.contains is None:
        return [(item, 0)]
    more = min(matched + 1, _contains_cap(shape))
    return [
        (intersect(item, shape.contains), more),
        (intersect(item, complement(shape.contains)), matched),
    ]
