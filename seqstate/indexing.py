"""Pure helpers for shapes and indices over `(batch, samples)` grids of rows."""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from seqstate.errors import ShapeMismatch, StateIndexError

Shape = tuple[int, int]


def broadcast_shapes(left: Shape, right: Shape) -> Shape:
    """numpy broadcasting of two 2-d shapes: each axis equal, or 1 on one side."""
    result = []
    for axis, (a, b) in enumerate(zip(left, right, strict=True)):
        if a != b and 1 not in (a, b):
            name = ("batch", "samples")[axis]
            raise ShapeMismatch(
                f"cannot broadcast shapes {left} and {right}: {name} sizes {a} and {b} differ "
                "and neither is 1"
            )
        result.append(max(a, b))
    return (result[0], result[1])


def broadcast_cells(shape: Shape, target: Shape) -> list[int]:
    """Flat (row-major) index into a `shape` grid for each cell of the `target` grid."""
    rows, cols = shape
    return [
        (b if rows > 1 else 0) * cols + (k if cols > 1 else 0)
        for b in range(target[0])
        for k in range(target[1])
    ]


def expand_key(key: Any, shape: Shape) -> tuple[Any, Any, Any]:
    """`(batch, samples, last)` parts of an index on a state of `shape`; `last` cuts
    characters (or tokens), `None` keeps the text whole.

    The rule of outlines PR #781 (docs/design.md, "Indexing"): three keys are always
    `(batch, samples, last)`, and so is a key with `...` (which fills the missing parts
    with `:`). Fewer keys address the axes of size > 1, batch first; one key more than
    those axes makes the last key cut the text. So a 1x1 state takes `s[i:j]`, a batch
    of one `s[k, i:j]`, one sample per row `s[b, i:j]`, and a full grid `s[b]` or
    `s[b, k]`."""
    parts = list(key) if isinstance(key, tuple) else [key]
    if any(part is None for part in parts):
        raise StateIndexError("None is not an index: use an int, a slice or '...'")
    ellipses = sum(part is Ellipsis for part in parts)
    if ellipses > 1:
        raise StateIndexError("an index can hold at most one '...'")
    explicit = len(parts) - ellipses
    if explicit > 3:
        raise StateIndexError(f"too many indices ({explicit}): batch, samples, characters")
    if ellipses:
        at = parts.index(Ellipsis)
        parts[at : at + 1] = [slice(None)] * (3 - explicit)
    if len(parts) == 3:
        return parts[0], parts[1], parts[2]
    free = [axis for axis in (0, 1) if shape[axis] > 1]
    last = None
    if len(parts) > len(free):
        last = parts.pop()
        free += [axis for axis in (0, 1) if axis not in free]
    axes = [slice(None), slice(None)]
    for axis, part in zip(free, parts):
        axes[axis] = part
    return axes[0], axes[1], last


def select(size: int, index: Any, axis: str) -> list[int]:
    """Positions along one axis of length `size` chosen by an int or a slice."""
    if isinstance(index, slice):
        chosen = list(range(*index.indices(size)))
        if not chosen:
            raise StateIndexError(f"{axis} slice {index} selects no rows of {size}")
        return chosen
    return [_position(index, size, axis, "size")]


def resolve_range(index: Any, length: int, unit: str) -> tuple[int, int]:
    """`[start, stop)` of an int or a step-1 slice over `length` items (Python rules:
    negative indices count from the end, slices clamp, an int must be in range)."""
    if isinstance(index, slice):
        if index.step not in (None, 1):
            raise StateIndexError(f"{unit} slices take no step (got {index.step})")
        start, stop, _ = index.indices(length)
        return start, max(start, stop)
    position = _position(index, length, unit, "length")
    return position, position + 1


def _position(index: Any, size: int, what: str, noun: str) -> int:
    """An int index within ``size`` items, negatives counted from the end."""
    if isinstance(index, bool | np.bool_):
        raise StateIndexError(f"{what} index must be an int or a slice, not a bool")
    try:
        position = operator.index(index)
    except TypeError:
        raise StateIndexError(
            f"{what} index must be an int or a slice, not {type(index).__name__}"
        ) from None
    if not -size <= position < size:
        raise StateIndexError(f"{what} index {position} is out of range for {noun} {size}")
    return position % size
